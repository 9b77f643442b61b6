package event

import (
	"reflect"
	"strings"
)

// The payload of every Go -> Lua event, one struct each (encoded as a
// msgpack map by their tags; a field with omitempty is left out when
// unset, and a pointer field when nil, so Lua reads nil). Lua declares
// the same shapes as ---@class agentrun.event.<name> in
// lua/agentrun/types.lua, and TestEventPayloadsAgree checks the two, and
// that the handlers read no field Go does not send.

// Payload is an event's body; its type says which event it is.
type Payload interface{ EventName() string }

// SessionStarted: a session's agent answered session/new or
// session/load (or session/resume).
type SessionStarted struct {
	Key       string `msgpack:"key"`
	SessionID string `msgpack:"session_id"`
	Agent     string `msgpack:"agent"`
	Cwd       string `msgpack:"cwd"`
	// Terminals is where its commands run ("agent", "agentrun", …).
	Terminals     string `msgpack:"terminals"`
	Modes         any    `msgpack:"modes"`
	ConfigOptions any    `msgpack:"config_options"`
	Note          string `msgpack:"note,omitempty"`
	// OurTool is what became of our MCP terminal tool ("" when not
	// offered; mcp.go's tool* values).
	OurTool string `msgpack:"our_tool"`
	// OwnShell is what became of the agent's own shell: "left out for
	// this session", "kept: why", or "" (an agent agentrun does not look
	// at so).
	OwnShell string `msgpack:"own_shell"`
	// Replaying: held updates (a loaded session's history) follow, then
	// history_replayed.
	Replaying bool `msgpack:"replaying"`
}

type SessionFailed struct {
	Key   string `msgpack:"key"`
	Error string `msgpack:"error"`
	// Command and CannotRun are set when the agent's command is missing
	// or no program (config.cmd_problem says it).
	Command   string `msgpack:"command,omitempty"`
	CannotRun string `msgpack:"cannot_run,omitempty"`
}

type SessionEnded struct {
	Key     string `msgpack:"key"`
	Reason  string `msgpack:"reason"` // "" unless the agent ended on its own
	Stopped bool   `msgpack:"stopped"`
}

type SessionQuiet struct {
	Key     string `msgpack:"key"`
	Agent   string `msgpack:"agent"`
	Seconds int    `msgpack:"seconds"`
}

type SessionUpdate struct {
	Key       string `msgpack:"key"`
	SessionID string `msgpack:"session_id"`
	Update    any    `msgpack:"update"` // the ACP SessionUpdate as JSON values
}

// OurTool: the agent listed or used our MCP terminal tool, or a
// turn ended without it listed; Note is said in the chat once.
type OurTool struct {
	Key     string `msgpack:"key"`
	OurTool string `msgpack:"our_tool"`
	Note    string `msgpack:"note,omitempty"`
}

type HistoryReplayed struct {
	Key string `msgpack:"key"`
}

type TurnEnd struct {
	Key        string `msgpack:"key"`
	StopReason string `msgpack:"stop_reason"`
	Error      string `msgpack:"error"`
	Stopped    bool   `msgpack:"stopped,omitempty"` // by :AgentStop
}

// ChatNote is a line Lua wrote in a session's chat about a question
// (asked, answered, refused by a rule), kept for a replay: the chat shown
// again keeps its approval records.
type ChatNote struct {
	Key      string `msgpack:"key"`
	Text     string `msgpack:"text"`
	ToolCall string `msgpack:"tool_call,omitempty"`
}

type PromptSent struct {
	Key  string `msgpack:"key"`
	Text string `msgpack:"text"`
}

// Message is a note for the user: in the chat of Key when given.
type Message struct {
	Key   string `msgpack:"key,omitempty"`
	Level string `msgpack:"level"` // "error", "warn" or "info"
	Text  string `msgpack:"text"`
}

type TerminalCreated struct {
	ID        string `msgpack:"id"`
	Session   string `msgpack:"session"`
	SessionID string `msgpack:"session_id"`
	Command   string `msgpack:"command"`
	Cwd       string `msgpack:"cwd"`
	User      bool   `msgpack:"user"`
	Sandbox   string `msgpack:"sandbox"`
	Title     string `msgpack:"title,omitempty"` // the description the agent gave it
}

