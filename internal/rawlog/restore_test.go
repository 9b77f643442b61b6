package rawlog

import (
	"bytes"
	"testing"
)

// A log made again from what another kept reads as that one did: the
// same bytes, the dropped ones counted as skipped, and closed.
func TestRestoreReadsAsTheLogItCameFrom(t *testing.T) {
	tests := []struct {
		name    string
		size    int
		appends []string
	}{
		{"empty", 64, nil},
		{"growing", 64, []string{numbered(1, 3)}},
		{"full ring", 21, []string{numbered(1, 3)}},
		{"wrapped ring", 20, []string{numbered(1, 9), numbered(10, 12)}},
		{"one append larger than the log", 16, []string{numbered(1, 30)}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			orig := New(tt.size)
			for _, a := range tt.appends {
				orig.Append([]byte(a))
			}
			start, data := orig.Kept()
			if got := start + int64(len(data)); got != orig.Total() {
				t.Fatalf("Kept: start %d + %d bytes, want total %d", start, len(data), orig.Total())
			}
			want := orig.NewReader(0).Read(0)
			r := Restore(start, data)
			if !r.Closed() {
				t.Fatal("restored log not closed")
			}
			got := r.NewReader(0).Read(0)
			if !bytes.Equal(got.Data, want.Data) || got.SkippedBytes != want.SkippedBytes || !got.Closed {
				t.Fatalf("restored read %q (skipped %d, closed %v), want %q (skipped %d)", got.Data, got.SkippedBytes, got.Closed, want.Data, want.SkippedBytes)
			}
		})
	}
}
