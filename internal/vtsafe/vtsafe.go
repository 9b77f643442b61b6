package vtsafe

import (
	"strconv"
	"unicode"
	"unicode/utf8"
)

// Why this file is long: the Filter is one state machine over the escape
// sequences a terminal accepts; its states must be seen together to know
// that no sequence can escape it.

// replacement is U+FFFD, what a dropped character shows as.
const replacement = "\uFFFD"

// can aborts any escape sequence (ECMA-48 CANCEL).
const can = 0x18

// vtState is where the VT parser is, as far as the filter needs to know.
type vtState uint8

const (
	ground    vtState = iota // text
	esc                      // after ESC
	escInter                 // ESC and intermediate bytes
	csi                      // control sequence, up to its final byte
	str                      // OSC string
	strEsc                   // ESC in a string
	hidden                   // DCS, SOS, PM or APC string: dropped
	hiddenEsc                // ESC in one
)

// Reset is what goes before a line the plugin writes into a terminal of a
// command ("[exit 0]", "[released]", skip notices), so that it reads right
// whatever the command left on: CAN ends a sequence or string left open;
// DECSC … DECRC keep the cursor where it is while origin mode (DECOM) and
// the scroll region (DECSTBM), which both move it home, are reset; then
// the pen (SGR), the character sets (G0–G3 to ASCII, shifted in: no DEC
// line drawing), insert mode, autowrap, left/right margins and reverse
// video. (DECSTR would do most of it, but libvterm 0.1 does not know it.)
// Every libvterm Neovim uses, and xterm, read it the same way.
const Reset = "\x18\x1b7\x1b[?6l\x1b[r\x1b8\x1b[0m\x1b(B\x1b)B\x1b*B\x1b+B\x0f\x1b[4l\x1b[?7h\x1b[?69l\x1b[?5l"

// Guard goes at the start of every write to a terminal of Neovim (each
// nvim_chan_send), because Neovim may have resized it since the last one:
// libvterm 0.1 (Neovim 0.7) can leave the cursor above the screen when a
// terminal loses rows while text stands below the cursor, and the next
// character is written outside the screen. libvterm clamps the cursor into
// the screen after every control sequence it knows; this one (set DEC
// private mode 0, which no terminal has) does nothing else. Filter.Guard
// adds what the scroll region needs.
const Guard = "\x1b[?0h"

// Filter makes one terminal's output safe for Neovim's libvterm, chunk by
// chunk. The zero value is ready for a new terminal; a Filter is not safe
// for concurrent use.
type Filter struct {
	// hold is what the next call sees first: the start of a character, or
	// of an escape sequence begun at ground (at most maxHold bytes), cut at
	// the end of a chunk, so a write never ends inside either and the next
	// one's Guard is never inside a sequence.
	hold    []byte
	scratch []byte
	seq     int // where in dst the escape sequence being read began; -1: before this call or not at ground
	vt      vtState
	// narrow is set when the last character printed is surely one column
	// wide, so REP of it is safe.
	narrow bool
	// The scroll region's top row (1-based; 0 or 1: the screen's) and
	// bottom as the command set them last (DECSTBM), and the parameters of
	// the control sequence being read.
	top, bottom int
	// The left and right margins (DECSLRM, CSI Pl ; Pr s: libvterm takes
	// them whatever the mode) and whether they are on (DECLRMM, ?69).
	left, right int
	lrmm        bool
	private     bool // the sequence has the leader ?
	bang        bool // the sequence has the intermediate ! (DECSTR)
	param       [2]int
	nparam      int
	plain       bool // no leader or intermediate bytes so far
	owed        bool // Guard was asked for inside a sequence
	// joins is set when the last thing sent is a character printed at
	// ground, which a joiner (U+200C, U+200D) may follow: alone, Neovim
	// 0.12 shows one as <200d>, 6 columns, too wide for a narrow split.
	joins bool
}

