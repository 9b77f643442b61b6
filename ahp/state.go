package ahp

import (
	"encoding/json"
	"strings"
)

// Content part types.
const (
	PartUnclassified = "unclassified"
	PartCommand      = "command"
)

// TerminalState is the full AHP state of one terminal.
type TerminalState struct {
	Title   string        `json:"title"`
	Cwd     string        `json:"cwd,omitempty"` // a file URI
	Cols    int           `json:"cols,omitempty"`
	Rows    int           `json:"rows,omitempty"`
	Content []ContentPart `json:"content"`
	// ExitCode is set when the process exited normally.
	ExitCode *int `json:"exitCode,omitempty"`
	// ExitSignal (agentrun extension) is set when it died by a signal.
	ExitSignal               string `json:"exitSignal,omitempty"`
	Claim                    Claim  `json:"claim"`
	SupportsCommandDetection bool   `json:"supportsCommandDetection,omitempty"`
}

// ContentPart is one element of TerminalState.Content: either raw output
// outside commands (Type PartUnclassified, text in Value) or one command
// with its output (Type PartCommand). Parts of an unknown type keep their
// JSON and are written back unchanged.
type ContentPart struct {
	Type string
	// Value is the accumulated VT output of an unclassified part.
	Value string
	// The fields of a command part.
	CommandID   string
	CommandLine string
	Output      string
	Timestamp   int64 // Unix ms when the command started
	IsComplete  bool
	ExitCode    *int   // set at completion when the shell reported one
	DurationMs  *int64 // set at completion

	raw []byte   // the JSON of an unknown part type
	buf *textBuf // spare capacity behind Value/Output (text.go)
}

// Text returns the part's accumulated output: Value or Output.
func (p ContentPart) Text() string {
	if p.Type == PartCommand {
		return p.Output
	}
	return p.Value
}

// TerminalInfo is a terminal's entry in the root listing: enough to show a
// terminal manager without subscribing to each terminal.
type TerminalInfo struct {
	Resource string `json:"resource"` // TerminalURI(id)
	Title    string `json:"title"`
	Claim    Claim  `json:"claim"`
	ExitCode *int   `json:"exitCode,omitempty"`
	// ExitSignal (agentrun extension) is set when it died by a signal.
	ExitSignal string `json:"exitSignal,omitempty"`
	// CreatedAt (agentrun extension) is when the terminal started, in Unix
	// milliseconds, for a listing's age column.
	CreatedAt int64 `json:"createdAt,omitempty"`
	// HolderGone (agentrun extension) says the client that holds it is not
	// connected now: anyone may take it over (a listing shows it so, not
	// as still held).
	HolderGone bool `json:"holderGone,omitempty"`
	// Command (agentrun extension) is the command line it runs (the title
	// may be an agent's description of it).
	Command string `json:"command,omitempty"`
	// Ports (agentrun extension) are the TCP ports its processes listened
	// on when last looked at (a dev server's), sorted.
	Ports []int `json:"ports,omitempty"`
	// RunOf and Run (agentrun extensions) say that it runs a command
	// again (R in Neovim): RunOf is the first run's id, the row a
	// listing shows it in and the name its commands take for it, Run
	// which run it is (2 for the first rerun). Absent on a first run.
	RunOf string `json:"runOf,omitempty"`
	Run   int    `json:"run,omitempty"`
	// ReplacedBy (agentrun extension) is the id of the terminal that runs
	// its command again: a listing by rows leaves this one out.
	ReplacedBy string `json:"replacedBy,omitempty"`
}

// RootState is the AHP root state as far as agentrun keeps it: the agent
// list is carried opaquely, the terminal listing is ours.
type RootState struct {
	Agents []json.RawMessage `json:"agents"`
	// Terminals is nil until the first root/terminalsChanged.
	Terminals []TerminalInfo `json:"terminals,omitempty"`
}

// Info returns the root-listing entry for this state at resource.
func (s TerminalState) Info(resource string) TerminalInfo {
	return TerminalInfo{
		Resource:   resource,
		Title:      s.Title,
		Claim:      s.Claim,
		ExitCode:   copyPtr(s.ExitCode),
		ExitSignal: s.ExitSignal,
	}
}