// TerminalExit: a terminal's command ended (Exit makes it).
type TerminalExit struct {
	ID       string  `msgpack:"id"`
	ExitCode *int    `msgpack:"exit_code,omitempty"`
	Signal   *string `msgpack:"signal,omitempty"` // when there is no exit code
	RanMS    int64   `msgpack:"ran_ms,omitempty"`
	LastLine string  `msgpack:"last_line,omitempty"`
}

type TerminalReleased struct {
	ID string `msgpack:"id"`
}

type TerminalActivity struct {
	ID       string `msgpack:"id"`
	Waiting  bool   `msgpack:"waiting"`
	Ports    []int  `msgpack:"ports"`
	LastLine string `msgpack:"last_line,omitempty"`
}

type DisplayEnded struct {
	ID string `msgpack:"id"`
	// Lines are the lines the split ends with, as the pump wrote them
	// ("[exit 0]", then "[released]"): what Lua looks for in the split.
	Lines []string `msgpack:"lines"`
}

// AgentTerminal is what an agent that runs commands itself shows
// of one (updates.go).
type AgentTerminal struct {
	Key            string  `msgpack:"key"`
	SessionID      string  `msgpack:"session_id"`
	ID             string  `msgpack:"id"`
	Started        bool    `msgpack:"started"`
	ToolCall       string  `msgpack:"tool_call,omitempty"`
	Title          string  `msgpack:"title,omitempty"`
	Cwd            string  `msgpack:"cwd,omitempty"`
	KeepsReporting bool    `msgpack:"keeps_reporting,omitempty"`
	Data           *string `msgpack:"data,omitempty"`
	Replace        bool    `msgpack:"replace,omitempty"`
	Exited         bool    `msgpack:"exited,omitempty"`
	Failed         bool    `msgpack:"failed,omitempty"`
	ExitCode       *int    `msgpack:"exit_code,omitempty"`
	Signal         string  `msgpack:"signal,omitempty"`
	NotRun         string  `msgpack:"not_run,omitempty"`
	Unreported     bool    `msgpack:"unreported,omitempty"`
	// EndedBy says why its display ended when the agent gave no exit
	// code nor signal; EndLine is the line its split ends with ("[exit
	// 1]", "[failed]"), made as our own splits' (endLine).
	EndedBy string `msgpack:"ended_by,omitempty"`
	EndLine string `msgpack:"end_line,omitempty"`
	// LastLine is its output's last line with text, when it ended.
	LastLine string `msgpack:"last_line,omitempty"`
}

type ToolTerminal struct {
	Key      string `msgpack:"key"`
	ToolCall string `msgpack:"tool_call"`
	ID       string `msgpack:"id"`
}

type Permission struct {
	Key       string `msgpack:"key"`
	SessionID string `msgpack:"session_id"`
	ToolCall  any    `msgpack:"tool_call"`
	Options   any    `msgpack:"options"`
	Token     string `msgpack:"token"`
}

type Elicitation struct {
	Key           string   `msgpack:"key"`
	SessionID     string   `msgpack:"session_id"`
	ToolCall      string   `msgpack:"tool_call"`
	Mode          string   `msgpack:"mode"`
	Message       string   `msgpack:"message"`
	Fields        any      `msgpack:"fields"`
	Required      []string `msgpack:"required"`
	URL           string   `msgpack:"url"`
	ElicitationID string   `msgpack:"elicitation_id"`
	Token         string   `msgpack:"token"`
}

type ElicitationComplete struct {
	Key           string `msgpack:"key"`
	ElicitationID string `msgpack:"elicitation_id"`
}

type Approve struct {
	Key       string   `msgpack:"key"`
	SessionID string   `msgpack:"session_id"`
	Line      string   `msgpack:"line"`
	Argv      []string `msgpack:"argv"`
	Env       []string `msgpack:"env"` // NAME=value the agent set (terminal/create's env)
	Cwd       string   `msgpack:"cwd"`
	Sandbox   string   `msgpack:"sandbox"`
	ToolCall  string   `msgpack:"tool_call,omitempty"`
	AsksFirst string   `msgpack:"asks_first,omitempty"` // the mode that promises to ask
	Token     string   `msgpack:"token"`
	// File is set (and Line empty) for a question about an agent's file
	// write (fs/write_text_file): the path as the agent gave it.
	File string `msgpack:"file,omitempty"`
	// Real is the file that write would change (symlinks and .. resolved).
	Real string `msgpack:"real,omitempty"`
	// Outside is true when it is outside the session's project.
	Outside bool `msgpack:"outside,omitempty"`
}

