package render

// Why this file is long: the Store is one state machine (the current
// line, the committed text, the cursor and the byte limit change
// together under one lock), and splitting it would spread one invariant
// over files. Its JSON mirror is store_json.go; the escape scanner scan.go.

import (
	"encoding/binary"
	"slices"
	"sync"
	"unicode/utf8"
)

// Store tuning. lineSlack lets a line exceed the byte limit by this much
// before its head is dropped, so "\r" redraws of ordinary lines render
// exactly even with a tiny limit. The committed text may grow past the
// limit by half the limit (at least compactSlack) before it is cut back:
// each cut copies the limit's worth of text once per half a limit
// appended (two bytes moved per byte printed, cheap next to rendering),
// and a Store holds about 1.5× its limit rather than 2×.
const (
	lineSlack    = 4 << 10
	compactSlack = 64 << 10
	// maxGap bounds how far past the end of a line the cursor may move
	// (CSI C, CSI G, CSI 2K): the blanks are materialised on the next print.
	maxGap = 1 << 10
)

// Store renders a terminal byte stream into the text an agent reads and
// keeps the tail of it within a byte limit.
//
// Rendering: escape sequences and colours are dropped; "\r" returns to
// the start of the line, so redraws collapse to the line's final state;
// "\n" (also VT and FF) ends the line ("\r\n" becomes "\n"); backspace,
// CSI K (erase in line) and CSI C/D/G (cursor forward, back, to column)
// edit the current line, one cell per character; other controls and
// sequences are ignored; invalid UTF-8 becomes U+FFFD (one per byte that
// does not start a valid character), also when a character arrives split
// across Append calls.
//
// The limit: Snapshot returns the last at most limit bytes of the rendered
// text, starting at a character boundary, and reports truncated once
// anything was dropped. Memory is bounded: committed lines are cut back to
// the limit whenever they pass limit+max(limit/2, 64 KiB) bytes, and the
// current line keeps at most lineCap = limit+4 KiB bytes (it is trimmed to
// its last lineCap bytes before any cursor move or erase, and lazily at
// 2×lineCap while text is only being appended). The guarantee: Snapshot
// equals the tail of rendering the whole stream without a limit, except
// when a single line grew past lineCap and was then edited by moving the
// cursor back: the dropped head of that line is gone (column 0 becomes the
// start of what was kept), which can only show if the line is afterwards
// erased to below the limit.
//
// A Store is safe for one writer (Append, Flush) and any number of
// concurrent readers (Snapshot, AppendJSON, Truncated, Len).
type Store struct {
	mu      sync.Mutex
	scan    Scanner
	limit   int
	lineCap int
	// compactAt is the committed length that triggers a cut back to limit.
	compactAt int

	// buf holds committed text (complete lines) then the current line,
	// which starts at lineStart. Both are valid UTF-8. base is the offset
	// of buf[0] in all the text ever committed (what compaction cut).
	buf       []byte
	base      int64
	lineStart int
	// cur is the cursor as a byte offset into buf (a character boundary
	// within the current line); gap counts blank cells past the line's end
	// when the cursor was moved beyond it (cur == len(buf) then).
	cur, gap int
	// pending holds the start of a UTF-8 character split across Appends.
	pending []byte
	dropped bool
	// scratch is reused for sanitised text.
	scratch []byte

	// json is the escaped copy of the committed text (store_json.go).
	json jsonMirror
}

// NewStore returns a Store keeping at most limit bytes of rendered text.
// A limit <= 0 keeps nothing (Snapshot is "", truncated once any text
// was rendered).
func NewStore(limit int) *Store {
	if limit < 0 {
		limit = 0
	}
	s := &Store{
		limit:     limit,
		lineCap:   limit + lineSlack,
		compactAt: limit + max(limit/2, compactSlack),
		json:      jsonMirror{min: jsonMirrorMin, every: jsonMarkEvery},
	}
	s.scan.h = (*storeHandler)(s)
	return s
}

// Append renders p, continuing sequences and characters split by the
// previous call.
func (s *Store) Append(p []byte) {
	s.mu.Lock()
	if s.scan.state == stGround && len(s.pending) == 0 {
		p = s.plainLines(p)
	}
	s.scan.Feed(p)
	s.mu.Unlock()
}

