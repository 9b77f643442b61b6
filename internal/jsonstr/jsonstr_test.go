package jsonstr

import (
	"bytes"
	"encoding/json"
	"math/rand"
	"strings"
	"testing"
)

// stdJSON is encoding/json's form of s without HTML escaping: what
// AppendString must produce byte for byte.
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
		if got, want := AppendString(nil, []byte(s)), stdJSON(t, s); !bytes.Equal(got, want) {
			t.Errorf("AppendString(%q) = %s, want %s", s, got, want)
		}
	}
}

func FuzzJSONString(f *testing.F) {
	f.Add("plain")
	f.Add("\"\\\x00\u2028\xff")
	f.Fuzz(func(t *testing.T, s string) {
		if got, want := AppendString(nil, []byte(s)), stdJSON(t, s); !bytes.Equal(got, want) {
			t.Fatalf("AppendString(%q) = %s, want %s", s, got, want)
		}
	})
}

func BenchmarkAppendJSONString(b *testing.B) {
	text := strings.Repeat(strings.Repeat("0123456789", 7)+"\n", 1<<20/71)
	b.SetBytes(int64(len(text)))
	src := []byte(text)
	var dst []byte
	for i := 0; i < b.N; i++ {
		dst = AppendString(dst[:0], src)
	}
}
