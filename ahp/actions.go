package ahp

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
)

// Action type names, spelled as AHP spells them on the wire.
const (
	ActionRootTerminalsChanged      = "root/terminalsChanged"
	ActionData                      = "terminal/data"
	ActionInput                     = "terminal/input"
	ActionResized                   = "terminal/resized"
	ActionClaimed                   = "terminal/claimed"
	ActionTitleChanged              = "terminal/titleChanged"
	ActionCwdChanged                = "terminal/cwdChanged"
	ActionExited                    = "terminal/exited"
	ActionCleared                   = "terminal/cleared"
	ActionCommandExecuted           = "terminal/commandExecuted"
	ActionCommandFinished           = "terminal/commandFinished"
	ActionCommandDetectionAvailable = "terminal/commandDetectionAvailable"
)

// Action is one AHP state change. The concrete types below are values
// (DataAction, not *DataAction); each marshals to JSON with its "type"
// field first, exactly as the AHP action schema spells it. DecodeAction
// turns wire JSON back into one of them.
type Action interface {
	// ActionType returns the AHP type name, e.g. "terminal/data".
	ActionType() string
}

// DataAction is pty output for the terminal (server → client). Data is
// the raw VT stream with shell integration sequences already stripped.
type DataAction struct {
	Terminal string `json:"terminal"`
	Data     string `json:"data"`
}

// InputAction is user input for the pty (client → server); the reducer
// ignores it, the server forwards Data to the process.
type InputAction struct {
	Terminal string `json:"terminal"`
	Data     string `json:"data"`
}

// ResizedAction sets the terminal's size in columns and rows.
type ResizedAction struct {
	Terminal string `json:"terminal"`
	Cols     int    `json:"cols"`
	Rows     int    `json:"rows"`
}

// ClaimedAction transfers the terminal to a new owner.
type ClaimedAction struct {
	Terminal string `json:"terminal"`
	Claim    Claim  `json:"claim"`
}

// TitleChangedAction sets the terminal's title (from OSC 0/2 or a rename).
type TitleChangedAction struct {
	Terminal string `json:"terminal"`
	Title    string `json:"title"`
}

// CwdChangedAction sets the terminal's working directory, a file URI.
type CwdChangedAction struct {
	Terminal string `json:"terminal"`
	Cwd      string `json:"cwd"`
}

// ExitedAction records that the process ended. ExitCode is nil when the
// process died by a signal; ExitSignal (an agentrun extension to AHP, a
// conventional name such as "SIGTERM") then says which.
type ExitedAction struct {
	Terminal   string `json:"terminal"`
	ExitCode   *int   `json:"exitCode,omitempty"`
	ExitSignal string `json:"exitSignal,omitempty"`
}

// ClearedAction empties the terminal's content.
type ClearedAction struct {
	Terminal string `json:"terminal"`
}

// CommandExecutedAction starts a command part: the shell began running
// CommandLine at Timestamp (Unix milliseconds, server clock).
type CommandExecutedAction struct {
	Terminal    string `json:"terminal"`
	CommandID   string `json:"commandId"`
	CommandLine string `json:"commandLine"`
	Timestamp   int64  `json:"timestamp"`
}

// CommandFinishedAction completes the command part with CommandID.
type CommandFinishedAction struct {
	Terminal   string `json:"terminal"`
	CommandID  string `json:"commandId"`
	ExitCode   *int   `json:"exitCode,omitempty"`
	DurationMs *int64 `json:"durationMs,omitempty"`
}

// CommandDetectionAvailableAction says shell integration has loaded: the
// terminal will report command boundaries from now on.
type CommandDetectionAvailableAction struct {
	Terminal string `json:"terminal"`
}

// RootTerminalsChangedAction replaces the root terminal listing whole.
type RootTerminalsChangedAction struct {
	Terminals []TerminalInfo `json:"terminals"`
}

// UnknownAction is an action whose type this version does not know. The
// reducers leave state unchanged for it; Raw keeps the JSON it came from.
type UnknownAction struct {
	Type string
	Raw  json.RawMessage
}

// TerminalAction is an action on one terminal: every action but the
// root's. (TerminalURI, not Terminal: that name is the field's, as AHP
// spells it on the wire.)
type TerminalAction interface {
	Action
	// TerminalURI returns the URI of the terminal the action targets.
	TerminalURI() string
}

// TerminalURI implements TerminalAction.
func (a DataAction) TerminalURI() string { return a.Terminal }

// TerminalURI implements TerminalAction.
func (a InputAction) TerminalURI() string { return a.Terminal }

