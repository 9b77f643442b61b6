package render

import "encoding/binary"

// Handler receives what a Scanner finds in a terminal byte stream. The
// slices it is given are only valid during the call.
type Handler interface {
	// Text receives a run of printable bytes: every byte >= 0x20 except
	// DEL, including all bytes >= 0x80 (UTF-8 is not decoded here, and a
	// character may be split across two calls).
	Text(p []byte)
	// Control receives a C0 control (or DEL) met outside a string.
	Control(c byte)
	// Escape receives a two-byte (or intermediate-carrying) escape such as
	// ESC 7 or the charset designation ESC ( B.
	Escape(intermediates []byte, final byte)
	// CSI receives a control sequence: params holds the parameter bytes
	// (digits, ';', ':' and private markers such as '?'), intermediates
	// the bytes 0x20-0x2f, final the byte 0x40-0x7e.
	CSI(params, intermediates []byte, final byte)
	// OSC receives the payload of an operating system command (the bytes
	// between "ESC ]" and BEL or ST), unless it was longer than MaxOSC.
	OSC(payload []byte)
}

// Scanner limits. A sequence over a limit is consumed to its end and
// dropped, so memory stays bounded whatever a program prints.
const (
	// MaxOSC bounds an OSC payload (a long OSC 633;E command line fits).
	MaxOSC = 64 << 10
	// maxCSIParams bounds a CSI's parameter bytes.
	maxCSIParams = 64
	// maxIntermediates bounds the intermediates of an ESC or CSI sequence.
	maxIntermediates = 4
)

type scanState uint8

const (
	stGround    scanState = iota
	stEscape              // after ESC
	stEscInter            // ESC then intermediates
	stCSI                 // CSI params / intermediates
	stCSIIgnore           // malformed or overlong CSI: skip to its final byte
	stOSC                 // OSC payload
	stOSCEsc              // ESC inside an OSC: "\" ends it
	stString              // DCS, SOS, PM or APC: skipped to ST
	stStringEsc           // ESC inside such a string
)

// Scanner is a streaming parser of terminal output (after the VT500 state
// machine): it splits bytes into text runs, C0 controls, ESC sequences,
// CSI sequences and OSC strings, and skips DCS/SOS/PM/APC strings. Its
// state survives between Feed calls, so sequences split across reads are
// recognised. 8-bit C1 bytes are not interpreted (the stream is UTF-8).
type Scanner struct {
	h     Handler
	state scanState
	// csiInter marks that intermediates were seen (params may not follow).
	csiInter bool
	// oscOver marks an OSC that grew past MaxOSC and will be dropped.
	oscOver bool
	params  []byte
	inter   []byte
	osc     []byte
}

// NewScanner returns a Scanner reporting to h.
func NewScanner(h Handler) *Scanner {
	return &Scanner{h: h}
}

// Feed scans p, continuing any sequence left open by the previous call.
func (s *Scanner) Feed(p []byte) {
	i, n := 0, len(p)
	for i < n {
		if s.state == stGround {
			// The hot path: a tight loop over printable bytes, eight at a
			// time while no byte in the word is a control or DEL.
			j := i
			for j+8 <= n {
				x := binary.LittleEndian.Uint64(p[j:])
				y := x ^ 0x7f7f7f7f7f7f7f7f // DEL bytes become zero
				if ((x-0x2020202020202020)&^x|(y-0x0101010101010101)&^y)&0x8080808080808080 != 0 {
					break
				}
				j += 8
			}
			for j < n {
				c := p[j]
				if c < 0x20 || c == 0x7f {
					break
				}
				j++
			}
			if j > i {
				s.h.Text(p[i:j])
				i = j
				if i == n {
					return
				}
			}
			c := p[i]
			i++
			if c == 0x1b {
				s.enterEscape()
			} else {
				s.h.Control(c)
			}
			continue
		}
		if s.state == stOSC {
			// Collect the payload in bulk up to its terminator.
			j := i
			for j < n {
				c := p[j]
				if c < 0x20 {
					break
				}
				j++
			}
			s.oscAppend(p[i:j])
			i = j
			if i == n {
				return
			}
		}
		s.step(p[i])
		i++
	}
}

