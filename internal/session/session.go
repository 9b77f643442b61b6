package session

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/agentrun/agentrun.nvim/acp"
	"github.com/agentrun/agentrun.nvim/internal/event"
	"github.com/agentrun/agentrun.nvim/internal/mcptool"
	"github.com/agentrun/agentrun.nvim/termhost"
)

// Why this file is long: a session's whole life in order — its start
// (the agent, session/new or load, how our terminal tool reaches it:
// stdio or HTTP), its opening to Lua and its end — under the sessions
// part's one lock; its turns are prompt.go's, its updates updates.go's.

// startTimeout bounds an agent's start (spawn, initialize, session/new);
// agents started through npx may download first.
const startTimeout = 3 * time.Minute

// startQuietAfter is how long an agent may leave initialize unanswered
// before its chat says so, once, with how to stop it (event.NameSessionQuiet).
const startQuietAfter = 10 * time.Second

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
	args StartArgs
	// reopening is set while a sign-in opens the session (auth.go).
	reopening bool
	// stopped is set when the user stopped the session (:AgentStop).
	stopped bool
	// cancelStart gives up the start (spawn, initialize, session/new):
	// :AgentStop of a session still starting (its agent is killed).
	cancelStart context.CancelFunc
	// tool is what status() says of our MCP terminal tool (our_tool:
	// mcp.go's tool* words), toolHow how it was offered; mcpHTTP serves
	// it over HTTP until the session ends.
	tool, toolHow string
	mcpHTTP       *mcptool.HTTPServer
	// shell is what became of the agent's own shell (geminishell.go):
	// its policy folder goes when the session ends.
	shell ownShell
	// early holds what the agent sent before its session/new or
	// session/load returned (agents send available_commands_update first,
	// and load replays the session's history): openSession sends it after
	// session_started.
	early []event.SessionKeyed
}

// StartArgs is what Lua sends to start a session.
type StartArgs struct {
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
	// one; Continue opens the cwd's most recent one (sessionlist.go).
	Load     string `msgpack:"load"`
	Resume   string `msgpack:"resume"`
	Continue bool   `msgpack:"continue"`
}

// Start starts an agent and a session in the background and returns
// the session's key at once; "session_started" or "session_failed" follows.
func (ss *Sessions) Start(args StartArgs) (string, error) {
	if len(args.Cmd) == 0 || args.Cmd[0] == "" {
		return "", fmt.Errorf("start: agent %q has an empty cmd", args.Agent)
	}
	if args.Cwd == "" {
		args.Cwd = backendDir()
	}
	if !filepath.IsAbs(args.Cwd) {
		return "", fmt.Errorf("start: cwd %q is not absolute", args.Cwd)
	}
	// A missing directory would fail the agent's start as if its command
	// were missing (the child's chdir fails with ENOENT): say which.
	if fi, err := os.Stat(args.Cwd); err != nil || !fi.IsDir() {
		where := ""
		if site := ss.ids.Suffix(); site != "" {
			where = " on " + strings.TrimPrefix(site, "@") // the machine as the user named it
		}
		switch {
		case err == nil:
			return "", fmt.Errorf("%s%s is a file, not a directory: give a directory (or none, for the home directory)", args.Cwd, where)
		case errors.Is(err, fs.ErrNotExist):
			return "", fmt.Errorf("the directory %s does not exist%s: give one that does (or none, for the home directory)", args.Cwd, where)
		}
		return "", fmt.Errorf("the directory %s cannot be used%s (%w): give one you may enter (or none, for the home directory)", args.Cwd, where, err)
	}
	if err := args.Policy.check(); err != nil {
		return "", fmt.Errorf("start: %w", err)
	}
	key := ss.ids.Next("")
	ctx, cancel := context.WithTimeout(ss.starts, startTimeout)
	s := &session{key: key, name: args.Agent, args: args, cancelStart: cancel}
	ss.mu.Lock()
	if ss.closing {
		ss.mu.Unlock()
		cancel()
		return "", fmt.Errorf("start: shutting down")
	}
	ss.byKey[key] = s
	ss.starting.Add(1) // under ss.mu, before closing can be seen: shutdown waits for it
	ss.mu.Unlock()
	host := ss.deps.Host()
	go func() {
		defer ss.starting.Done()
		defer cancel()
		shell := geminiShell(args.Agent, args.Terminals, args.Cmd, args.Env, args.Cwd)
		ss.mu.Lock()
		s.shell = shell
		ss.mu.Unlock()
		cmd := append(append([]string(nil), args.Cmd...), shell.args...)
		cfg := acp.AgentConfig{Name: args.Agent, Command: cmd, Env: args.Env, Dir: args.Cwd}
		opts := ss.agentOptions(host)
		ss.applyPolicy(&opts, key, args.Policy)
		quiet := time.AfterFunc(startQuietAfter, func() { ss.startQuiet(s) })
		a, err := acp.Start(ctx, cfg, ss.deps.EditorFor(key), opts)
		quiet.Stop()
		ss.mu.Lock()
		stopped := s.stopped
		if err == nil && !stopped {
			s.agent = a
		}
		ss.mu.Unlock()
		switch {
		case stopped:
			// :AgentStop while it started: Start killed it (its ctx
			// ended), or it answered just then and goes now.
			if err == nil {
				_ = a.Terminate()
			}
			ss.endSession(s, nil)
			return
		case err != nil:
			ss.sessionFailed(s, err)
			return
		}
		go ss.watchAgent(s, a)
		ss.openSession(ctx, s)
	}()
	return key, nil
}

