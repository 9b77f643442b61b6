package termhost

import (
	"slices"
	"sort"
	"unicode/utf8"

	"github.com/agentrun/agentrun.nvim/internal/jsonstr"
)

// An agent polls terminal/output, and each answer carries the whole
// retained text as a JSON string: a MiB of text is ~0.7 ms of escaping per
// call. Committed lines never change once committed (only the current
// line is edited, and compaction only cuts from the front), so the Store
// can keep their escaped form and extend it as lines are committed; an
// answer is then a copy of that form from the snapshot's start, plus the
// freshly escaped current line. The escaped copy is kept only for a Store
// that was asked twice for a big text (a reader that asks once pays one
// encoding, as before, and no memory); it is extended lazily, when
// asked, by the text committed since the last time.

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

// AppendJSON appends the text Snapshot would return, as a JSON string
// (quotes included, escaped as internal/jsonstr does), to dst, and
// reports whether anything was dropped.
func (s *Store) AppendJSON(dst []byte) ([]byte, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	start, truncated := 0, s.dropped
	if len(s.buf) > s.limit {
		start = len(s.buf) - len(tailAtBoundary(s.buf, s.limit))
		truncated = true
	}
	dst = slices.Grow(dst, escapedSize(len(s.buf)-start))
	dst = append(dst, '"')
	if committed := s.lineStart - start; committed > 0 {
		m := &s.json
		if !m.on && committed >= m.min {
			m.asked++
			m.on = m.asked >= 2
		}
		if m.on {
			s.extendJSON(start)
			dst = s.appendMirrored(dst, start)
		} else {
			dst = jsonstr.AppendChars(dst, s.buf[start:s.lineStart])
		}
		start = s.lineStart
	}
	dst = jsonstr.AppendChars(dst, s.buf[start:])
	return append(dst, '"'), truncated
}

// extendJSON brings the escaped copy up to the end of the committed text,
// first dropping what compaction cut from the buffer; a copy started
// afresh starts at buf index from (the snapshot's start).
func (s *Store) extendJSON(from int) {
	m := &s.json
	if m.upto < s.base || len(m.marks) == 0 {
		// Never started, or text was cut before it was escaped.
		m.esc, m.marks, m.upto = m.esc[:0], m.marks[:0], s.base+int64(from)
	}
	m.prune(s.base)
	end := s.base + int64(s.lineStart)
	// Room for what is to come at once: growing by appends would copy
	// and fault in the copy several times over.
	m.esc = slices.Grow(m.esc, escapedSize(int(end-m.upto)))
	for m.upto < end {
		from := int(m.upto - s.base)
		to := min(from+m.every, s.lineStart)
		for to < s.lineStart && !utf8.RuneStart(s.buf[to]) {
			to++
		}
		m.marks = append(m.marks, jsonMark{raw: m.upto, esc: len(m.esc)})
		m.esc = jsonstr.AppendChars(m.esc, s.buf[from:to])
		m.upto = s.base + int64(to)
	}
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

// appendMirrored appends the escaped committed text from buf index start
// (a character boundary, at or after the copy's first mark): the part
// before the next mark escaped afresh, the rest copied.
func (s *Store) appendMirrored(dst []byte, start int) []byte {
	m := &s.json
	abs := s.base + int64(start)
	i := sort.Search(len(m.marks), func(i int) bool { return m.marks[i].raw > abs }) // first mark after abs
	if i == 0 {
		// Cannot happen (the copy starts at or before the buffer), but a
		// fresh encoding is always right.
		return jsonstr.AppendChars(dst, s.buf[start:s.lineStart])
	}
	if m.marks[i-1].raw == abs {
		return append(dst, m.esc[m.marks[i-1].esc:]...)
	}
	if i == len(m.marks) {
		return jsonstr.AppendChars(dst, s.buf[start:s.lineStart])
	}
	next := m.marks[i]
	dst = jsonstr.AppendChars(dst, s.buf[start:next.raw-s.base])
	return append(dst, m.esc[next.esc:]...)
}
