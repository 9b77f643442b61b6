package acp

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"

	"github.com/agentrun/agentrun.nvim/termhost"
	acpsdk "github.com/coder/acp-go-sdk"
)

// Why this file is long: one decoder for every shape in which agents
// report the commands they run themselves (Claude Code, codex-acp, Gemini
// CLI, Qwen Code, opencode, Copilot CLI, the v2 draft): the shapes differ
// in small ways that only make sense side by side, and the state that ties
// a tool call's updates together (agentTerms) is shared by all of them.

// Agent-owned terminals: agents that run commands themselves show them to
// the client instead of asking it to run them. Every shape they use is
// decoded here, in one place, into AgentTerminal events that the editor
// renders like its own terminals:
//
//   - ACP v1 with clientCapabilities._meta.terminal_output (codex-acp,
//     claude-agent-acp ≥ 0.18): tool_call / tool_call_update carrying
//     _meta.terminal_info {terminal_id, cwd} (start),
//     _meta.terminal_output {terminal_id, data} (text to append; codex
//     without the opt-in: _meta.terminal_output_delta) and
//     _meta.terminal_exit {terminal_id, exit_code, signal} (end).
//   - Claude Code's gaps: nothing streams (one terminal_output after the
//     command ended), its exit_code is always 0, and a failed command comes
//     as status "failed" with rawOutput "Exit code N\n<output>" and no
//     terminal_output or terminal_exit. The exit is then read from
//     rawOutput, else from the final status (completed: 0).
//   - codex-acp sometimes sends no terminal_exit: the final status ends it.
//   - Agents that report a command only as a tool call (Gemini CLI, Qwen
//     Code, opencode, Copilot CLI): kind "execute" or a command in
//     rawInput, no terminal. The split is titled with the command (not
//     the model's description); text content is its output, appended
//     while each update extends what was shown (opencode and Copilot send
//     all output so far), else shown anew with a marker; the exit code is
//     read from rawOutput (exitCode, metadata.exit, "Exit code N") or the
//     text's "exit code N"; when the agent sends none, the split says so
//     rather than "exit 0" (Gemini says "completed" whatever the exit).
//     Gemini CLI 0.61 sends no tool_call for its shell command: its
//     session/request_permission names it (status pending), then one
//     tool_call_update (kind execute, the command as title, status
//     completed) ends it, with no content, or at a cancel (it kills the
//     command) "Command cancelled by user." and the output so far.
//     opencode's tool call starts without its command (rawInput has only
//     cwd; an in_progress update names it), and ends "completed" with the
//     output in rawOutput.metadata.output, its note to the model after it
//     in the text ("<shell_metadata>User aborted the command…"), and
//     metadata.exit null when a cancel or timeout cut the command short.
//     Qwen Code's tool call ("Shell", rawInput {}) names its command only
//     in a permission request and in the final text ("Command: …"); it
//     sends no output until the end, then rawOutput {type "shell_result",
//     output, exitCode, signal}.
//   - The ACP v2 draft: session updates terminal_update (an upsert; its
//     output is a base64 snapshot that replaces what is shown; exitStatus
//     ends it) and terminal_output_chunk (base64 bytes to append).
//
// The text of v1 shapes has "\n" line ends; events carry terminal bytes,
// so they become "\r\n". v2 output is terminal bytes already.

// AgentTerminal is what one update says about one agent-owned terminal.
type AgentTerminal struct {
	// ID names the terminal in its session (codex: the tool call's id).
	ID string
	// ToolCallID is the tool call that shows it, when known.
	ToolCallID string
	// Started is set the first time the terminal is seen.
	Started bool
	// Title is the command line, when this update names it.
	Title string
	// Cwd is the command's directory, when this update names it.
	Cwd string
	// Output is terminal bytes to append, or with Replace, all of them.
	Output  []byte
	Replace bool
	// Exited is set once, when the command ended: with ExitCode or Signal
	// when the agent said (or they could be derived), else Failed when the
	// tool call failed without saying how.
	Exited   bool
	ExitCode *int
	Signal   string
	Failed   bool
	// NotRun says why the command did not run to its end when the agent
	// said so instead of an exit (Claude Code 2.1's nonExecutionKind:
	// "user-rejected" at a cancel, "interrupted", "permission-rule", …);
	// the text the agent then sends as output is for the model and is not
	// shown.
	NotRun string
	// Unreported: the command ended, and the agent said nothing of how
	// (no exit code, no signal).
	Unreported bool
	// KeepsReporting: the agent goes on reporting this command after its
	// turn ended or was cancelled (codex-acp), so only its own exit (or
	// the session's end) ends the display.
	KeepsReporting bool
}

