package editor

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"github.com/agentrun/agentrun.nvim/internal/vtsafe"

	"github.com/agentrun/agentrun.nvim/acp"
	"github.com/agentrun/agentrun.nvim/termhost"
	acpsdk "github.com/coder/acp-go-sdk"
)

// startTimeout bounds an agent's start (spawn, initialize, session/new);
// agents started through npx may download first.
const startTimeout = 3 * time.Minute

// session is one ACP session with its own agent process, known to Lua by
// key until (and after) the agent gives it an id.
type session struct {
	key   string
	name  string
	agent *acp.Agent
	s     *acp.Session
	busy  bool
	ended bool
	// args started it; signing in opens the session again with them.
	args startArgs
	// reopening is set while a sign-in opens the session (auth.go).
	reopening bool
	// stopped is set when the user stopped the session (:AgentStop).
	stopped bool
}

// startArgs is what Lua sends to start a session.
type startArgs struct {
	Agent string   `msgpack:"agent"`
	Cmd   []string `msgpack:"cmd"`
	Env   []string `msgpack:"env"`
	Cwd   string   `msgpack:"cwd"`
	// Policy holds the user's terminal limits (policy.go).
	Policy policyArgs `msgpack:"policy"`
	// Terminals is where the agent's commands run: "agentrun" (ours,
	// offered as an MCP tool), "agent" (its own), or "" to decide by the
	// agent's identity (mcp.go: terminalsFor).
	Terminals string `msgpack:"terminals"`
	// Load or Resume name an earlier session to open instead of a new
	// one; Continue opens the cwd's most recent one (sessions.go).
	Load     string `msgpack:"load"`
	Resume   string `msgpack:"resume"`
	Continue bool   `msgpack:"continue"`
}

// handleStart starts an agent and a session in the background and returns
// the session's key at once; "session_started" or "session_failed" follows.
func (b *Bridge) handleStart(args startArgs) (string, error) {
	if len(args.Cmd) == 0 || args.Cmd[0] == "" {
		return "", fmt.Errorf("start: agent %q has an empty cmd", args.Agent)
	}
	if !filepath.IsAbs(args.Cwd) {
		return "", fmt.Errorf("start: cwd %q is not absolute", args.Cwd)
	}
	if err := args.Policy.check(); err != nil {
		return "", fmt.Errorf("start: %w", err)
	}
	key := b.nextID("")
	s := &session{key: key, name: args.Agent}
	b.mu.Lock()
	if b.closing {
		b.mu.Unlock()
		return "", fmt.Errorf("start: shutting down")
	}
	b.sessions[key] = s
	b.starting.Add(1) // under b.mu, before closing can be seen: shutdown waits for it
	b.mu.Unlock()
	host := b.termHost()
	go func() {
		defer b.starting.Done()
		ctx, cancel := context.WithTimeout(b.starts, startTimeout)
		defer cancel()
		cfg := acp.AgentConfig{Name: args.Agent, Command: args.Cmd, Env: args.Env, Dir: args.Cwd}
		opts := b.agentOptions(host)
		b.applyPolicy(&opts, key, args.Policy)
		a, err := acp.Start(ctx, cfg, b, opts)
		if err != nil {
			b.sessionFailed(s, err)
			return
		}
		b.mu.Lock()
		s.agent, s.args = a, args
		b.mu.Unlock()
		go b.watchAgent(s, a)
		b.openSession(ctx, s)
	}()
	return key, nil
}

// agentOptions are the options every agent we start gets: our terminal
// host and its byte limit, log and name, and the guard, which kills the
// agent too if we die without stopping it.
func (b *Bridge) agentOptions(host *termhost.Host) acp.Options {
	opts := acp.Options{
		Host:          host,
		ByteLimit:     b.byteLimit(),
		Logger:        b.log,
		ClientName:    "agentrun.nvim",
		ClientVersion: b.version,
		TerminalSize:  b.terminalSize,
	}
	if g := b.guard; g != nil {
		opts.ProcessStarted = func(pid int, marker string) {
			if err := g.Register(pid, marker); err != nil {
				b.log.Warn("agent not registered with the guard", "pid", pid, "err", err)
			}
		}
		opts.ProcessEnded = g.Unregister
	}
	return opts
}