// TerminalURI implements TerminalAction.
func (a ResizedAction) TerminalURI() string { return a.Terminal }

// TerminalURI implements TerminalAction.
func (a ClaimedAction) TerminalURI() string { return a.Terminal }

// TerminalURI implements TerminalAction.
func (a TitleChangedAction) TerminalURI() string { return a.Terminal }

// TerminalURI implements TerminalAction.
func (a CwdChangedAction) TerminalURI() string { return a.Terminal }

// TerminalURI implements TerminalAction.
func (a ExitedAction) TerminalURI() string { return a.Terminal }

// TerminalURI implements TerminalAction.
func (a ClearedAction) TerminalURI() string { return a.Terminal }

// TerminalURI implements TerminalAction.
func (a CommandExecutedAction) TerminalURI() string { return a.Terminal }

// TerminalURI implements TerminalAction.
func (a CommandFinishedAction) TerminalURI() string { return a.Terminal }

// TerminalURI implements TerminalAction.
func (a CommandDetectionAvailableAction) TerminalURI() string { return a.Terminal }

// ActionType implements Action.
func (DataAction) ActionType() string { return ActionData }

// ActionType implements Action.
func (InputAction) ActionType() string { return ActionInput }

// ActionType implements Action.
func (ResizedAction) ActionType() string { return ActionResized }

// ActionType implements Action.
func (ClaimedAction) ActionType() string { return ActionClaimed }

// ActionType implements Action.
func (TitleChangedAction) ActionType() string { return ActionTitleChanged }

// ActionType implements Action.
func (CwdChangedAction) ActionType() string { return ActionCwdChanged }

// ActionType implements Action.
func (ExitedAction) ActionType() string { return ActionExited }

// ActionType implements Action.
func (ClearedAction) ActionType() string { return ActionCleared }

// ActionType implements Action.
func (CommandExecutedAction) ActionType() string { return ActionCommandExecuted }

// ActionType implements Action.
func (CommandFinishedAction) ActionType() string { return ActionCommandFinished }

// ActionType implements Action.
func (CommandDetectionAvailableAction) ActionType() string {
	return ActionCommandDetectionAvailable
}

// ActionType implements Action.
func (RootTerminalsChangedAction) ActionType() string { return ActionRootTerminalsChanged }

// ActionType implements Action.
func (a UnknownAction) ActionType() string { return a.Type }

// MarshalJSON writes the action with its "type" field.
func (a DataAction) MarshalJSON() ([]byte, error) {
	type wire DataAction
	return marshalAction(a.ActionType(), wire(a))
}

// MarshalJSON writes the action with its "type" field.
func (a InputAction) MarshalJSON() ([]byte, error) {
	type wire InputAction
	return marshalAction(a.ActionType(), wire(a))
}

// MarshalJSON writes the action with its "type" field.
func (a ResizedAction) MarshalJSON() ([]byte, error) {
	type wire ResizedAction
	return marshalAction(a.ActionType(), wire(a))
}

// MarshalJSON writes the action with its "type" field.
func (a ClaimedAction) MarshalJSON() ([]byte, error) {
	type wire ClaimedAction
	return marshalAction(a.ActionType(), wire(a))
}

// MarshalJSON writes the action with its "type" field.
func (a TitleChangedAction) MarshalJSON() ([]byte, error) {
	type wire TitleChangedAction
	return marshalAction(a.ActionType(), wire(a))
}

// MarshalJSON writes the action with its "type" field.
func (a CwdChangedAction) MarshalJSON() ([]byte, error) {
	type wire CwdChangedAction
	return marshalAction(a.ActionType(), wire(a))
}

// MarshalJSON writes the action with its "type" field.
func (a ExitedAction) MarshalJSON() ([]byte, error) {
	type wire ExitedAction
	return marshalAction(a.ActionType(), wire(a))
}

// MarshalJSON writes the action with its "type" field.
func (a ClearedAction) MarshalJSON() ([]byte, error) {
	type wire ClearedAction
	return marshalAction(a.ActionType(), wire(a))
}

// MarshalJSON writes the action with its "type" field.
func (a CommandExecutedAction) MarshalJSON() ([]byte, error) {
	type wire CommandExecutedAction
	return marshalAction(a.ActionType(), wire(a))
}

// MarshalJSON writes the action with its "type" field.
func (a CommandFinishedAction) MarshalJSON() ([]byte, error) {
	type wire CommandFinishedAction
	return marshalAction(a.ActionType(), wire(a))
}

// MarshalJSON writes the action with its "type" field.
func (a CommandDetectionAvailableAction) MarshalJSON() ([]byte, error) {
	type wire CommandDetectionAvailableAction
	return marshalAction(a.ActionType(), wire(a))
}

