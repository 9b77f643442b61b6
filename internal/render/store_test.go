package render

// Why this file is long: the rendering rules table, the byte limit, and
// FuzzStore with its reference renderer, which must stay next to the
// rules it mirrors.

import (
	"bytes"
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/agentrun/agentrun.nvim/internal/jsonstr"
)

// render feeds chunks to a fresh Store with the limit and flushes it.
func render(t *testing.T, limit int, chunks ...string) (string, bool) {
	t.Helper()
	s := NewStore(limit)
	for _, c := range chunks {
		s.Append([]byte(c))
	}
	s.Flush()
	text, truncated := s.Snapshot()
	if !utf8.ValidString(text) {
		t.Fatalf("output %q is not valid UTF-8", text)
	}
	if len(text) > max(limit, 0) {
		t.Fatalf("output of %d bytes is over the limit %d", len(text), limit)
	}
	return text, truncated
}

func TestStoreRender(t *testing.T) {
	tests := []struct {
		name   string
		chunks []string
		want   string
	}{
		{"crlf becomes lf", []string{"a\r\nb\r\n"}, "a\nb\n"},
		{"no final newline", []string{"x\r\ny"}, "x\ny"},
		{"progress redraws collapse", []string{"0%\r50%\r100%\r\ndone\r\n"}, "100%\ndone\n"},
		{"progress split across reads", []string{"[#   ] 25%\r", "[##  ] 50%\r", "[####] 100%", "\r\n"}, "[####] 100%\n"},
		{"shorter redraw leaves the rest", []string{"downloading\rdone\n"}, "doneloading\n"},
		{"erase in line after redraw", []string{"downloading\rdone\x1b[K\n"}, "done\n"},
		{"erase whole line then return", []string{"50%\x1b[2K\rdone\n"}, "done\n"},
		{"erase whole line keeps column", []string{"abc\x1b[2Kd\n"}, "   d\n"},
		{"erase to start", []string{"abcdef\x1b[3D\x1b[1K\n"}, "    ef\n"},
		{"colours stripped", []string{"\x1b[1;31mred\x1b[0m plain \x1b[38;5;208mo\x1b[m\n"}, "red plain o\n"},
		{"colours split across reads", []string{"\x1b[3", "1mred\x1b", "[0m\n"}, "red\n"},
		{"backspace overwrites", []string{"abc\b\bX\n"}, "aXc\n"},
		{"backspace at line start", []string{"\b\bab\n"}, "ab\n"},
		{"cursor to column", []string{"abcdef\x1b[3GX\n"}, "abXdef\n"},
		{"cursor forward pads", []string{"ab\x1b[3Cc\n"}, "ab   c\n"},
		{"cursor back", []string{"abc\x1b[2DX\n"}, "aXc\n"},
		{"vertical moves ignored", []string{"a\x1b[Ab\x1b[2Jc\n"}, "abc\n"},
		{"title osc dropped", []string{"\x1b]0;title\x07x\x1b]633;A\x1b\\y\n"}, "xy\n"},
		{"charset designation dropped", []string{"\x1b(Bx\x1b)0y\n"}, "xy\n"},
		{"tab kept", []string{"a\tb\n"}, "a\tb\n"},
		{"bell and nul dropped", []string{"a\x07\x00b\n"}, "ab\n"},
		{"multibyte overwrite", []string{"abc\r€\n"}, "€bc\n"},
		{"ascii over multibyte", []string{"日本語\rab\n"}, "ab語\n"},
		{"invalid byte", []string{"a\xffb\n"}, "a\uFFFDb\n"},
		{"truncated sequence before newline", []string{"\xe2\x82\n"}, "\uFFFD\uFFFD\n"},
		{"overlong encoding", []string{"\xc0\xafx"}, "\uFFFD\uFFFDx"},
		{"split character completed", []string{"\xe2", "\x82", "\xac!"}, "€!"},
		{"split character interrupted", []string{"\xe2\x82", "A"}, "\uFFFD\uFFFDA"},
		{"split character at the end", []string{"ok\xf0\x9f"}, "ok\uFFFD\uFFFD"},
		{"split character interrupted by an osc", []string{"\xe2\x82", "\x1b]0;t\x07\xac"}, "\uFFFD\uFFFD\uFFFD"},
		{"split character around a skipped string", []string{"\xe2\x82\x1bPq\x1b\\", "\xac"}, "€"},
		{"emoji split 1+3", []string{"\xf0", "\x9f\x98\x80"}, "😀"},
		{"vertical tab is a line feed", []string{"a\vb\fc"}, "a\nb\nc"},
		{"dcs swallowed", []string{"a\x1bP1$r0m\x1b\\b"}, "ab"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, truncated := render(t, 1<<20, tc.chunks...)
			if got != tc.want {
				t.Errorf("rendered %q, want %q", got, tc.want)
			}
			if truncated {
				t.Errorf("truncated with a 1 MiB limit")
			}
		})
	}
}

