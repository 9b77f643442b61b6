package editor

import (
	"context"
	"log/slog"
	"sync"

	"github.com/agentrun/agentrun.nvim/acp"
	"github.com/agentrun/agentrun.nvim/ahp"
	"github.com/agentrun/agentrun.nvim/internal/event"
	"github.com/agentrun/agentrun.nvim/internal/guard"
	"github.com/agentrun/agentrun.nvim/internal/question"
	"github.com/agentrun/agentrun.nvim/termhost"
)

// sessions are the ACP sessions of this editor, each with its own agent
// process: starting, opening (new, loaded, resumed; signing in first),
// prompting, stopping them, and routing what their agents send to Lua by
// session key. They own their state and lock, and reach the rest of the
// backend only through what newSessions is given (sessionDeps).
//
// Its size (about 40 methods) is one per RPC it answers and per callback
// of its agents, in files by concern. The files: session.go starts and
// ends one, prompt.go runs its turns,
// updates.go routes what its agent sends, sessionlist.go lists earlier ones,
// auth.go signs in, modes.go sets modes and options, policy.go turns the
// user's limits into the agent's options, mcp.go serves our MCP
// terminal tool.
type sessions struct {
	ctx     context.Context // ends at shutdown
	log     *slog.Logger
	events  *event.Queue
	ids     *question.IDs
	version string
	sessionDeps

	// starts ends first at shutdown: agents still starting are stopped,
	// and shutdown waits for them (starting counts them).
	starts       context.Context
	cancelStarts context.CancelFunc
	starting     sync.WaitGroup

	mu sync.Mutex
	// byKey holds every session by its key, the one name a session has
	// here and in Lua. An ACP session id is the agent's, not ours: agents
	// repeat them (the demo agent always, a real one resuming a session
	// open elsewhere), so nothing is looked up by it; each agent calls
	// back through its own acp.Editor, bound to its session's key.
	byKey map[string]*session
	// agentShown filters what agents that run commands themselves show of
	// them (_meta.terminal_output), one filter per session key and
	// terminal id (the agent's ids, like its session ids, are its own).
	agentShown map[string]*agentShown
	// mcpTokens finds the session an MCP terminal tool serves (mcp.go).
	mcpTokens map[string]*session
	closing   bool
}

// sessionDeps are what sessions need of the rest of the backend.
type sessionDeps struct {
	// editorFor is what the agent of session key calls back (acp.Editor,
	// bound to key: the bridge's agentEditor, which routes each call to
	// the part it belongs to). Each agent gets its own.
	editorFor func(key string) acp.Editor
	// host returns the terminal host (made on first use).
	host func() *termhost.Host
	// byteLimit is terminal.byte_limit as the host applies it, the most
	// any agent gets (the bridge's, from setup).
	byteLimit func() int
	// user is this editor's claim: sign-in terminals are the user's.
	user ahp.Claim
	// guard kills the agents if the backend dies without stopping them;
	// nil without one.
	guard *guard.Client
	// terminalSize and userTerminal are the terminals part's: a new
	// split's size, and starting and showing a terminal the user holds
	// (env: KEY=VALUE pairs over the backend's environment).
	terminalSize func() (cols, rows uint16)
	userTerminal func(spec termhost.Spec, env []string) (*termhost.Terminal, error)
	// socketPath is the socket our MCP tool reaches us on ("" when none).
	socketPath func() string
	// ask asks the user a question and waits for the answer (questions).
	ask func(ctx context.Context, prefix string, q event.Question, asking func(token string) event.Payload) (token string, a question.Answer, err error)
	// execLua runs Lua in Neovim (terminal.sandbox as a function),
	// giving up when ctx ends.
	execLua func(ctx context.Context, code string, result any, args ...any) error
}

func newSessions(ctx context.Context, log *slog.Logger, events *event.Queue, ids *question.IDs, version string, deps sessionDeps) *sessions {
	starts, cancelStarts := context.WithCancel(ctx)
	return &sessions{
		ctx: ctx, log: log, events: events, ids: ids, version: version, sessionDeps: deps,
		starts: starts, cancelStarts: cancelStarts,
		byKey:      map[string]*session{},
		agentShown: map[string]*agentShown{}, mcpTokens: map[string]*session{},
	}
}

// isClosing reports that the sessions are shutting down.
func (ss *sessions) isClosing() bool {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	return ss.closing
}

// shutdown stops every agent and returns when they are gone: agents still
// starting are stopped by their start (and waited for), the others get
// SIGTERM at once, not after waiting for an exit on EOF that some never
// make (the backend is going away). Only the first call does so; it
// returns how many agents it stopped, and first.
func (ss *sessions) shutdown() (agents int, first bool) {
	ss.mu.Lock()
	if ss.closing {
		ss.mu.Unlock()
		return 0, false
	}
	ss.closing = true
	var running []*acp.Agent
	for _, s := range ss.byKey {
		if s.agent != nil {
			running = append(running, s.agent)
		}
	}
	ss.mu.Unlock()
	ss.cancelStarts()
	ss.starting.Wait() // an agent still starting is stopped by its Start

	var wg sync.WaitGroup
	for _, a := range running {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_ = a.Terminate()
		}()
	}
	wg.Wait()
	return len(running), true
}

// status is every session's entry in status().
func (ss *sessions) status() []any {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	list := make([]any, 0, len(ss.byKey))
	for _, s := range ss.byKey {
		id := ""
		if s.s != nil {
			id = s.s.ID()
		}
		list = append(list, map[string]any{
			"key": s.key, "id": id, "agent": s.name, "busy": s.busy && !s.ended, "ended": s.ended,
			"our_tool": s.tool,
		})
	}
	return list
}
