package ahp

import (
	"encoding/json"
	"fmt"
)

// The JSON forms of the state types follow AHP's schema to the letter:
// required fields are always written (content as [], isComplete as
// false, an empty value as ""), optional ones only when set.

// unclassifiedWire is the JSON of an unclassified part.
type unclassifiedWire struct {
	Type  string `json:"type"`
	Value string `json:"value"`
}

// commandWire is the JSON of a command part.
type commandWire struct {
	Type        string `json:"type"`
	CommandID   string `json:"commandId"`
	CommandLine string `json:"commandLine"`
	Output      string `json:"output"`
	Timestamp   int64  `json:"timestamp"`
	IsComplete  bool   `json:"isComplete"`
	ExitCode    *int   `json:"exitCode,omitempty"`
	DurationMs  *int64 `json:"durationMs,omitempty"`
}

// MarshalJSON writes the part in its AHP shape.
func (p ContentPart) MarshalJSON() ([]byte, error) {
	switch p.Type {
	case PartUnclassified:
		return json.Marshal(unclassifiedWire{Type: p.Type, Value: p.Value})
	case PartCommand:
		return json.Marshal(commandWire{
			Type: p.Type, CommandID: p.CommandID, CommandLine: p.CommandLine,
			Output: p.Output, Timestamp: p.Timestamp, IsComplete: p.IsComplete,
			ExitCode: p.ExitCode, DurationMs: p.DurationMs,
		})
	default:
		if len(p.raw) > 0 {
			return p.raw, nil
		}
		return json.Marshal(struct {
			Type string `json:"type"`
		}{p.Type})
	}
}

// UnmarshalJSON reads a part; unknown part types are kept verbatim.
func (p *ContentPart) UnmarshalJSON(data []byte) error {
	var w struct {
		commandWire
		Value string `json:"value"`
	}
	if err := json.Unmarshal(data, &w); err != nil {
		return fmt.Errorf("decode terminal content part: %w", err)
	}
	*p = ContentPart{Type: w.Type}
	switch w.Type {
	case PartUnclassified:
		p.Value = w.Value
	case PartCommand:
		p.CommandID, p.CommandLine, p.Output = w.CommandID, w.CommandLine, w.Output
		p.Timestamp, p.IsComplete = w.Timestamp, w.IsComplete
		p.ExitCode, p.DurationMs = w.ExitCode, w.DurationMs
	default:
		p.raw = append([]byte(nil), data...)
	}
	return nil
}

// MarshalJSON writes the state; nil Content is written as [].
func (s TerminalState) MarshalJSON() ([]byte, error) {
	type wire TerminalState
	if s.Content == nil {
		s.Content = []ContentPart{}
	}
	return json.Marshal(wire(s))
}

// MarshalJSON writes the root state; nil Agents is written as [], and
// "terminals" appears once a listing exists (even an empty one).
func (r RootState) MarshalJSON() ([]byte, error) {
	agents := r.Agents
	if agents == nil {
		agents = []json.RawMessage{}
	}
	if r.Terminals == nil {
		return json.Marshal(struct {
			Agents []json.RawMessage `json:"agents"`
		}{agents})
	}
	return json.Marshal(struct {
		Agents    []json.RawMessage `json:"agents"`
		Terminals []TerminalInfo    `json:"terminals"`
	}{agents, r.Terminals})
}
