package editor

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

// payload is an event's body; its type says which event it is.
type payload interface{ eventName() string }

// sessionStartedEvent: a session's agent answered session/new or
// session/load (or session/resume).
type sessionStartedEvent struct {
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
	// Replaying: held updates (a loaded session's history) follow, then
	// history_replayed.
	Replaying bool `msgpack:"replaying"`
}

type sessionFailedEvent struct {
	Key   string `msgpack:"key"`
	Error string `msgpack:"error"`
	// Command and CannotRun are set when the agent's command is missing
	// or no program (config.cmd_problem says it).
	Command   string `msgpack:"command,omitempty"`
	CannotRun string `msgpack:"cannot_run,omitempty"`
}

type sessionEndedEvent struct {
	Key     string `msgpack:"key"`
	Reason  string `msgpack:"reason"` // "" unless the agent ended on its own
	Stopped bool   `msgpack:"stopped"`
}

type sessionQuietEvent struct {
	Key     string `msgpack:"key"`
	Agent   string `msgpack:"agent"`
	Seconds int    `msgpack:"seconds"`
}

type sessionUpdateEvent struct {
	Key       string `msgpack:"key"`
	SessionID string `msgpack:"session_id"`
	Update    any    `msgpack:"update"` // the ACP SessionUpdate as JSON values
}

// ourToolEvent: the agent listed or used our MCP terminal tool, or a
// turn ended without it listed; Note is said in the chat once.
type ourToolEvent struct {
	Key     string `msgpack:"key"`
	OurTool string `msgpack:"our_tool"`
	Note    string `msgpack:"note,omitempty"`
}

type historyReplayedEvent struct {
	Key string `msgpack:"key"`
}

type turnEndEvent struct {
	Key        string `msgpack:"key"`
	StopReason string `msgpack:"stop_reason"`
	Error      string `msgpack:"error"`
	Stopped    bool   `msgpack:"stopped,omitempty"` // by :AgentStop
}

// chatNoteEvent is a line Lua wrote in a session's chat about a question
// (asked, answered, refused by a rule), kept for a replay: the chat shown
// again keeps its approval records.
type chatNoteEvent struct {
	Key      string `msgpack:"key"`
	Text     string `msgpack:"text"`
	ToolCall string `msgpack:"tool_call,omitempty"`
}

type promptSentEvent struct {
	Key  string `msgpack:"key"`
	Text string `msgpack:"text"`
}

// messageEvent is a note for the user: in the chat of Key when given.
type messageEvent struct {
	Key   string `msgpack:"key,omitempty"`
	Level string `msgpack:"level"` // "error", "warn" or "info"
	Text  string `msgpack:"text"`
}

type terminalCreatedEvent struct {
	ID        string `msgpack:"id"`
	Session   string `msgpack:"session"`
	SessionID string `msgpack:"session_id"`
	Command   string `msgpack:"command"`
	Cwd       string `msgpack:"cwd"`
	User      bool   `msgpack:"user"`
	Sandbox   string `msgpack:"sandbox"`
	Title     string `msgpack:"title,omitempty"` // the description the agent gave it
}

// terminalExitEvent: a terminal's command ended (exitEvent makes it).
type terminalExitEvent struct {
	ID       string  `msgpack:"id"`
	ExitCode *int    `msgpack:"exit_code,omitempty"`
	Signal   *string `msgpack:"signal,omitempty"` // when there is no exit code
	RanMS    int64   `msgpack:"ran_ms,omitempty"`
	LastLine string  `msgpack:"last_line,omitempty"`
}

type terminalReleasedEvent struct {
	ID string `msgpack:"id"`
}

type terminalActivityEvent struct {
	ID       string `msgpack:"id"`
	Waiting  bool   `msgpack:"waiting"`
	Ports    []int  `msgpack:"ports"`
	LastLine string `msgpack:"last_line,omitempty"`
}

type displayEndedEvent struct {
	ID string `msgpack:"id"`
	// Lines are the lines the split ends with, as the pump wrote them
	// ("[exit 0]", then "[released]"): what Lua looks for in the split.
	Lines []string `msgpack:"lines"`
}