// agentTerms follows the agent-owned terminals of one agent's sessions, to
// tie a tool call's later updates (title, final status) to its terminal.
type agentTerms struct {
	mu     sync.Mutex
	byCall map[string]*agentTermState // session + "\x00" + tool call id
	byID   map[string]*agentTermState // session + "\x00" + terminal id
	// early holds output of tool calls not seen yet (codex-acp sends what
	// a command printed before its tool call), by session + tool call id,
	// until the tool call comes; at most maxEarly bytes each.
	early map[string][]byte
	// keepsReporting is set for an agent that reports its commands after
	// a cancelled turn (codex-acp).
	keepsReporting bool
	// candidates are tool calls that run a command and show no terminal
	// (yet), by session + tool call id; withTerm those that showed one.
	candidates map[string]*candidate
	withTerm   map[string]bool
	// seen: every tool call an update named, by session + tool call id.
	seen map[string]bool
}

// candidate is a command known only from its tool call, not shown yet.
type candidate struct {
	title, cwd string
	// named: title is the command line (not the tool's name)
	named bool
}

// maxEarly bounds the output held for one tool call not seen yet.
const maxEarly = 1 << 20

type agentTermState struct {
	id, call string
	output   bool // some output was shown
	exited   bool
	// atEnd: Claude Code's terminal, whose output comes once, at the end,
	// and may be the model's text for a command that did not run (held
	// in held until the update that says which).
	atEnd bool
	held  []byte
	// generic: a command known only from its tool call (kind execute, a
	// rawInput command), whose text content is its output; text is what
	// was shown of it.
	generic bool
	text    string
	// trailer is the agent's own line after the output (Copilot CLI's
	// "<shellId: N completed with exit code E>"): not shown, read for
	// the exit code.
	trailer string
}

func newAgentTerms() *agentTerms {
	return &agentTerms{byCall: map[string]*agentTermState{}, byID: map[string]*agentTermState{}, early: map[string][]byte{},
		candidates: map[string]*candidate{}, withTerm: map[string]bool{}, seen: map[string]bool{}}
}

// isOurs reports whether id is a terminal of ours (terminal/create): a
// tool call embedding it is no agent-owned terminal.
type isOurs func(session, id string) bool