// startQuiet tells Lua, once, that session s's agent has not answered
// initialize yet (a hung or wrong command: the user may stop it).
func (ss *Sessions) startQuiet(s *session) {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	if s.agent != nil || s.ended || s.stopped {
		return
	}
	ss.log.Warn("agent has not answered initialize", "key", s.key, "agent", s.name, "after", startQuietAfter)
	ss.events.Push(event.SessionQuiet{Key: s.key, Agent: s.name, Seconds: int(startQuietAfter / time.Second)})
}

// agentOptions are the options every agent we start gets: our terminal
// host, log and name, and the guard, which kills the agent too if we die
// without stopping it.
func (ss *Sessions) agentOptions(host *termhost.Host) acp.Options {
	opts := acp.Options{
		Host:          host,
		ByteLimit:     ss.deps.ByteLimit(),
		Logger:        ss.log,
		ClientName:    "agentrun.nvim",
		ClientVersion: ss.version,
		TerminalSize:  ss.deps.TerminalSize,
	}
	if g := ss.deps.Guard; g != nil {
		opts.ProcessStarted = func(pid int, marker string) {
			if err := g.Register(pid, marker); err != nil {
				ss.log.Warn("agent not registered with the guard", "pid", pid, "err", err)
			}
		}
		opts.ProcessEnded = g.Unregister
	}
	return opts
}

