package jsonstr

import (
	"bytes"
	"encoding/binary"
	"math/bits"
	"unicode/utf16"
	"unicode/utf8"
	"unsafe"
)

// AppendString appends s as a JSON string (quoted).
func AppendString(dst []byte, s []byte) []byte {
	dst = append(dst, '"')
	dst = AppendChars(dst, s)
	return append(dst, '"')
}

// Masks for the 8-bytes-at-a-time scan.
const (
	swarOnes  = 0x0101010101010101
	swarHighs = 0x8080808080808080
)

// AppendChars appends the JSON string escapes of s (without quotes):
// '"' and '\\' escaped, control characters as \n \r \t \b \f or \u00XX,
// U+2028 and U+2029 escaped (as encoding/json does), every byte of
// invalid UTF-8 as U+FFFD. Runs of plain ASCII are found 8 bytes at a
// time and copied whole.
func AppendChars(dst []byte, s []byte) []byte {
	start := 0 // s[start:i] is plain and not yet copied
	i := 0
	for i < len(s) {
		for i+8 <= len(s) {
			x := binary.LittleEndian.Uint64(s[i:])
			q := x ^ ('"' * swarOnes)
			bs := x ^ ('\\' * swarOnes)
			// A high bit marks a byte < 0x20, a '"', a '\\' or a byte >=
			// 0x80; borrows can add false marks above a real one, so the
			// lowest mark is a real one.
			marks := ((x - 0x20*swarOnes) | (q - swarOnes) | (bs - swarOnes) | x) & swarHighs
			if marks == 0 {
				i += 8
				continue
			}
			i += bits.TrailingZeros64(marks) / 8
			break
		}
		if i >= len(s) {
			break
		}
		c := s[i]
		if c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' {
				i++
				continue
			}
			dst = append(dst, s[start:i]...)
			switch c {
			case '"', '\\':
				dst = append(dst, '\\', c)
			case '\n':
				dst = append(dst, '\\', 'n')
			case '\r':
				dst = append(dst, '\\', 'r')
			case '\t':
				dst = append(dst, '\\', 't')
			case '\b':
				dst = append(dst, '\\', 'b')
			case '\f':
				dst = append(dst, '\\', 'f')
			default:
				dst = append(dst, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRune(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			dst = append(dst, s[start:i]...)
			dst = append(dst, `\ufffd`...)
		case r == '\u2028' || r == '\u2029':
			dst = append(dst, s[start:i]...)
			dst = append(dst, '\\', 'u', '2', '0', '2', hexDigits[r&0xf])
		default:
			i += size
			continue
		}
		i += size
		start = i
	}
	return append(dst, s[start:]...)
}

const hexDigits = "0123456789abcdef"

// Token returns the JSON string token at the start of b (quotes
// included) and whether there is a complete one.
func Token(b []byte) ([]byte, bool) {
	if len(b) == 0 || b[0] != '"' {
		return nil, false
	}
	// Jump from quote to quote (IndexByte is vectorized); a quote ends
	// the token unless an odd run of backslashes escapes it.
	for i := 1; ; {
		j := bytes.IndexByte(b[i:], '"')
		if j < 0 {
			return nil, false
		}
		j += i
		k := j
		for k > 1 && b[k-1] == '\\' {
			k--
		}
		if (j-k)%2 == 0 {
			return b[:j+1], true
		}
		i = j + 1
	}
}

// Unquote decodes a JSON string token (quotes included) in one pass, as
// encoding/json would: escapes decoded, \u surrogate pairs joined, a lone
// surrogate or invalid UTF-8 as U+FFFD. ok is false for a malformed token.
// Runs without escapes (most of a terminal's output) are copied whole.
func Unquote(tok []byte) (s string, ok bool) {
	if len(tok) < 2 || tok[0] != '"' || tok[len(tok)-1] != '"' {
		return "", false
	}
	in := tok[1 : len(tok)-1]
	// Written by index, not appended: out always has room for the rest
	// of in as is (escapes only shrink; an invalid byte, which grows to
	// U+FFFD, makes room first).
	out := make([]byte, len(in))
	n := 0
	for i := 0; i < len(in); {
		// Printable ASCII 8 bytes at a time, then byte by byte up to the
		// next escape, control or multi-byte character.
		for ; i+8 <= len(in); i, n = i+8, n+8 {
			x := binary.LittleEndian.Uint64(in[i:])
			if x&swarHighs != 0 || (x-0x20*swarOnes)&^x&swarHighs != 0 {
				break // a byte ≥ 0x80, or below 0x20
			}
			if y := x ^ ('\\' * swarOnes); (y-swarOnes)&^y&swarHighs != 0 {
				break // a backslash
			}
			binary.LittleEndian.PutUint64(out[n:], x)
		}
		for ; i < len(in); i, n = i+1, n+1 {
			c := in[i]
			if c == '\\' || c < 0x20 || c >= utf8.RuneSelf {
				break
			}
			out[n] = c
		}
		if i == len(in) {
			break
		}
		switch c := in[i]; {
		case c < 0x20:
			return "", false
		case c >= utf8.RuneSelf:
			r, size := utf8.DecodeRune(in[i:])
			if r == utf8.RuneError && size == 1 {
				out = append(out, 0, 0) // 1 byte in, U+FFFD's 3 out
			}
			n += utf8.EncodeRune(out[n:], r)
			i += size
			continue
		}
		if i+1 >= len(in) {
			return "", false
		}
		switch in[i+1] {
		case '"', '\\', '/':
			out[n] = in[i+1]
		case 'b':
			out[n] = '\b'
		case 'f':
			out[n] = '\f'
		case 'n':
			out[n] = '\n'
		case 'r':
			out[n] = '\r'
		case 't':
			out[n] = '\t'
		case 'u':
			r, m := unicodeEscape(in[i:])
			if m == 0 {
				return "", false
			}
			n += utf8.EncodeRune(out[n:], r) // 6 or 12 bytes in, at most 4 out
			i += m
			continue
		default:
			return "", false
		}
		n++
		i += 2
	}
	out = out[:n]
	if len(out) == 0 {
		return "", true
	}
	// out is not used after this: the string shares its bytes.
	return unsafe.String(&out[0], len(out)), true
}

// unicodeEscape decodes \uXXXX (and a following low surrogate) at the
// start of b; n is the bytes used, 0 when malformed.
func unicodeEscape(b []byte) (rune, int) {
	r, ok := hex4(b)
	if !ok {
		return 0, 0
	}
	if utf16.IsSurrogate(r) {
		if r2, ok := hex4(b[6:]); ok && len(b) >= 12 && b[6] == '\\' {
			if d := utf16.DecodeRune(r, r2); d != utf8.RuneError {
				return d, 12
			}
		}
		return utf8.RuneError, 6
	}
	return r, 6
}

// hex4 reads "\uXXXX" at the start of b.
func hex4(b []byte) (rune, bool) {
	if len(b) < 6 || b[0] != '\\' || b[1] != 'u' {
		return 0, false
	}
	var r rune
	for _, c := range b[2:6] {
		switch {
		case '0' <= c && c <= '9':
			c -= '0'
		case 'a' <= c && c <= 'f':
			c = c - 'a' + 10
		case 'A' <= c && c <= 'F':
			c = c - 'A' + 10
		default:
			return 0, false
		}
		r = r<<4 | rune(c)
	}
	return r, true
}