// fromUpdate decodes a v1 tool_call or tool_call_update.
func (at *agentTerms) fromUpdate(n acpsdk.SessionNotification, ours isOurs) []AgentTerminal {
	var (
		call, title string
		meta        map[string]any
		content     []acpsdk.ToolCallContent
		status      acpsdk.ToolCallStatus
		rawOutput   any
		rawInput    any
		kind        acpsdk.ToolKind
	)
	switch u := n.Update; {
	case u.ToolCall != nil:
		call, title, meta, content, status, rawOutput = string(u.ToolCall.ToolCallId), u.ToolCall.Title, u.ToolCall.Meta, u.ToolCall.Content, u.ToolCall.Status, u.ToolCall.RawOutput
		rawInput, kind = u.ToolCall.RawInput, u.ToolCall.Kind
	case u.ToolCallUpdate != nil:
		call, meta, content, rawOutput = string(u.ToolCallUpdate.ToolCallId), u.ToolCallUpdate.Meta, u.ToolCallUpdate.Content, u.ToolCallUpdate.RawOutput
		rawInput = u.ToolCallUpdate.RawInput
		if u.ToolCallUpdate.Kind != nil {
			kind = *u.ToolCallUpdate.Kind
		}
		if u.ToolCallUpdate.Title != nil {
			title = *u.ToolCallUpdate.Title
		}
		if u.ToolCallUpdate.Status != nil {
			status = *u.ToolCallUpdate.Status
		}
	default:
		return nil
	}
	sid := string(n.SessionId)
	claudeCode, _ := meta["claudeCode"].(map[string]any)
	at.mu.Lock()
	defer at.mu.Unlock()
	if call != "" {
		at.seen[sid+"\x00"+call] = true
	}
	var out []AgentTerminal
	ev := func(st *agentTermState) *AgentTerminal {
		for i := range out {
			if out[i].ID == st.id {
				return &out[i]
			}
		}
		out = append(out, AgentTerminal{ID: st.id, ToolCallID: st.call})
		return &out[len(out)-1]
	}
	start := func(id, cwd string) {
		if id == "" {
			id = call
		}
		st := at.byID[sid+"\x00"+id]
		if st == nil {
			st = &agentTermState{id: id, call: call, atEnd: claudeCode != nil}
			at.byID[sid+"\x00"+id] = st
			e := ev(st)
			e.Started = true
			e.KeepsReporting = at.keepsReporting
			if held := at.early[sid+"\x00"+call]; len(held) > 0 {
				e.Output = append(e.Output, lineEnds(string(held))...)
				st.output = true
			}
			delete(at.early, sid+"\x00"+call)
		}
		if call != "" {
			at.byCall[sid+"\x00"+call] = st
		}
		if cwd != "" {
			ev(st).Cwd = cwd
		}
	}
	if info, ok := meta["terminal_info"].(map[string]any); ok {
		start(metaString(info, "terminal_id"), metaString(info, "cwd"))
	}
	terminal := false
	for _, c := range content {
		if c.Terminal != nil {
			terminal = true
			if !ours(sid, c.Terminal.TerminalId) {
				start(c.Terminal.TerminalId, "")
			}
		}
	}
	key := sid + "\x00" + call
	if terminal {
		// a terminal shows it (ours, or the agent's): no display of its own
		at.withTerm[key] = true
		delete(at.candidates, key)
	}
	if call != "" && at.byCall[key] == nil && !at.withTerm[key] && meta["terminal_info"] == nil && claudeCode == nil {
		// an MCP tool's call (ours included) is no shell command of the agent's
		mcp := strings.HasPrefix(title, "mcp__")
		line := commandLine(rawInput)
		c := at.candidates[key]
		if c == nil && !mcp && (kind == acpsdk.ToolKindExecute || kind == "" && line != "") {
			c = &candidate{}
			at.candidates[key] = c
		}
		if c != nil {
			if line != "" {
				c.title, c.named = line, true // the command, not the model's description of it
			} else if c.title == "" {
				c.title = title
			}
			if m := qwenCommandRe.FindStringSubmatch(contentText(content)); m != nil && !c.named {
				// Qwen Code's final text names the command its tool call
				// did not: "Command: <line>\nDirectory: …"
				c.title, c.named = m[1], true
			}
			if cwd := metaString(asMap(rawInput), "cwd"); cwd != "" {
				c.cwd = cwd
			} else if dir := metaString(asMap(rawOutput), "directory"); dir != "" && c.cwd == "" {
				c.cwd = dir // Qwen Code's shell_result
			}
			// shown once there is something to show: a permission asked
			// first may still be followed by a terminal of ours
			if contentText(content) != "" || status == acpsdk.ToolCallStatusCompleted || status == acpsdk.ToolCallStatusFailed {
				delete(at.candidates, key)
				start(call, c.cwd)
				st := at.byCall[key]
				st.generic = true
				if c.title != "" {
					ev(st).Title = c.title
				}
			}
		}
	}
	st := at.byCall[sid+"\x00"+call]
	if st == nil {
		// Output of a tool call not seen yet waits for it.
		if call != "" {
			for _, key := range []string{"terminal_output", "terminal_output_delta"} {
				if o, ok := meta[key].(map[string]any); ok {
					held := at.early[sid+"\x00"+call]
					if data := metaString(o, "data"); data != "" && len(held)+len(data) <= maxEarly {
						at.early[sid+"\x00"+call] = append(held, data...)
					}
				}
			}
		}
		return out
	}
	if claudeCode != nil {
		st.atEnd = true
	}
	if notRun := metaString(claudeCode, "nonExecutionKind"); notRun != "" && !st.exited {
		// The command did not run to its end: what came as its output
		// was the model's text about that. The display says why instead.
		st.held = nil
		st.exited = true
		e := ev(st)
		e.Exited, e.NotRun = true, notRun
		return out
	}
	if len(st.held) > 0 {
		// The update after Claude's output is no refusal: show it.
		e := ev(st)
		e.Output = append(e.Output, lineEnds(string(st.held))...)
		st.held = nil
	}
	if title != "" && title != "Terminal" && !st.generic { // Claude's first title is a placeholder
		ev(st).Title = title
	}
	if line := commandLine(rawInput); st.generic && line != "" {
		ev(st).Title = line // the command, not the model's description of it
	}
	final := status == acpsdk.ToolCallStatusCompleted || status == acpsdk.ToolCallStatusFailed
	cancelled := false
	if st.generic && !st.exited {
		text := contentText(content)
		if before, ok := geminiCancelled(text); ok && final {
			// Gemini CLI killed the command at a cancel and says so in the
			// text: what it printed is shown, then the cancel.
			text, cancelled = before, true
			if strings.HasPrefix(st.text, text) {
				text = st.text
			}
		} else if out, ok := asMap(asMap(rawOutput)["metadata"])["output"].(string); ok && final {
			// opencode's final text is the output and its notes to the
			// model (<shell_metadata>…); metadata.output is the output.
			text = out
		} else if out, ok := asMap(rawOutput)["output"].(string); ok && final && metaString(asMap(rawOutput), "type") == "shell_result" {
			// Qwen Code's is the command, directory, output, exit code,
			// signal and process group as text; rawOutput.output is the
			// output.
			text = out
		}
		if loc := shellTrailerRe.FindStringIndex(text); loc != nil {
			// Copilot CLI's line about the command's end is its note to
			// the model, not output: the split's end marker says it.
			text, st.trailer = text[:loc[0]], text[loc[0]:]
		}
		if text != "" && text != st.text {
			e := ev(st)
			switch {
			case strings.HasPrefix(text, st.text):
				e.Output = append(e.Output, lineEnds(text[len(st.text):])...)
			default:
				// not a continuation of what was shown: shown anew
				e.Output, e.Replace = append(lineEnds("\x1b[2m[the agent sent the output anew]\x1b[0m\n"), lineEnds(text)...), true
			}
			st.text, st.output = text, true
		}
	}
	for _, key := range []string{"terminal_output", "terminal_output_delta"} {
		if o, ok := meta[key].(map[string]any); ok {
			if data := metaString(o, "data"); data != "" {
				t := at.named(sid, metaString(o, "terminal_id"), st)
				t.output = true
				if t.atEnd && status == "" && meta["terminal_exit"] == nil {
					// Claude Code's output, alone in its update: the next
					// update says whether it is the command's (agentTermState).
					t.held = append(t.held, data...)
					continue
				}
				e := ev(t)
				e.Output = append(e.Output, lineEnds(data)...)
			}
		}
	}
	if x, ok := meta["terminal_exit"].(map[string]any); ok {
		t := at.named(sid, metaString(x, "terminal_id"), st)
		if !t.exited {
			t.exited = true
			e := ev(t)
			e.Exited = true
			if code, ok := metaNumber(x, "exit_code"); ok {
				e.ExitCode = &code
			}
			e.Signal = metaString(x, "signal")
		}
	}
	if cancelled {
		st.exited = true
		e := ev(st)
		e.Exited, e.NotRun = true, "cancelled"
		return out
	}
	if final && !st.exited {
		st.exited = true
		e := ev(st)
		e.Exited = true
		if raw := asMap(rawOutput); st.generic && metaString(raw, "type") == "shell_result" && (metaString(raw, "outcome") == "cancelled" || raw["signal"] != nil) {
			// Qwen Code: a cancel killed it (exitCode 0 beside signal 15,
			// and a text saying its output was discarded), or a signal
			// ended it.
			if metaString(raw, "outcome") == "cancelled" {
				e.NotRun = "cancelled"
			} else if n, ok := metaNumber(raw, "signal"); ok {
				e.Signal = termhost.SignalName(syscall.Signal(n))
			} else if name := metaString(raw, "signal"); name != "" {
				e.Signal = name
			} else {
				e.Failed = true
			}
		} else if note, cut := cutShort(rawOutput, contentText(content)); st.generic && cut {
			// opencode: the command did not run to its end (exit null),
			// and its note to the model says why.
			if strings.Contains(strings.ToLower(note), "aborted") {
				e.NotRun = "cancelled"
			} else {
				e.Failed = true
			}
		} else if code, text, ok := exitCodeOf(rawOutput); ok {
			e.ExitCode = &code
			if !st.output && text != "" {
				e.Output = append(e.Output, lineEnds(text)...)
				st.output = true
			}
		} else if code, ok := trailerExit(st.trailer + st.text); st.generic && ok {
			e.ExitCode = &code
		} else if st.generic {
			if !st.output {
				e.Output = append(e.Output, lineEnds("\x1b[2m(the agent sent no output for this command; with terminals = \"agentrun\" it runs in agentrun's terminal, where you see it)\x1b[0m\n")...)
			}
			if status == acpsdk.ToolCallStatusFailed {
				e.Failed = true
			} else {
				e.Unreported = true
			}
		} else if status == acpsdk.ToolCallStatusCompleted {
			zero := 0
			e.ExitCode = &zero
		} else {
			e.Failed = true
		}
	}
	return out
}