// Exited reports whether the state records the end of the process.
func (s TerminalState) Exited() bool { return s.ExitCode != nil || s.ExitSignal != "" }

// Text returns every part's text joined: the VT stream the content
// describes (what a display replays).
func (s TerminalState) Text() string {
	var b strings.Builder
	for _, p := range s.Content {
		b.WriteString(p.Text())
	}
	return b.String()
}

// Clone returns a copy of s that shares no mutable memory with it, so that
// Apply or Trim on one never shows through the other.
func (s TerminalState) Clone() TerminalState {
	c := s
	c.ExitCode = copyPtr(s.ExitCode)
	if s.Content != nil {
		c.Content = make([]ContentPart, len(s.Content))
		for i, p := range s.Content {
			c.Content[i] = p.clone()
		}
	}
	return c
}

// clone returns a copy of p sharing no mutable memory with it: strings are
// immutable and buf is append-safe (text.go).
func (p ContentPart) clone() ContentPart {
	p.ExitCode = copyPtr(p.ExitCode)
	p.DurationMs = copyPtr(p.DurationMs)
	return p
}

// Detached returns a copy of p that shares no memory with any state, for a
// snapshot built part by part.
func (p ContentPart) Detached() ContentPart {
	p = p.clone()
	p.buf = nil
	return p
}

// Clone returns a copy of i that shares no mutable memory with it.
func (i TerminalInfo) Clone() TerminalInfo {
	i.ExitCode = copyPtr(i.ExitCode)
	if i.Ports != nil {
		i.Ports = append([]int(nil), i.Ports...)
	}
	return i
}

// Apply applies action a to s in place: the AHP terminal reducer, no
// I/O; unknown action types (and root actions) leave s unchanged. Use it
// on a state you own (from Clone), never on one shared with readers; it
// is not safe for concurrent use.
func (s *TerminalState) Apply(a Action) {
	switch a := Deref(a).(type) {
	case DataAction:
		s.appendData(a.Data)
	case InputAction:
		// Side effect only: the server forwards the input to the pty.
	case ResizedAction:
		s.Cols, s.Rows = a.Cols, a.Rows
	case ClaimedAction:
		s.Claim = a.Claim
	case TitleChangedAction:
		s.Title = a.Title
	case CwdChangedAction:
		s.Cwd = a.Cwd
	case ExitedAction:
		s.ExitCode = copyPtr(a.ExitCode)
		s.ExitSignal = a.ExitSignal
	case ClearedAction:
		s.Content = []ContentPart{}
	case CommandExecutedAction:
		s.Content = append(s.Content, ContentPart{
			Type:        PartCommand,
			CommandID:   a.CommandID,
			CommandLine: a.CommandLine,
			Timestamp:   a.Timestamp,
		})
		s.SupportsCommandDetection = true
	case CommandFinishedAction:
		for i := len(s.Content) - 1; i >= 0; i-- {
			p := &s.Content[i]
			if p.Type == PartCommand && p.CommandID == a.CommandID {
				p.IsComplete = true
				p.ExitCode = copyPtr(a.ExitCode)
				p.DurationMs = copyPtr(a.DurationMs)
				break
			}
		}
	case CommandDetectionAvailableAction:
		s.SupportsCommandDetection = true
	default:
		// Unknown and root actions leave a terminal unchanged.
	}
}

// appendData implements terminal/data: output goes to a running command
// part, else to a tail unclassified part, else to a new unclassified part.
func (s *TerminalState) appendData(data string) {
	if n := len(s.Content); n > 0 {
		p := &s.Content[n-1]
		switch {
		case p.Type == PartCommand && !p.IsComplete:
			p.Output = appendText(p.Output, data, &p.buf)
			return
		case p.Type == PartUnclassified:
			p.Value = appendText(p.Value, data, &p.buf)
			return
		}
	}
	part := ContentPart{Type: PartUnclassified}
	part.Value = appendText("", data, &part.buf)
	s.Content = append(s.Content, part)
}

// copyPtr returns a pointer to a copy of *p, or nil.
func copyPtr[T any](p *T) *T {
	if p == nil {
		return nil
	}
	v := *p
	return &v
}