// openSession opens s's ACP session on its started agent: new, loaded or
// resumed as s.args say (sessionlist.go), and tells Lua it started. When the
// agent wants the user to sign in first, the agent keeps running and Lua
// is asked how (auth.go); signing in opens the session again.
func (ss *Sessions) openSession(ctx context.Context, s *session) {
	a, args := s.agent, s.args
	opts, note, err := ss.sessionOptions(ctx, a, args)
	if err != nil {
		ss.failStart(ctx, s, err)
		return
	}
	terminals := terminalsFor(args.Terminals, a.Info())
	offer := ss.mcpOffer(terminals, a.Info())
	ss.mu.Lock()
	if agentName(a.Info()) == geminiAgentName && s.shell.state == "" {
		s.shell = notKnownGemini(args.Agent)
	}
	shell := s.shell
	ss.mu.Unlock()
	if shell.why != "" {
		a.OwnShellKept(shell.why)
	}
	token := offer.token
	opts.McpServers, opts.Meta = offer.opts.McpServers, offer.opts.Meta
	if token != "" {
		// known before session/new: an agent may list the tools while it
		// opens the session (mcpSeen)
		ss.mu.Lock()
		ended := s.ended
		if !ended {
			ss.mcpTokens[token] = s
			s.tool, s.toolHow, s.mcpHTTP = offer.tool, offer.tool, offer.http
		}
		ss.mu.Unlock()
		if ended {
			// it ended as it started (:AgentStop): nothing is offered
			if offer.http != nil {
				_ = offer.http.Close()
			}
			return
		}
	}
	as, err := a.NewSessionWith(ctx, args.Cwd, opts)
	if err == nil && ss.shellLeftOutAlone(s) {
		// Gemini's own answer, where ours was wrong: it left its shell out
		// but never listed our tool, so it would have no way to run a
		// command. A session opened again reads the policies again, with
		// ours gone: its shell is back.
		ss.log.Warn("Gemini CLI left its shell out but did not list our tool: its session is opened again with its shell", "key", s.key)
		a.OwnShellKept(s.shell.why)
		as.Abandon(ctx)
		as, err = a.NewSessionWith(ctx, args.Cwd, opts)
	}
	if err != nil && token != "" {
		// a sign-in opens the session again, with a new offer
		ss.mu.Lock()
		delete(ss.mcpTokens, token)
		if s.mcpHTTP == offer.http {
			s.tool, s.toolHow, s.mcpHTTP = "", "", nil
		}
		ss.mu.Unlock()
		if offer.http != nil {
			_ = offer.http.Close()
		}
	}
	if acp.IsAuthRequired(err) {
		ss.mu.Lock()
		stopped := s.stopped
		ss.mu.Unlock()
		if !stopped {
			ss.askSignIn(s, nil) // the agent's answer says no more than that
		}
		return
	}
	if err != nil {
		ss.failStart(ctx, s, err)
		return
	}
	ss.mu.Lock()
	if s.stopped {
		// :AgentStop came as it opened: stop closes the agent and says so
		// (and endSession stops our tool)
		ss.mu.Unlock()
		return
	}
	s.s = as
	early := s.early
	s.early = nil
	closing := ss.closing
	// Under ss.mu so no update for this session can slip in between.
	started := event.SessionStarted{
		Key: s.key, SessionID: as.ID(), Agent: args.Agent, Cwd: args.Cwd, Terminals: terminals, OurTool: s.tool, OwnShell: s.shell.state,
		Modes: event.JSONValue(as.Modes()), ConfigOptions: event.JSONValue(as.ConfigOptions()), Note: note,
	}
	// Held updates (a loaded session's history) follow, then word that
	// they have all come: prompts queued meanwhile go after the history.
	started.Replaying = len(early) > 0
	ss.events.Push(started)
	for _, p := range early {
		p.SetKey(s.key)
		ss.events.Push(p)
	}
	if len(early) > 0 {
		ss.events.Push(event.HistoryReplayed{Key: s.key})
	}
	ss.mu.Unlock()
	ss.log.Info("session started", "key", s.key, "session", as.ID(), "agent", args.Agent, "agent_name", agentName(a.Info()), "terminals", terminals, "load", opts.Load, "resume", opts.Resume)
	if closing {
		_ = a.Terminate()
	}
}

// failStart stops s's agent and tells Lua the session could not start
// (that, not that the agent ended: s is marked ended first).
func (ss *Sessions) failStart(ctx context.Context, s *session, err error) {
	ss.mu.Lock()
	stopped := s.stopped
	if !stopped {
		s.ended = true // else stop's endSession marks it, and says so
	}
	ss.mu.Unlock()
	if ctx.Err() != nil {
		_ = s.agent.Terminate()
	} else {
		_ = s.agent.Close()
	}
	if stopped {
		return // :AgentStop ended it (stop), and says so
	}
	ss.sessionFailed(s, err)
}