// geminiCancelled reads the text Gemini CLI ends a command it killed at
// a cancel with ("Command cancelled by user.", then "Output before
// cancellation:" and what it printed, if anything); ok is false for any
// other text.
func geminiCancelled(text string) (before string, ok bool) {
	rest, ok := strings.CutPrefix(text, "Command cancelled by user.")
	if !ok {
		return "", false
	}
	if _, out, found := strings.Cut(rest, "Output before cancellation:\n"); found {
		return out, true
	}
	return "", true
}

// ClaimCommand gives our MCP tool's command line to the agent's tool call
// that runs it, when the tool call did not say so (Copilot CLI reports a
// call of our HTTP tool as kind "execute" with the command in rawInput,
// as its own shell, and sends no tool call id in the MCP call): the
// session's newest tool call not shown yet whose command is line. It is
// then no agent-owned terminal (our split shows it), and its id is
// returned ("" when none runs line).
func (a *Agent) ClaimCommand(sessionID, line string) string {
	at := a.agentTerms
	at.mu.Lock()
	defer at.mu.Unlock()
	prefix := sessionID + "\x00"
	for key, c := range at.candidates {
		if strings.HasPrefix(key, prefix) && c.named && c.title == line {
			delete(at.candidates, key)
			at.withTerm[key] = true
			return strings.TrimPrefix(key, prefix)
		}
	}
	return ""
}