// openSession opens s's ACP session on its started agent: new, loaded or
// resumed as s.args say (sessions.go), and tells Lua it started. When the
// agent wants the user to sign in first, the agent keeps running and Lua
// is asked how (auth.go); signing in opens the session again.
func (b *Bridge) openSession(ctx context.Context, s *session) {
	a, args := s.agent, s.args
	opts, note, err := b.sessionOptions(ctx, a, args)
	if err != nil {
		b.failStart(ctx, s, err)
		return
	}
	terminals := terminalsFor(args.Terminals, a.Info())
	offer, token := b.mcpOffer(terminals, a.Info())
	opts.McpServers, opts.Meta = offer.McpServers, offer.Meta
	if reopened := opts.Load + opts.Resume; reopened != "" {
		// An ended chat of this session id must not get the replayed
		// history: updates wait for the new one (b.early).
		b.mu.Lock()
		delete(b.byID, reopened)
		b.mu.Unlock()
	}
	as, err := a.NewSessionWith(ctx, args.Cwd, opts)
	if acp.IsAuthRequired(err) {
		b.askSignIn(s, nil) // the agent's answer says no more than that
		return
	}
	if err != nil {
		b.failStart(ctx, s, err)
		return
	}
	b.mu.Lock()
	s.s = as
	b.byID[as.ID()] = s
	if token != "" {
		b.mcpTokens[token] = s
	}
	early := b.early[as.ID()]
	delete(b.early, as.ID())
	closing := b.closing
	// Under b.mu so no update for this session can slip in between.
	started := map[string]any{"key": s.key, "session_id": as.ID(), "agent": args.Agent, "cwd": args.Cwd, "terminals": terminals}
	for k, v := range modesPayload(s) {
		started[k] = v
	}
	if note != "" {
		started["note"] = note
	}
	// Held updates (a loaded session's history) follow, then word that
	// they have all come: prompts queued meanwhile go after the history.
	started["replaying"] = len(early) > 0
	b.events.push(evSessionStarted, started)
	for _, e := range early {
		e.payload["key"] = s.key
		b.events.push(e.name, e.payload)
	}
	if len(early) > 0 {
		b.events.push(evHistoryReplayed, map[string]any{"key": s.key})
	}
	b.mu.Unlock()
	b.log.Info("session started", "key", s.key, "session", as.ID(), "agent", args.Agent, "agent_name", agentName(a.Info()), "terminals", terminals, "load", opts.Load, "resume", opts.Resume)
	if closing {
		_ = a.Terminate()
	}
}

// failStart stops s's agent and tells Lua the session could not start
// (that, not that the agent ended: s is marked ended first).
func (b *Bridge) failStart(ctx context.Context, s *session, err error) {
	b.mu.Lock()
	s.ended = true
	b.mu.Unlock()
	if ctx.Err() != nil {
		_ = s.agent.Terminate()
	} else {
		_ = s.agent.Close()
	}
	b.sessionFailed(s, err)
}

func (b *Bridge) sessionFailed(s *session, err error) {
	b.log.Warn("session failed to start", "key", s.key, "agent", s.name, "err", err)
	b.mu.Lock()
	s.ended = true
	b.mu.Unlock()
	b.events.push(evSessionFailed, map[string]any{"key": s.key, "error": err.Error()})
}

// watchAgent reports the end of a session whose agent exited without the
// session being ended first.
func (b *Bridge) watchAgent(s *session, a *acp.Agent) {
	select {
	case <-a.Done():
	case <-b.ctx.Done():
		return
	}
	b.endSession(s, a.Err())
}

// endSession marks s ended and tells Lua once.
func (b *Bridge) endSession(s *session, reason error) {
	b.mu.Lock()
	if s.ended {
		b.mu.Unlock()
		return
	}
	s.ended, s.busy = true, false
	if s.s != nil {
		// What its agent showed of terminals that never ended goes too.
		prefix := s.s.ID() + "\x00"
		for k := range b.agentShown {
			if strings.HasPrefix(k, prefix) {
				delete(b.agentShown, k)
			}
		}
	}
	b.mu.Unlock()
	b.log.Info("session ended", "key", s.key, "reason", reason)
	b.events.push(evSessionEnded, map[string]any{"key": s.key, "reason": errText(reason)})
}

// live returns session key while its ACP session is open.
func (b *Bridge) live(key string) (*session, error) { return b.sessionIn(key, true) }

// sessionIn returns session key, not ended, once its agent runs and, when
// open is set, its ACP session is open too (it may wait for sign-in).
func (b *Bridge) sessionIn(key string, open bool) (*session, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	s, ok := b.sessions[key]
	switch {
	case !ok:
		return nil, fmt.Errorf("unknown session %q", key)
	case s.ended:
		return nil, fmt.Errorf("session %q has ended; :AgentRun starts a new one", key)
	case s.agent == nil:
		return nil, fmt.Errorf("session %q is still starting its agent", key)
	case open && s.s == nil:
		return nil, fmt.Errorf("session %q is still starting (or waiting for you to sign in)", key)
	}
	return s, nil
}

