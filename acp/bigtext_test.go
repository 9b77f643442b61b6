package acp

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"
)

// TestSpliceWriter: a message carrying a placeholder is written with the
// text's JSON string in its place; other messages and unknown
// placeholders pass unchanged.
func TestSpliceWriter(t *testing.T) {
	big := strings.Repeat("é✓\"x\n", 20000)
	encoded, err := json.Marshal(big)
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	s := newSpliceWriter(&out)
	var observed []int
	s.observe = func(n int, took, writing time.Duration) { observed = append(observed, n) }

	plain := []byte(`{"jsonrpc":"2.0","id":1,"result":{}}` + "\n")
	if _, err := s.Write(plain); err != nil || !bytes.Equal(out.Bytes(), plain) {
		t.Fatalf("plain message written as %q (err %v)", out.Bytes(), err)
	}

	out.Reset()
	released := 0
	result, err := json.Marshal(terminalOutputResponse{Output: s.encodedText(encoded, time.Now(), func() { released++ }), Truncated: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(result) > 200 {
		t.Fatalf("the result holds the text itself (%d bytes), not a placeholder", len(result))
	}
	msg := append([]byte(`{"jsonrpc":"2.0","id":2,"result":`), result...)
	msg = append(msg, "}\n"...)
	if n, err := s.Write(msg); err != nil || n != len(msg) {
		t.Fatalf("Write = %d, %v; want %d, nil", n, err, len(msg))
	}
	var got struct {
		Result struct {
			Output    string `json:"output"`
			Truncated bool   `json:"truncated"`
		} `json:"result"`
	}
	if err := json.Unmarshal(out.Bytes(), &got); err != nil {
		t.Fatalf("spliced message is not JSON: %v", err)
	}
	if got.Result.Output != big || !got.Result.Truncated {
		t.Errorf("spliced output differs (%d bytes, want %d), truncated %v", len(got.Result.Output), len(big), got.Result.Truncated)
	}
	if len(observed) != 1 || observed[0] != len(encoded) {
		t.Errorf("observed %v, want one splice of %d bytes", observed, len(encoded))
	}
	if s.pending.Load() != 0 || released != 1 {
		t.Errorf("%d texts still pending after the write, released %d times (want once)", s.pending.Load(), released)
	}

	out.Reset()
	stale := append(append([]byte(`{"x":`), s.marker...), `99"}`...)
	if _, err := s.Write(stale); err != nil || !bytes.Equal(out.Bytes(), stale) {
		t.Errorf("unknown placeholder changed: %q", out.Bytes())
	}
	released = 0
	if small := s.encodedText([]byte(`"short"`), time.Now(), func() { released++ }); small.s != nil || string(small.encoded) != `"short"` || released != 1 {
		t.Errorf("a short text: spliced %v, encoded %s, released %d times; want a plain string, released at once", small.s != nil, small.encoded, released)
	}
}

// TestBigOutputExactThroughTheSDK: terminal/output of big texts with
// quotes, backslashes, tabs and multi-byte characters reaches an SDK agent
// exactly (it checks a SHA-256 of what it decoded).
func TestBigOutputExactThroughTheSDK(t *testing.T) {
	var want strings.Builder
	for i := 1; i <= 4000; i++ {
		fmt.Fprintf(&want, "q\"b\\ é\t✓ %d\n", i)
	}
	sum := sha256.Sum256([]byte(want.String()))
	r := newRecorder()
	a, _ := start(t, selfAgent(t, "demo"), r, Options{})
	s := newSession(t, a)
	line := `!parallel 2 i=1; while [ $i -le 4000 ]; do printf 'q"b\\ é\t✓ %d\n' $i; i=$((i+1)); done`
	if stop := prompt(t, s, line); stop != "end_turn" {
		t.Fatalf("stop reason %q", stop)
	}
	wantMsg := fmt.Sprintf("parallel n=2 exit0=2 identical=2 sha256=%s bytes=%d ", hex.EncodeToString(sum[:8]), want.Len())
	if got := r.text(s.ID()); !strings.Contains(got, wantMsg) {
		t.Fatalf("agent said %q, want %q", got, wantMsg)
	}
}
