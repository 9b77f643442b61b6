package acp

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strings"
	"testing"
)

// seqText is what `seq 1 n` renders to.
func seqText(n int) string {
	var b strings.Builder
	for i := 1; i <= n; i++ {
		fmt.Fprintf(&b, "%d\n", i)
	}
	return b.String()
}

// The benchmark's prompt forms report what the agent observed: every one
// of 8 concurrent terminals exits 0 with exactly the expected output, and
// terminal/output returns the whole retained text.
func TestDemoBenchmarkForms(t *testing.T) {
	want := seqText(3000)
	sum := sha256.Sum256([]byte(want))
	tests := []struct {
		prompt, wantMsg string
	}{
		{"!parallel 8 seq 1 3000", fmt.Sprintf("parallel n=8 exit0=8 identical=8 sha256=%s bytes=%d ", hex.EncodeToString(sum[:8]), len(want))},
		{"!outputlat 20 seq 1 3000", fmt.Sprintf("outputlat n=20 retained=%d ", len(want))},
		{"!parallel 0 true", "!parallel: want a count from 1 to 256"},
	}
	for _, tc := range tests {
		t.Run(tc.prompt, func(t *testing.T) {
			r := newRecorder()
			a, _ := start(t, selfAgent(t, "demo"), r, Options{})
			s := newSession(t, a)
			if stop := prompt(t, s, tc.prompt); stop != "end_turn" {
				t.Fatalf("stop reason %q", stop)
			}
			if got := r.text(s.ID()); !strings.Contains(got, tc.wantMsg) {
				t.Fatalf("agent said %q, want it to contain %q", got, tc.wantMsg)
			}
		})
	}
}
