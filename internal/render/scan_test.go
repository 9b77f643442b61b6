package render

import (
	"bytes"
	"fmt"
	"strings"
	"testing"
)

// recorder is a Handler that writes events as readable tokens, merging
// adjacent text so that how the input was split does not show.
type recorder struct {
	events []string
	text   []byte
	oscs   [][]byte
}

func (r *recorder) flushText() {
	if len(r.text) > 0 {
		r.events = append(r.events, fmt.Sprintf("T%q", r.text))
		r.text = r.text[:0]
	}
}

func (r *recorder) Text(p []byte) {
	for _, c := range p {
		if c < 0x20 || c == 0x7f {
			panic(fmt.Sprintf("control byte %#x in a text run %q", c, p))
		}
	}
	r.text = append(r.text, p...)
}

func (r *recorder) Control(c byte) {
	r.flushText()
	r.events = append(r.events, fmt.Sprintf("C%02x", c))
}

func (r *recorder) Escape(inter []byte, final byte) {
	r.flushText()
	r.events = append(r.events, fmt.Sprintf("E%s%c", inter, final))
}

func (r *recorder) CSI(params, inter []byte, final byte) {
	r.flushText()
	r.events = append(r.events, fmt.Sprintf("CSI[%s|%s]%c", params, inter, final))
}

func (r *recorder) OSC(payload []byte) {
	r.flushText()
	r.oscs = append(r.oscs, append([]byte(nil), payload...))
	r.events = append(r.events, fmt.Sprintf("OSC%q", payload))
}

func (r *recorder) String() string {
	r.flushText()
	return strings.Join(r.events, " ")
}

// scanAll scans the chunks with one Scanner and returns the events.
func scanAll(t *testing.T, chunks ...[]byte) string {
	t.Helper()
	r := &recorder{}
	s := NewScanner(r)
	for _, c := range chunks {
		s.Feed(c)
	}
	return r.String()
}

func TestScannerSequences(t *testing.T) {
	long := strings.Repeat("x", MaxOSC+1)
	tests := []struct {
		name, in, want string
	}{
		{"plain text", "hello, world", `T"hello, world"`},
		{"utf-8 is text", "héllo ✓", `T"héllo ✓"`},
		{"c0 controls", "a\r\nb\tc\bd\x07", `T"a" C0d C0a T"b" C09 T"c" C08 T"d" C07`},
		{"del is a control", "a\x7fb", `T"a" C7f T"b"`},
		{"sgr colour", "\x1b[1;31mred\x1b[0m", `CSI[1;31|]m T"red" CSI[0|]m`},
		{"csi private", "\x1b[?25l\x1b[?1049h", `CSI[?25|]l CSI[?1049|]h`},
		{"csi intermediate", "\x1b[2 q", `CSI[2| ]q`},
		{"csi erase", "\x1b[K\x1b[2K", `CSI[|]K CSI[2|]K`},
		{"control inside csi", "\x1b[1\n;2H", `C0a CSI[1;2|]H`},
		{"can aborts csi", "\x1b[12\x18x", `T"x"`},
		{"esc restarts csi", "\x1b[12\x1b[3m", `CSI[3|]m`},
		{"param after intermediate ignored", "\x1b[1 2mX", `T"X"`},
		{"charset designation", "\x1b(B\x1b)0x", `E(B E)0 T"x"`},
		{"two-byte escapes", "\x1b7\x1b8\x1bM\x1b=", `E7 E8 EM E=`},
		{"osc bel", "\x1b]0;title\x07after", `OSC"0;title" T"after"`},
		{"osc st", "\x1b]633;A\x1b\\x", `OSC"633;A" T"x"`},
		{"osc utf-8", "\x1b]2;héllo\x07", `OSC"2;héllo"`},
		{"osc ended by another escape", "\x1b]2;t\x1b[1mX", `OSC"2;t" CSI[1|]m T"X"`},
		{"osc aborted by can", "\x1b]2;t\x18X", `T"X"`},
		{"osc ignores other controls", "\x1b]2;a\nb\x07", `OSC"2;ab"`},
		{"overlong osc dropped", "\x1b]2;" + long + "\x07ok", `T"ok"`},
		{"dcs skipped", "\x1bPq#0;2;0;0;0\x1b\\ok", `T"ok"`},
		{"apc skipped", "\x1b_Gf=24;abc\x1b\\ok", `T"ok"`},
		{"pm and sos skipped", "\x1b^pm\x1b\\\x1bXsos\x1b\\ok", `T"ok"`},
		{"esc then high byte", "\x1b\xc3\xa9", `T"é"`},
		{"empty osc", "\x1b]\x07", `OSC""`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := scanAll(t, []byte(tc.in)); got != tc.want {
				t.Errorf("scan %q\n got: %s\nwant: %s", tc.in, got, tc.want)
			}
		})
	}
}