// plainLines renders the leading complete lines of p that are plain
// ASCII ending in "\n" or "\r\n", while the cursor is at the end of the
// text, as the Scanner and the handlers would (put, trim, commit) but
// without a call per byte class and without UTF-8 validation: most of a
// flood is such lines. It returns the rest of p, from the first byte it
// does not handle. The Scanner must be in its ground state (no sequence
// open) and no character split.
func (s *Store) plainLines(p []byte) []byte {
	for len(p) > 0 && s.cur == len(s.buf) && s.gap == 0 {
		i := 0
		for i+8 <= len(p) {
			// Eight bytes at a time while none is a control, DEL or >= 0x80.
			x := binary.LittleEndian.Uint64(p[i:])
			y := x ^ 0x7f7f7f7f7f7f7f7f
			if ((x-0x2020202020202020)&^x|(y-0x0101010101010101)&^y|x)&0x8080808080808080 != 0 {
				break
			}
			i += 8
		}
		for i < len(p) && p[i] >= 0x20 && p[i] < 0x7f {
			i++
		}
		end := i + 1 // past the line end
		switch {
		case i < len(p) && p[i] == '\n':
		case i+1 < len(p) && p[i] == '\r' && p[i+1] == '\n':
			end = i + 2 // "\r" returns to a line that "\n" then ends as it is
		default:
			return p
		}
		if i > 0 {
			s.put(p[:i])
		}
		s.trimLine()
		s.commitLine()
		p = p[end:]
	}
	return p
}

// Flush ends the stream: a character left incomplete becomes U+FFFD.
func (s *Store) Flush() {
	s.mu.Lock()
	s.flushPending()
	s.mu.Unlock()
}

// Snapshot returns the retained rendered text (at most the limit, a
// character boundary at its start) and whether anything was dropped.
func (s *Store) Snapshot() (text string, truncated bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	b := s.buf
	if len(b) > s.limit {
		b = tailAtBoundary(b, s.limit)
		truncated = true
	}
	return string(b), truncated || s.dropped
}

// Truncated reports whether anything was dropped, without copying text.
func (s *Store) Truncated() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.dropped || len(s.buf) > s.limit
}

// tailAtBoundary returns the longest suffix of valid UTF-8 b with at most
// n bytes.
func tailAtBoundary(b []byte, n int) []byte {
	if len(b) <= n {
		return b
	}
	i := len(b) - n
	for i < len(b) && !utf8.RuneStart(b[i]) {
		i++
	}
	return b[i:]
}

// storeHandler is the Store seen as the Scanner's handler; its methods
// run with the Store's lock held.
type storeHandler Store

func (h *storeHandler) Text(p []byte) { (*Store)(h).text(p) }

func (h *storeHandler) Control(c byte) {
	s := (*Store)(h)
	s.flushPending()
	switch c {
	case '\n', '\v', '\f':
		s.trimLine()
		s.commitLine()
	case '\r':
		s.trimLine()
		s.cur, s.gap = s.lineStart, 0
	case '\b':
		s.trimLine()
		s.moveBack(1)
	case '\t':
		s.put(tab) // kept as one cell: tab stops are the reader's business
	}
}

func (h *storeHandler) Escape(intermediates []byte, final byte) {
	(*Store)(h).flushPending()
}

func (h *storeHandler) CSI(params, intermediates []byte, final byte) {
	s := (*Store)(h)
	s.flushPending()
	if len(intermediates) > 0 || (len(params) > 0 && params[0] >= '<') {
		return // private or intermediate-carrying: not a line edit
	}
	switch final {
	case 'K':
		s.trimLine()
		s.eraseInLine(firstParam(params, 0))
	case 'C':
		s.trimLine()
		s.moveForward(max(firstParam(params, 1), 1))
	case 'D':
		s.trimLine()
		s.moveBack(max(firstParam(params, 1), 1))
	case 'G':
		s.trimLine()
		s.cur, s.gap = s.lineStart, 0
		s.moveForward(max(firstParam(params, 1), 1) - 1)
	}
}

