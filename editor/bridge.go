package editor

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/agentrun/agentrun.nvim/ahpserver"
	"github.com/agentrun/agentrun.nvim/internal/vtsafe"
	"github.com/agentrun/agentrun.nvim/termhost/ahp"

	"github.com/agentrun/agentrun.nvim/acp"
	"github.com/agentrun/agentrun.nvim/guard"
	"github.com/agentrun/agentrun.nvim/termhost"
	"github.com/neovim/go-client/nvim"
)

// Bridge connects Neovim and the ACP client: it implements acp.Editor for
// every session and serves the Lua side's RPC requests.
type Bridge struct {
	v       *nvim.Nvim
	log     *slog.Logger
	version string
	events  *eventQueue
	// pacer spaces the display pumps' sends (pump.go).
	pacer *pacer
	// guard learns of every terminal session, to kill them if we die
	// without cleaning up (guard.go); nil without one.
	guard *guard.Client

	// ctx ends at shutdown; long-lived goroutines watch it.
	ctx    context.Context
	cancel context.CancelFunc
	// starts ends first at shutdown: agents still starting are stopped,
	// and shutdown waits for them (starting counts them).
	starts       context.Context
	cancelStarts context.CancelFunc
	starting     sync.WaitGroup

	mu        sync.Mutex
	host      *termhost.Host
	hostOpts  termhost.Options
	sessions  map[string]*session // by key (what Lua uses)
	byID      map[string]*session // by ACP session id
	early     map[string][]event  // updates for a session id not registered yet
	terms     map[string]*terminal
	termOrder []string
	perms     map[string]chan string
	// agentShown filters what agents that run commands themselves show of
	// them (_meta.terminal_output), one filter per terminal id.
	agentShown map[string]*vtsafe.Filter
	seq        int
	closing    bool
	// newSize is the text area a new terminal's split will have, as Lua
	// last reported it (0 = unknown).
	newCols, newRows uint16

	// user is the claim of terminals this editor's user holds (its client
	// id is unique per backend).
	user ahp.Claim
	// The socket other clients reach the host on (hostserve.go).
	server      *ahpserver.Server
	socket      string
	stopServing context.CancelFunc
	served      chan struct{}
	// detached lists terminals that outlive the editor.
	detached map[string]bool
	// remotes are the other hosts we follow terminals of (remote.go).
	remotes map[int]*remoteHost
	// mcpTokens finds the session an MCP terminal tool serves (mcp.go).
	mcpTokens map[string]*session
}

var _ acp.Editor = (*Bridge)(nil)

func newBridge(v *nvim.Nvim, version string, log *slog.Logger) *Bridge {
	ctx, cancel := context.WithCancel(context.Background())
	starts, cancelStarts := context.WithCancel(ctx)
	return &Bridge{
		starts:       starts,
		cancelStarts: cancelStarts,
		v:            v,
		log:          log,
		version:      version,
		events:       newEventQueue(),
		pacer:        newPacer(),
		ctx:          ctx,
		cancel:       cancel,
		sessions:     map[string]*session{},
		byID:         map[string]*session{},
		early:        map[string][]event{},
		terms:        map[string]*terminal{},
		perms:        map[string]chan string{},

		agentShown: map[string]*vtsafe.Filter{},
		user:       ahp.ClientClaim(fmt.Sprintf("nvim-%d", os.Getpid())),
		detached:   map[string]bool{},
		remotes:    map[int]*remoteHost{},
		mcpTokens:  map[string]*session{},
	}
}