func (s *Scanner) enterEscape() {
	s.state = stEscape
	s.inter = s.inter[:0]
}

// step advances the state machine by one byte outside the ground state.
func (s *Scanner) step(c byte) {
	switch s.state {
	case stEscape, stEscInter, stCSI, stCSIIgnore:
		// Inside ESC and CSI sequences, C0 controls still act; CAN and SUB
		// abort the sequence and ESC restarts it.
		if c < 0x20 {
			switch c {
			case 0x1b:
				s.enterEscape()
			case 0x18, 0x1a:
				s.state = stGround
			default:
				s.h.Control(c)
			}
			return
		}
		if c == 0x7f {
			return // DEL is ignored inside sequences
		}
	}
	switch s.state {
	case stEscape:
		switch {
		case c < 0x30: // 0x20-0x2f intermediate
			s.collectInter(c)
			s.state = stEscInter
		case c == '[':
			s.state = stCSI
			s.params = s.params[:0]
			s.inter = s.inter[:0]
			s.csiInter = false
		case c == ']':
			s.state = stOSC
			s.osc = s.osc[:0]
			s.oscOver = false
		case c == 'P' || c == 'X' || c == '^' || c == '_':
			s.state = stString
		case c < 0x7f:
			s.state = stGround
			s.h.Escape(s.inter, c)
		default: // bytes >= 0x80 cannot follow ESC: back to text
			s.state = stGround
			s.h.Text([]byte{c})
		}
	case stEscInter:
		switch {
		case c < 0x30:
			s.collectInter(c)
		case c < 0x7f:
			s.state = stGround
			if len(s.inter) <= maxIntermediates {
				s.h.Escape(s.inter, c)
			}
		default:
			s.state = stGround
			s.h.Text([]byte{c})
		}
	case stCSI:
		switch {
		case c >= 0x30 && c <= 0x3f:
			if s.csiInter || len(s.params) >= maxCSIParams {
				s.state = stCSIIgnore
				return
			}
			s.params = append(s.params, c)
		case c >= 0x20 && c <= 0x2f:
			s.csiInter = true
			s.collectInter(c)
		case c >= 0x40 && c <= 0x7e:
			s.state = stGround
			if len(s.inter) <= maxIntermediates {
				s.h.CSI(s.params, s.inter, c)
			}
		default: // >= 0x80: malformed
			s.state = stCSIIgnore
		}
	case stCSIIgnore:
		if c >= 0x40 && c <= 0x7e {
			s.state = stGround
		}
	case stOSC:
		switch c {
		case 0x07:
			s.endOSC()
		case 0x1b:
			s.state = stOSCEsc
		case 0x18, 0x1a:
			s.state = stGround
		default:
			// Other C0 controls inside an OSC are ignored (as xterm does).
		}
	case stOSCEsc:
		// ESC \ is ST. Any other byte ends the OSC too and starts a new
		// escape sequence with that byte.
		s.endOSC()
		if c != '\\' {
			s.enterEscape()
			s.step(c)
		}
	case stString:
		switch c {
		case 0x1b:
			s.state = stStringEsc
		case 0x18, 0x1a:
			s.state = stGround
		}
	case stStringEsc:
		s.state = stGround
		if c != '\\' {
			s.enterEscape()
			s.step(c)
		}
	}
}

func (s *Scanner) collectInter(c byte) {
	if len(s.inter) <= maxIntermediates {
		s.inter = append(s.inter, c)
	}
}

func (s *Scanner) oscAppend(p []byte) {
	if s.oscOver {
		return
	}
	if len(s.osc)+len(p) > MaxOSC {
		s.oscOver = true
		s.osc = s.osc[:0]
		if cap(s.osc) > 4096 {
			s.osc = nil // give the overlong buffer back
		}
		return
	}
	s.osc = append(s.osc, p...)
}

func (s *Scanner) endOSC() {
	s.state = stGround
	if !s.oscOver {
		s.h.OSC(s.osc)
	}
	s.oscOver = false
	if cap(s.osc) > 4096 {
		s.osc = nil
	} else {
		s.osc = s.osc[:0]
	}
}
