package vtsafe

import (
	"math/rand/v2"
	"strconv"
	"unicode/utf8"
)

// genCase makes a structure-aware terminal life: a size (down to the
// 2-column minimum and 1–2 rows), output built from the pieces that have
// broken libvterm (escape sequences with intermediates, every C0 and C1,
// CSI with odd parameters, REP/ICH/DCH/IL/DL and scroll regions, wide and
// combining characters at the last column, every class of code point,
// invalid UTF-8), cut into writes at random bytes, with resizes between.
func genCase(rng *rand.Rand) vtCase {
	c := vtCase{rows: genRows(rng), cols: genCols(rng)}
	var out []byte
	for n := 1 + rng.IntN(40); n > 0; n-- {
		out = genPiece(rng, out, c.cols)
	}
	for len(out) > 0 {
		n := 1 + rng.IntN(len(out))
		if rng.IntN(3) == 0 {
			n = 1 + rng.IntN(min(len(out), 4)) // splits inside sequences and characters
		}
		c.ops = append(c.ops, vtOp{data: out[:n]})
		out = out[n:]
		if rng.IntN(4) == 0 {
			c.ops = append(c.ops, vtOp{rows: genRows(rng), cols: genCols(rng)})
		}
	}
	return c
}

func genRows(rng *rand.Rand) int {
	if rng.IntN(3) == 0 {
		return 1 + rng.IntN(2)
	}
	return 1 + rng.IntN(50)
}

func genCols(rng *rand.Rand) int {
	switch rng.IntN(4) {
	case 0:
		return 2 + rng.IntN(4)
	case 1:
		return 79 + rng.IntN(3)
	}
	return 2 + rng.IntN(160)
}

// Characters that matter: wide, combining (now and in Kuhn's 2007 table),
// zero-width, format, emoji with selectors, the ones 0.12 cannot print.
var genRunes = []rune{
	'日', '本', '語', '한', 'Ａ', '🎉', '👨', 0x1F3FB, 0xFE0F, 0xFE0E, 0x200D, 0x200C, 0x200B, 0xFEFF,
	0x0301, 0x0300, 0x036F, 0x0670, 0x06DE, 0x06DD, 0x06E5, 0x0610, 0x0903, 0x093E, 0x0E31, 0x1160, 0x11A8,
	0x20D0, 0x20E3, 0x180B, 0x180E, 0x2065, 0xFFFE, 0xFFFF, 0xFFFD, 0x00AD, 0x00A0, 'é', 'ß', 'Ж', 'א', 'ع',
	'─', '│', '┌', '█', '░', '—', '…', '‰', 0x2028, 0x2029, 0x3000, 0x3099, 0x302A, 0xE000, 0x10FFFD,
	0x1F1E6, 0x1F1FA, 0x0F00, 0x1100, 0x115F, 0x2E80, 0xA960, 0x16FE4, 0x1AFF0,
}