// handlePrompt starts a prompt turn and returns at once; "turn_end"
// follows with the stop reason or the error.
func (b *Bridge) handlePrompt(key, text string, items []contextItem) error {
	s, err := b.live(key)
	if err != nil {
		return fmt.Errorf("prompt: %w", err)
	}
	pc := s.agent.Info().AgentCapabilities.PromptCapabilities
	blocks, err := promptBlocks(text, items, promptCaps{embedded: pc.EmbeddedContext, image: pc.Image})
	if err != nil {
		return fmt.Errorf("prompt: %w", err)
	}
	b.mu.Lock()
	if s.busy {
		b.mu.Unlock()
		return fmt.Errorf("prompt: session %q is still answering the previous prompt; wait, or :AgentCancel", key)
	}
	s.busy = true
	b.mu.Unlock()
	go func() {
		stop, err := s.s.PromptBlocks(b.ctx, blocks)
		b.mu.Lock()
		s.busy = false
		b.mu.Unlock()
		if err != nil {
			b.log.Warn("prompt failed", "key", key, "err", err)
		}
		b.events.push(evTurnEnd, map[string]any{"key": key, "stop_reason": stop, "error": errText(err)})
		if acp.IsAuthRequired(err) {
			// Claude Code asks for sign-in at the first prompt, not at
			// session/new: offer the ways now, then the prompt again.
			b.askSignIn(s, nil)
		}
	}()
	return nil
}

// handleCancel sends session/cancel (pending permission requests answer
// "cancelled"); the running prompt then ends with its stop reason.
func (b *Bridge) handleCancel(key string) error {
	s, err := b.live(key)
	if err != nil {
		return fmt.Errorf("cancel: %w", err)
	}
	go func() {
		ctx, cancel := context.WithTimeout(b.ctx, 10*time.Second)
		defer cancel()
		if err := s.s.Cancel(ctx); err != nil {
			b.log.Warn("cancel failed", "key", key, "err", err)
		}
	}()
	return nil
}

// handleStop stops a session's agent in the background (its terminals are
// killed and released); "session_ended" follows.
func (b *Bridge) handleStop(key string) error {
	b.mu.Lock()
	s, ok := b.sessions[key]
	b.mu.Unlock()
	if !ok {
		return fmt.Errorf("stop: unknown session %q", key)
	}
	if s.agent == nil {
		return fmt.Errorf("stop: session %q is still starting", key)
	}
	b.mu.Lock()
	s.stopped = true
	b.mu.Unlock()
	go func() {
		_ = s.agent.Close()
		b.endSession(s, nil)
	}()
	return nil
}

// keyOf returns the key of the session with ACP id sid ("" if unknown).
func (b *Bridge) keyOf(sid string) string {
	b.mu.Lock()
	defer b.mu.Unlock()
	if s, ok := b.byID[sid]; ok {
		return s.key
	}
	return ""
}

// SessionUpdate implements acp.Editor: queued for Lua, never waits on it.
func (b *Bridge) SessionUpdate(_ context.Context, n acpsdk.SessionNotification) {
	sid := string(n.SessionId)
	update := jsonValue(n.Update)
	payload := map[string]any{"session_id": sid, "update": update}
	b.mu.Lock()
	defer b.mu.Unlock()
	b.pushForSessionLocked(sid, event{evSessionUpdate, payload})
}

// pushForSessionLocked queues e for Lua with the key of session sid; b.mu
// held. Until session/new or session/load has returned (agents send
// available_commands_update first, and load replays the session's
// history and terminals), the session is not ours yet: e is held (up to
// 1000 a session) and openSession sends it after session_started.
func (b *Bridge) pushForSessionLocked(sid string, e event) {
	s, ok := b.byID[sid]
	if !ok {
		if len(b.early[sid]) < 1000 {
			b.early[sid] = append(b.early[sid], e)
		}
		return
	}
	e.payload["key"] = s.key
	b.events.push(e.name, e.payload)
}

// SessionEnded implements acp.Editor.
func (b *Bridge) SessionEnded(_ context.Context, sid string, reason error) {
	b.mu.Lock()
	s, ok := b.byID[sid]
	b.mu.Unlock()
	if ok {
		b.endSession(s, reason)
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

// AgentTerminal implements acp.Editor: what an agent that runs commands
// itself shows of one goes to Lua as an "agent_terminal" event, its
// output made safe for Neovim's libvterm as the display pump does for ours
// (one filter per terminal, so a sequence split across updates is seen
// whole; a replacing snapshot starts a new screen, and a new filter).
func (b *Bridge) AgentTerminal(_ context.Context, sid string, ev acp.AgentTerminal) {
	b.mu.Lock()
	defer b.mu.Unlock()
	key := sid + "\x00" + ev.ID
	f := b.agentShown[key]
	if f == nil || ev.Replace {
		f = &vtsafe.Filter{}
		b.agentShown[key] = f
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
		delete(b.agentShown, key)
	}
	b.pushForSessionLocked(sid, event{evAgentTerminal, p})
}