// agentTerminalEvent is what an agent that runs commands itself shows
// of one (updates.go).
type agentTerminalEvent struct {
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

type toolTerminalEvent struct {
	Key      string `msgpack:"key"`
	ToolCall string `msgpack:"tool_call"`
	ID       string `msgpack:"id"`
}

type permissionEvent struct {
	Key       string `msgpack:"key"`
	SessionID string `msgpack:"session_id"`
	ToolCall  any    `msgpack:"tool_call"`
	Options   any    `msgpack:"options"`
	Token     string `msgpack:"token"`
}

type elicitationEvent struct {
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

type elicitationCompleteEvent struct {
	Key           string `msgpack:"key"`
	ElicitationID string `msgpack:"elicitation_id"`
}

type approveEvent struct {
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

// questionWithdrawnEvent: a question (name: permission_cancelled,
// approve_cancelled or elicitation_withdrawn) is no longer asked.
type questionWithdrawnEvent struct {
	name  string
	Token string `msgpack:"token"`
	Why   string `msgpack:"why"` // "turn" or "withdrawn"
}

type authRequiredEvent struct {
	Key     string `msgpack:"key"`
	Agent   string `msgpack:"agent"`
	Methods any    `msgpack:"methods"`
	Error   string `msgpack:"error"`
}

type sessionListEvent struct {
	Token    string           `msgpack:"token"`
	Agent    string           `msgpack:"agent"`
	Sessions []earlierSession `msgpack:"sessions"`
	Load     bool             `msgpack:"load,omitempty"`
	Resume   bool             `msgpack:"resume,omitempty"`
	Error    string           `msgpack:"error,omitempty"`
}

// earlierSession is one of an agent's sessions in a session_list.
type earlierSession struct {
	SessionID string `msgpack:"session_id"`
	Cwd       string `msgpack:"cwd"`
	Title     string `msgpack:"title,omitempty"`
	UpdatedAt string `msgpack:"updated_at,omitempty"`
}

type remoteClaimedEvent struct {
	ID    string         `msgpack:"id"`
	Claim map[string]any `msgpack:"claim"`
	Mine  bool           `msgpack:"mine"`
	Seq   uint64         `msgpack:"seq"`
}

type sshConnectedEvent struct {
	Name  string `msgpack:"name"`
	Token int    `msgpack:"token"`
	Error string `msgpack:"error,omitempty"`
}

func (sessionStartedEvent) eventName() string      { return evSessionStarted }
func (sessionFailedEvent) eventName() string       { return evSessionFailed }
func (sessionEndedEvent) eventName() string        { return evSessionEnded }
func (sessionQuietEvent) eventName() string        { return evSessionQuiet }
func (*sessionUpdateEvent) eventName() string      { return evSessionUpdate }
func (historyReplayedEvent) eventName() string     { return evHistoryReplayed }
func (ourToolEvent) eventName() string             { return evOurTool }
func (turnEndEvent) eventName() string             { return evTurnEnd }
func (promptSentEvent) eventName() string          { return evPromptSent }
func (chatNoteEvent) eventName() string            { return evChatNote }
func (messageEvent) eventName() string             { return evMessage }
func (terminalCreatedEvent) eventName() string     { return evTerminalCreated }
func (terminalExitEvent) eventName() string        { return evTerminalExit }
func (terminalReleasedEvent) eventName() string    { return evTerminalReleased }
func (terminalActivityEvent) eventName() string    { return evTerminalActivity }
func (displayEndedEvent) eventName() string        { return evDisplayEnded }
func (*agentTerminalEvent) eventName() string      { return evAgentTerminal }
func (toolTerminalEvent) eventName() string        { return evToolTerminal }
func (permissionEvent) eventName() string          { return evPermission }
func (elicitationEvent) eventName() string         { return evElicitation }
func (elicitationCompleteEvent) eventName() string { return evElicitationComplete }
func (approveEvent) eventName() string             { return evApprove }
func (e questionWithdrawnEvent) eventName() string { return e.name }
func (authRequiredEvent) eventName() string        { return evAuthRequired }
func (sessionListEvent) eventName() string         { return evSessionList }
func (remoteClaimedEvent) eventName() string       { return evRemoteClaimed }
func (sshConnectedEvent) eventName() string        { return evSSHConnected }

// sessionKeyed is an event an agent sends about its session, queued
// before the session's key is known to it (updates.go).
type sessionKeyed interface {
	payload
	setKey(key string)
}

func (e *sessionUpdateEvent) setKey(key string) { e.Key = key }
func (e *agentTerminalEvent) setKey(key string) { e.Key = key }

// payloadField is p's string field of msgpack name ("" when it has none):
// what a replay picks events by (linger.go).
func payloadField(p payload, name string) string {
	v := reflect.Indirect(reflect.ValueOf(p))
	for i := range v.NumField() {
		tag, _, _ := strings.Cut(v.Type().Field(i).Tag.Get("msgpack"), ",")
		if tag == name && v.Field(i).Kind() == reflect.String {
			return v.Field(i).String()
		}
	}
	return ""
}
