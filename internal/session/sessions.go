package session

import (
	"context"
	"encoding/json"
	"log/slog"
	"sort"
	"strconv"
	"strings"
	"sync"

	"github.com/agentrun/agentrun.nvim/acp"
	"github.com/agentrun/agentrun.nvim/ahp"
	"github.com/agentrun/agentrun.nvim/internal/event"
	"github.com/agentrun/agentrun.nvim/internal/guard"
	"github.com/agentrun/agentrun.nvim/internal/mcptool"
	"github.com/agentrun/agentrun.nvim/internal/question"
	"github.com/agentrun/agentrun.nvim/termhost"
)

// Sessions are the ACP sessions of this editor, each with its own agent
// process: starting, opening (new, loaded, resumed; signing in first),
// prompting, stopping them, and routing what their agents send to Lua by
// session key. They own their state and lock, and reach the rest of the
// backend only through what New is given (Deps).
//
// Its size (about 40 methods) is one per RPC it answers and per callback
// of its agents, in files by concern. The files: session.go starts and
// ends one, prompt.go runs its turns,
// updates.go routes what its agent sends, sessionlist.go lists earlier ones,
// auth.go signs in, modes.go sets modes and options, policy.go turns the
// user's limits into the agent's options, mcp.go serves our MCP
// terminal tool.
type Sessions struct {
	ctx     context.Context // ends at shutdown
	log     *slog.Logger
	events  *event.Queue
	ids     *question.IDs
	version string
	deps    Deps

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

// Deps are what sessions need of the rest of the backend.
type Deps struct {
	// EditorFor is what the agent of session key calls back (acp.Editor,
	// bound to key: the bridge's agentEditor, which routes each call to
	// the part it belongs to). Each agent gets its own.
	EditorFor func(key string) acp.Editor
	// Host returns the terminal host (made on first use).
	Host func() *termhost.Host
	// ByteLimit is terminal.byte_limit as the host applies it, the most
	// any agent gets (the bridge's, from setup).
	ByteLimit func() int
	// User is this editor's claim: sign-in terminals are the user's.
	User ahp.Claim
	// Guard kills the agents if the backend dies without stopping them;
	// nil without one.
	Guard *guard.Client
	// TerminalSize and UserTerminal are the terminals part's: a new
	// split's size, and starting and showing a terminal the user holds
	// (env: KEY=VALUE pairs over the backend's environment).
	TerminalSize func() (cols, rows uint16)
	UserTerminal func(spec termhost.Spec, env []string) (*termhost.Terminal, error)
	// SocketPath is the socket our MCP tool reaches us on ("" when none).
	SocketPath func() string
	// Ask asks the user a question and waits for the answer (questions).
	Ask func(ctx context.Context, prefix string, q event.Question, asking func(token string) event.Payload) (token string, a question.Answer, err error)
	// ExecLua runs Lua in Neovim (terminal.sandbox as a function),
	// giving up when ctx ends.
	ExecLua func(ctx context.Context, code string, result any, args ...any) error
}

// New returns the sessions part: it pushes what Lua must learn into
// events, and takes its keys from ids.
func New(ctx context.Context, log *slog.Logger, events *event.Queue, ids *question.IDs, version string, deps Deps) *Sessions {
	starts, cancelStarts := context.WithCancel(ctx)
	return &Sessions{
		ctx: ctx, log: log, events: events, ids: ids, version: version, deps: deps,
		starts: starts, cancelStarts: cancelStarts,
		byKey:      map[string]*session{},
		agentShown: map[string]*agentShown{}, mcpTokens: map[string]*session{},
	}
}

// IsClosing reports that the sessions are shutting down.
func (ss *Sessions) IsClosing() bool {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	return ss.closing
}

// Shutdown stops every agent and returns when they are gone: agents still
// starting are stopped by their start (and waited for), the others get
// SIGTERM at once, not after waiting for an exit on EOF that some never
// make (the backend is going away). Only the first call does so; it
// returns how many agents it stopped, and first.
func (ss *Sessions) Shutdown() (agents int, first bool) {
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

// Status is every session's entry in status().
func (ss *Sessions) Status() []any {
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

// Running counts the sessions not ended.
func (ss *Sessions) Running() int {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	n := 0
	for _, s := range ss.byKey {
		if !s.ended {
			n++
		}
	}
	return n
}

// RunningList describes the sessions not ended, oldest first.
func (ss *Sessions) RunningList() []map[string]any {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	var keys []string
	for k, s := range ss.byKey {
		if !s.ended {
			keys = append(keys, k)
		}
	}
	sort.Slice(keys, func(i, j int) bool { return keyNumber(keys[i]) < keyNumber(keys[j]) })
	out := make([]map[string]any, 0, len(keys))
	for _, k := range keys {
		s := ss.byKey[k]
		out = append(out, map[string]any{"key": s.key, "agent": s.name, "busy": s.busy, "cwd": s.args.Cwd})
	}
	return out
}

// keyNumber is the counter in a session key ("12@devbox": 12).
func keyNumber(key string) int {
	n, _ := strconv.Atoi(strings.SplitN(key, "@", 2)[0])
	return n
}

// MCPMethods are the calls our MCP tool (mcptool, run by an agent) makes
// on the socket host, by method (mcp.go).
func (ss *Sessions) MCPMethods() map[string]func(context.Context, json.RawMessage) (any, error) {
	return map[string]func(context.Context, json.RawMessage) (any, error){
		"agentrun/terminal":  ss.mcpTerminal,
		"agentrun/terminals": ss.mcpTerminals,
		mcptool.SeenMethod:   ss.mcpSeen,
	}
}
