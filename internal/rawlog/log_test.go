package rawlog

import (
	"bytes"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"
)

func TestRawLogRead(t *testing.T) {
	lines := func(from, to int) string {
		var b strings.Builder
		for i := from; i <= to; i++ {
			fmt.Fprintf(&b, "line%02d\n", i) // 7 bytes each
		}
		return b.String()
	}
	tests := []struct {
		name     string
		size     int
		appends  []string
		from     int64
		maxBytes int
		maxLines int
		want     string
		next     int64
		skipped  bool
	}{
		{"all from zero", 1 << 10, []string{"ab", "c\nd"}, 0, 0, 0, "abc\nd", 5, false},
		{"from the middle", 1 << 10, []string{"abcdef"}, 2, 0, 0, "cdef", 6, false},
		{"at the end", 1 << 10, []string{"abc"}, 3, 0, 0, "", 3, false},
		{"beyond the end is the end", 1 << 10, []string{"abc"}, 9, 0, 0, "", 3, false},
		{"max bytes", 1 << 10, []string{"abcdef"}, 1, 3, 0, "bcd", 4, false},
		{"overwritten skips past the first kept newline", 21, []string{lines(1, 5)}, 0, 0, 0, lines(4, 5), 35, true},
		{"overwritten without newline", 4, []string{"abcdefgh"}, 0, 0, 0, "efgh", 8, true},
		{"too many lines pending", 1 << 10, []string{lines(1, 10)}, 0, 0, 3, lines(8, 10), 70, true},
		{"exactly max lines pending", 1 << 10, []string{lines(1, 3)}, 0, 0, 3, lines(1, 3), 21, false},
		{"partial last line counts with its newest", 1 << 10, []string{lines(1, 4) + "tail"}, 0, 0, 2, lines(3, 4) + "tail", 32, true},
		{"lines skipped across the ring's wrap", 30, []string{lines(1, 6), lines(7, 9)}, 40, 0, 2, lines(8, 9), 63, true},
		{"wrapped read", 10, []string{"0123456789", "abcd"}, 6, 0, 0, "6789abcd", 14, false},
		{"one huge append keeps its tail", 8, []string{"x", strings.Repeat("y", 20) + "\nz"}, 0, 0, 0, "z", 23, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			l := New(tc.size)
			for _, a := range tc.appends {
				l.Append([]byte(a))
			}
			c := l.Read(tc.from, tc.maxBytes, tc.maxLines)
			if string(c.Data) != tc.want || c.Next != tc.next || c.Skipped != tc.skipped || c.Closed {
				t.Errorf("Read(%d, %d, %d) = %q next %d skipped %v closed %v; want %q next %d skipped %v",
					tc.from, tc.maxBytes, tc.maxLines, c.Data, c.Next, c.Skipped, c.Closed, tc.want, tc.next, tc.skipped)
			}
		})
	}
}

// TestRawLogFollow: a reader following Next gets every byte exactly once
// while nothing is overwritten, whatever the sizes of appends and reads.
func TestRawLogFollow(t *testing.T) {
	l := New(64)
	var want, got bytes.Buffer
	var next int64
	for i := 0; i < 500; i++ {
		p := []byte(fmt.Sprintf("%d,", i))
		l.Append(p)
		want.Write(p)
		if i%3 == 0 {
			c := l.Read(next, 5+i%11, 0)
			if c.Skipped {
				t.Fatalf("skipped at %d", i)
			}
			got.Write(c.Data)
			next = c.Next
		}
		for l.Total()-next > 32 {
			c := l.Read(next, 16, 0)
			got.Write(c.Data)
			next = c.Next
		}
	}
	l.Close()
	c := l.Read(next, 0, 0)
	got.Write(c.Data)
	if !c.Closed || got.String() != want.String() {
		t.Fatalf("closed %v, followed %d bytes of %d", c.Closed, got.Len(), want.Len())
	}
}

func TestRawLogNotifyAndClose(t *testing.T) {
	l := New(16)
	for i := 0; i < 100; i++ {
		l.Append([]byte("x")) // never blocks, nobody is reading
	}
	select {
	case <-l.Notify():
	case <-time.After(5 * time.Second):
		t.Fatal("no notification after appends")
	}
	if c := l.Read(0, 0, 0); c.Closed {
		t.Fatal("closed before Close")
	}
	l.Close()
	select {
	case <-l.Notify():
	case <-time.After(5 * time.Second):
		t.Fatal("no notification at close")
	}
	c := l.Read(90, 4, 0)
	if c.Closed || string(c.Data) != "xxxx" {
		t.Fatalf("a partial read after close: %q closed=%v, want 4 bytes and not closed", c.Data, c.Closed)
	}
	if c = l.Read(c.Next, 0, 0); !c.Closed || len(c.Data) != 6 {
		t.Fatalf("final read %q closed=%v, want 6 bytes and closed", c.Data, c.Closed)
	}
	l.Append([]byte("late"))
	if l.Total() != 100 {
		t.Fatal("append after close was kept")
	}
}

// TestRawLogConcurrent: a writer and a reader racing (run with -race).
func TestRawLogConcurrent(t *testing.T) {
	l := New(1 << 10)
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for i := 0; i < 10000; i++ {
			l.Append([]byte("0123456789\n"))
		}
		l.Close()
	}()
	var next int64
	deadline := time.After(10 * time.Second)
	for {
		c := l.Read(next, 512, 20)
		if c.Skipped && len(c.Data) > 0 && !bytes.HasPrefix(c.Data, []byte("0123")) {
			t.Fatalf("skipped to %q, not to a line start", c.Data[:min(len(c.Data), 12)])
		}
		next = c.Next
		if c.Closed {
			break
		}
		select {
		case <-l.Notify():
		case <-deadline:
			t.Fatal("reader never saw the close")
		}
	}
	wg.Wait()
	if next != 110000 {
		t.Fatalf("reader ended at %d, want 110000", next)
	}
}