// register installs the handlers Lua calls with rpcrequest/rpcnotify.
func (b *Bridge) register() error {
	handlers := map[string]any{
		"setup":            b.handleSetup,
		"start":            b.handleStart,
		"prompt":           b.handlePrompt,
		"cancel":           b.handleCancel,
		"stop":             b.handleStop,
		"attach":           b.handleAttach,
		"interrupt":        b.handleInterrupt,
		"kill":             b.handleKill,
		"input":            b.handleInput,
		"send_input":       b.handleSendInput,
		"shell":            b.handleShell,
		"takeover":         b.handleTakeover,
		"detach":           b.handleDetach,
		"set_mode":         b.handleSetMode,
		"set_config":       b.handleSetConfig,
		"list_sessions":    b.handleListSessions,
		"auth_methods":     b.handleAuthMethods,
		"login":            b.handleLogin,
		"remote_terminals": b.handleRemoteTerminals,
		"remote_attach":    b.handleRemoteAttach,
		"remote_take":      b.handleRemoteTake,
		"remote_input":     b.handleRemoteInput,
		"remote_dispose":   b.handleRemoteDispose,
		"dispose":          b.handleDispose,
		"resize":           b.handleResize,
		"terminal_size":    b.handleTerminalSize,
		"status":           b.handleStatus,
		"shutdown":         b.handleShutdown,
		"answer_question":  b.handleAnswer,
		"log":              b.handleLog,
	}
	for name, fn := range handlers {
		if err := b.v.RegisterHandler(name, fn); err != nil {
			return fmt.Errorf("register rpc handler %q: %w", name, err)
		}
	}
	return nil
}

// deliver sends events to Lua in one call. dispatch only schedules the
// work, so this returns as soon as Neovim has read the request.
func (b *Bridge) deliver(batch []event) {
	list := make([]any, len(batch))
	for i, e := range batch {
		list[i] = []any{e.name, e.payload}
	}
	if err := b.v.ExecLua(`require("agentrun.events").dispatch(...)`, nil, list); err != nil {
		b.log.Warn("events not delivered", "first", batch[0].name, "count", len(batch), "err", err)
	}
}

// setupArgs are the options Lua sends once after starting the binary.
type setupArgs struct {
	// KillGraceMS is terminal.kill_grace_ms; 0: the host's default
	// (termhost.DefaultKillGrace, the one default of the option).
	KillGraceMS int `msgpack:"kill_grace_ms"`
	// ByteLimit is terminal.byte_limit, the rendered text every terminal
	// keeps (and the most an agent gets); 0: the host's default
	// (termhost.DefaultByteLimit, the one default of the option). This is
	// its one way in: agents' terminals get it from byteLimit.
	ByteLimit   int    `msgpack:"byte_limit"`
	NvimVersion string `msgpack:"nvim_version"`
	// PluginVersion is the plugin's VERSION file; a backend of another
	// version refuses to serve it ("" when Lua does not say).
	PluginVersion string `msgpack:"plugin_version"`
	// Scrollback is the terminal buffers' 'scrollback' (lines); the raw
	// log kept for each display is sized from it.
	Scrollback int `msgpack:"scrollback"`
}

// displayBytesPerLine sizes the displays' raw logs: a generous average
// line (colours included), so a log holds what 'scrollback' can show.
const displayBytesPerLine = 100

// displayBytes is the raw log size for a 'scrollback' of lines (0: the
// host's default, 1 MiB), within 64 KiB..16 MiB.
func displayBytes(scrollback int) int {
	if scrollback <= 0 {
		return 0
	}
	return min(max(scrollback*displayBytesPerLine, 64<<10), 16<<20)
}

// handleSetup configures the terminal host from the user's options.
func (b *Bridge) handleSetup(args setupArgs) (map[string]any, error) {
	if args.KillGraceMS < 0 {
		return nil, fmt.Errorf("setup: kill_grace_ms must be >= 0, not %d", args.KillGraceMS)
	}
	if args.ByteLimit < 0 {
		return nil, fmt.Errorf("setup: byte_limit must be >= 0, not %d", args.ByteLimit)
	}
	if err := checkVersion(b.version, args.PluginVersion); err != nil {
		return nil, err
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.host != nil {
		return nil, fmt.Errorf("setup: already set up (terminals are running)")
	}
	b.hostOpts = termhost.Options{
		DefaultByteLimit: args.ByteLimit,
		DisplayBytes:     displayBytes(args.Scrollback),
		KillGrace:        time.Duration(args.KillGraceMS) * time.Millisecond,
		Logf: func(format string, a ...any) {
			b.log.Debug("termhost: " + fmt.Sprintf(format, a...))
		},
	}
	b.log.Info("setup", "nvim", args.NvimVersion, "kill_grace_ms", args.KillGraceMS, "byte_limit", args.ByteLimit, "display_bytes", b.hostOpts.DisplayBytes)
	return map[string]any{"version": b.version}, nil
}

// checkVersion refuses a plugin of another version than the backend's
// (a stale binary after a plugin update, or the reverse).
func checkVersion(backend, plugin string) error {
	if plugin == "" || plugin == backend {
		return nil
	}
	return fmt.Errorf("this backend binary is version %s but the plugin is version %s: run :AgentBuild to install the matching one", backend, plugin)
}

// byteLimit is terminal.byte_limit as the host applies it: what setup
// gave, else the host's default. Agents asking for more get this much.
func (b *Bridge) byteLimit() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.hostOpts.DefaultByteLimit > 0 {
		return b.hostOpts.DefaultByteLimit
	}
	return termhost.DefaultByteLimit
}