// TestStoreSplitEverywhere: a multibyte, escape-laden stream split at any
// byte renders as the whole stream does.
func TestStoreSplitEverywhere(t *testing.T) {
	in := "h€llo \x1b[32mgrün\x1b[0m 日本\r\n😀 \x1b]0;t\x07ok\rOK\x1b[K\r\n\xe2\x82x"
	want, _ := render(t, 1<<20, in)
	for _, limit := range []int{0, 1, 2, 3, 4, 7, 1 << 20} {
		wantCut := string(tailAtBoundary([]byte(want), limit))
		for i := 0; i <= len(in); i++ {
			got, _ := render(t, limit, in[:i], in[i:])
			if got != wantCut {
				t.Fatalf("limit %d, split at %d: %q, want %q", limit, i, got, wantCut)
			}
		}
	}
}

func TestStoreLimit(t *testing.T) {
	tests := []struct {
		name          string
		limit         int
		chunks        []string
		want          string
		wantTruncated bool
	}{
		{"zero keeps nothing", 0, []string{"abc\n"}, "", true},
		{"zero with only escapes", 0, []string{"\x1b[0m\x1b]0;t\x07"}, "", false},
		{"zero with no output", 0, nil, "", false},
		{"one byte", 1, []string{"abc\n"}, "\n", true},
		{"one byte no newline", 1, []string{"ab"}, "b", true},
		{"one byte cannot hold a euro", 1, []string{"a€"}, "", true},
		{"exactly at the limit", 4, []string{"abcd"}, "abcd", false},
		{"tail cut at a character", 5, []string{"aé€x"}, "€x", true},
		{"multibyte split across reads and the limit", 3, []string{"ab\xe2", "\x82\xac"}, "€", true},
		{"lines dropped", 4, []string{"one\ntwo\nthree\n"}, "ree\n", true},
		{"shrunk line is not truncated", 4, []string{"abcdefgh", "\r\x1b[K", "xy"}, "xy", false},
		{"committed text shows again", 8, []string{"0123456789\n", "abcdefghij", "\r\x1b[K"}, "3456789\n", true},
		{"invalid bytes at the cut", 3, []string{"x\xff\xff"}, "\uFFFD", true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, truncated := render(t, tc.limit, tc.chunks...)
			if got != tc.want || truncated != tc.wantTruncated {
				t.Errorf("got %q truncated=%v, want %q truncated=%v", got, truncated, tc.want, tc.wantTruncated)
			}
		})
	}
}

// TestStoreTruncatedStays: once something was dropped, truncated stays
// true even if the text later shrinks below the limit.
func TestStoreTruncatedStays(t *testing.T) {
	s := NewStore(4)
	s.Append(bytes.Repeat([]byte("a"), 2*(4+lineSlack)+1)) // a line past its cap
	if _, tr := s.Snapshot(); !tr {
		t.Fatal("not truncated after 8 KiB with a limit of 4")
	}
	s.Append([]byte("\r\x1b[Kok"))
	text, tr := s.Snapshot()
	if !tr || text != "ok" {
		t.Fatalf("got %q truncated=%v, want %q truncated=true", text, tr, "ok")
	}
}

// TestStoreMemoryBounded: whatever is printed, the store's memory stays
// within a small multiple of its limit.
func TestStoreMemoryBounded(t *testing.T) {
	chunk := func(s string) []byte { return bytes.Repeat([]byte(s), (32<<10)/len(s)) }
	tests := []struct {
		name  string
		limit int
		chunk []byte
	}{
		{"lines, small limit", 1 << 10, chunk("0123456789abcdef0123456789abcdef\r\n")},
		{"one endless line, small limit", 1 << 10, chunk("x")},
		{"one endless line, limit 0", 0, chunk("€")},
		{"endless progress bar", 1 << 10, chunk("[####      ] 40%\r")},
		{"lines, 1 MiB limit", 1 << 20, chunk("0123456789abcdef0123456789abcdef\r\n")},
		{"one endless line, 1 MiB limit", 1 << 20, chunk("yz")},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := NewStore(tc.limit)
			bound := 2*(tc.limit+compactSlack) + 4*(tc.limit+lineSlack) + 2*len(tc.chunk)
			total := 4<<20 + 4*tc.limit // enough to pass every bound several times
			// An agent polls the JSON form now and then: the escaped copy
			// it makes the Store keep is bounded too.
			escBound := 3 * (tc.limit + compactSlack + len(tc.chunk))
			var dst []byte
			for i := 0; i < total/len(tc.chunk); i++ {
				s.Append(tc.chunk)
				if cap(s.buf) > bound {
					t.Fatalf("after %d bytes the buffer holds %d bytes, bound %d", (i+1)*len(tc.chunk), cap(s.buf), bound)
				}
				if i%5 == 0 {
					dst, _ = s.AppendJSON(dst[:0])
				}
				if c := cap(s.json.esc); c > escBound {
					t.Fatalf("after %d bytes the escaped copy holds %d bytes, bound %d", (i+1)*len(tc.chunk), c, escBound)
				}
			}
			text, truncated := s.Snapshot()
			// A progress bar redraws one short line: nothing is lost.
			wantTruncated := !strings.HasPrefix(tc.name, "endless progress")
			if len(text) > tc.limit || truncated != wantTruncated {
				t.Fatalf("len %d truncated %v, want truncated %v", len(text), truncated, wantTruncated)
			}
		})
	}
}

