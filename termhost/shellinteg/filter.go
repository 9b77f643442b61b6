package shellinteg

import (
	"bytes"

	"github.com/agentrun/agentrun.nvim/internal/render"
)

// Why this file exists: AHP says shell integration sequences must not
// reach terminal/data (and they must not show in the split either), and
// command boundaries must fall exactly between the bytes printed before
// and after each marker. Filter does both in one pass over the raw
// pty stream: everything passes through byte for byte, except OSC 633 and
// OSC 133 sequences, which are cut out; every OSC payload is reported in
// stream order, after the bytes before it were passed on.
//
// It follows the same VT500 state machine as Scanner, so both agree on
// where an OSC starts and ends. Outside OSCs it only needs to know whether
// the stream is at ground (text) or inside some sequence, because the ESC
// of a cut-out OSC also ended whatever sequence was open: a CSI, a DCS
// string, an OSC. In that case the cut OSC is replaced by what ends that
// sequence the same way and does nothing else (ST after an OSC, CAN after
// anything else). At ground, where shells print their markers, nothing
// replaces it.
//
// An OSC is held back only until its code is known (at most "ESC ] 633"),
// never to its end.

// filterState is where an Filter is between two bytes.
type filterState uint8

const (
	fPass   filterState = iota // passing bytes; vt says where the VT parser is
	fEsc                       // after ESCs (held back): "]" starts an OSC
	fOSC                       // inside an OSC payload
	fOSCEsc                    // ESC inside an OSC: "\" ends it (ST), anything else ends it and starts anew
)

// vtState is the VT parser's state for bytes passing outside our OSCs.
type vtState uint8

const (
	vtGround   vtState = iota
	vtEsc              // ESC then C0 controls or DEL
	vtEscInter         // ESC and intermediate bytes
	vtCSI              // control sequence, up to its final byte
	vtStr              // DCS, SOS, PM or APC string, up to ESC, CAN or SUB
	vtOSC              // an OSC after "ESC C0 ]" (passed, not parsed), or our kept one
)

// next returns the state after byte c (never ESC, which the filter handles).
func (v vtState) next(c byte) vtState {
	if c == 0x18 || c == 0x1a { // CAN, SUB abort any sequence
		return vtGround
	}
	switch v {
	case vtEsc:
		switch {
		case c < 0x20 || c == 0x7f:
			return vtEsc // C0 controls act inside an escape
		case c == ']':
			return vtOSC
		case c == '[':
			return vtCSI
		case c == 'P' || c == 'X' || c == '^' || c == '_':
			return vtStr
		case c < 0x30:
			return vtEscInter
		}
		return vtGround
	case vtEscInter:
		if c < 0x30 || c == 0x7f {
			return vtEscInter
		}
		return vtGround
	case vtCSI:
		if c >= 0x40 && c <= 0x7e {
			return vtGround
		}
		return vtCSI
	case vtOSC:
		if c == 0x07 {
			return vtGround
		}
		return vtOSC
	}
	return v // vtStr until ESC; vtGround stays
}

// Decisions about the OSC being read.
const (
	oscUndecided = iota // code not known yet: raw bytes are held
	oscKeep             // passes through
	oscStrip            // cut out
)

var (
	stBytes = []byte{0x1b, '\\'}
	canByte = []byte{0x18}
	escByte = []byte{0x1b}
)

// escRun returns n ESCs.
func escRun(n int) []byte {
	if n == 1 {
		return escByte
	}
	return bytes.Repeat(escByte, n)
}

