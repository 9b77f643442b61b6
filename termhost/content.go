package termhost

import (
	"unicode/utf8"

	"github.com/agentrun/agentrun.nvim/ahp"
)

// Why this file exists: a live terminal's content parts keep their text
// in one fixed ring of bytes instead of in the parts' strings. Appending
// pty output to immutable strings (appendText) must copy the retained
// window whenever its buffer fills, which for a command printing hundreds
// of MB costs about two bytes allocated per byte printed; the ring costs
// one copy of each byte and no allocation once it has grown. Text is
// turned into strings only when someone asks (State, Subscribe, the data
// actions of a subscriber).
//
// Every byte of terminal/data goes to the last part (state.go's
// appendData rule), so each part's text is one contiguous stretch of the
// stream: part i covers [starts[i], starts[i+1]) of it, the last part up
// to the end. The ring keeps the newest ContentLimits.MaxBytes bytes;
// text older than that is gone, which trims the head of the content as
// Trim would (AHP lets the server bound it).

// contentRing is the bounded byte stream behind a terminal's parts.
type contentRing struct {
	size  int
	buf   []byte // grows to size, then is used as a ring
	total int64  // bytes ever written
}

func (r *contentRing) write(p []byte) {
	if len(p) >= r.size {
		// Only p's tail survives: go to ring mode at once, where an
		// offset's place is offset % size.
		if len(r.buf) < r.size {
			r.buf = append(r.buf, make([]byte, r.size-len(r.buf))...)
		}
		r.total += int64(len(p) - r.size)
		p = p[len(p)-r.size:]
	}
	for len(p) > 0 {
		if len(r.buf) < r.size {
			n := min(len(p), r.size-len(r.buf))
			r.buf = append(r.buf, p[:n]...)
			r.total += int64(n)
			p = p[n:]
			continue
		}
		n := copy(r.buf[int(r.total%int64(r.size)):], p)
		r.total += int64(n)
		p = p[n:]
	}
}

// oldest is the offset of the oldest byte kept.
func (r *contentRing) oldest() int64 { return max(0, r.total-int64(r.size)) }

// text returns the bytes [from, to) that are still kept, starting at a
// character boundary when the head was cut.
func (r *contentRing) text(from, to int64) string {
	if o := r.oldest(); from < o {
		from = o
		// Cut forward to a character start, as Trim does.
		for from < to && !utf8.RuneStart(r.at(from)) {
			from++
		}
	}
	if from >= to {
		return ""
	}
	out := make([]byte, 0, to-from)
	if len(r.buf) < r.size { // not wrapped yet: offsets are indices
		return string(append(out, r.buf[from:to]...))
	}
	a, b := int(from%int64(r.size)), int(to%int64(r.size))
	if a < b || b == 0 {
		if b == 0 {
			b = r.size
		}
		return string(append(out, r.buf[a:b]...))
	}
	out = append(out, r.buf[a:]...)
	return string(append(out, r.buf[:b]...))
}

func (r *contentRing) at(off int64) byte {
	if len(r.buf) < r.size {
		return r.buf[off]
	}
	return r.buf[off%int64(r.size)]
}

// dataLocked applies terminal/data to the live state: the part metadata
// follows appendData's rule, the bytes go to the ring.
func (a *liveState) dataLocked(b []byte) {
	c := a.state.Content
	if n := len(c); n == 0 || !(c[n-1].Type == ahp.PartUnclassified || c[n-1].Type == ahp.PartCommand && !c[n-1].IsComplete) {
		a.state.Content = append(c, ahp.ContentPart{Type: ahp.PartUnclassified})
		a.syncPartsLocked()
	}
	a.text.write(b)
}

// syncPartsLocked gives parts the reducer added (commandExecuted, data
// after a finished command) their start in the stream, forgets the starts
// of parts it removed (cleared), and bounds the number of parts.
func (a *liveState) syncPartsLocked() {
	n := len(a.state.Content)
	if n < len(a.starts) {
		a.starts = a.starts[:0] // cleared: only an empty list shrinks
	}
	for len(a.starts) < n {
		a.starts = append(a.starts, a.text.total)
	}
	maxParts := a.limits.MaxParts
	if maxParts <= 0 {
		maxParts = ahp.DefaultContentParts
	}
	if n > maxParts+maxParts/4 { // in steps, not on every new part
		drop := n - maxParts
		a.state.Content = append([]ahp.ContentPart(nil), a.state.Content[drop:]...)
		a.starts = append([]int64(nil), a.starts[drop:]...)
	}
}

// snapshotLocked copies the newest n parts of the state (all when n <= 0)
// with their text when withText, sharing no mutable memory with ours.
func (a *liveState) snapshotLocked(n int, withText bool) ahp.TerminalState {
	s := a.state
	s.Content = nil
	s = s.Clone()
	parts := a.state.Content
	first := 0
	if n > 0 && len(parts) > n {
		first = len(parts) - n
	}
	s.Content = make([]ahp.ContentPart, 0, len(parts)-first)
	for i := first; i < len(parts); i++ {
		p := parts[i].Detached()
		if withText {
			end := a.text.total
			if i+1 < len(parts) {
				end = a.starts[i+1]
			}
			switch p.Type {
			case ahp.PartCommand:
				p.Output = a.text.text(a.starts[i], end)
			case ahp.PartUnclassified:
				p.Value = a.text.text(a.starts[i], end)
			}
		}
		s.Content = append(s.Content, p)
	}
	return s
}

// tailText returns up to n of the newest bytes of the stream.
func (a *liveState) tailText(n int) string {
	return a.text.text(max(0, a.text.total-int64(n)), a.text.total)
}
