package render

import (
	"slices"
	"sort"
	"sync"
	"unicode/utf8"

	"github.com/agentrun/agentrun.nvim/internal/jsonstr"
)

// An agent polls terminal/output, and each answer carries the whole
// retained text as a JSON string: a MiB of text is ~0.9 ms of escaping per
// call. Committed lines never change once committed (only the current
// line is edited, and compaction only cuts from the front), so the Store
// can keep their escaped form and extend it as lines are committed; an
// answer is then a copy of that form from the snapshot's start, plus the
// freshly escaped current line. The escaped copy is kept only for a Store
// that was asked twice for a big text (a reader that asks once pays one
// encoding and no memory); it is extended lazily, when asked, by the text
// committed since the last time.
//
// The pty reader (Append) must never wait for more than a copy: under the
// Store's lock AppendJSON only copies the raw text it needs (what was
// committed since the last call, the snapshot's first few KiB and the
// current line); it escapes them after letting go, holding only the
// mirror's own lock.

// Defaults of jsonMirror's tuning (tests make them tiny).
const (
	// jsonMirrorMin is the committed text size from which the escaped
	// copy is kept (the second time a snapshot of it is asked for).
	jsonMirrorMin = 32 << 10
	// jsonMarkEvery is the spacing of the checkpoints in the escaped
	// copy: a snapshot starting between two of them escapes at most this
	// much afresh.
	jsonMarkEvery = 4 << 10
)

// jsonMirror is the JSON-escaped form of the committed text from
// marks[0].raw to upto, in offsets into all the text ever committed
// (Store.base is the offset of buf[0]).
type jsonMirror struct {
	// mu serialises AppendJSON calls; it is taken before Store.mu and
	// guards every field below.
	mu         sync.Mutex
	min, every int // jsonMirrorMin, jsonMarkEvery
	asked      int // big snapshots asked for before the copy was kept
	on         bool
	esc        []byte
	marks      []jsonMark // ascending; marks[0].esc == 0
	upto       int64
}

// jsonMark says that raw text from offset raw on is escaped from esc on;
// raw is a character boundary.
type jsonMark struct {
	raw int64
	esc int
}

// rawCopies recycles the raw text AppendJSON copies under the Store's
// lock, so a Store keeps no scratch of its limit's size.
var rawCopies = sync.Pool{New: func() any { return new([]byte) }}

// AppendJSON appends the text Snapshot would return, as a JSON string
// (quotes included, escaped as internal/jsonstr does), to dst, and
// reports whether anything was dropped.
func (s *Store) AppendJSON(dst []byte) ([]byte, bool) {
	m := &s.json
	m.mu.Lock()
	defer m.mu.Unlock()
	raw := rawCopies.Get().(*[]byte)
	defer rawCopies.Put(raw)

	s.mu.Lock()
	start, truncated := 0, s.dropped
	if len(s.buf) > s.limit {
		start = len(s.buf) - len(tailAtBoundary(s.buf, s.limit))
		truncated = true
	}
	committed := s.lineStart - start
	if !m.on && committed >= m.min {
		m.asked++
		m.on = m.asked >= 2
	}
	dst = slices.Grow(dst, escapedSize(len(s.buf)-start))
	if !m.on || committed <= 0 {
		text := append((*raw)[:0], s.buf[start:]...)
		s.mu.Unlock()
		*raw = text
		dst = append(dst, '"')
		dst = jsonstr.AppendChars(dst, text)
		return append(dst, '"'), truncated
	}
	// Copy, in one buffer: the head (from the snapshot's start to where
	// the escaped copy can take over), the text committed since the last
	// call, and the current line.
	from, headEnd, escFrom := m.plan(s.base, start, s.lineStart)
	text := append((*raw)[:0], s.buf[start:headEnd]...)
	head := len(text)
	text = append(text, s.buf[from:s.lineStart]...)
	fresh := len(text)
	text = append(text, s.buf[s.lineStart:]...)
	freshFrom := s.base + int64(from)
	s.mu.Unlock()
	*raw = text

	m.extend(freshFrom, text[head:fresh])
	dst = append(dst, '"')
	dst = jsonstr.AppendChars(dst, text[:head])
	dst = append(dst, m.esc[escFrom:]...)
	dst = jsonstr.AppendChars(dst, text[fresh:])
	return append(dst, '"'), truncated
}

// plan readies the escaped copy for a snapshot starting at buf index
// start, with the committed text ending at lineStart, buf[0] being offset
// base: it drops what compaction cut (or starts over at start when the
// copy holds nothing the snapshot needs) and returns the buf index from which the
// committed text is still to be escaped (lineStart when none), the end of
// the snapshot's head to escape afresh (before the first mark after
// start, or where the copy ends), and where in esc the copy takes over
// after the head.
func (m *jsonMirror) plan(base int64, start, lineStart int) (from, headEnd, escFrom int) {
	abs := base + int64(start)
	if m.upto <= abs || len(m.marks) == 0 {
		// Never started, or all of the copy lies before the snapshot
		// (more than the limit was committed since the last call): start
		// over at the snapshot's start.
		m.esc, m.marks, m.upto = m.esc[:0], m.marks[:0], abs
		return start, start, 0
	}
	m.prune(base)
	from = int(m.upto - base)
	i := sort.Search(len(m.marks), func(i int) bool { return m.marks[i].raw > abs }) // first mark after abs
	switch {
	case i > 0 && m.marks[i-1].raw == abs:
		return from, start, m.marks[i-1].esc
	case i < len(m.marks):
		return from, int(m.marks[i].raw - base), m.marks[i].esc
	default: // past the last mark: escape up to the end of the copy
		return from, from, len(m.esc)
	}
}

// extend appends the escapes of text, the committed text from offset at
// (== m.upto), with a mark every m.every bytes.
func (m *jsonMirror) extend(at int64, text []byte) {
	// Room for all of it at once: growing by appends would copy and fault
	// in the copy several times over.
	m.esc = slices.Grow(m.esc, escapedSize(len(text)))
	for i := 0; i < len(text); {
		j := min(i+m.every, len(text))
		for j < len(text) && !utf8.RuneStart(text[j]) {
			j++
		}
		m.marks = append(m.marks, jsonMark{raw: at + int64(i), esc: len(m.esc)})
		m.esc = jsonstr.AppendChars(m.esc, text[i:j])
		i = j
	}
	m.upto = at + int64(len(text))
}

// escapedSize estimates the JSON form of n bytes of text: a line end in
// every 64 bytes or so becomes two bytes, and a little more for quotes.
func escapedSize(n int) int { return n + n/32 + 2 }

// prune drops the escaped text before the last mark at or before offset
// base, once that is a quarter of the copy (so it is moved rarely).
func (m *jsonMirror) prune(base int64) {
	i := sort.Search(len(m.marks), func(i int) bool { return m.marks[i].raw > base }) - 1
	if i <= 0 {
		return
	}
	cut := m.marks[i].esc
	if cut < len(m.esc)/4 {
		return
	}
	m.esc = m.esc[:copy(m.esc, m.esc[cut:])]
	m.marks = m.marks[:copy(m.marks, m.marks[i:])]
	for j := range m.marks {
		m.marks[j].esc -= cut
	}
}