func genPiece(rng *rand.Rand, b []byte, cols int) []byte {
	switch rng.IntN(16) {
	case 0, 1: // text
		for n := 1 + rng.IntN(cols+5); n > 0; n-- {
			b = append(b, byte(0x20+rng.IntN(0x5f)))
		}
	case 2, 3: // a character that matters, maybe at the last column
		if rng.IntN(2) == 0 {
			b = append(b, "\x1b["+strconv.Itoa(cols-rng.IntN(2))+"G"...)
		}
		for n := 1 + rng.IntN(3); n > 0; n-- {
			b = utf8.AppendRune(b, genRunes[rng.IntN(len(genRunes))])
		}
	case 4: // any code point, or raw bytes
		if rng.IntN(2) == 0 {
			b = utf8.AppendRune(b, rune(rng.IntN(0x110000)))
		} else {
			for n := 1 + rng.IntN(4); n > 0; n-- {
				b = append(b, byte(0x80+rng.IntN(0x80)))
			}
		}
	case 5: // C1 as UTF-8
		b = utf8.AppendRune(b, rune(0x80+rng.IntN(0x20)))
	case 6: // C0
		b = append(b, byte(rng.IntN(0x20)))
	case 7: // ESC, intermediates, a final
		b = append(b, 0x1b)
		for n := rng.IntN(3); n > 0; n-- {
			b = append(b, byte(0x20+rng.IntN(0x10)))
		}
		finals := "[]PX^_\\78cDEHMNOZ=>()#%*+0B@A"
		if rng.IntN(3) == 0 {
			b = append(b, byte(0x30+rng.IntN(0x4f)))
		} else {
			b = append(b, finals[rng.IntN(len(finals))])
		}
	case 8, 9, 10: // CSI
		b = genCSI(rng, b, cols)
	case 11: // a string
		b = append(b, 0x1b, "]PX^_"[rng.IntN(5)])
		for n := rng.IntN(12); n > 0; n-- {
			if rng.IntN(4) == 0 {
				b = utf8.AppendRune(b, genRunes[rng.IntN(len(genRunes))])
			} else {
				b = append(b, byte(0x20+rng.IntN(0x5f)))
			}
		}
		switch rng.IntN(4) {
		case 0:
			b = append(b, 0x07)
		case 1:
			b = append(b, 0x1b, '\\')
		case 2:
			b = append(b, 0x1b) // something else follows
		}
	case 12: // line ends, tabs, backspace
		b = append(b, "\r\n\t\b\v\f\r"[rng.IntN(7)])
	case 13: // modes that change how text lands
		modes := []string{"4h", "4l", "?6h", "?6l", "?7l", "?7h", "?69h", "?69l", "?1049h", "?1049l", "?47h", "?5h", "20h", "?25l", "?2004h"}
		b = append(b, "\x1b["+modes[rng.IntN(len(modes))]...)
	case 14: // line attributes, charsets, alignment, reset
		others := []string{"\x1b#6", "\x1b#3", "\x1b#4", "\x1b#5", "\x1b#8", "\x1b(0", "\x1b)0", "\x0e", "\x0f", "\x1bc", "\x1b7", "\x1b8", "\x1bD", "\x1bM", "\x1bE", "\x1bn", "\x1bo"}
		b = append(b, others[rng.IntN(len(others))]...)
	case 15: // margins and scroll regions
		top := rng.IntN(30)
		b = append(b, "\x1b["+strconv.Itoa(top)+";"+strconv.Itoa(top+rng.IntN(30))+"r"...)
		if rng.IntN(2) == 0 {
			l := rng.IntN(cols + 2)
			b = append(b, "\x1b[?69h\x1b["+strconv.Itoa(l)+";"+strconv.Itoa(l+rng.IntN(cols+2))+"s"...)
		}
	}
	return b
}

func genCSI(rng *rand.Rand, b []byte, cols int) []byte {
	b = append(b, 0x1b, '[')
	if rng.IntN(5) == 0 {
		b = append(b, "?<=>"[rng.IntN(4)])
	}
	for n := rng.IntN(4); n > 0; n-- {
		switch rng.IntN(6) {
		case 0:
			b = strconv.AppendInt(b, int64(rng.IntN(100000)), 10)
		case 1: // missing
		case 2:
			b = strconv.AppendInt(b, int64(cols+rng.IntN(3)-1), 10)
		default:
			b = strconv.AppendInt(b, int64(rng.IntN(10)), 10)
		}
		if n > 1 {
			b = append(b, ";:"[rng.IntN(2)])
		}
	}
	if rng.IntN(6) == 0 {
		b = append(b, byte(0x20+rng.IntN(0x10)))
	}
	if rng.IntN(12) == 0 {
		b = append(b, byte(0x30+rng.IntN(0x10))) // a misplaced parameter byte
	}
	finals := "bbbb@PLMSTXZ`abcdefGHIJKrsmnhlq"
	if rng.IntN(8) == 0 {
		return append(b, byte(0x40+rng.IntN(0x3f)))
	}
	return append(b, finals[rng.IntN(len(finals))])
}