func (ss *Sessions) sessionFailed(s *session, err error) {
	ss.log.Warn("session failed to start", "key", s.key, "agent", s.name, "err", err)
	ss.mu.Lock()
	s.ended = true
	shellDir := s.shell.dir
	s.shell.dir = ""
	ss.mu.Unlock()
	if shellDir != "" {
		_ = os.RemoveAll(shellDir)
	}
	p := event.SessionFailed{Key: s.key, Error: err.Error()}
	if why := cannotRun(err); why != "" {
		// Lua says it in the sentence :checkhealth uses (config.cmd_problem).
		p.Command, p.CannotRun = s.args.Cmd[0], why
	}
	ss.events.Push(p)
}

// cannotRun tells an agent command that could not be started at all
// from other failures: "not found" (not in $PATH, or no such file) or
// "not executable" (a file it may not run); "" for any other error.
func cannotRun(err error) string {
	if errors.Is(err, exec.ErrNotFound) {
		return "not found"
	}
	var pe *fs.PathError
	if !errors.As(err, &pe) || pe.Op != "fork/exec" {
		return ""
	}
	switch {
	case errors.Is(pe.Err, fs.ErrNotExist):
		return "not found"
	case errors.Is(pe.Err, fs.ErrPermission):
		return "not executable"
	}
	return ""
}

// watchAgent reports the end of a session whose agent exited without the
// session being ended first.
func (ss *Sessions) watchAgent(s *session, a *acp.Agent) {
	select {
	case <-a.Done():
	case <-ss.ctx.Done():
		return
	}
	ss.endSession(s, a.Err())
}

// endSession marks s ended and tells Lua once.
func (ss *Sessions) endSession(s *session, reason error) {
	ss.mu.Lock()
	if s.ended {
		ss.mu.Unlock()
		return
	}
	s.ended, s.busy = true, false
	stopped := s.stopped
	// Our tool over HTTP stops with the session (its agent may live on
	// a moment; nothing answers it any more).
	httpTool := s.mcpHTTP
	s.mcpHTTP = nil
	shellDir := s.shell.dir
	s.shell.dir = ""
	// What its agent showed of terminals that never ended goes too.
	prefix := s.key + "\x00"
	for k := range ss.agentShown {
		if strings.HasPrefix(k, prefix) {
			delete(ss.agentShown, k)
		}
	}
	ss.mu.Unlock()
	if httpTool != nil {
		if err := httpTool.Close(); err != nil {
			ss.log.Warn("the MCP terminal tool over HTTP did not stop cleanly", "err", err)
		}
	}
	if shellDir != "" {
		_ = os.RemoveAll(shellDir)
	}
	ss.log.Info("session ended", "key", s.key, "reason", reason)
	ss.events.Push(event.SessionEnded{Key: s.key, Reason: event.ErrText(reason), Stopped: stopped})
}

// live returns session key while its ACP session is open.
func (ss *Sessions) live(key string) (*session, error) { return ss.sessionIn(key, true) }

// sessionIn returns session key, not ended, once its agent runs and, when
// open is set, its ACP session is open too (it may wait for sign-in).
func (ss *Sessions) sessionIn(key string, open bool) (*session, error) {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	s, ok := ss.byKey[key]
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

// Stop stops a session's agent in the background (its terminals are
// killed and released); "session_ended" follows. A session still starting
// gives its start up: the agent is killed and the start ends the session.
func (ss *Sessions) Stop(key string) error {
	ss.mu.Lock()
	s, ok := ss.byKey[key]
	if !ok {
		ss.mu.Unlock()
		return fmt.Errorf("stop: unknown session %q", key)
	}
	s.stopped = true
	a := s.agent
	ss.mu.Unlock()
	s.cancelStart() // a start under way ends (and kills its agent)
	if a == nil {
		return nil // the start ends the session (start)
	}
	go func() {
		_ = a.Close()
		ss.endSession(s, nil)
	}()
	return nil
}

// backendDir is the directory of a session started without a cwd (a
// backend on another machine, ssh://host with no directory): the home
// directory there, else the backend's own.
func backendDir() string {
	if d, err := os.UserHomeDir(); err == nil {
		return d
	}
	d, _ := os.Getwd()
	return d
}
