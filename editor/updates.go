package editor

import (
	"context"

	"github.com/agentrun/agentrun.nvim/acp"
	"github.com/agentrun/agentrun.nvim/internal/vtsafe"
	acpsdk "github.com/coder/acp-go-sdk"
)

// What a session's agent sends goes to Lua by session key: its updates,
// its end, and what it shows of the terminals it runs itself. Nothing
// here waits on Neovim (the event queue, events.go).

// update implements acp.Editor: queued for Lua, never waits on it.
func (ss *sessions) update(_ context.Context, n acpsdk.SessionNotification) {
	sid := string(n.SessionId)
	update := jsonValue(n.Update)
	payload := map[string]any{"session_id": sid, "update": update}
	ss.mu.Lock()
	defer ss.mu.Unlock()
	ss.pushForSessionLocked(sid, event{evSessionUpdate, payload})
}

// pushForSessionLocked queues e for Lua with the key of session sid; ss.mu
// held. Until session/new or session/load has returned (agents send
// available_commands_update first, and load replays the session's
// history and terminals), the session is not ours yet: e is held (up to
// 1000 a session) and openSession sends it after session_started.
func (ss *sessions) pushForSessionLocked(sid string, e event) {
	s, ok := ss.byID[sid]
	if !ok {
		if len(ss.early[sid]) < 1000 {
			ss.early[sid] = append(ss.early[sid], e)
		}
		return
	}
	e.payload["key"] = s.key
	ss.events.push(e.name, e.payload)
}

// ended implements acp.Editor.
func (ss *sessions) ended(_ context.Context, sid string, reason error) {
	ss.mu.Lock()
	s, ok := ss.byID[sid]
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

// agentTerminal implements acp.Editor: what an agent that runs commands
// itself shows of one goes to Lua as an "agent_terminal" event, its
// output made safe for Neovim's libvterm as the display pump does for ours
// (one filter per terminal, so a sequence split across updates is seen
// whole; a replacing snapshot starts a new screen, and a new filter).
func (ss *sessions) agentTerminal(_ context.Context, sid string, ev acp.AgentTerminal) {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	key := sid + "\x00" + ev.ID
	f := ss.agentShown[key]
	if f == nil || ev.Replace {
		f = &vtsafe.Filter{}
		ss.agentShown[key] = f
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
		if data, ok := p["data"].(string); ok {
			p["data"] = data + string(f.Flush(nil))
		}
		delete(ss.agentShown, key)
	}
	ss.pushForSessionLocked(sid, event{evAgentTerminal, p})
}
