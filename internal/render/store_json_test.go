package render

import (
	"encoding/json"
	"fmt"
	"math/rand"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/agentrun/agentrun.nvim/internal/jsonstr"
)

// TestStoreJSONFollowsTheStream: with the default tuning, a reader
// polling AppendJSON while MiBs of text with quotes, backslashes,
// multi-byte and U+2028 characters, redraws and very long lines stream
// through compactions gets exactly the JSON form of Snapshot every time,
// and the escaped copy stays within twice the committed text.
func TestStoreJSONFollowsTheStream(t *testing.T) {
	const limit = 64 << 10
	rng := rand.New(rand.NewSource(1))
	pieces := []string{"plain text ", `"quoted" `, `back\slash `, "é✓🙂 ", "\u2028", "\t", "10%\r100%", "\x1b[31mred\x1b[0m ", "\x1b[2K"}
	s := NewStore(limit)
	var polled, mirrored int
	for round := 0; round < 400; round++ {
		var b strings.Builder
		for b.Len() < 16<<10 {
			switch rng.Intn(40) {
			case 0:
				b.WriteString(strings.Repeat("long", 5000)) // a line longer than a mark's spacing
			case 1, 2, 3:
				b.WriteString("\r\n")
			default:
				b.WriteString(pieces[rng.Intn(len(pieces))])
				if rng.Intn(4) == 0 {
					fmt.Fprintf(&b, "line %d\n", round)
				}
			}
		}
		in := b.String()
		cut := rng.Intn(len(in))
		s.Append([]byte(in[:cut])) // split anywhere, even inside a character
		s.Append([]byte(in[cut:]))
		if rng.Intn(3) > 0 {
			continue
		}
		polled++
		text, truncated := s.Snapshot()
		want := string(jsonstr.AppendString(nil, []byte(text)))
		got, tr := s.AppendJSON(nil)
		if string(got) != want || tr != truncated {
			t.Fatalf("round %d: AppendJSON differs from the snapshot's JSON (%d vs %d bytes), truncated %v vs %v", round, len(got), len(want), tr, truncated)
		}
		s.mu.Lock()
		if s.json.on {
			mirrored++
			if committed := s.lineStart; len(s.json.esc) > 2*committed+4*jsonMarkEvery {
				t.Errorf("round %d: escaped copy %d bytes for %d committed", round, len(s.json.esc), committed)
			}
		}
		s.mu.Unlock()
	}
	if mirrored < polled-2 {
		t.Errorf("the escaped copy served %d of %d polls; want all but the first", mirrored, polled)
	}
}

// TestStoreJSONOnlyWhenPolled: a Store asked once for its text keeps no
// escaped copy (an agent reading a big output once pays no memory).
func TestStoreJSONOnlyWhenPolled(t *testing.T) {
	s := NewStore(1 << 20)
	s.Append([]byte(strings.Repeat("0123456789 \"quoted\"\n", 10000)))
	s.AppendJSON(nil)
	if s.json.on || cap(s.json.esc) != 0 {
		t.Fatalf("after one call: copy kept=%v (%d bytes)", s.json.on, cap(s.json.esc))
	}
	s.AppendJSON(nil)
	if !s.json.on || len(s.json.esc) == 0 {
		t.Fatalf("after two calls: copy kept=%v (%d bytes)", s.json.on, len(s.json.esc))
	}
}

// BenchmarkStoreAppendJSON: polling the JSON form of 1 MiB of retained
// text (the escaped copy kept) against encoding the snapshot afresh.
func BenchmarkStoreAppendJSON(b *testing.B) {
	line := strings.Repeat("0123456789", 7) + "\n"
	s := NewStore(1 << 20)
	s.Append([]byte(strings.Repeat(line, 3<<20/len(line))))
	var dst []byte
	b.Run("kept", func(b *testing.B) {
		b.SetBytes(1 << 20)
		for b.Loop() {
			dst, _ = s.AppendJSON(dst[:0])
		}
	})
	b.Run("afresh", func(b *testing.B) {
		b.SetBytes(1 << 20)
		for b.Loop() {
			text, _ := s.Snapshot()
			dst = jsonstr.AppendString(dst[:0], []byte(text))
		}
	})
}

// TestStoreJSONWhileAppending: AppendJSON polled while another goroutine
// appends (the pty reader and an agent, as in use; run with -race) always
// gives a JSON string of valid UTF-8 within the limit, and the final
// poll equals the final snapshot.
func TestStoreJSONWhileAppending(t *testing.T) {
	const limit = 32 << 10
	s := NewStore(limit)
	s.json.min, s.json.every = 1, 512
	done := make(chan struct{})
	go func() {
		defer close(done)
		for i := 0; i < 3000; i++ {
			s.Append([]byte(fmt.Sprintf("line %d \"q\" é\\ %s\r\n", i, strings.Repeat("x", i%200))))
		}
	}()
	check := func() {
		t.Helper()
		got, _ := s.AppendJSON(nil)
		var text string
		if err := json.Unmarshal(got, &text); err != nil {
			t.Fatalf("AppendJSON gave invalid JSON (%d bytes): %v", len(got), err)
		}
		if len(text) > limit || !utf8.ValidString(text) {
			t.Fatalf("AppendJSON text: %d bytes (limit %d), valid UTF-8 %v", len(text), limit, utf8.ValidString(text))
		}
	}
	for polling := true; polling; {
		select {
		case <-done:
			polling = false
		default:
			check()
		}
	}
	text, _ := s.Snapshot()
	if got, _ := s.AppendJSON(nil); string(got) != string(jsonstr.AppendString(nil, []byte(text))) {
		t.Fatalf("final AppendJSON differs from the final snapshot's JSON")
	}
}
