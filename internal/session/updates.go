package session

import (
	"github.com/agentrun/agentrun.nvim/acp/agentterm"
	"github.com/agentrun/agentrun.nvim/internal/display"
	"github.com/agentrun/agentrun.nvim/internal/event"
	"github.com/agentrun/agentrun.nvim/internal/render"
	"github.com/agentrun/agentrun.nvim/internal/vtsafe"
	"github.com/agentrun/agentrun.nvim/termhost"
	acpsdk "github.com/coder/acp-go-sdk"
)

// What a session's agent sends goes to Lua by session key: its updates,
// its end, and what it shows of the terminals it runs itself. Each agent
// calls back through its own acp.Editor (agentEditor), bound to the key of
// the session it serves: the session id it names is the agent's and may
// be another agent's too, so it is passed on (session_id) but never looked
// up. Nothing here waits on Neovim (the event queue, internal/event).

// Update queues an update of session key's agent for Lua; never waits
// on it.
func (ss *Sessions) Update(key string, n acpsdk.SessionNotification) {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	ss.pushForSessionLocked(key, string(n.SessionId), &event.SessionUpdate{SessionID: string(n.SessionId), Update: event.JSONValue(n.Update)})
}

// pushForSessionLocked queues e, which session key's agent sent about its
// session sid, for Lua; ss.mu held. Until session/new or session/load has
// returned (agents send available_commands_update first, and load
// replays the session's history and terminals), the session is not open
// yet: e is held (up to 1000) and openSession sends it after
// session_started. What an agent with no session of ours sends (one
// started to list sessions) goes nowhere.
func (ss *Sessions) pushForSessionLocked(key, sid string, e event.SessionKeyed) {
	s, ok := ss.byKey[key]
	switch {
	case !ok:
		ss.log.Debug("an update for no session dropped", "key", key, "session", sid, "event", e.EventName())
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
	e.SetKey(s.key)
	ss.events.Push(e)
}

// Ended follows the end of session key's agent (acp.Editor's
// SessionEnded, from its own agent only).
func (ss *Sessions) Ended(key string, reason error) {
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

// agentEnd says why the display of a command an agent ran itself ended
// when the agent gave no exit code nor signal (nothing when it gave one),
// and the line its split ends with: "[not run: …]", else how it ended as
// our own splits say it (endLine), else why.
func agentEnd(p *event.AgentTerminal) (endedBy, line string) {
	switch {
	case p.NotRun != "":
		endedBy = p.NotRun
	case p.Failed:
		endedBy = "failed"
	case p.Unreported:
		endedBy = "ended; the agent did not say its exit code"
	}
	switch {
	case p.NotRun != "":
		return endedBy, "[" + p.NotRun + "]"
	case p.Signal != "":
		return endedBy, display.EndLine(termhost.ExitStatus{Signal: p.Signal})
	case p.ExitCode != nil:
		return endedBy, display.EndLine(termhost.ExitStatus{Code: p.ExitCode})
	case endedBy != "":
		return endedBy, "[" + endedBy + "]"
	}
	return endedBy, "[failed]"
}

// agentShown is what is shown of one command an agent runs itself: the
// filter its output goes through, and the tail of its text (for its
// last line, said when it ends out of sight).
type agentShown struct {
	filter vtsafe.Filter
	tail   *render.Store
}

// AgentTerminal (acp.Editor's AgentTerminal for session key): what an agent that runs commands
// itself shows of one goes to Lua as an "agent_terminal" event, its
// output made safe for Neovim's libvterm as the display pump does for ours
// (one filter per terminal, so a sequence split across updates is seen
// whole; a replacing snapshot starts a new screen, and a new filter).
func (ss *Sessions) AgentTerminal(key, sid string, ev agentterm.Event) {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	shown := key + "\x00" + ev.ID
	as := ss.agentShown[shown]
	if as == nil || ev.Replace {
		as = &agentShown{tail: render.NewStore(4 << 10)}
		ss.agentShown[shown] = as
	}
	f := &as.filter
	as.tail.Append(ev.Output)
	p := &event.AgentTerminal{
		SessionID: sid, ID: ev.ID, Started: ev.Started, ToolCall: ev.ToolCallID, Title: ev.Title, Cwd: ev.Cwd,
		KeepsReporting: ev.KeepsReporting,
	}
	if len(ev.Output) > 0 || ev.Replace {
		p.Data = new(string(f.Append(f.Guard(nil), ev.Output)))
		p.Replace = ev.Replace
	}
	if ev.Exited {
		p.Exited, p.Failed, p.ExitCode, p.Signal, p.Unreported = true, ev.Failed, ev.ExitCode, ev.Signal, ev.Unreported
		if ev.NotRun != "" {
			p.NotRun = notRunText(ev.NotRun)
		}
		p.EndedBy, p.EndLine = agentEnd(p)
		if p.Data != nil {
			*p.Data += string(f.Flush(nil))
		}
		as.tail.Flush()
		text, _ := as.tail.Snapshot()
		p.LastLine = event.LastLine(text)
		delete(ss.agentShown, shown)
	}
	ss.pushForSessionLocked(key, sid, p)
}