// MarshalJSON writes the action with its "type" field; a nil listing is
// written as [] because the listing replaces the old one whole.
func (a RootTerminalsChangedAction) MarshalJSON() ([]byte, error) {
	type wire RootTerminalsChangedAction
	if a.Terminals == nil {
		a.Terminals = []TerminalInfo{}
	}
	return marshalAction(a.ActionType(), wire(a))
}

// MarshalJSON writes the JSON the action came from, or just its type.
func (a UnknownAction) MarshalJSON() ([]byte, error) {
	if len(a.Raw) > 0 {
		return a.Raw, nil
	}
	return marshalAction(a.Type, struct{}{})
}

// marshalAction encodes fields (a struct) as a JSON object with "type"
// first, the way AHP fixtures and schemas show actions.
func marshalAction(typ string, fields any) ([]byte, error) {
	body, err := json.Marshal(fields)
	if err != nil {
		return nil, fmt.Errorf("encode %s action: %w", typ, err)
	}
	t, _ := json.Marshal(typ) // a string always encodes
	var out bytes.Buffer
	out.Grow(len(body) + len(t) + 9)
	out.WriteString(`{"type":`)
	out.Write(t)
	if len(body) > 2 { // not "{}"
		out.WriteByte(',')
		out.Write(body[1:])
	} else {
		out.WriteByte('}')
	}
	return out.Bytes(), nil
}

// DecodeAction parses one AHP action from JSON. A type this version does
// not know becomes an UnknownAction (which the reducers ignore), so newer
// peers do not break older ones; a known type with wrong field types, or
// a terminal action without "terminal", is an error naming the type.
func DecodeAction(data []byte) (Action, error) {
	var head struct {
		Type *string `json:"type"`
	}
	if err := json.Unmarshal(data, &head); err != nil {
		return nil, fmt.Errorf("decode action: %w", err)
	}
	if head.Type == nil || *head.Type == "" {
		return nil, fmt.Errorf("decode action: no \"type\" field in %.80s", data)
	}
	switch typ := *head.Type; typ {
	case ActionData:
		return decodeTerminalAction[DataAction](data)
	case ActionInput:
		return decodeTerminalAction[InputAction](data)
	case ActionResized:
		return decodeTerminalAction[ResizedAction](data)
	case ActionClaimed:
		return decodeTerminalAction[ClaimedAction](data)
	case ActionTitleChanged:
		return decodeTerminalAction[TitleChangedAction](data)
	case ActionCwdChanged:
		return decodeTerminalAction[CwdChangedAction](data)
	case ActionExited:
		return decodeTerminalAction[ExitedAction](data)
	case ActionCleared:
		return decodeTerminalAction[ClearedAction](data)
	case ActionCommandExecuted:
		return decodeTerminalAction[CommandExecutedAction](data)
	case ActionCommandFinished:
		return decodeTerminalAction[CommandFinishedAction](data)
	case ActionCommandDetectionAvailable:
		return decodeTerminalAction[CommandDetectionAvailableAction](data)
	case ActionRootTerminalsChanged:
		var a RootTerminalsChangedAction
		if err := json.Unmarshal(data, &a); err != nil {
			return nil, fmt.Errorf("decode %s action: %w", typ, err)
		}
		return a, nil
	default:
		return UnknownAction{Type: typ, Raw: append(json.RawMessage(nil), data...)}, nil
	}
}

// decodeTerminalAction decodes a terminal-scoped action and checks that
// it names its terminal.
func decodeTerminalAction[T Action](data []byte) (Action, error) {
	var a T
	if err := json.Unmarshal(data, &a); err != nil {
		return nil, fmt.Errorf("decode %s action: %w", a.ActionType(), err)
	}
	if ActionTerminal(a) == "" {
		return nil, fmt.Errorf("decode %s action: no \"terminal\" field", a.ActionType())
	}
	return a, nil
}

// ActionTerminal returns the terminal URI that a terminal action targets,
// or "" for root and unknown actions; servers route actions with it.
func ActionTerminal(a Action) string {
	if t, ok := Deref(a).(TerminalAction); ok {
		return t.TerminalURI()
	}
	return ""
}

// Deref turns a pointer to an action value into the value, so that
// reducers treat &DataAction{...} like DataAction{...} instead of
// silently ignoring it.
func Deref(a Action) Action {
	v := reflect.ValueOf(a)
	if v.Kind() == reflect.Pointer && !v.IsNil() {
		if inner, ok := v.Elem().Interface().(Action); ok {
			return inner
		}
	}
	return a
}
