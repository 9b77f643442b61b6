package editor

import (
	"github.com/agentrun/agentrun.nvim/acp"
	"github.com/agentrun/agentrun.nvim/internal/vtsafe"
	acpsdk "github.com/coder/acp-go-sdk"
)

// What a session's agent sends goes to Lua by session key: its updates,
// its end, and what it shows of the terminals it runs itself. Each agent
// calls back through its own acp.Editor (agentEditor), bound to the key of
// the session it serves: the session id it names is the agent's and may
// be another agent's too, so it is passed on (session_id) but never looked
// up. Nothing here waits on Neovim (the event queue, events.go).

// update queues an update of session key's agent for Lua; never waits
// on it.
func (ss *sessions) update(key string, n acpsdk.SessionNotification) {
	payload := map[string]any{"session_id": string(n.SessionId), "update": jsonValue(n.Update)}
	ss.mu.Lock()
	defer ss.mu.Unlock()
	ss.pushForSessionLocked(key, string(n.SessionId), event{name: evSessionUpdate, payload: payload})
}

// pushForSessionLocked queues e, which session key's agent sent about its
// session sid, for Lua; ss.mu held. Until session/new or session/load has
// returned (agents send available_commands_update first, and load
// replays the session's history and terminals), the session is not open
// yet: e is held (up to 1000) and openSession sends it after
// session_started. What an agent with no session of ours sends (one
// started to list sessions) goes nowhere.
func (ss *sessions) pushForSessionLocked(key, sid string, e event) {
	s, ok := ss.byKey[key]
	switch {
	case !ok:
		ss.log.Debug("an update for no session dropped", "key", key, "session", sid, "event", e.name)
		return
	case s.s == nil:
		if len(s.early) < 1000 {
			s.early = append(s.early, e)
		}
		return
	case sid != s.s.ID():
		// The agent runs this one session for us: what it says is of it.
		ss.log.Warn("an agent named another session id than its own", "key", key, "session", s.s.ID(), "named", sid)
	}
	e.payload["key"] = s.key
	ss.events.push(e.name, e.payload)
}

// ended follows the end of session key's agent (acp.Editor's
// SessionEnded, from its own agent only).
func (ss *sessions) ended(key string, reason error) {
	ss.mu.Lock()
	s, ok := ss.byKey[key]
	ss.mu.Unlock()
	if ok {
		ss.endSession(s, reason)
	}
}

// notRunText is how a split marks a command the agent says did not run
// to its end (Claude Code's nonExecutionKind): a cancel (the turn's, or
// the user rejecting it) reads "cancelled", a refusal says by what.
func notRunText(kind string) string {
	switch kind {
	case "user-rejected", "interrupted", "cancelled":
		return "cancelled"
	}
	return "not run: " + kind
}

// agentTerminal (acp.Editor's AgentTerminal for session key): what an agent that runs commands
// itself shows of one goes to Lua as an "agent_terminal" event, its
// output made safe for Neovim's libvterm as the display pump does for ours
// (one filter per terminal, so a sequence split across updates is seen
// whole; a replacing snapshot starts a new screen, and a new filter).
func (ss *sessions) agentTerminal(key, sid string, ev acp.AgentTerminal) {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	shown := key + "\x00" + ev.ID
	f := ss.agentShown[shown]
	if f == nil || ev.Replace {
		f = &vtsafe.Filter{}
		ss.agentShown[shown] = f
	}
	p := map[string]any{"session_id": sid, "id": ev.ID, "started": ev.Started}
	if ev.ToolCallID != "" {
		p["tool_call"] = ev.ToolCallID
	}
	if ev.Title != "" {
		p["title"] = ev.Title
	}
	if ev.Cwd != "" {
		p["cwd"] = ev.Cwd
	}
	if ev.KeepsReporting {
		p["keeps_reporting"] = true
	}
	if len(ev.Output) > 0 || ev.Replace {
		p["data"] = string(f.Append(f.Guard(nil), ev.Output))
		p["replace"] = ev.Replace
	}
	if ev.Exited {
		p["exited"] = true
		p["failed"] = ev.Failed
		if ev.ExitCode != nil {
			p["exit_code"] = *ev.ExitCode
		}
		if ev.Signal != "" {
			p["signal"] = ev.Signal
		}
		if ev.NotRun != "" {
			p["not_run"] = notRunText(ev.NotRun)
		}
		if ev.Unreported {
			p["unreported"] = true
		}
		if data, ok := p["data"].(string); ok {
			p["data"] = data + string(f.Flush(nil))
		}
		delete(ss.agentShown, shown)
	}
	ss.pushForSessionLocked(key, sid, event{name: evAgentTerminal, payload: p})
}