func (h *storeHandler) OSC(payload []byte) {
	(*Store)(h).flushPending() // an OSC shows nothing
}

// firstParam parses the first numeric CSI parameter, def when absent.
func firstParam(params []byte, def int) int {
	n, any := 0, false
	for _, c := range params {
		if c < '0' || c > '9' {
			break
		}
		any = true
		if n < 1<<20 {
			n = n*10 + int(c-'0')
		}
	}
	if !any {
		return def
	}
	return n
}

// text renders printable bytes at the cursor.
func (s *Store) text(p []byte) {
	if len(s.pending) > 0 {
		p = s.completePending(p)
		if len(p) == 0 {
			return
		}
	}
	// Hold back a character split at the end of p.
	if last := p[len(p)-1]; last >= 0x80 {
		for i := len(p) - 1; i >= 0 && i >= len(p)-utf8.UTFMax; i-- {
			if utf8.RuneStart(p[i]) {
				if !utf8.FullRune(p[i:]) {
					s.pending = append(s.pending[:0], p[i:]...)
					p = p[:i]
				}
				break
			}
		}
		if len(p) == 0 {
			return
		}
	}
	if !utf8.Valid(p) {
		p = s.sanitize(p)
	}
	s.put(p)
}

// completePending decodes the held-back bytes of a split character with
// the start of p, emitting what they decode to, and returns the rest of p.
func (s *Store) completePending(p []byte) []byte {
	var tmp [2 * utf8.UTFMax]byte
	np := len(s.pending)
	t := append(tmp[:0], s.pending...)
	t = append(t, p[:min(len(p), utf8.UTFMax)]...)
	pos := 0
	for pos < np {
		if !utf8.FullRune(t[pos:]) {
			// Still incomplete: p was shorter than the character.
			s.pending = append(s.pending[:0], t[pos:]...)
			return nil
		}
		r, size := utf8.DecodeRune(t[pos:])
		if r == utf8.RuneError && size == 1 {
			s.put(replacementChar)
		} else {
			s.put(t[pos : pos+size])
		}
		pos += size
	}
	s.pending = s.pending[:0]
	return p[pos-np:]
}

var tab = []byte{'\t'}

var replacementChar = []byte(string(utf8.RuneError))

// flushPending turns a split character interrupted by a control or a
// sequence (or by the end of the stream) into U+FFFDs.
func (s *Store) flushPending() {
	if len(s.pending) == 0 {
		return
	}
	p := s.sanitize(s.pending)
	s.pending = s.pending[:0]
	s.put(p)
}

// sanitize returns p with every invalid byte replaced by U+FFFD, in
// s.scratch.
func (s *Store) sanitize(p []byte) []byte {
	out := s.scratch[:0]
	for len(p) > 0 {
		r, size := utf8.DecodeRune(p)
		if r == utf8.RuneError && size == 1 {
			out = append(out, replacementChar...)
		} else {
			out = append(out, p[:size]...)
		}
		p = p[size:]
	}
	s.scratch = out
	return out
}

// put writes valid UTF-8 at the cursor, one cell per character.
func (s *Store) put(p []byte) {
	if s.cur == len(s.buf) {
		if s.gap > 0 {
			s.grow(s.gap)
			s.buf = append(s.buf, blanks(s.gap)...)
			s.gap = 0
		}
		s.grow(len(p))
		s.buf = append(s.buf, p...)
		s.cur = len(s.buf)
		if len(s.buf)-s.lineStart >= 2*s.lineCap {
			s.trimLine()
		}
		return
	}
	// Overwrite as many cells as p has characters.
	n := utf8.RuneCount(p)
	j := s.cur
	for ; n > 0 && j < len(s.buf); n-- {
		_, size := utf8.DecodeRune(s.buf[j:])
		j += size
	}
	if j-s.cur == len(p) {
		copy(s.buf[s.cur:], p)
	} else {
		s.buf = slices.Replace(s.buf, s.cur, j, p...)
	}
	s.cur += len(p)
}

