package vtsafe

import (
	"bytes"
	"testing"
	"unicode/utf8"
)

func TestFilter(t *testing.T) {
	const fffd = "\uFFFD"
	tests := []struct {
		name, in, want string
	}{
		{"ascii and escapes pass", "\x1b[31mred\x1b[0m\r\n\x1b[2J\x1b[H\x1b]0;title\x07", "\x1b[31mred\x1b[0m\r\n\x1b[2J\x1b[H\x1b]0;title\x07"},
		{"progress bar", "50%\r\x1b[K75%\r\x1b[K100%\n", "50%\r\x1b[K75%\r\x1b[K100%\n"},
		{"valid UTF-8 passes", "héllo wörld — 日本語 🎉 é", "héllo wörld — 日本語 🎉 é"},
		{"NBSP is not C1", "a\u00a0b", "a\u00a0b"},
		{"the crash", "\x1b[4h\xc2\x85x", "\x1b[4h" + fffd + "x"},
		{"first C1", "a\xc2\x80b", "a" + fffd + "b"},
		{"last C1", "a\xc2\x9fb", "a" + fffd + "b"},
		{"raw C1 byte (8-bit CSI)", "a\x9b31mb", "a" + fffd + "31mb"},
		{"lone continuation", "a\x85b", "a" + fffd + "b"},
		{"lead byte cut by an escape", "\xc2\x1b[m\x85x", fffd + "\x1b[m" + fffd + "x"},
		{"lead byte cut by a control", "\xc2\a\x85", fffd + "\a" + fffd},
		{"overlong C1", "\xe0\x82\x85", fffd + fffd + fffd},
		{"overlong slash", "\xc0\xaf", fffd + fffd},
		{"surrogate", "\xed\xa0\x80", fffd + fffd + fffd},
		{"beyond U+10FFFF", "\xf4\x90\x80\x80", fffd + fffd + fffd + fffd},
		{"0xff", "\xff\xfe", fffd + fffd},
		{"DEL passes (libvterm ignores it)", "a\x7fb", "a\x7fb"},
		{"incomplete at the end, flushed", "ok\xe2\x82", "ok" + fffd},
		{"format characters dropped", "\ufeffa\u200bb\u2060c\u202ed\u180e", "abcd"},
		{"joiners and the soft hyphen kept", "👨\u200d👩 a\u200cb co\u00adop", "👨\u200d👩 a\u200cb co\u00adop"},
		{"REP first", "\x1b[b", "\x1b[\x18"},
		{"REP with a count first", "\x1b[3bx", "\x1b[3\x18x"},
		{"REP after a character", "x\x1b[3b", "x\x1b[3b"},
		{"REP after a line end", "x\r\n\x1b[b", "x\r\n\x1b[b"},
		{"REP after a combining mark", "x\r\n\u0301\x1b[b", "x\r\n\u0301\x1b[\x18"},
		{"REP after a Hangul medial vowel", "x\u1160\x1b[b", "x\u1160\x1b[\x18"},
		{"REP after a wide character", "x日\x1b[99b", "x日\x1b[99\x18"},
		{"REP after an emoji", "🎉\x1b[b", "🎉\x1b[\x18"},
		{"REP after box drawing", "┌─\x1b[20b┐", "┌─\x1b[20b┐"},
		{"REP after Latin", "é\x1b[3b", "é\x1b[3b"},
		{"REP after U+FFFD", "\xff\x1b[b", fffd + "\x1b[b"},
		{"b in text", "abc b", "abc b"},
		{"b in a title", "\x1b]0;bbb\x07\x1b[b", "\x1b]0;bbb\x07\x1b[\x18"},
		{"b ends another sequence", "\x1b(b\x1bb", "\x1b(b\x1bb"},
		{"REP after a title, text before", "x\x1b]2;t\x1b\\\x1b[b", "x\x1b]2;t\x1b\\\x1b[b"},
		{"a DCS is dropped, its text does not count", "\x1bPq\x07\x1b[b", "\x18\x1b[\x18"},
		{"CAN aborts, then REP", "\x1b[3\x18\x1b[b", "\x1b[3\x18\x1b[\x18"},
		// libvterm 0.1 starts a CSI or string at ESC, intermediates, then
		// [ ] or P; 0.3 and 0.12 end the escape there: CAN before it.
		{"ESC SP [ is cancelled, its REP stays text", "x\xe6\x97\xa5\x1b [99b", "x日\x1b \x1899b"},
		{"ESC SP [ first output", "\x1b [b", "\x1b \x18b"},
		{"ESC SP [ after a far column", "\xe6\x97\xa5\x1b[999G\x1b [b", "日\x1b[999G\x1b \x18b"},
		{"ESC intermediates ]", "\x1b#!]0;t\x07", "\x1b#!\x180;t\x07"},
		{"ESC intermediate P", "\x1b(P", "\x1b(\x18"},
		{"ESC intermediate then a final", "\x1b(0x\x1b[3b", "\x1b(0x\x1b[3b"},
		// U+06DE is a symbol today, combining in libvterm 0.1/0.3's table.
		{"REP after U+06DE joined to a wide glyph", "x日\u06de\x1b[99b", "x日\u06de\x1b[99\x18"},
		{"REP after U+06DE first", "\u06de\x1b[b", "\u06de\x1b[\x18"},
		{"REP after U+06DD (Cf) dropped", "x\u06dd\x1b[b", "x\x1b[b"},
		{"REP after another Kuhn-combining mark", "x\u0670\x1b[b", "x\u0670\x1b[\x18"},
		// Neovim 0.12 shows what it cannot print as <xxxx>, 6 columns.
		{"unprintable to 0.12 dropped", "a\u180bb\u2065c\uffffd\ufffee", "abcde"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var f Filter
			got := string(f.Flush(f.Append(nil, []byte(tc.in))))
			if got != tc.want {
				t.Errorf("filter(%q) = %q, want %q", tc.in, got, tc.want)
			}
		})
	}
}

