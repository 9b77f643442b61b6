package rawlog

import (
	"bytes"
	"fmt"
	"math/rand"
	"strings"
	"testing"
)

// numbered returns lines "lineNN\n" from..to (7 bytes each below 100).
func numbered(from, to int) string {
	var b strings.Builder
	for i := from; i <= to; i++ {
		fmt.Fprintf(&b, "line%02d\n", i)
	}
	return b.String()
}

func TestRawReaderSkipAhead(t *testing.T) {
	tests := []struct {
		name     string
		size     int
		maxLines int
		appends  []string
		readTo   int // bytes read before skipping
		want     string
		skipped  int64
	}{
		{"nothing pending", 1 << 10, 3, nil, 0, "", 0},
		{"no more than max lines", 1 << 10, 3, []string{numbered(1, 3)}, 0, numbered(1, 3), 0},
		{"to the newest lines", 1 << 10, 3, []string{numbered(1, 10)}, 0, numbered(8, 10), 49},
		{"a partial line counts with the newest", 1 << 10, 2, []string{numbered(1, 4) + "tail"}, 0, numbered(3, 4) + "tail", 14},
		{"after reading some", 1 << 10, 3, []string{numbered(1, 10)}, 14, numbered(8, 10), 35},
		{"no line bound keeps everything", 1 << 10, 0, []string{numbered(1, 10)}, 0, numbered(1, 10), 0},
		{"overwritten: first kept line start", 21, 0, []string{numbered(1, 5)}, 0, numbered(4, 5), 21},
		{"overwritten: newest lines when further", 30, 2, []string{numbered(1, 9)}, 0, numbered(8, 9), 49},
		{"overwritten without a newline", 4, 0, []string{"abcdefgh"}, 0, "efgh", 4},
		{"across the ring's wrap", 30, 2, []string{numbered(1, 6), numbered(7, 9)}, 0, numbered(8, 9), 49},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			l := New(tc.size)
			for _, a := range tc.appends {
				l.Append([]byte(a))
			}
			r := l.NewReader(tc.maxLines)
			if tc.readTo > 0 {
				r.Read(tc.readTo)
			}
			if got := r.SkipAhead(); got != tc.skipped {
				t.Errorf("SkipAhead passed %d bytes, want %d", got, tc.skipped)
			}
			_, lines := r.Behind()
			c := r.Read(0)
			if string(c.Data) != tc.want || c.Skipped {
				t.Errorf("then Read = %q (skipped %v), want %q", c.Data, c.Skipped, tc.want)
			}
			if want := int64(strings.Count(tc.want, "\n")); lines != want {
				t.Errorf("Behind lines after the skip = %d, want %d", lines, want)
			}
		})
	}
}

// TestRawReaderOverwrittenRead: Read skips by itself only when its offset
// was overwritten, and says how far.
func TestRawReaderOverwrittenRead(t *testing.T) {
	l := New(30)
	r := l.NewReader(2)
	l.Append([]byte(numbered(1, 3)))
	if c := r.Read(7); string(c.Data) != numbered(1, 1) || c.Skipped {
		t.Fatalf("first read %q skipped %v", c.Data, c.Skipped)
	}
	// 3 lines pending is more than 2, but Read leaves line skipping to SkipAhead.
	if c := r.Read(7); string(c.Data) != numbered(2, 2) || c.Skipped {
		t.Fatalf("second read %q skipped %v", c.Data, c.Skipped)
	}
	l.Append([]byte(numbered(4, 9))) // offsets 14..20 are gone
	c := r.Read(0)
	if string(c.Data) != numbered(8, 9) || !c.Skipped || c.SkippedBytes != 35 || c.Next != 63 {
		t.Fatalf("read after overwrite %q skipped %v by %d next %d; want lines 8-9, 35 bytes skipped, next 63",
			c.Data, c.Skipped, c.SkippedBytes, c.Next)
	}
}

// TestRawReaderFollowsExactly: random appends (some wrapping the ring)
// and reads; while the reader keeps up it gets every byte once, and its
// line count always matches the newlines really pending.
func TestRawReaderFollowsExactly(t *testing.T) {
	rng := rand.New(rand.NewSource(1))
	l := New(512)
	r := l.NewReader(0)
	var all, got bytes.Buffer
	for i := 0; i < 2000; i++ {
		var p []byte
		for k := rng.Intn(40); k > 0; k-- {
			if rng.Intn(5) == 0 {
				p = append(p, '\n')
			} else {
				p = append(p, byte('a'+rng.Intn(26)))
			}
		}
		l.Append(p)
		all.Write(p)
		bytesBehind, lines := r.Behind()
		if want := int64(bytes.Count(all.Bytes()[r.Offset():], nl)); lines != want || bytesBehind != int64(all.Len())-r.Offset() {
			t.Fatalf("step %d: Behind = %d bytes, %d lines; want %d, %d", i, bytesBehind, lines, int64(all.Len())-r.Offset(), want)
		}
		if rng.Intn(3) == 0 {
			c := r.Read(1 + rng.Intn(64))
			if c.Skipped {
				t.Fatalf("step %d: skipped while keeping up", i)
			}
			got.Write(c.Data)
		}
		for b, _ := r.Behind(); b > 256; b, _ = r.Behind() {
			got.Write(r.Read(100).Data)
		}
	}
	l.Close()
	c := r.Read(0)
	got.Write(c.Data)
	if !c.Closed || !bytes.Equal(got.Bytes(), all.Bytes()) {
		t.Fatalf("closed %v; followed %d bytes of %d, equal %v", c.Closed, got.Len(), all.Len(), bytes.Equal(got.Bytes(), all.Bytes()))
	}
}

// TestRawReaderNoAllocations: following a log reuses one buffer.
func TestRawReaderNoAllocations(t *testing.T) {
	l := New(1 << 16)
	r := l.NewReader(100)
	line := []byte(strings.Repeat("x", 60) + "\n")
	for i := 0; i < 2000; i++ {
		l.Append(line) // fill the ring once: appends no longer grow it
	}
	r.SkipAhead()
	r.Read(4096)
	allocs := testing.AllocsPerRun(200, func() {
		l.Append(line)
		r.SkipAhead()
		r.Read(4096)
	})
	if allocs != 0 {
		t.Errorf("append + skip + read allocate %.1f times, want 0", allocs)
	}
}

// Offset returns the offset of the next byte the reader will return.
func (r *Reader) Offset() int64 { return r.off }