// Guard appends what goes at the start of every write to Neovim: the
// Guard sequence, and while the command keeps a scroll region below the
// first row, that region again inside DECSC … DECRC. libvterm (every
// version) does not move a region's top when a terminal loses rows, so
// after Neovim shrinks it below the top, the next line feed at the last
// row scrolls a rectangle of negative height and Neovim crashes; setting
// the region again makes libvterm check it against the current size (a
// region that no longer fits becomes the whole screen). The cursor stays
// where it was; the command's own saved cursor is lost (while such a
// region is set).
//
// Inside a sequence the command began in an earlier write, the guard would
// break it: it goes out where the sequence ends.
func (f *Filter) Guard(dst []byte) []byte {
	f.joins = false
	if f.vt != ground && f.vt != hidden && f.vt != hiddenEsc { // nothing of a hidden string was sent
		f.owed = true
		return dst
	}
	f.owed = false
	dst = append(dst, Guard...)
	if f.top > 1 {
		dst = setAgain(dst, f.top, f.bottom, 'r')
	}
	if f.lrmm && f.left > 1 { // the left margin, the same way (DECSLRM)
		dst = setAgain(dst, f.left, f.right, 's')
	}
	return dst
}

// setAgain appends CSI first ; second final (second left out when 0)
// inside DECSC … DECRC, which keep the cursor where it is.
func setAgain(dst []byte, first, second int, final byte) []byte {
	dst = append(dst, "\x1b7\x1b["...)
	dst = strconv.AppendInt(dst, int64(first), 10)
	if second > 0 {
		dst = append(dst, ';')
		dst = strconv.AppendInt(dst, int64(second), 10)
	}
	return append(dst, final, 0x1b, '8')
}

// maxHold is the longest escape sequence held back at a chunk's end.
const maxHold = 64

// Append appends p, made safe, to dst and returns the extended slice. An
// incomplete UTF-8 character or escape sequence at the end of p is kept
// for the next call.
func (f *Filter) Append(dst, p []byte) []byte {
	return f.append(dst, p, true)
}

func (f *Filter) append(dst, p []byte, hold bool) []byte {
	if len(f.hold) > 0 {
		f.scratch = append(append(f.scratch[:0], f.hold...), p...)
		p = f.scratch
		f.hold = f.hold[:0]
	}
	f.seq = -1
	var tail []byte // an incomplete character at the end
	for len(p) > 0 {
		if f.vt == ground {
			if f.owed {
				dst = f.Guard(dst)
			}
			// Copy a run of printable ASCII at once: most output is that.
			i := 0
			for i < len(p) && p[i] >= 0x20 && p[i] < 0x7f {
				i++
			}
			if i > 0 {
				dst = append(dst, p[:i]...)
				f.narrow, f.joins = true, true
				p = p[i:]
				continue
			}
		}
		if p[0] < utf8.RuneSelf {
			if p[0] == 0x1b {
				// An ESC outside a string starts a sequence afresh (one left
				// open before it is void in every libvterm).
				f.seq = -1
				if f.vt == ground || f.vt == esc || f.vt == escInter || f.vt == csi {
					f.seq = len(dst)
				}
			}
			dst = f.step(dst, p[0])
			f.joins = false
			p = p[1:]
			continue
		}
		if !utf8.FullRune(p) {
			if hold {
				tail = p // only at the end: FullRune needs ≤ 3 more bytes
				break
			}
			if f.vt != hidden && f.vt != hiddenEsc {
				dst = append(dst, replacement...)
			}
			if f.vt == ground {
				f.narrow = true
			}
			break
		}
		r, size := utf8.DecodeRune(p)
		if f.vt == hidden {
			p = p[size:]
			continue
		}
		if f.vt == hiddenEsc {
			f.vt = ground // ends the hidden string; its ESC was never sent
		}
		switch {
		case r == utf8.RuneError && size == 1 || r >= 0x80 && r <= 0x9f:
			r = utf8.RuneError
			dst = append(dst, replacement...)
		case invisible(r), (r == 0x200c || r == 0x200d) && !f.joins:
			p = p[size:]
			continue // never printed
		case r == 0x3099 || r == 0x309a:
			// Combining kana voicing marks, but 2 columns wide to libvterm
			// 0.1 and 0.3: the glyph they join grows past the row's end.
			// The spacing marks (゛゜) show the same.
			r += 2
			dst = utf8.AppendRune(dst, r)
		case r >= 0x302a && r <= 0x302f:
			p = p[size:]
			continue // ideographic tone marks, the same trouble: dropped
		default:
			dst = append(dst, p[:size]...)
		}
		p = p[size:]
		// A joiner extends the cluster of a character of any grapheme class
		// but Control (UAX #29): not after a format character (but the
		// joiners) or a line or paragraph separator.
		f.joins = f.vt == ground && (r == 0x200c || r == 0x200d || !unicode.In(r, unicode.Cf, unicode.Zl, unicode.Zp))
		switch {
		case !narrow(r):
			f.narrow = false // in any state: libvterm may have printed it
		case f.vt == ground:
			f.narrow = true
		}
	}
	if hold && f.seq >= 0 && (f.vt == esc || f.vt == escInter || f.vt == csi) && len(dst)-f.seq <= maxHold {
		// Sent with what follows; the parser goes back to before it.
		f.hold = append(f.hold, dst[f.seq:]...)
		dst = dst[:f.seq]
		f.vt = ground
	}
	f.hold = append(f.hold, tail...)
	return dst
}