// Filter removes shell integration sequences (isMarker)
// from a terminal byte stream and reports every OSC payload. Its state
// survives between Feed calls, so sequences split across reads are
// handled. The zero value is ready to use; not safe for concurrent use.
//
// The output scans like the input without those sequences (the tests
// check this against Scanner). Bytes that do not matter may change in
// OSCs that are kept: "ESC ESC ]" comes out as "ESC ]", and C0 controls
// among an OSC's first bytes are dropped (terminals ignore both). One
// difference from Scanner: "ESC, C0 controls or DEL, ]" is passed on but
// not reported as an OSC (no program prints that).
type Filter struct {
	state filterState
	vt    vtState
	// escs counts the ESCs held in state fEsc; escFrom is the VT state the
	// first of them interrupted.
	escs    int
	escFrom vtState
	// interrupted is the open sequence the current OSC's ESC ended
	// (vtGround: none); a cut-out OSC must end it the same way.
	interrupted vtState
	decision    int
	held        []byte // raw bytes of an undecided OSC
	payload     []byte
	over        bool // payload longer than render.MaxOSC: not reported
}

// Feed filters p. out receives the bytes to pass on, in order, possibly
// in several calls (none when everything was cut); osc receives each
// complete OSC payload (at most MaxOSC bytes; longer ones are not
// reported) after out has received every byte before and of that OSC.
// Neither may keep the slices it is given past the call.
func (f *Filter) Feed(p []byte, out func(data []byte), osc func(payload []byte)) {
	r := 0 // start of the bytes not yet passed on, held or dropped
	emit := func(to int) {
		if to > r {
			out(p[r:to])
		}
		r = to
	}
	// settle disposes of OSC bytes p[r:to] according to the decision.
	settle := func(to int) {
		switch f.decision {
		case oscUndecided:
			f.hold(p[r:to])
			r = to
		case oscStrip:
			r = to
		} // oscKeep: they stay in the run and go out with it
	}
	escStart := -1 // where in p the held ESCs start, if they are in p
	i := 0
	for i < len(p) {
		switch f.state {
		case fPass:
			if f.vt == vtGround { // the hot path: text up to the next ESC
				j := bytes.IndexByte(p[i:], 0x1b)
				if j < 0 {
					i = len(p)
					continue
				}
				i += j
			} else {
				for i < len(p) && p[i] != 0x1b && f.vt != vtGround {
					f.vt = f.vt.next(p[i])
					i++
				}
				if i == len(p) || p[i] != 0x1b {
					continue
				}
			}
			emit(i)
			escStart = i
			i++
			r = i // the ESC is held until we know what follows
			f.escs, f.escFrom = 1, f.vt
			f.state = fEsc
		case fEsc:
			switch p[i] {
			case 0x1b: // ESC ESC: the first is cancelled; an OSC may still follow
				f.escs++
				i++
				r = i
			case ']':
				f.startOSC()
				f.held = append(f.held, 0x1b, ']') // ESC ESC ] is ESC ]
				i++
				r = i
			default: // not an OSC: the ESCs go out and p[i] is looked at anew
				if escStart >= 0 {
					r = escStart // back into the run, in one piece with what follows
				} else {
					out(escRun(f.escs))
				}
				f.state, f.vt = fPass, vtEsc
			}
		case fOSC:
			for i < len(p) && f.state == fOSC {
				c := p[i]
				switch {
				case c == 0x07: // BEL ends the OSC
					i++
					f.finishDecision(out)
					settle(i)
					f.closeCut(out)
					f.endOSC(emit, i, osc)
				case c == 0x1b:
					settle(i)
					if f.decision == oscKeep {
						emit(i)
					}
					escStart = i
					i++
					r = i // the ESC waits for the next byte, in f.state
					f.state = fOSCEsc
				case c == 0x18 || c == 0x1a: // CAN, SUB: the OSC is cancelled
					i++
					f.finishDecision(out)
					settle(i)
					f.closeCut(out)
					f.state, f.vt = fPass, vtGround
				default:
					if c >= 0x20 { // other C0 controls are ignored, as Scanner does
						f.addPayload(c)
					}
					i++
					if f.decision == oscUndecided {
						settle(i) // held byte by byte, so chunking cannot show
						if f.decide(false); f.decision != oscUndecided {
							f.finishDecision(out)
						}
					}
				}
			}
			if f.state == fOSC {
				settle(len(p))
			}
		case fOSCEsc:
			// p[i] follows the ESC that ended the payload.
			f.finishDecision(out)
			if p[i] == '\\' { // ST: the ESC and "\" belong to the OSC
				if f.decision == oscKeep {
					out(escRun(1))
				}
				i++
				settle(i)
				f.closeCut(out)
				f.endOSC(emit, i, osc)
				continue
			}
			// Any other byte ends the OSC, and the ESC starts a new escape
			// sequence with it; it interrupts the OSC if that was kept.
			kept := f.decision == oscKeep
			f.closeCut(out)
			f.endOSC(emit, i, osc)
			f.state, f.escs, f.escFrom = fEsc, 1, vtGround
			if kept {
				f.escFrom = vtOSC
			}
		}
	}
	if f.state == fPass || (f.state == fOSC && f.decision == oscKeep) {
		emit(len(p))
	}
}