// fromPermission takes the command a permission request names for a tool
// call that runs one and showed none yet (Qwen Code names it only there):
// the split of that tool call is titled with it.
func (at *agentTerms) fromPermission(sid string, tc acpsdk.ToolCallUpdate) {
	line := commandLine(tc.RawInput)
	if line == "" {
		return
	}
	at.mu.Lock()
	defer at.mu.Unlock()
	if c := at.candidates[sid+"\x00"+string(tc.ToolCallId)]; c != nil {
		c.title, c.named = line, true
	}
}

// forget drops what is known of session sid's terminals (it ended).
func (at *agentTerms) forget(sid string) {
	prefix := sid + "\x00"
	at.mu.Lock()
	defer at.mu.Unlock()
	for _, m := range []map[string]*agentTermState{at.byCall, at.byID} {
		for k := range m {
			if strings.HasPrefix(k, prefix) {
				delete(m, k)
			}
		}
	}
	for k := range at.early {
		if strings.HasPrefix(k, prefix) {
			delete(at.early, k)
		}
	}
	for k := range at.candidates {
		if strings.HasPrefix(k, prefix) {
			delete(at.candidates, k)
		}
	}
	for _, m := range []map[string]bool{at.withTerm, at.seen} {
		for k := range m {
			if strings.HasPrefix(k, prefix) {
				delete(m, k)
			}
		}
	}
}

// permitted opens the split of a command the user allowed whose tool call
// no update ever named (Gemini CLI 0.61 sends none for its shell: only
// this request, then one update when the command ended). It opens as the
// command starts, titled with the command, rather than when it ended;
// nil for any other request.
func (at *agentTerms) permitted(sid string, tc acpsdk.ToolCallUpdate) []AgentTerminal {
	call := string(tc.ToolCallId)
	if call == "" || tc.Kind == nil || *tc.Kind != acpsdk.ToolKindExecute {
		return nil
	}
	title := commandLine(tc.RawInput)
	if title == "" && tc.Title != nil {
		title = *tc.Title
	}
	key := sid + "\x00" + call
	at.mu.Lock()
	defer at.mu.Unlock()
	if title == "" || at.seen[key] || at.byCall[key] != nil {
		return nil
	}
	st := &agentTermState{id: call, call: call, generic: true}
	at.byID[key], at.byCall[key], at.seen[key] = st, st, true
	return []AgentTerminal{{ID: call, ToolCallID: call, Started: true, Title: title, KeepsReporting: at.keepsReporting}}
}

