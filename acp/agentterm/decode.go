package agentterm

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"
	"sync"

	acpsdk "github.com/coder/acp-go-sdk"
)

// Why this file is long: one decoder for the shapes in which agents
// report the commands they run themselves, in the order a tool call's
// updates are read, and the state that ties those updates together
// (Decoder), which every agent's shapes share. Each agent's own ways
// are in its profile (profile_<key>.go), called at fixed points. The
// shapes it reads are listed in doc.go.

// Event is what one update says about one agent-owned terminal.
type Event struct {
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

// Decoder follows the agent-owned terminals of one agent's sessions, to
// tie a tool call's later updates (title, final status) to its terminal.
type Decoder struct {
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
	// noOutputHow says how to see the output of the agent's own commands
	// (its profile's noOutput, with the agent's name in the config);
	// noOutputSaid: the sessions whose splits said it once already.
	noOutputHow  string
	noOutputSaid map[string]bool
	// profile and configName are ForAgent's, for OwnShellKept.
	profile    Profile
	configName string
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
	// cwd: the command's directory was said (a later update of a generic
	// command may name it: Copilot CLI's at its end)
	cwd bool
}

// NewDecoder returns a decoder for one agent's sessions, knowing none of
// its ways until ForAgent.
func NewDecoder() *Decoder {
	return &Decoder{byCall: map[string]*agentTermState{}, byID: map[string]*agentTermState{}, early: map[string][]byte{},
		candidates: map[string]*candidate{}, withTerm: map[string]bool{}, seen: map[string]bool{}, noOutputSaid: map[string]bool{}}
}

// ForAgent tells the decoder which agent it decodes (its profile, once
// initialize named it; configName: the agent's name in the user's
// config): whether it goes on reporting a command after a cancelled turn,
// and how to see the output of its commands. The zero Profile changes
// nothing.
func (at *Decoder) ForAgent(p Profile, configName string) {
	if p.p == nil {
		return
	}
	at.mu.Lock()
	at.keepsReporting = p.p.keepsReporting
	at.profile, at.configName = p, configName
	if p.p.noOutput != nil {
		at.noOutputHow = p.p.noOutput(configName, "")
	}
	at.mu.Unlock()
}

// OwnShellKept tells the decoder why agentrun kept the agent's own shell
// for its session (what the split of its first command says, with how
// to see its commands' output).
func (at *Decoder) OwnShellKept(why string) {
	at.mu.Lock()
	defer at.mu.Unlock()
	if p := at.profile.p; p != nil && p.noOutput != nil {
		at.noOutputHow = p.noOutput(at.configName, why)
	}
}

// IsOurs reports whether id is a terminal of ours (terminal/create): a
// tool call embedding it is no agent-owned terminal.
type IsOurs func(session, id string) bool

// toolUpdateOf reads a v1 tool_call or tool_call_update; ok is false for
// any other session update.
func toolUpdateOf(n acpsdk.SessionNotification) (u *toolUpdate, ok bool) {
	u = &toolUpdate{}
	switch v := n.Update; {
	case v.ToolCall != nil:
		u.call, u.title, u.meta, u.content, u.status, u.rawOutput = string(v.ToolCall.ToolCallId), v.ToolCall.Title, v.ToolCall.Meta, v.ToolCall.Content, v.ToolCall.Status, v.ToolCall.RawOutput
		u.rawInput, u.kind = v.ToolCall.RawInput, v.ToolCall.Kind
	case v.ToolCallUpdate != nil:
		u.call, u.meta, u.content, u.rawOutput = string(v.ToolCallUpdate.ToolCallId), v.ToolCallUpdate.Meta, v.ToolCallUpdate.Content, v.ToolCallUpdate.RawOutput
		u.rawInput = v.ToolCallUpdate.RawInput
		if v.ToolCallUpdate.Kind != nil {
			u.kind = *v.ToolCallUpdate.Kind
		}
		if v.ToolCallUpdate.Title != nil {
			u.title = *v.ToolCallUpdate.Title
		}
		if v.ToolCallUpdate.Status != nil {
			u.status = *v.ToolCallUpdate.Status
		}
	default:
		return nil, false
	}
	u.text = contentText(u.content)
	u.final = u.status == acpsdk.ToolCallStatusCompleted || u.status == acpsdk.ToolCallStatusFailed
	return u, true
}

// anyProfile reports whether some profile's hook says yes of u.
func anyProfile(u *toolUpdate, hook func(p *profile) func(*toolUpdate) bool) bool {
	for _, p := range profiles {
		if h := hook(p); h != nil && h(u) {
			return true
		}
	}
	return false
}

// outputKeys are the _meta keys whose {terminal_id, data} is terminal
// output to append: terminal_output, then the profiles' own.
func outputKeys() []string {
	keys := []string{"terminal_output"}
	for _, p := range profiles {
		keys = append(keys, p.outputKeys...)
	}
	return keys
}

// placeholder reports whether title is a profile's placeholder title.
func placeholder(title string) bool {
	for _, p := range profiles {
		if p.placeholderTitle != "" && title == p.placeholderTitle {
			return true
		}
	}
	return false
}

// FromUpdate decodes a v1 tool_call or tool_call_update: the common ACP
// shapes here, each agent's own through its profile's hooks.
func (at *Decoder) FromUpdate(n acpsdk.SessionNotification, ours IsOurs) []Event {
	u, ok := toolUpdateOf(n)
	if !ok {
		return nil
	}
	call := u.call
	sid := string(n.SessionId)
	atEnd := anyProfile(u, func(p *profile) func(*toolUpdate) bool { return p.outputAtEnd })
	at.mu.Lock()
	defer at.mu.Unlock()
	if call != "" {
		at.seen[sid+"\x00"+call] = true
	}
	var out []Event
	ev := func(st *agentTermState) *Event {
		for i := range out {
			if out[i].ID == st.id {
				return &out[i]
			}
		}
		out = append(out, Event{ID: st.id, ToolCallID: st.call})
		return &out[len(out)-1]
	}
	start := func(id, cwd string) {
		if id == "" {
			id = call
		}
		st := at.byID[sid+"\x00"+id]
		if st == nil {
			st = &agentTermState{id: id, call: call, atEnd: atEnd}
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
			st.cwd = true
		}
	}
	if info, ok := u.meta["terminal_info"].(map[string]any); ok {
		start(metaString(info, "terminal_id"), metaString(info, "cwd"))
	}
	terminal := false
	for _, c := range u.content {
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
	if call != "" && at.byCall[key] == nil && !at.withTerm[key] && u.meta["terminal_info"] == nil &&
		!anyProfile(u, func(p *profile) func(*toolUpdate) bool { return p.notCommand }) {
		at.candidate(u, key, start, ev)
	}
	st := at.byCall[sid+"\x00"+call]
	if st == nil {
		// Output of a tool call not seen yet waits for it.
		if call != "" {
			for _, key := range outputKeys() {
				if o, ok := u.meta[key].(map[string]any); ok {
					held := at.early[sid+"\x00"+call]
					if data := metaString(o, "data"); data != "" && len(held)+len(data) <= maxEarly {
						at.early[sid+"\x00"+call] = append(held, data...)
					}
				}
			}
		}
		return out
	}
	if atEnd {
		st.atEnd = true
	}
	if st.generic && !st.cwd {
		if dir := profileCwd(u); dir != "" {
			ev(st).Cwd = dir
			st.cwd = true
		}
	}
	if notRun := profileNotRun(u); notRun != "" && !st.exited {
		// The command did not run to its end: what came as its output
		// was the model's text about that. The display says why instead.
		st.held = nil
		st.exited = true
		e := ev(st)
		e.Exited, e.NotRun = true, notRun
		return out
	}
	if len(st.held) > 0 {
		// The update after output held to the end is no refusal: show it.
		e := ev(st)
		e.Output = append(e.Output, lineEnds(string(st.held))...)
		st.held = nil
	}
	if u.title != "" && !placeholder(u.title) && !st.generic {
		ev(st).Title = u.title
	}
	if line := commandLine(u.rawInput); st.generic && line != "" {
		ev(st).Title = line // the command, not the model's description of it
	}
	cancelled := false
	if st.generic && !st.exited {
		text := u.text
		if u.final {
			for _, p := range profiles {
				if p.finalOutput == nil {
					continue
				}
				if o, c, ok := p.finalOutput(u); ok {
					text, cancelled = o, c
					if c && strings.HasPrefix(st.text, text) {
						// what it printed before the cancel was shown already
						text = st.text
					}
					break
				}
			}
		}
		for _, p := range profiles {
			if p.trailer == nil {
				continue
			}
			if o, note, ok := p.trailer(text); ok {
				text, st.trailer = o, note
				break
			}
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
	for _, key := range outputKeys() {
		if o, ok := u.meta[key].(map[string]any); ok {
			if data := metaString(o, "data"); data != "" {
				t := at.named(sid, metaString(o, "terminal_id"), st)
				t.output = true
				if t.atEnd && u.status == "" && u.meta["terminal_exit"] == nil {
					// output held to the end, alone in its update: the next
					// update says whether it is the command's (agentTermState).
					t.held = append(t.held, data...)
					continue
				}
				e := ev(t)
				e.Output = append(e.Output, lineEnds(data)...)
			}
		}
	}
	if x, ok := u.meta["terminal_exit"].(map[string]any); ok {
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
	if u.final && !st.exited {
		st.exited = true
		at.end(sid, u, st, ev(st))
	}
	return out
}

// candidate follows a tool call that may run a command and shows no
// terminal (yet): kind execute, or a command in rawInput. Its split opens
// once there is something to show: a permission asked first may still be
// followed by a terminal of ours.
func (at *Decoder) candidate(u *toolUpdate, key string, start func(id, cwd string), ev func(*agentTermState) *Event) {
	// an MCP tool's call (ours included) is no shell command of the agent's
	mcp := strings.HasPrefix(u.title, "mcp__")
	line := commandLine(u.rawInput)
	c := at.candidates[key]
	if c == nil && !mcp && (u.kind == acpsdk.ToolKindExecute || u.kind == "" && line != "") {
		c = &candidate{}
		at.candidates[key] = c
	}
	if c == nil {
		return
	}
	if line != "" {
		c.title, c.named = line, true // the command, not the model's description of it
	} else if c.title == "" {
		c.title = u.title
	}
	if !c.named {
		for _, p := range profiles {
			if p.command == nil {
				continue
			}
			if line, ok := p.command(u); ok {
				c.title, c.named = line, true
				break
			}
		}
	}
	if cwd := metaString(asMap(u.rawInput), "cwd"); cwd != "" {
		c.cwd = cwd
	} else if c.cwd == "" {
		c.cwd = profileCwd(u)
	}
	if u.text != "" || u.final {
		delete(at.candidates, key)
		start(u.call, c.cwd)
		st := at.byCall[key]
		st.generic = true
		if c.title != "" {
			ev(st).Title = c.title
		}
	}
}

// profileCwd is the directory a profile reads u's command ran in ("" when
// none does).
func profileCwd(u *toolUpdate) string {
	for _, p := range profiles {
		if p.cwd != nil {
			if dir := p.cwd(u); dir != "" {
				return dir
			}
		}
	}
	return ""
}

// profileNotRun says why the command of u did not run to its end, when a
// profile reads that from u ("" otherwise).
func profileNotRun(u *toolUpdate) string {
	for _, p := range profiles {
		if p.notRun != nil {
			if why := p.notRun(u); why != "" {
				return why
			}
		}
	}
	return ""
}

// noOutputNote is what the split of a command that sent no output says:
// why and how to see it, the first time in session sid; after that only
// that the agent sent none. at.mu is held.
func (at *Decoder) noOutputNote(sid string) string {
	if at.noOutputSaid[sid] {
		return "(the agent sent no output for this command)"
	}
	at.noOutputSaid[sid] = true
	if at.noOutputHow != "" {
		return "(the agent sent no output for this command: " + at.noOutputHow + ")"
	}
	return "(the agent sent no output for this command; with terminals = \"agentrun\" it runs in agentrun's terminal, where you see it)"
}

// end fills e, the end of terminal st that update u (final) ended: how
// the agent said it ended, else the exit code its rawOutput or text
// gives, else what its final status says.
func (at *Decoder) end(sid string, u *toolUpdate, st *agentTermState, e *Event) {
	e.Exited = true
	if st.generic {
		for _, p := range profiles {
			if p.end == nil {
				continue
			}
			if how, ok := p.end(u); ok {
				e.NotRun, e.Signal, e.Failed = how.notRun, how.signal, how.failed
				return
			}
		}
	}
	if code, text, ok := exitCodeOf(u.rawOutput); ok {
		e.ExitCode = &code
		if !st.output && text != "" {
			e.Output = append(e.Output, lineEnds(text)...)
			st.output = true
		}
		return
	}
	if code, ok := trailerExit(st.trailer + st.text); st.generic && ok {
		e.ExitCode = &code
		return
	}
	switch {
	case st.generic:
		if !st.output {
			e.Output = append(e.Output, lineEnds("\x1b[2m"+at.noOutputNote(sid)+"\x1b[0m\n")...)
		}
		if u.status == acpsdk.ToolCallStatusFailed {
			e.Failed = true
		} else {
			e.Unreported = true
		}
	case u.status == acpsdk.ToolCallStatusCompleted:
		zero := 0
		e.ExitCode = &zero
	default:
		e.Failed = true
	}
}

// Asked reads a permission request about tool call tc of session sid
// (the profiles' permissionAsked), before the user answers it.
func (at *Decoder) Asked(sid string, tc acpsdk.ToolCallUpdate) {
	at.mu.Lock()
	defer at.mu.Unlock()
	for _, p := range profiles {
		if p.permissionAsked != nil {
			p.permissionAsked(at, sid, tc)
		}
	}
}

// Permitted is called when the user allowed the request about tool call
// tc of session sid: the events of splits the profiles open for it.
func (at *Decoder) Permitted(sid string, tc acpsdk.ToolCallUpdate) []Event {
	at.mu.Lock()
	defer at.mu.Unlock()
	var out []Event
	for _, p := range profiles {
		if p.permissionAllowed != nil {
			out = append(out, p.permissionAllowed(at, sid, tc)...)
		}
	}
	return out
}

// Forget drops what is known of session sid's terminals (it ended).
func (at *Decoder) Forget(sid string) {
	prefix := sid + "\x00"
	at.mu.Lock()
	defer at.mu.Unlock()
	delete(at.noOutputSaid, sid)
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

// named returns the state of terminal id in session sid, or def when id is
// empty or unknown.
func (at *Decoder) named(sid, id string, def *agentTermState) *agentTermState {
	if st := at.byID[sid+"\x00"+id]; id != "" && st != nil {
		return st
	}
	return def
}

// exitKeys are the keys of a command's exit code in a tool call's
// rawOutput object, or in its metadata.
var exitKeys = []string{"exitCode", "exit_code", "exit"}

// exitIn reads an exit code from the first of objs that has one.
func exitIn(objs ...map[string]any) (int, bool) {
	for _, obj := range objs {
		for _, key := range exitKeys {
			if c, ok := metaNumber(obj, key); ok {
				return c, true
			}
		}
	}
	return 0, false
}

// exitCodeOf reads an exit code from a tool call's rawOutput, with the
// command's output that came with it: {exitCode} (Qwen Code), {exit_code},
// {exit}, the same in its metadata (opencode's {metadata: {exit}}), else
// a shape of an agent's own (its profile's exitCode).
func exitCodeOf(raw any) (code int, text string, ok bool) {
	if m := asMap(raw); m != nil {
		if c, ok := exitIn(m, asMap(m["metadata"])); ok {
			return c, "", true
		}
	}
	for _, p := range profiles {
		if p.exitCode == nil {
			continue
		}
		if c, text, ok := p.exitCode(raw); ok {
			return c, text, true
		}
	}
	return 0, "", false
}

// trailerRe finds the exit code an agent writes into a command's text:
// Copilot CLI's "<shellId: 1 completed with exit code 3>", Qwen Code's
// "Exit Code: 3".
var trailerRe = regexp.MustCompile(`(?i)exit code:? (-?\d+)`)

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

// FromV2 decodes a v2 terminal_update or terminal_output_chunk; ok is
// false for any other session update. A malformed one is an error naming
// what is wrong.
func (at *Decoder) FromV2(params json.RawMessage) (sid string, ev Event, ok bool, err error) {
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