// Flush passes on what Feed still holds back at the end of the stream (a
// trailing ESC, the start of an unfinished OSC that was not ours) and
// resets the filter.
func (f *Filter) Flush(out func(data []byte)) {
	switch f.state {
	case fEsc:
		out(escRun(f.escs))
	case fOSC, fOSCEsc:
		// Never finished, so never reported: an undecided start is passed
		// on as it came.
		if f.decision == oscUndecided {
			f.decision = oscKeep
		}
		f.finishDecision(out)
		if f.state == fOSCEsc && f.decision == oscKeep {
			out(escRun(1))
		}
		f.closeCut(out)
	}
	*f = Filter{held: f.held[:0]}
}

func (f *Filter) startOSC() {
	f.state = fOSC
	f.interrupted = f.escFrom
	f.decision = oscUndecided
	f.held = f.held[:0]
	f.payload = f.payload[:0]
	f.over = false
}

// hold keeps the bytes of an undecided OSC, but for the C0 controls in
// it, which a terminal ignores there: so at most "ESC ] 633" is held.
func (f *Filter) hold(b []byte) {
	for _, c := range b {
		if c >= 0x20 {
			f.held = append(f.held, c)
		}
	}
}

func (f *Filter) addPayload(c byte) {
	if f.over {
		return
	}
	if len(f.payload) >= render.MaxOSC {
		f.over = true
		f.payload = nil // give the big buffer back
		return
	}
	f.payload = append(f.payload, c)
}

// decide settles keep or strip once the OSC's code is known: at its
// first ";", at its end (final), or as soon as it cannot be 633 or 133.
func (f *Filter) decide(final bool) {
	code, _, found := bytes.Cut(f.payload, []byte{';'})
	switch {
	case found || final:
		if isMarker(code) {
			f.decision = oscStrip
		} else {
			f.decision = oscKeep
		}
	case len(code) > 3 || bytes.IndexFunc(code, notDigit) >= 0:
		f.decision = oscKeep
	}
}

func notDigit(r rune) bool { return r < '0' || r > '9' }

// finishDecision decides an undecided OSC as complete (its end was
// reached) and, if it is kept, passes on the bytes held so far.
func (f *Filter) finishDecision(out func([]byte)) {
	if f.decision == oscUndecided {
		f.decide(true)
	}
	if f.decision == oscKeep && len(f.held) > 0 {
		out(f.held)
	}
	f.held = f.held[:0]
}

// closeCut ends, in place of a cut-out OSC, the sequence its ESC had
// interrupted, the way that ESC did: an OSC is ended (and reported) by ST;
// anything else is aborted without a trace by CAN.
func (f *Filter) closeCut(out func([]byte)) {
	if f.decision == oscStrip {
		switch f.interrupted {
		case vtGround:
		case vtOSC:
			out(stBytes)
		default:
			out(canByte)
		}
	}
	f.interrupted = vtGround
}

// endOSC finishes the OSC whose bytes end before p[at]: kept bytes go out
// first, then the payload is reported.
func (f *Filter) endOSC(emit func(int), at int, osc func([]byte)) {
	f.state, f.vt = fPass, vtGround
	if f.decision == oscKeep {
		emit(at)
	}
	if !f.over {
		osc(f.payload)
	}
	if cap(f.payload) > 4096 {
		f.payload = nil
	}
}