// named returns the state of terminal id in session sid, or def when id is
// empty or unknown.
func (at *agentTerms) named(sid, id string, def *agentTermState) *agentTermState {
	if st := at.byID[sid+"\x00"+id]; id != "" && st != nil {
		return st
	}
	return def
}

// qwenCommandRe finds the command in Qwen Code's text of a command that
// ended: "Command: <line>\nDirectory: …".
var qwenCommandRe = regexp.MustCompile(`^Command: (.*)\nDirectory: `)

// shellMetadataRe finds opencode's note to the model after a command's
// output: "<shell_metadata>\nUser aborted the command\n</shell_metadata>".
var shellMetadataRe = regexp.MustCompile(`(?s)<shell_metadata>\s*(.*?)\s*</shell_metadata>`)

// cutShort reports whether a tool call's rawOutput says its command was
// cut short: opencode's metadata.exit null (a cancel, a timeout), with the
// note of why from text.
func cutShort(raw any, text string) (note string, cut bool) {
	meta := asMap(asMap(raw)["metadata"])
	exit, has := meta["exit"]
	if !has || exit != nil {
		return "", false
	}
	if m := shellMetadataRe.FindStringSubmatch(text); m != nil {
		note = m[1]
	}
	return note, true
}

// exitCodeRe matches the head of Claude Code's rawOutput for a failed
// command: "Exit code 3\n<output>".
var exitCodeRe = regexp.MustCompile(`^Exit code (\d+)\n?`)

// exitCodeOf reads an exit code from a tool call's rawOutput, with the
// command's output that follows it: Claude Code's "Exit code N\n<output>",
// Qwen Code's {exitCode}, opencode's {metadata: {exit}}, Copilot CLI's
// {contents: [{type: "shell_exit", exitCode}]}.
func exitCodeOf(raw any) (code int, text string, ok bool) {
	if m := asMap(raw); m != nil {
		objs := []map[string]any{m, asMap(m["metadata"])}
		if list, isList := m["contents"].([]any); isList {
			for _, c := range list {
				if metaString(asMap(c), "type") == "shell_exit" {
					objs = append(objs, asMap(c))
				}
			}
		}
		for _, obj := range objs {
			for _, key := range []string{"exitCode", "exit_code", "exit"} {
				if c, ok := metaNumber(obj, key); ok {
					return c, "", true
				}
			}
		}
		return 0, "", false
	}
	s, isString := raw.(string)
	if !isString {
		return 0, "", false
	}
	m := exitCodeRe.FindStringSubmatch(s)
	if m == nil {
		return 0, "", false
	}
	code, err := strconv.Atoi(m[1])
	if err != nil {
		return 0, "", false
	}
	return code, s[len(m[0]):], true
}

// trailerRe finds the exit code an agent writes into a command's text:
// Copilot CLI's "<shellId: 1 completed with exit code 3>", Qwen Code's
// "Exit Code: 3".
var trailerRe = regexp.MustCompile(`(?i)exit code:? (-?\d+)`)

// shellTrailerRe is Copilot CLI's line after a command's output, at the
// end of its text: "<shellId: 1 completed with exit code 3>".
var shellTrailerRe = regexp.MustCompile(`<shellId: [^<>\n]*>\s*$`)

// trailerExit reads the last such exit code of text.
func trailerExit(text string) (int, bool) {
	all := trailerRe.FindAllStringSubmatch(text, -1)
	if len(all) == 0 {
		return 0, false
	}
	code, err := strconv.Atoi(all[len(all)-1][1])
	return code, err == nil
}

// asMap is v as a JSON object (nil when it is not one).
func asMap(v any) map[string]any {
	m, _ := v.(map[string]any)
	return m
}

// commandLine is the command a tool call's rawInput names: command (a
// string, or a list joined by spaces) or cmd.
func commandLine(rawInput any) string {
	m := asMap(rawInput)
	for _, key := range []string{"command", "cmd"} {
		switch v := m[key].(type) {
		case string:
			return v
		case []any:
			var parts []string
			for _, p := range v {
				if s, ok := p.(string); ok {
					parts = append(parts, s)
				}
			}
			return strings.Join(parts, " ")
		}
	}
	return ""
}

// contentText is the text of a tool call's text content blocks.
func contentText(content []acpsdk.ToolCallContent) string {
	var b strings.Builder
	for _, c := range content {
		if c.Content != nil && c.Content.Content.Text != nil {
			b.WriteString(c.Content.Content.Text.Text)
		}
	}
	return b.String()
}

