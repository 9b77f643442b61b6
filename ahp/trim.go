package ahp

import "unicode/utf8"

// Default content bounds for Trim.
const (
	// DefaultContentBytes is 256 KiB of part text per terminal: enough for
	// a late subscriber's snapshot and recent commands' output, small next
	// to the display's raw log, which holds the same bytes.
	DefaultContentBytes = 256 << 10
	// DefaultContentParts is about 500 commands with their prompts.
	DefaultContentParts = 1000
)

// ContentLimits bounds the content a TerminalState keeps. AHP leaves
// scrollback length to the implementation ("both sides MAY trim").
type ContentLimits struct {
	// MaxBytes bounds the total length of all parts' text (Value/Output);
	// <= 0 means DefaultContentBytes.
	MaxBytes int
	// MaxParts bounds the number of parts; <= 0 means DefaultContentParts.
	MaxParts int
}

// Trim bounds s.Content in place and returns how many bytes of text it
// dropped. The rule keeps the newest output, so the naive VT stream
// (every part's text joined) is a tail of what the terminal printed:
//
//  1. While there are more than MaxParts parts, the oldest part is
//     dropped, metadata and all.
//  2. While the text exceeds MaxBytes, the oldest bytes go: a part whose
//     whole text falls before the cut is dropped (a command part with
//     it; the last part never is), and the part the cut falls in loses
//     the head of its text, cut forward to a UTF-8 character start. A
//     command part cut this way keeps its command line and exit code.
//
// Like Apply it works in place, on a state the caller owns; the parts it
// keeps are moved to a fresh slice when it drops any, so the dropped
// text's memory is released.
func (s *TerminalState) Trim(lim ContentLimits) (dropped int) {
	maxBytes, maxParts := lim.MaxBytes, lim.MaxParts
	if maxBytes <= 0 {
		maxBytes = DefaultContentBytes
	}
	if maxParts <= 0 {
		maxParts = DefaultContentParts
	}
	first := 0 // index of the oldest part kept
	if n := len(s.Content); n > maxParts {
		for _, p := range s.Content[:n-maxParts] {
			dropped += len(p.Text())
		}
		first = n - maxParts
	}
	total := 0
	for _, p := range s.Content[first:] {
		total += len(p.Text())
	}
	excess := total - maxBytes
	for excess > 0 && first < len(s.Content)-1 && len(s.Content[first].Text()) <= excess {
		n := len(s.Content[first].Text())
		excess -= n
		dropped += n
		first++
	}
	if excess > 0 && first < len(s.Content) {
		p := &s.Content[first]
		text := p.Text()
		cut := min(excess, len(text))
		for cut < len(text) && !utf8.RuneStart(text[cut]) {
			cut++
		}
		if p.Type == PartCommand {
			p.Output = text[cut:]
		} else {
			p.Value = text[cut:]
		}
		dropped += cut
	}
	if first > 0 {
		s.Content = append(make([]ContentPart, 0, len(s.Content)-first), s.Content[first:]...)
	}
	return dropped
}