// trimLine drops the head of a current line longer than lineCap, keeping
// its last lineCap bytes from a character boundary; the cursor keeps its
// place in the text that remains (at the line start if it was in the
// dropped part).
func (s *Store) trimLine() {
	n := len(s.buf) - s.lineStart
	if n <= s.lineCap {
		return
	}
	keep := tailAtBoundary(s.buf[s.lineStart:], s.lineCap)
	cut := len(s.buf) - len(keep) // index of the first kept byte
	drop := cut - s.lineStart
	copy(s.buf[s.lineStart:], keep)
	s.buf = s.buf[:s.lineStart+len(keep)]
	s.cur = max(s.cur-drop, s.lineStart)
	s.dropped = true
}

// commitLine ends the current line.
func (s *Store) commitLine() {
	s.grow(1)
	s.buf = append(s.buf, '\n')
	s.lineStart = len(s.buf)
	s.cur, s.gap = s.lineStart, 0
	if s.lineStart >= s.compactAt {
		s.compact()
	}
}

// grow makes room for n more bytes. The buffer doubles, as append would,
// but not past what the Store holds before a compaction (plus a little
// for the current line), so its capacity stays near compactAt instead of
// overshooting it by append's growth factor; only a long current line
// grows it further.
func (s *Store) grow(n int) {
	need := len(s.buf) + n
	if need <= cap(s.buf) {
		return
	}
	c := max(need, min(2*cap(s.buf), s.compactAt+compactSlack), 4096)
	nb := make([]byte, len(s.buf), c)
	copy(nb, s.buf)
	s.buf = nb
}

// compact cuts the committed text back to its last limit bytes.
func (s *Store) compact() {
	keep := tailAtBoundary(s.buf[:s.lineStart], s.limit)
	from := s.lineStart - len(keep)
	if from == 0 {
		return
	}
	n := copy(s.buf, s.buf[from:])
	s.buf = s.buf[:n]
	s.base += int64(from)
	s.lineStart -= from
	s.cur -= from
	s.dropped = true
	if cap(s.buf) > 2*max(s.compactAt+compactSlack, 4096) {
		// A huge line once grew the buffer; give the memory back.
		s.buf = append([]byte(nil), s.buf...)
	}
}

// moveBack moves the cursor n cells left, not past the line start.
func (s *Store) moveBack(n int) {
	if s.gap >= n {
		s.gap -= n
		return
	}
	n -= s.gap
	s.gap = 0
	for ; n > 0 && s.cur > s.lineStart; n-- {
		s.cur--
		for s.cur > s.lineStart && !utf8.RuneStart(s.buf[s.cur]) {
			s.cur--
		}
	}
}

// moveForward moves the cursor n cells right; past the line's end it
// counts blank cells, at most maxGap of them.
func (s *Store) moveForward(n int) {
	for ; n > 0 && s.cur < len(s.buf); n-- {
		_, size := utf8.DecodeRune(s.buf[s.cur:])
		s.cur += size
	}
	s.gap = min(s.gap+n, maxGap)
}

var spaces = []byte("                                                                ")

// blanks returns n spaces.
func blanks(n int) []byte {
	if n <= len(spaces) {
		return spaces[:n]
	}
	b := make([]byte, n)
	for i := range b {
		b[i] = ' '
	}
	return b
}

// eraseInLine implements CSI K: 0 erases from the cursor to the end of
// the line, 1 from its start through the cursor, 2 the whole line; the
// cursor keeps its column.
func (s *Store) eraseInLine(mode int) {
	switch mode {
	case 0:
		if s.gap == 0 {
			s.buf = s.buf[:s.cur]
		}
	case 1:
		// Blank every cell up to and including the cursor's.
		cells := utf8.RuneCount(s.buf[s.lineStart:s.cur])
		end := s.cur
		onCell := end < len(s.buf)
		if onCell {
			_, size := utf8.DecodeRune(s.buf[end:])
			end += size
			cells++
		}
		s.buf = slices.Replace(s.buf, s.lineStart, end, blanks(cells)...)
		if onCell {
			s.cur = s.lineStart + cells - 1
		} else {
			s.cur = len(s.buf)
		}
	case 2:
		col := utf8.RuneCount(s.buf[s.lineStart:s.cur]) + s.gap
		s.buf = s.buf[:s.lineStart]
		s.cur = s.lineStart
		s.gap = min(col, maxGap)
	}
}