// lineEnds turns text's "\n" line ends into "\r\n" for a terminal.
func lineEnds(text string) []byte {
	return []byte(strings.ReplaceAll(strings.ReplaceAll(text, "\r\n", "\n"), "\n", "\r\n"))
}

// v2Update is the part of an ACP v2 terminal_update or
// terminal_output_chunk that is read; Output and ExitStatus stay raw so
// an explicit null is told from an absent field.
type v2Update struct {
	SessionID string `json:"sessionId"`
	Update    struct {
		Kind       string          `json:"sessionUpdate"`
		TerminalID string          `json:"terminalId"`
		Command    *string         `json:"command"`
		Cwd        *string         `json:"cwd"`
		Output     json.RawMessage `json:"output"`
		Data       string          `json:"data"`
		ExitStatus json.RawMessage `json:"exitStatus"`
	} `json:"update"`
}

// fromV2 decodes a v2 terminal_update or terminal_output_chunk; ok is
// false for any other session update. A malformed one is an error naming
// what is wrong.
func (at *agentTerms) fromV2(params json.RawMessage) (sid string, ev AgentTerminal, ok bool, err error) {
	var u v2Update
	if json.Unmarshal(params, &u) != nil {
		return "", ev, false, nil
	}
	kind := u.Update.Kind
	if kind != "terminal_update" && kind != "terminal_output_chunk" {
		return "", ev, false, nil
	}
	if u.SessionID == "" || u.Update.TerminalID == "" {
		return "", ev, true, fmt.Errorf("%s needs sessionId and terminalId", kind)
	}
	at.mu.Lock()
	defer at.mu.Unlock()
	key := u.SessionID + "\x00" + u.Update.TerminalID
	st := at.byID[key]
	ev.ID = u.Update.TerminalID
	if st == nil {
		st = &agentTermState{id: ev.ID}
		at.byID[key] = st
		ev.Started = true
	}
	if kind == "terminal_output_chunk" {
		b, err := base64.StdEncoding.DecodeString(u.Update.Data)
		if err != nil {
			return "", ev, true, fmt.Errorf("terminal_output_chunk of %q: data is not base64: %v", ev.ID, err)
		}
		ev.Output = b
		return u.SessionID, ev, true, nil
	}
	if u.Update.Command != nil {
		ev.Title = *u.Update.Command
	}
	if u.Update.Cwd != nil {
		ev.Cwd = *u.Update.Cwd
	}
	if len(u.Update.Output) > 0 && string(u.Update.Output) != "null" {
		var o struct {
			Data string `json:"data"`
		}
		if err := json.Unmarshal(u.Update.Output, &o); err != nil {
			return "", ev, true, fmt.Errorf("terminal_update of %q: output must be {data}: %v", ev.ID, err)
		}
		b, err := base64.StdEncoding.DecodeString(o.Data)
		if err != nil {
			return "", ev, true, fmt.Errorf("terminal_update of %q: output.data is not base64: %v", ev.ID, err)
		}
		ev.Output, ev.Replace = b, true
	}
	if len(u.Update.ExitStatus) > 0 && string(u.Update.ExitStatus) != "null" && !st.exited {
		var x struct {
			ExitCode *float64 `json:"exitCode"`
			Signal   *string  `json:"signal"`
		}
		if err := json.Unmarshal(u.Update.ExitStatus, &x); err != nil {
			return "", ev, true, fmt.Errorf("terminal_update of %q: exitStatus must be {exitCode, signal}: %v", ev.ID, err)
		}
		st.exited, ev.Exited = true, true
		if x.ExitCode != nil && *x.ExitCode == math.Trunc(*x.ExitCode) {
			code := int(*x.ExitCode)
			ev.ExitCode = &code
		}
		if x.Signal != nil {
			ev.Signal = *x.Signal
		}
	}
	return u.SessionID, ev, true, nil
}

// metaString and metaNumber read a _meta object's fields.
func metaString(obj map[string]any, key string) string {
	s, _ := obj[key].(string)
	return s
}

func metaNumber(obj map[string]any, key string) (int, bool) {
	switch v := obj[key].(type) {
	case float64:
		if v == math.Trunc(v) && math.Abs(v) < 1<<31 {
			return int(v), true
		}
	case json.Number:
		if n, err := v.Int64(); err == nil {
			return int(n), true
		}
	case int:
		return v, true
	}
	return 0, false
}
