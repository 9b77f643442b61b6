package rawlog

import "bytes"

// Reader follows a Log from its start for one display. It knows how
// many lines it is behind without scanning (the log counts newlines as
// they are appended, the reader counts what it read), so a display can
// ask before every read whether to skip ahead, and it returns its chunks
// in one reused buffer, so following a flood allocates nothing.
//
// A Reader is for one goroutine; the log it reads may be appended to
// concurrently.
type Reader struct {
	log      *Log
	maxLines int
	off      int64 // offset of the next byte to read
	lines    int64 // newlines in the log before off
	buf      []byte
}

// NewReader returns a reader at offset 0. When it has to skip ahead it
// lands at the start of the newest maxLines lines (maxLines <= 0: no line
// bound), which is where a display with maxLines of scrollback would end
// up anyway.
func (l *Log) NewReader(maxLines int) *Reader {
	return &Reader{log: l, maxLines: maxLines}
}

// Behind returns how many bytes and how many newlines lie between the
// reader and the end of the log (including any that were overwritten).
func (r *Reader) Behind() (bytes, lines int64) {
	l := r.log
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.total - r.off, l.lines - r.lines
}

// SkipAhead moves the reader forward when more than maxLines newlines are
// pending, or when its offset was overwritten: to the start of the newest
// maxLines lines (just after a newline), or at least to the first line
// start still kept. It returns how many bytes it passed over (0: none).
func (r *Reader) SkipAhead() int64 {
	r.log.mu.Lock()
	defer r.log.mu.Unlock()
	return r.skipLocked()
}

func (r *Reader) skipLocked() int64 {
	l := r.log
	from := r.off
	if oldest := max(l.total-int64(l.size), 0); r.off < oldest {
		r.off = oldest
		if i := l.index(oldest, '\n'); i >= 0 {
			r.off = i + 1
		}
		r.lines = l.lines - l.count(r.off)
	}
	if r.maxLines > 0 && l.lines-r.lines > int64(r.maxLines) {
		if at, ok := l.walkBack(r.off, r.maxLines); ok {
			r.off = at
			r.lines = l.lines - int64(r.maxLines)
		}
	}
	return r.off - from
}

// Read returns up to maxBytes bytes (<= 0: no limit) from the reader's
// offset and moves past them. If the offset was overwritten it first
// skips ahead as SkipAhead does (Skipped, SkippedBytes); it never skips
// for pending lines by itself. Closed is set when the log is closed and
// this read reached its end. Data is only valid until the next Read.
func (r *Reader) Read(maxBytes int) Chunk {
	l := r.log
	l.mu.Lock()
	var c Chunk
	if r.off < max(l.total-int64(l.size), 0) {
		c.SkippedBytes = r.skipLocked()
		c.Skipped = true
	}
	end := l.total
	if maxBytes > 0 && end-r.off > int64(maxBytes) {
		end = r.off + int64(maxBytes)
	}
	a, b := l.segments(r.off, end)
	r.buf = append(append(r.buf[:0], a...), b...)
	c.Closed = l.closed && end == l.total
	l.mu.Unlock()

	r.off = end
	r.lines += int64(bytes.Count(r.buf, nl))
	c.Data = r.buf
	c.Next = end
	return c
}

// count returns the number of newlines from offset from (kept) to the end.
func (l *Log) count(from int64) int64 {
	a, b := l.segments(from, l.total)
	return int64(bytes.Count(a, nl) + bytes.Count(b, nl))
}

// walkBack returns where the newest maxLines lines start, searching no
// further back than from: just after the (maxLines+1)-th newline from
// the end. ok is false when [from, end) holds no more than maxLines
// newlines.
func (l *Log) walkBack(from int64, maxLines int) (int64, bool) {
	a, b := l.segments(from, l.total)
	seen := 0
	for _, seg := range []struct {
		data []byte
		base int64
	}{{b, from + int64(len(a))}, {a, from}} {
		for k := len(seg.data); k > 0; {
			i := bytes.LastIndexByte(seg.data[:k], '\n')
			if i < 0 {
				break
			}
			if seen++; seen == maxLines+1 {
				return seg.base + int64(i) + 1, true
			}
			k = i
		}
	}
	return 0, false
}