// termHost returns the terminal host, creating it on first use.
func (b *Bridge) termHost() *termhost.Host {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.host == nil {
		b.host = termhost.NewHost(guardHooks(b.hostOpts, b.guard, b.log))
		h := b.host
		b.mu.Unlock()
		b.serveHost(h)
		b.mu.Lock()
	}
	return b.host
}

// nextID returns a fresh id with prefix ("1", "p2", ...).
func (b *Bridge) nextID(prefix string) string {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.seq++
	return prefix + strconv.Itoa(b.seq)
}

// handleLog writes a Lua-side diagnostic to the log.
func (b *Bridge) handleLog(level, msg string) {
	switch level {
	case "error":
		b.log.Error("lua: " + msg)
	case "warn":
		b.log.Warn("lua: " + msg)
	default:
		b.log.Info("lua: " + msg)
	}
}

// handleShutdown stops every agent and kills every terminal, and returns
// when they are gone (Lua calls it from VimLeavePre).
func (b *Bridge) handleShutdown() error {
	b.endSessions()
	return nil
}

// endSessions stops every agent and releases every terminal but the ones
// the user detached (once; Lua calls it from VimLeavePre, and the backend
// again when Neovim's channel closes).
func (b *Bridge) endSessions() {
	b.mu.Lock()
	if b.closing {
		b.mu.Unlock()
		return
	}
	b.closing = true
	var agents []*acp.Agent
	for _, s := range b.sessions {
		if s.agent != nil {
			agents = append(agents, s.agent)
		}
	}
	host := b.host
	for token, ch := range b.perms {
		close(ch)
		delete(b.perms, token)
	}
	b.mu.Unlock()
	b.cancelStarts()
	b.starting.Wait() // an agent still starting is stopped by its Start

	// The backend is going away (Neovim quits, or signalled us): agents
	// get SIGTERM at once, not after waiting for an exit on EOF that some
	// never make.
	var wg sync.WaitGroup
	for _, a := range agents {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_ = a.Terminate()
		}()
	}
	wg.Wait()
	if host != nil {
		keep := b.detachedTerminals(host)
		for _, t := range host.Terminals() {
			if !slices.Contains(keep, t) {
				t.Release()
			}
		}
		if len(keep) == 0 {
			host.Close() // returns once their processes are gone
		}
	}
	b.log.Info("sessions ended", "agents", len(agents))
}

// shutdown ends the backend: the sessions, then (Neovim gone) the
// detached terminals' service until they end or ctx does, then the host.
func (b *Bridge) shutdown(ctx context.Context) {
	b.endSessions()
	b.mu.Lock()
	host := b.host
	b.mu.Unlock()
	if host != nil {
		if keep := b.detachedTerminals(host); len(keep) > 0 {
			b.linger(ctx, keep)
		}
		host.Close()
	}
	b.stopServe()
	b.cancel()
	b.log.Info("shut down")
}

// jsonValue turns an ACP value into plain maps/slices/strings/numbers via
// its JSON form (the SDK's unions marshal themselves), for msgpack to Lua.
func jsonValue(v any) any {
	data, err := json.Marshal(v)
	if err != nil {
		return map[string]any{"error": err.Error()}
	}
	var out any
	if err := json.Unmarshal(data, &out); err != nil {
		return map[string]any{"error": err.Error()}
	}
	return dropNulls(out)
}

// dropNulls removes null map entries: Lua sees an absent field as nil,
// while a null would arrive as vim.NIL (a truthy userdata).
func dropNulls(v any) any {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			if e == nil {
				delete(x, k)
			} else {
				x[k] = dropNulls(e)
			}
		}
	case []any:
		for i, e := range x {
			x[i] = dropNulls(e)
		}
	}
	return v
}

// errText is err's message, or "" for nil.
func errText(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}