// step moves the parser over byte c (below 0x80, not printable text at
// ground) and appends what to send in its place.
func (f *Filter) step(dst []byte, c byte) []byte {
	switch f.vt {
	case hidden, hiddenEsc:
		// libvterm 0.1 prints an SOS, PM or APC string's text, 0.3 and 0.12
		// swallow it: nobody sees any of it.
		switch {
		case c == can || c == 0x1a:
			f.vt = ground
			return append(dst, c)
		case c == 0x1b:
			f.vt = hiddenEsc
		case f.vt == hiddenEsc && c == '\\', c == 0x07:
			f.vt = ground
		case f.vt == hiddenEsc:
			f.vt = esc
			f.seq = len(dst) // a sequence from ground: may be held
			return f.step(append(dst, 0x1b), c)
		}
		return dst
	case strEsc:
		if c != '\\' {
			// ESC ends the string anyway; libvterm 0.1 then reads an escape
			// sequence where 0.3 and 0.12 read a finished one (after
			// another ESC too): CAN, and the byte is read from ground by
			// all (text, a control, a new sequence).
			f.vt = ground
			dst = append(dst, can)
			if f.owed {
				dst = f.Guard(dst)
			}
			if c == 0x1b {
				f.seq = len(dst) // a sequence from ground: may be held
			}
			if c >= 0x20 && c < 0x7f {
				f.narrow = true
				return append(dst, c)
			}
			return f.step(dst, c)
		}
		f.vt = esc
	case str:
		if c < 0x20 && c != 0x07 && c != 0x1b && c != can && c != 0x1a {
			return dst // a control inside a string would act (libvterm runs it): dropped
		}
	}
	switch {
	case c == can || c == 0x1a: // CAN, SUB abort any sequence
		f.vt = ground
	case c == 0x1b:
		if f.vt == str {
			f.vt = strEsc
		} else {
			f.vt = esc // anything else starts anew
		}
	case c == 0x07 && f.vt == str:
		f.vt = ground // BEL ends an OSC
	case c < 0x20 || c == 0x7f:
		// C0 controls act inside sequences too; DEL is ignored. One that
		// moves the cursor must not act before an owed Guard: the
		// sequence is cancelled for it (rare: a write ended inside it).
		if f.owed && c >= 0x0a && c <= 0x0d && f.vt != ground {
			f.vt = ground
			dst = f.Guard(append(dst, can))
		}
	case f.vt == esc:
		switch {
		case c == '[':
			f.vt = csi
			f.param, f.nparam, f.plain, f.private, f.bang = [2]int{}, 0, true, false, false
		case c == ']':
			f.vt = str
		case c == 'P' || c == 'X' || c == '^' || c == '_':
			// DCS too: libvterm 0.1 crashes on a DECRQSS (ESC P $ q) with
			// non-ASCII in it, and none of them shows anything.
			f.vt = hidden
			// The ESC before it becomes CAN (or, sent with an earlier
			// chunk, is cancelled by one): libvterm is at ground, whatever
			// an ESC before that one had begun.
			if n := len(dst); n > 0 && dst[n-1] == 0x1b {
				dst[n-1] = can
				return dst
			}
			return append(dst, can)
		case c < 0x30:
			f.vt = escInter
		default:
			f.vt = ground
			switch c {
			case 'c': // RIS
				f.top, f.bottom, f.left, f.right, f.lrmm = 0, 0, 0, 0, false
			case '8':
				// DECRC puts back a cursor saved before Neovim shrank the
				// terminal, maybe below it (libvterm 0.1 does not move the
				// saved one): the clamp of Guard right after it.
				return append(append(dst, c), Guard...)
			}
		}
	case f.vt == escInter:
		switch {
		case c == '[' || c == ']' || c == 'P':
			// libvterm 0.1 (Neovim 0.7) starts a CSI or a string here,
			// 0.3 and 0.12 end the escape with it (it shows nothing): the
			// escape is cancelled in every version and the byte dropped,
			// so what follows is text to all, as 0.3 and 0.12 show it.
			f.vt = ground
			return append(dst, can)
		case c >= 0x30:
			f.vt = ground
		}
	case f.vt == csi:
		switch {
		case c >= '0' && c <= '9':
			if f.nparam < len(f.param) && f.param[f.nparam] < 10000 {
				f.param[f.nparam] = f.param[f.nparam]*10 + int(c-'0')
			}
		case c == ';' || c == ':':
			f.nparam++
		case c < 0x40:
			f.plain = false // a leader or an intermediate byte
			f.private = f.private || c == '?'
			f.bang = f.bang || c == '!'
		default:
			f.vt = ground
			switch {
			case c == 'b' && !f.narrow:
				return append(dst, can) // REP of a zero-width or wide character hangs or crashes
			case c == 'r' && f.plain: // DECSTBM
				f.top, f.bottom = f.param[0], f.param[1]
			case c == 's' && f.plain: // DECSLRM
				f.left, f.right = f.param[0], f.param[1]
			case (c == 'h' || c == 'l') && f.private && f.nparam == 0 && f.param[0] == 69: // DECLRMM
				f.lrmm = c == 'h'
			case c == 'p' && f.bang:
				// DECSTR (CSI ! p): 0.3 and 0.12 forget the scroll region and
				// the margins, 0.1 does not know it: it forgets them too.
				f.top, f.bottom, f.left, f.right, f.lrmm = 0, 0, 0, 0, false
				return append(dst, "p\x1b7\x1b[?69h\x1b[s\x1b[?69l\x1b[r\x1b8"...)
			}
		}
	}
	return append(dst, c)
}