// TestFilterSplitsAnywhere checks that where the reads happen to split the
// stream changes nothing: a C1 character split across two chunks is
// caught, and a valid character split across two (or four) chunks passes.
func TestFilterSplitsAnywhere(t *testing.T) {
	in := []byte("\x1b[b\x1b[4h\xc2\x85x é 日 🎉\xc2\x9b\x1b[3b\u0301\x1b[b\xe2\x82")
	var whole Filter
	want := whole.Flush(whole.Append(nil, in))
	for i := 0; i <= len(in); i++ {
		for j := i; j <= len(in); j++ {
			var f Filter
			got := f.Append(nil, in[:i])
			got = f.Append(got, in[i:j])
			got = f.Append(got, in[j:])
			got = f.Flush(got)
			if !bytes.Equal(got, want) {
				t.Fatalf("split at %d and %d: %q, want %q", i, j, got, want)
			}
		}
	}
}

func TestFilterHoldsOnlyAnIncompleteCharacter(t *testing.T) {
	var f Filter
	if got := f.Append(nil, []byte("ab\xf0\x9f")); string(got) != "ab" {
		t.Fatalf("first half: %q, want %q (the cut character held back)", got, "ab")
	}
	if got := f.Append(nil, []byte("\x8e\x89!")); string(got) != "🎉!" {
		t.Fatalf("second half: %q, want %q", got, "🎉!")
	}
	f.Append(nil, []byte("\xc2"))
	f.Drop()
	if got := f.Append(nil, []byte("\x85")); string(got) != "\uFFFD" {
		t.Fatalf("after Drop: %q, want U+FFFD (the lead byte was dropped)", got)
	}
}

// FuzzFilter checks the filter's promise on any input split anywhere: the
// output is valid UTF-8 without C1 characters, every byte below 0x80 passes
// in order (but a REP's final "b" may become CAN), valid C1-free text
// passes unchanged but for such "b"s, and the split point does not matter.
func FuzzFilter(f *testing.F) {
	for _, s := range []string{"\x1b[4h\xc2\x85x", "\xc2\x1b[m\x85x", "héllo 日本 🎉", "\xff\xc0\xaf\xed\xa0\x80", "\x1b]0;tïtle\x07"} {
		f.Add([]byte(s), uint8(3))
	}
	f.Fuzz(func(t *testing.T, in []byte, cut uint8) {
		var whole Filter
		out := whole.Flush(whole.Append(nil, in))
		if !utf8.Valid(out) {
			t.Fatalf("output is not valid UTF-8: %q", out)
		}
		for _, r := range string(out) {
			if r >= 0x80 && r <= 0x9f {
				t.Fatalf("output holds C1 %U: %q", r, out)
			}
		}
		if !bytes.Equal(ascii(out), ascii(in)) {
			t.Fatalf("bytes below 0x80 changed: %q -> %q", in, out)
		}
		if utf8.Valid(in) && !bytes.ContainsFunc(in, func(r rune) bool { return r >= 0x80 && r <= 0x9f || invisible(r) }) && !bytes.Equal(canAsB(in), canAsB(out)) {
			t.Fatalf("valid text changed: %q -> %q", in, out)
		}
		i := int(cut) % (len(in) + 1)
		var split Filter
		got := split.Flush(split.Append(split.Append(nil, in[:i]), in[i:]))
		if !bytes.Equal(got, out) {
			t.Fatalf("split at %d: %q, whole: %q", i, got, out)
		}
	})
}

// ascii returns p's bytes below 0x80, with CAN read as "b".
func ascii(p []byte) []byte {
	var b []byte
	for _, c := range canAsB(p) {
		if c < utf8.RuneSelf {
			b = append(b, c)
		}
	}
	return b
}

func canAsB(p []byte) []byte { return bytes.ReplaceAll(p, []byte{can}, []byte("b")) }

func BenchmarkFilter(b *testing.B) {
	for _, bc := range []struct{ name, line string }{
		{"ascii", "ok  \tgithub.com/agentrun/agentrun.nvim/editor\t0.146s\r\n"},
		{"colour", "\x1b[32m✓\x1b[0m passes — \x1b[1mmodule\x1b[0m déjà vu 日本\r\n"},
	} {
		b.Run(bc.name, func(b *testing.B) {
			in := bytes.Repeat([]byte(bc.line), 64<<10/len(bc.line))
			var f Filter
			out := make([]byte, 0, 2*len(in))
			b.SetBytes(int64(len(in)))
			for b.Loop() {
				out = f.Append(out[:0], in)
			}
		})
	}
}

// TestResetEndsWhatACommandLeftOn checks that Reset, after whatever a
// command left open, leaves the filter at ground with nothing held, so
// the plugin's line after it is text.
func TestResetEndsWhatACommandLeftOn(t *testing.T) {
	for _, left := range []string{"", "\x1b", "\x1b[", "\x1b[12;", "\x1b]0;title", "\x1bP1$", "\x1b(", "\x1b(0", "\x0e", "\x1b[4h", "\x1b[?6h\x1b[5;10r", "\x1b[1;31;7m", "\xe6\x97"} {
		var f Filter
		f.Append(nil, []byte(left))
		out := f.Append(f.Flush(nil), []byte(Reset+"\r\n[exit 0]"))
		if f.vt != ground || len(f.hold) != 0 || !bytes.HasSuffix(out, []byte("\x1b[?5l\r\n[exit 0]")) {
			t.Errorf("after %q: state %d, held %d, sent %q", left, f.vt, len(f.hold), out)
		}
	}
}
