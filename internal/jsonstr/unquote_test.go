package jsonstr

import (
	"encoding/json"
	"strconv"
	"testing"
)

// FuzzUnquote: Unquote decodes what AppendString encodes back to the
// same text, and agrees with encoding/json on any token it accepts.
func FuzzUnquote(f *testing.F) {
	for _, s := range []string{"", "plain", "a\r\nb", `q"uote\back`, "\x00\x1f\u2028", "日本\U0001F600", "bad\xff", `\ud83d\ude00`, `"\u00e9"`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		tok := AppendString(nil, in)
		got, ok := Unquote(tok)
		var want string
		if err := json.Unmarshal(tok, &want); err != nil {
			t.Fatalf("AppendString(%q) = %s, not JSON: %v", in, tok, err)
		}
		if !ok || got != want {
			t.Fatalf("Unquote(%s) = %q %v, want %q", tok, got, ok, want)
		}
		if end, ok := Token(append(tok, `,"x":1`...)); !ok || string(end) != string(tok) {
			t.Fatalf("Token found %q in %s", end, tok)
		}
		// Raw input as a token: wherever encoding/json accepts it, the
		// results agree.
		raw := append(append([]byte{'"'}, in...), '"')
		var ref string
		if json.Unmarshal(raw, &ref) == nil {
			if got, ok := Unquote(raw); !ok || got != ref {
				t.Fatalf("Unquote(%q) = %q %v, encoding/json %q", raw, got, ok, ref)
			}
		}
	})
}

// BenchmarkUnquote decodes a terminal's typical output as it travels in
// a terminal/data action: short lines, each ending in \r\n.
func BenchmarkUnquote(b *testing.B) {
	var src []byte
	for i := 0; len(src) < 64<<10; i++ {
		src = append(src, strconv.Itoa(i)+"\r\n"...)
	}
	tok := AppendString(nil, src)
	b.SetBytes(int64(len(tok)))
	for b.Loop() {
		t, ok := Token(tok)
		if !ok {
			b.Fatal("no token")
		}
		if _, ok := Unquote(t); !ok {
			b.Fatal("not decoded")
		}
	}
}
