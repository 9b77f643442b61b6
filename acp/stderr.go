package acp

import (
	"bufio"
	"io"
	"strings"
	"sync"
)

// maxStderrLine bounds one logged stderr line; longer lines are split.
const maxStderrLine = 16 << 10

// splitLines calls fn for every line read from r (without the line end),
// splitting overlong lines, until r ends.
func splitLines(r io.Reader, fn func(line string)) {
	br := bufio.NewReaderSize(r, maxStderrLine)
	for {
		line, err := br.ReadSlice('\n')
		if len(line) > 0 {
			s := strings.TrimRight(string(line), "\r\n")
			if s != "" {
				fn(s)
			}
		}
		if err != nil && err != bufio.ErrBufferFull {
			return
		}
	}
}

// lineTail keeps the last n lines added.
type lineTail struct {
	mu  sync.Mutex
	n   int
	buf []string
}

func newLineTail(n int) *lineTail { return &lineTail{n: n} }

func (t *lineTail) add(line string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.buf = append(t.buf, line)
	if len(t.buf) > t.n {
		t.buf = append(t.buf[:0], t.buf[len(t.buf)-t.n:]...)
	}
}

func (t *lineTail) lines() []string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return append([]string(nil), t.buf...)
}