// QuestionWithdrawn: a question (name: permission_cancelled,
// approve_cancelled or elicitation_withdrawn) is no longer asked.
type QuestionWithdrawn struct {
	name  string
	Token string `msgpack:"token"`
	Why   string `msgpack:"why"` // "turn" or "withdrawn"
}

type AuthRequired struct {
	Key     string `msgpack:"key"`
	Agent   string `msgpack:"agent"`
	Methods any    `msgpack:"methods"`
	Error   string `msgpack:"error"`
}

type SessionList struct {
	Token    string           `msgpack:"token"`
	Agent    string           `msgpack:"agent"`
	Sessions []EarlierSession `msgpack:"sessions"`
	Load     bool             `msgpack:"load,omitempty"`
	Resume   bool             `msgpack:"resume,omitempty"`
	Error    string           `msgpack:"error,omitempty"`
}

// EarlierSession is one of an agent's sessions in a session_list.
type EarlierSession struct {
	SessionID string `msgpack:"session_id"`
	Cwd       string `msgpack:"cwd"`
	Title     string `msgpack:"title,omitempty"`
	UpdatedAt string `msgpack:"updated_at,omitempty"`
}

type RemoteClaimed struct {
	ID    string         `msgpack:"id"`
	Claim map[string]any `msgpack:"claim"`
	Mine  bool           `msgpack:"mine"`
	Seq   uint64         `msgpack:"seq"`
}

type SSHConnected struct {
	Name  string `msgpack:"name"`
	Token int    `msgpack:"token"`
	Error string `msgpack:"error,omitempty"`
}

func (SessionStarted) EventName() string      { return NameSessionStarted }
func (SessionFailed) EventName() string       { return NameSessionFailed }
func (SessionEnded) EventName() string        { return NameSessionEnded }
func (SessionQuiet) EventName() string        { return NameSessionQuiet }
func (*SessionUpdate) EventName() string      { return NameSessionUpdate }
func (HistoryReplayed) EventName() string     { return NameHistoryReplayed }
func (OurTool) EventName() string             { return NameOurTool }
func (TurnEnd) EventName() string             { return NameTurnEnd }
func (PromptSent) EventName() string          { return NamePromptSent }
func (ChatNote) EventName() string            { return NameChatNote }
func (Message) EventName() string             { return NameMessage }
func (TerminalCreated) EventName() string     { return NameTerminalCreated }
func (TerminalExit) EventName() string        { return NameTerminalExit }
func (TerminalReleased) EventName() string    { return NameTerminalReleased }
func (TerminalActivity) EventName() string    { return NameTerminalActivity }
func (DisplayEnded) EventName() string        { return NameDisplayEnded }
func (*AgentTerminal) EventName() string      { return NameAgentTerminal }
func (ToolTerminal) EventName() string        { return NameToolTerminal }
func (Permission) EventName() string          { return NamePermission }
func (Elicitation) EventName() string         { return NameElicitation }
func (ElicitationComplete) EventName() string { return NameElicitationComplete }
func (Approve) EventName() string             { return NameApprove }
func (e QuestionWithdrawn) EventName() string { return e.name }
func (AuthRequired) EventName() string        { return NameAuthRequired }
func (SessionList) EventName() string         { return NameSessionList }
func (RemoteClaimed) EventName() string       { return NameRemoteClaimed }
func (SSHConnected) EventName() string        { return NameSSHConnected }

// SessionKeyed is an event an agent sends about its session, queued
// before the session's key is known to it (updates.go).
type SessionKeyed interface {
	Payload
	SetKey(key string)
}

func (e *SessionUpdate) SetKey(key string) { e.Key = key }
func (e *AgentTerminal) SetKey(key string) { e.Key = key }

// Field is p's string field of msgpack name ("" when it has none):
// what a replay picks events by (linger.go).
func Field(p Payload, name string) string {
	v := reflect.Indirect(reflect.ValueOf(p))
	for i := range v.NumField() {
		tag, _, _ := strings.Cut(v.Type().Field(i).Tag.Get("msgpack"), ",")
		if tag == name && v.Field(i).Kind() == reflect.String {
			return v.Field(i).String()
		}
	}
	return ""
}
