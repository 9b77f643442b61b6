package rawlog

import (
	"bytes"
	"sync"
)

// Chunk is what Log.Read returns.
type Chunk struct {
	// Data is the raw bytes from the (possibly skipped-ahead) offset.
	Data []byte
	// Next is the offset to read from next time.
	Next int64
	// Skipped reports that bytes before Data were passed over (they were
	// overwritten, or more than maxLines lines were pending): a display
	// should reset its attributes before showing Data.
	Skipped bool
	// Closed reports that the pty is drained and nothing more will come
	// after Data.
	Closed bool
	// SkippedBytes is how many bytes were passed over (Reader.Read
	// sets it with Skipped).
	SkippedBytes int64
}

// Log is a bounded log of the raw bytes a terminal's program printed
// (colours and all), for the display. Offsets count every byte ever
// appended; only the newest Size bytes are kept. Appends never block on
// a reader: readers learn of new bytes through Notify and pull them with
// Read at their own pace.
type Log struct {
	mu     sync.Mutex
	size   int
	buf    []byte // grows to size, then is used as a ring
	total  int64  // bytes ever appended; the newest is at total-1
	lines  int64  // newlines ever appended
	closed bool
	notify chan struct{}
}

// New returns a Log keeping the newest size bytes (at least 1).
func New(size int) *Log {
	return &Log{size: max(size, 1), notify: make(chan struct{}, 1)}
}

// Notify returns a channel signalled (1-buffered, never blocking the
// writer) after appends and at close.
func (l *Log) Notify() <-chan struct{} { return l.notify }

func (l *Log) signal() {
	select {
	case l.notify <- struct{}{}:
	default:
	}
}

// Append adds p to the log, dropping the oldest bytes beyond its size.
// Appending to a closed log does nothing.
func (l *Log) Append(p []byte) {
	if len(p) == 0 {
		return
	}
	newlines := int64(bytes.Count(p, nl)) // outside the lock: readers never wait on it
	l.mu.Lock()
	if l.closed {
		l.mu.Unlock()
		return
	}
	l.lines += newlines
	if len(p) >= l.size {
		// Only p's tail survives; switch to ring mode at once.
		l.total += int64(len(p) - l.size)
		p = p[len(p)-l.size:]
		if len(l.buf) < l.size {
			l.buf = make([]byte, l.size)
		}
	}
	for len(p) > 0 {
		if len(l.buf) < l.size {
			// Still growing: append up to the size.
			n := min(len(p), l.size-len(l.buf))
			if len(l.buf)+n > cap(l.buf) {
				// Grow by doubling, but never past size.
				nb := make([]byte, len(l.buf), min(l.size, max(2*cap(l.buf), len(l.buf)+n, 4096)))
				copy(nb, l.buf)
				l.buf = nb
			}
			l.buf = append(l.buf, p[:n]...)
			l.total += int64(n)
			p = p[n:]
			continue
		}
		at := int(l.total % int64(l.size))
		n := copy(l.buf[at:], p)
		l.total += int64(n)
		p = p[n:]
	}
	l.mu.Unlock()
	l.signal()
}

// Close marks the end of the stream; readers see Closed once they have
// read everything.
func (l *Log) Close() {
	l.mu.Lock()
	l.closed = true
	l.mu.Unlock()
	l.signal()
}

// Closed reports whether Close was called (readers may still have bytes
// to read).
func (l *Log) Closed() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.closed
}

// Total returns the number of bytes ever appended (the offset after the
// newest byte).
func (l *Log) Total() int64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.total
}

// Read returns up to maxBytes bytes (<= 0: no limit) from offset from.
// When from was already overwritten, or more than maxLines newlines
// (maxLines > 0) lie between from and the end, it skips ahead to a line
// boundary: just after a newline, so that at most maxLines newlines
// follow (or, with no newline in what is kept, to the oldest kept byte),
// and sets Skipped. Closed is set when the log is closed and this read
// reaches its end.
func (l *Log) Read(from int64, maxBytes, maxLines int) Chunk {
	l.mu.Lock()
	defer l.mu.Unlock()
	oldest := max(l.total-int64(l.size), 0)
	var c Chunk
	if from > l.total {
		from = l.total
	}
	if from < oldest {
		from = oldest
		c.Skipped = true
		// Start at a line boundary: after the first kept newline.
		if i := l.index(from, '\n'); i >= 0 {
			from = i + 1
		}
	}
	if maxLines > 0 {
		if start, ok := l.newestLines(from, maxLines); ok {
			from = start
			c.Skipped = true
		}
	}
	end := l.total
	if maxBytes > 0 && end-from > int64(maxBytes) {
		end = from + int64(maxBytes)
	}
	c.Data = l.copyOut(from, end)
	c.Next = end
	c.Closed = l.closed && end == l.total
	return c
}

// segments returns the kept bytes between offsets from and to (both
// within the log) as at most two slices of buf.
func (l *Log) segments(from, to int64) (a, b []byte) {
	if from >= to {
		return nil, nil
	}
	if len(l.buf) < l.size {
		return l.buf[from:to], nil // growing: buf holds offsets [0, total)
	}
	i := int(from % int64(l.size))
	j := int(to % int64(l.size))
	if j == 0 {
		j = l.size
	}
	if i < j {
		return l.buf[i:j], nil
	}
	return l.buf[i:], l.buf[:j]
}

func (l *Log) copyOut(from, to int64) []byte {
	a, b := l.segments(from, to)
	out := make([]byte, 0, len(a)+len(b))
	out = append(out, a...)
	return append(out, b...)
}

// index returns the offset of the first c at or after from, or -1.
func (l *Log) index(from int64, c byte) int64 {
	a, b := l.segments(from, l.total)
	if i := bytes.IndexByte(a, c); i >= 0 {
		return from + int64(i)
	}
	if i := bytes.IndexByte(b, c); i >= 0 {
		return from + int64(len(a)+i)
	}
	return -1
}

// newestLines reports where the newest maxLines lines start when more
// than maxLines newlines lie between from and the end.
func (l *Log) newestLines(from int64, maxLines int) (int64, bool) {
	if l.total-from <= int64(maxLines) {
		return 0, false // fewer bytes than lines: nothing to count
	}
	if l.count(from) <= int64(maxLines) {
		return 0, false
	}
	return l.walkBack(from, maxLines)
}

var nl = []byte{'\n'}

// Kept returns the bytes the log still holds and the offset of the
// first of them (the bytes before it were dropped: Size was reached).
func (l *Log) Kept() (start int64, data []byte) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.buf) == l.size { // a ring: the newest size bytes
		start = max(l.total-int64(l.size), 0)
	}
	return start, l.copyOut(start, l.total)
}

// Restore returns a closed log holding data as the bytes from offset
// start on (what Kept returned): a reader of it skips the start bytes
// before them, as it would have skipped them in the log they came from.
func Restore(start int64, data []byte) *Log {
	if len(data) == 0 {
		l := New(1)
		l.Close()
		return l
	}
	size := len(data)
	l := &Log{size: size, buf: make([]byte, size), notify: make(chan struct{}, 1), closed: true}
	for i, b := range data {
		l.buf[(start+int64(i))%int64(size)] = b
	}
	l.total = start + int64(size)
	l.lines = int64(bytes.Count(data, nl))
	return l
}