// refRenderer is the reference for FuzzStore: the same rendering rules
// as Store, written the simple way (a rune slice per line, no byte limit,
// the line head trimmed to lineCap at the same points).
type refRenderer struct {
	lineCap int
	done    strings.Builder
	line    []rune
	col     int
	trimmed bool
	text    []byte // text bytes not yet decoded
}

func (r *refRenderer) decode() {
	for len(r.text) > 0 {
		c, size := utf8.DecodeRune(r.text)
		r.text = r.text[size:]
		r.print(c) // an invalid byte decodes as U+FFFD
	}
}

func (r *refRenderer) print(c rune) {
	for r.col > len(r.line) {
		r.line = append(r.line, ' ')
	}
	if r.col == len(r.line) {
		r.line = append(r.line, c)
	} else {
		r.line[r.col] = c
	}
	r.col++
}

func (r *refRenderer) trim() {
	for len(string(r.line)) > r.lineCap {
		r.line = r.line[1:]
		r.col = max(r.col-1, 0)
		r.trimmed = true
	}
}

func (r *refRenderer) forward(col int) int {
	if col > len(r.line) {
		col = len(r.line) + min(col-len(r.line), maxGap)
	}
	return col
}

func (r *refRenderer) Text(p []byte) { r.text = append(r.text, p...) }

func (r *refRenderer) Control(c byte) {
	r.decode()
	switch c {
	case '\n', '\v', '\f':
		r.trim()
		r.done.WriteString(string(r.line) + "\n")
		r.line, r.col = nil, 0
	case '\r':
		r.trim()
		r.col = 0
	case '\b':
		r.trim()
		r.col = max(r.col-1, 0)
	case '\t':
		r.print('\t')
	}
}

func (r *refRenderer) Escape([]byte, byte) { r.decode() }
func (r *refRenderer) OSC([]byte)          { r.decode() }

func (r *refRenderer) CSI(params, inter []byte, final byte) {
	r.decode()
	if len(inter) > 0 || len(params) > 0 && params[0] >= '<' {
		return
	}
	switch final {
	case 'K':
		r.trim()
		switch firstParam(params, 0) {
		case 0:
			if r.col < len(r.line) {
				r.line = r.line[:r.col]
			}
		case 1:
			for i := 0; i <= r.col && i < len(r.line); i++ {
				r.line[i] = ' '
			}
		case 2:
			r.line = nil
			r.col = r.forward(r.col)
		}
	case 'C':
		r.trim()
		r.col = r.forward(r.col + max(firstParam(params, 1), 1))
	case 'D':
		r.trim()
		r.col = max(r.col-max(firstParam(params, 1), 1), 0)
	case 'G':
		r.trim()
		r.col = r.forward(max(firstParam(params, 1), 1) - 1)
	}
}

// refRender renders in one go, without a limit; it returns the full text
// and whether a line head was trimmed.
func refRender(in []byte, lineCap int) (string, bool) {
	r := &refRenderer{lineCap: lineCap}
	NewScanner(r).Feed(in)
	r.decode()
	return r.done.String() + string(r.line), r.trimmed
}

// refTail keeps the last at most limit bytes, dropping whole characters.
func refTail(s string, limit int) string {
	for len(s) > limit {
		_, size := utf8.DecodeRuneInString(s)
		s = s[size:]
	}
	return s
}

