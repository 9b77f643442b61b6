package jsonstr

import (
	"encoding/binary"
	"math/bits"
	"unicode/utf8"
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