// TestScannerSplitAnywhere feeds sequences split at every byte, and byte
// by byte: the events must be those of the whole input.
func TestScannerSplitAnywhere(t *testing.T) {
	in := []byte("ab\x1b[1;31mc\x1b]0;tï\x1b\\d\x1b(Be\x1bPx\x1b\\f\x1b]633;E;ls\x07g\r\n")
	want := scanAll(t, in)
	for i := 0; i <= len(in); i++ {
		if got := scanAll(t, in[:i], in[i:]); got != want {
			t.Fatalf("split at %d:\n got: %s\nwant: %s", i, got, want)
		}
	}
	var bytewise [][]byte
	for i := range in {
		bytewise = append(bytewise, in[i:i+1])
	}
	if got := scanAll(t, bytewise...); got != want {
		t.Fatalf("byte by byte:\n got: %s\nwant: %s", got, want)
	}
}

// TestScannerOSCMemoryBounded: an unterminated OSC of any length keeps at
// most MaxOSC bytes.
func TestScannerOSCMemoryBounded(t *testing.T) {
	r := &recorder{}
	s := NewScanner(r)
	s.Feed([]byte("\x1b]0;"))
	chunk := bytes.Repeat([]byte("y"), 32<<10)
	for i := 0; i < 64; i++ { // 2 MiB
		s.Feed(chunk)
		if cap(s.osc) > MaxOSC+len(chunk) {
			t.Fatalf("osc buffer grew to %d bytes", cap(s.osc))
		}
	}
	s.Feed([]byte("\x07z"))
	if got := r.String(); got != `T"z"` {
		t.Fatalf("events %s, want the overlong OSC dropped", got)
	}
}

// FuzzScanner: any input, split anywhere, gives the same events as the
// whole input; text runs never hold controls; OSC payloads stay bounded.
func FuzzScanner(f *testing.F) {
	for _, s := range []string{
		"plain\r\n", "\x1b[1;31mred\x1b[0m", "\x1b]0;t\x07", "\x1b]633;A\x1b\\",
		"\x1bP1$r\x1b\\", "\x1b(B", "\x1b[?25l", "\xff\xfe\xc3", "\x1b]2;\x1b[m",
	} {
		f.Add([]byte(s), uint16(3))
	}
	f.Fuzz(func(t *testing.T, in []byte, split uint16) {
		whole := &recorder{}
		NewScanner(whole).Feed(in)
		want := whole.String()
		for _, p := range whole.oscs {
			if len(p) > MaxOSC {
				t.Fatalf("osc payload of %d bytes", len(p))
			}
		}
		// Split into pieces of varying size derived from split.
		parts := &recorder{}
		s := NewScanner(parts)
		step := int(split%17) + 1
		for i := 0; i < len(in); {
			j := min(len(in), i+step)
			s.Feed(in[i:j])
			i = j
			step = step%5 + 1
		}
		if got := parts.String(); got != want {
			t.Fatalf("split scan differs:\n got: %s\nwant: %s", got, want)
		}
	})
}