// FuzzStore: any byte stream, any limit, any split: the output is valid
// UTF-8, never over the limit, and exactly the tail of the reference
// rendering of the whole stream (truncated exactly when text was lost).
func FuzzStore(f *testing.F) {
	for _, s := range []string{
		"a\r\nb\r\n", "10%\r20%\r100%\n", "\x1b[31mred\x1b[0m\n", "€uro\xe2\x82", "\xff\xfe\n",
		"abc\b\bX\x1b[K\n", "\x1b]0;t\x07x", "日本語\rab\x1b[1K\n", "long line here\r\x1b[2C\x1b[Kz",
		"a\x1b[5Cb\x1b[3Dc\x1b[2Gd\n", "\xe2\x82\x1b]0;t\x07\xac", "\xe2\x1b(B\x82", strings.Repeat("xy", 40) + "\rZ\x1b[K\n",
	} {
		f.Add([]byte(s), uint16(5), uint8(3), uint8(1))
	}
	f.Fuzz(func(t *testing.T, in []byte, limit16 uint16, split, slack uint8) {
		limit := int(limit16 % 300)
		if limit16&0x8000 != 0 {
			limit = int(limit16 & 0x7fff) // sometimes a big one
		}
		// A small lineCap and compaction point exercise trimming and
		// compaction on short inputs.
		lineCap := limit + utf8.UTFMax - 1 + int(slack%16)
		s := NewStore(limit)
		s.lineCap = lineCap
		s.compactAt = limit + 1 + int(slack%7)
		// The escaped copy from the second snapshot of a committed byte
		// on, with checkpoints every 1 to 5 bytes.
		s.json.min, s.json.every = 1, 1+int(split%5)
		step := int(split%13) + 1
		for i := 0; i < len(in); {
			j := min(len(in), i+step)
			s.Append(in[i:j])
			text, truncated := s.Snapshot()
			if !utf8.ValidString(text) || len(text) > limit {
				t.Fatalf("mid-stream snapshot %q: valid=%v len=%d limit=%d", text, utf8.ValidString(text), len(text), limit)
			}
			wantJSON := string(jsonstr.AppendString(nil, []byte(text)))
			if got, tr := s.AppendJSON(nil); string(got) != wantJSON || tr != truncated {
				t.Fatalf("input %q to %d, limit %d: AppendJSON = %s truncated=%v, want %s truncated=%v",
					in, j, limit, got, tr, wantJSON, truncated)
			}
			i = j
			step = step%7 + 1
		}
		s.Flush()
		got, truncated := s.Snapshot()
		full, trimmed := refRender(in, lineCap)
		want := refTail(full, limit)
		wantTruncated := trimmed || len(full) > limit
		if got != want || truncated != wantTruncated {
			t.Fatalf("limit %d lineCap %d input %q:\n got %q truncated=%v\nwant %q truncated=%v",
				limit, lineCap, in, got, truncated, want, wantTruncated)
		}
		// With the default tuning the same holds.
		d := NewStore(limit)
		d.Append(in)
		d.Flush()
		full, trimmed = refRender(in, limit+lineSlack)
		wantTruncated = trimmed || len(full) > limit
		if got, truncated := d.Snapshot(); got != refTail(full, limit) || truncated != wantTruncated {
			t.Fatalf("default tuning, limit %d input %q:\n got %q truncated=%v\nwant %q truncated=%v", limit, in, got, truncated, refTail(full, limit), wantTruncated)
		}
	})
}

// benchInput is 4 MiB of typical build/test output: 80-column lines with
// some colour.
func benchInput() []byte {
	var b bytes.Buffer
	for i := 0; b.Len() < 4<<20; i++ {
		if i%10 == 0 {
			fmt.Fprintf(&b, "\x1b[32mok\x1b[0m  \tgithub.com/example/pkg%04d\t%d.%03ds\r\n", i, i%7, i%1000)
		} else {
			fmt.Fprintf(&b, "=== RUN   TestSomething%06d/case_%d_with_a_longer_name_to_fill_the_line\r\n", i, i%97)
		}
	}
	return b.Bytes()
}

// BenchmarkStoreAppend measures rendering throughput in pty-sized chunks
// (MB/s is what matters: a pty delivers 15-25 MB/s here).
func BenchmarkStoreAppend(b *testing.B) {
	in := benchInput()
	for _, bc := range []struct {
		name  string
		limit int
	}{{"limit=16MiB", 16 << 20}, {"limit=1KiB", 1 << 10}} {
		b.Run(bc.name, func(b *testing.B) {
			s := NewStore(bc.limit)
			b.SetBytes(int64(len(in)))
			b.ReportAllocs()
			for b.Loop() {
				for i := 0; i < len(in); i += 4096 {
					s.Append(in[i:min(i+4096, len(in))])
				}
			}
		})
	}
}

// BenchmarkStoreAppendPlain is the plain-text case: long runs, no escapes.
func BenchmarkStoreAppendPlain(b *testing.B) {
	line := []byte(strings.Repeat("the quick brown fox jumps over the lazy dog ", 4) + "\r\n")
	in := bytes.Repeat(line, (4<<20)/len(line))
	for _, limit := range []int{16 << 20, 1 << 10} {
		b.Run(fmt.Sprintf("limit=%d", limit), func(b *testing.B) {
			s := NewStore(limit)
			b.SetBytes(int64(len(in)))
			for b.Loop() {
				for i := 0; i < len(in); i += 32 << 10 {
					s.Append(in[i:min(i+32<<10, len(in))])
				}
			}
		})
	}
}
