package acp

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math/rand"
	"strings"
	"testing"
	"time"
)

// stdJSON is encoding/json's form of s without HTML escaping: what
// appendJSONString must produce byte for byte.
func stdJSON(t testing.TB, s string) []byte {
	t.Helper()
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(s); err != nil {
		t.Fatal(err)
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n"))
}

func TestAppendJSONString(t *testing.T) {
	cases := []string{
		"",
		"plain ascii that is longer than eight bytes",
		`quote " and backslash \ inside`,
		"controls \x00\x01\x07\b\t\n\v\f\r\x1b\x1f and DEL \x7f",
		"utf-8: é ✓ 🙂 \u2028 \u2029 done",
		"invalid: \xff\xfe ok \xe2\x9c then a split \xe2",
		"<html> & friends stay as they are",
		strings.Repeat("01234567", 9) + "\"" + strings.Repeat("x", 15) + "\n",
	}
	rng := rand.New(rand.NewSource(7))
	alphabet := []byte("ab\"\\\n\t\x00\x1f\x7f\xc3\xa9\xe2\x80\xa8\xff")
	for i := 0; i < 300; i++ {
		b := make([]byte, rng.Intn(100))
		for j := range b {
			if rng.Intn(3) == 0 {
				b[j] = alphabet[rng.Intn(len(alphabet))]
			} else {
				b[j] = byte('a' + rng.Intn(26))
			}
		}
		cases = append(cases, string(b))
	}
	for _, s := range cases {
		if got, want := appendJSONString(nil, []byte(s)), stdJSON(t, s); !bytes.Equal(got, want) {
			t.Errorf("appendJSONString(%q) = %s, want %s", s, got, want)
		}
	}
}

func FuzzJSONString(f *testing.F) {
	f.Add("plain")
	f.Add("\"\\\x00\u2028\xff")
	f.Fuzz(func(t *testing.T, s string) {
		if got, want := appendJSONString(nil, []byte(s)), stdJSON(t, s); !bytes.Equal(got, want) {
			t.Fatalf("appendJSONString(%q) = %s, want %s", s, got, want)
		}
	})
}

// TestSpliceWriter: a message carrying a placeholder is written with the
// text's JSON string in its place, in pieces cut at character
// boundaries; other messages and unknown placeholders pass unchanged.
func TestSpliceWriter(t *testing.T) {
	big := strings.Repeat("é✓\"x\n", spliceChunk/3) // multi-byte characters across every piece boundary
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
	result, err := json.Marshal(terminalOutputResponse{Output: s.bigText([]byte(big), time.Now(), func() { released++ }), Truncated: true})
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
	if len(observed) != 1 || observed[0] != len(big) {
		t.Errorf("observed %v, want one splice of %d bytes", observed, len(big))
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
	if small := s.bigText([]byte("short"), time.Now(), func() { released++ }); small.s != nil || small.str != "short" || released != 1 {
		t.Errorf("a short text: spliced %v, str %q, released %d times; want a plain string, released at once", small.s != nil, small.str, released)
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

func BenchmarkAppendJSONString(b *testing.B) {
	text := strings.Repeat(strings.Repeat("0123456789", 7)+"\n", 1<<20/71)
	b.SetBytes(int64(len(text)))
	src := []byte(text)
	var dst []byte
	for i := 0; i < b.N; i++ {
		dst = appendJSONString(dst[:0], src)
	}
}