// narrow reports whether r is surely one column wide in every libvterm
// and width table Neovim uses: below U+1100 (Latin, Greek, Cyrillic,
// Hebrew, Arabic, …) but for zero-width marks and format characters, and
// general punctuation, box drawing and block elements (what full-screen
// programs repeat). U+FFFD is narrow too. A mark must be spacing both in
// current Unicode (Neovim 0.12 judges by it) and in Markus Kuhn's 2007
// combining table that libvterm 0.1 and 0.3 use (kuhnCombining): U+06DE
// is a symbol today but combining there.
func narrow(r rune) bool {
	switch {
	case r < 0x1100:
		return r >= 0xa0 && r != 0xad && !unicode.In(r, unicode.Mn, unicode.Me, unicode.Mc, unicode.Cf) &&
			!unicode.Is(kuhnCombining, r)
	case r >= 0x2010 && r <= 0x2027, r >= 0x2030 && r <= 0x205e:
		return true
	case r >= 0x2500 && r <= 0x259f:
		return true
	}
	return r == utf8.RuneError
}

// kuhnCombining is the part of libvterm's combining table (unicode.c, from
// Markus Kuhn's wcwidth of 2007; the same in libvterm 0.1 and 0.3) below
// U+1100: libvterm gives these no column of their own. (The punctuation,
// box drawing and block ranges that narrow accepts above U+1100 hold none.)
var kuhnCombining = &unicode.RangeTable{R16: []unicode.Range16{
	{0x0300, 0x036F, 1}, {0x0483, 0x0486, 1}, {0x0488, 0x0489, 1}, {0x0591, 0x05BD, 1}, {0x05BF, 0x05BF, 1},
	{0x05C1, 0x05C2, 1}, {0x05C4, 0x05C5, 1}, {0x05C7, 0x05C7, 1}, {0x0600, 0x0603, 1}, {0x0610, 0x0615, 1},
	{0x064B, 0x065E, 1}, {0x0670, 0x0670, 1}, {0x06D6, 0x06E4, 1}, {0x06E7, 0x06E8, 1}, {0x06EA, 0x06ED, 1},
	{0x070F, 0x070F, 1}, {0x0711, 0x0711, 1}, {0x0730, 0x074A, 1}, {0x07A6, 0x07B0, 1}, {0x07EB, 0x07F3, 1},
	{0x0901, 0x0902, 1}, {0x093C, 0x093C, 1}, {0x0941, 0x0948, 1}, {0x094D, 0x094D, 1}, {0x0951, 0x0954, 1},
	{0x0962, 0x0963, 1}, {0x0981, 0x0981, 1}, {0x09BC, 0x09BC, 1}, {0x09C1, 0x09C4, 1}, {0x09CD, 0x09CD, 1},
	{0x09E2, 0x09E3, 1}, {0x0A01, 0x0A02, 1}, {0x0A3C, 0x0A3C, 1}, {0x0A41, 0x0A42, 1}, {0x0A47, 0x0A48, 1},
	{0x0A4B, 0x0A4D, 1}, {0x0A70, 0x0A71, 1}, {0x0A81, 0x0A82, 1}, {0x0ABC, 0x0ABC, 1}, {0x0AC1, 0x0AC5, 1},
	{0x0AC7, 0x0AC8, 1}, {0x0ACD, 0x0ACD, 1}, {0x0AE2, 0x0AE3, 1}, {0x0B01, 0x0B01, 1}, {0x0B3C, 0x0B3C, 1},
	{0x0B3F, 0x0B3F, 1}, {0x0B41, 0x0B43, 1}, {0x0B4D, 0x0B4D, 1}, {0x0B56, 0x0B56, 1}, {0x0B82, 0x0B82, 1},
	{0x0BC0, 0x0BC0, 1}, {0x0BCD, 0x0BCD, 1}, {0x0C3E, 0x0C40, 1}, {0x0C46, 0x0C48, 1}, {0x0C4A, 0x0C4D, 1},
	{0x0C55, 0x0C56, 1}, {0x0CBC, 0x0CBC, 1}, {0x0CBF, 0x0CBF, 1}, {0x0CC6, 0x0CC6, 1}, {0x0CCC, 0x0CCD, 1},
	{0x0CE2, 0x0CE3, 1}, {0x0D41, 0x0D43, 1}, {0x0D4D, 0x0D4D, 1}, {0x0DCA, 0x0DCA, 1}, {0x0DD2, 0x0DD4, 1},
	{0x0DD6, 0x0DD6, 1}, {0x0E31, 0x0E31, 1}, {0x0E34, 0x0E3A, 1}, {0x0E47, 0x0E4E, 1}, {0x0EB1, 0x0EB1, 1},
	{0x0EB4, 0x0EB9, 1}, {0x0EBB, 0x0EBC, 1}, {0x0EC8, 0x0ECD, 1}, {0x0F18, 0x0F19, 1}, {0x0F35, 0x0F35, 1},
	{0x0F37, 0x0F37, 1}, {0x0F39, 0x0F39, 1}, {0x0F71, 0x0F7E, 1}, {0x0F80, 0x0F84, 1}, {0x0F86, 0x0F87, 1},
	{0x0F90, 0x0F97, 1}, {0x0F99, 0x0FBC, 1}, {0x0FC6, 0x0FC6, 1}, {0x102D, 0x1030, 1}, {0x1032, 0x1032, 1},
	{0x1036, 0x1037, 1}, {0x1039, 0x1039, 1}, {0x1058, 0x1059, 1},
}}

// invisible reports whether r is dropped: a format character (Unicode Cf)
// but for the joiners, or a character Neovim 0.12 cannot print
// (utf_printable in its mbyte.c), to which its vterm gives the 6 columns
// of "<xxxx>": Mongolian free variation selectors, unassigned U+2065,
// the noncharacters U+FFFE and U+FFFF.
func invisible(r rune) bool {
	switch {
	case r >= 0x180b && r <= 0x180e, r >= 0x2060 && r <= 0x206f, r == 0xfffe, r == 0xffff:
		return true
	}
	return r >= 0x600 && r != 0x200c && r != 0x200d && unicode.Is(unicode.Cf, r)
}

// Flush appends what is held back to dst at the end of the stream, or
// before bytes of another origin: an incomplete character as U+FFFD, an
// incomplete escape sequence as it is.
func (f *Filter) Flush(dst []byte) []byte {
	if len(f.hold) == 0 {
		return dst
	}
	p := append([]byte(nil), f.hold...)
	f.hold = f.hold[:0]
	return f.append(dst, p, false)
}

// Drop forgets what is held back without sending it, for a stream that
// skips ahead. The parser state stays: it describes what Neovim has been
// sent.
func (f *Filter) Drop() { f.hold = f.hold[:0] }
