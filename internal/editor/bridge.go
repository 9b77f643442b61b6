package editor

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/agentrun/agentrun.nvim/acp"
	"github.com/agentrun/agentrun.nvim/acp/agentterm"
	"github.com/agentrun/agentrun.nvim/ahp"
	"github.com/agentrun/agentrun.nvim/internal/boxfile"
	"github.com/agentrun/agentrun.nvim/internal/checkpoint"
	"github.com/agentrun/agentrun.nvim/internal/display"
	"github.com/agentrun/agentrun.nvim/internal/event"
	"github.com/agentrun/agentrun.nvim/internal/guard"
	"github.com/agentrun/agentrun.nvim/internal/question"
	"github.com/agentrun/agentrun.nvim/internal/remote"
	"github.com/agentrun/agentrun.nvim/internal/session"
	"github.com/agentrun/agentrun.nvim/internal/terminals"
	"github.com/agentrun/agentrun.nvim/termhost"
	acpsdk "github.com/coder/acp-go-sdk"
	"github.com/neovim/go-client/nvim"
)

// Why this file is long: the Bridge is the one type Neovim talks to: its
// RPC routing table, setup's options, the acp.Editor it gives each agent
// (one short method per callback) and the shutdown path; each concern's
// work is in its own file, what stays here is wiring.

// Bridge connects Neovim and the ACP client: it gives each agent an
// acp.Editor bound to its session (agentEditor) and serves the Lua side's RPC requests, routing each to
// the part that owns what it is about: sessions, questions, terminals
// (with their displays), remotes and the socket host. It keeps only the
// terminal host and the setup that configures it.
type Bridge struct {
	log     *slog.Logger
	version string
	events  *event.Queue
	// guard learns of every terminal session, to kill them if we die
	// without cleaning up (guard.go); nil without one.
	guard *guard.Client
	// user is the claim of terminals this editor's user holds (its client
	// id is unique per backend).
	user ahp.Claim

	// ctx ends at shutdown; long-lived goroutines watch it.
	ctx    context.Context
	cancel context.CancelFunc

	// The parts, each with its own state and lock.
	questions *question.Questions  // the user's open questions (internal/question)
	sessions  *session.Sessions    // ACP sessions and their agents (internal/session)
	display   *display.Displays    // starts the terminal buffers' pumps (internal/display)
	terminals *terminals.Terminals // our host's terminals shown here (internal/terminals)
	remotes   *remote.Terminals    // other hosts' terminals shown here (internal/remote)
	socket    *socketHost          // serves the host to other clients (hostserve.go)

	ids *question.IDs // session keys and question tokens

	// v is the client of the Neovim connected now (nvimLink); another
	// one's after a lingering backend is resumed (linger.go).
	v atomic.Pointer[nvim.Nvim]

	mu       sync.Mutex
	host     *termhost.Host
	hostOpts termhost.Options
	// site is setupArgs.Site: "" when this backend runs beside its
	// Neovim, else the name of the machine it runs on for that Neovim.
	site string
	// lingerFor is setupArgs.LingerMS: how long linger waits (0: no limit).
	lingerFor time.Duration
	// shutdownAsked: Lua asked to shut down (Neovim quits) before its
	// channel ended.
	shutdownAsked bool
	// keptNotes are the chat lines kept for a replay (handleKeepNote), once each.
	keptNotes map[string]bool
}

// newBridge makes the parts and wires them to each other with function
// values: none of them knows the bridge but as acp.Editor.
func newBridge(version string, log *slog.Logger, g *guard.Client) *Bridge {
	ctx, cancel := context.WithCancel(context.Background())
	events := event.NewQueue()
	idSource := &question.IDs{}
	b := &Bridge{
		log: log, version: version, events: events, guard: g,
		user: ahp.ClientClaim(fmt.Sprintf("nvim-%d", os.Getpid())),
		ctx:  ctx, cancel: cancel, ids: idSource,
	}
	b.questions = question.New(events, idSource, log)
	b.socket = newSocketHost(log, b.user)
	b.display = display.New(ctx, log, b.nvimLink)
	b.terminals = terminals.New(ctx, log, events, b.display, b.user, terminals.Deps{
		Host:         b.termHost,
		ClaimForUser: b.socket.claimForUser,
	})
	b.sessions = session.New(ctx, log, events, idSource, version, session.Deps{
		EditorFor:    b.agentEditor,
		Host:         b.termHost,
		ByteLimit:    b.byteLimit,
		User:         b.user,
		Guard:        g,
		TerminalSize: b.terminals.Size,
		UserTerminal: b.terminals.UserTerminal,
		SocketPath:   b.socket.socket,
		Ask:          b.questions.Ask,
		ExecLua: func(ctx context.Context, code string, result any, args ...any) error {
			return callNvim(ctx, func() error { return b.nvimLink().ExecLua(code, result, args...) })
		},
	})
	b.terminals.SetClosing(b.sessions.IsClosing)
	b.remotes = remote.New(ctx, log, events, b.display, remote.Options{User: b.user, Version: version, DisplayBytes: func() int {
		b.mu.Lock()
		defer b.mu.Unlock()
		return b.hostOpts.DisplayBytes
	}})
	return b
}

// register installs the handlers Lua calls with rpcrequest/rpcnotify on
// v, the client of a Neovim's channel.
func (b *Bridge) register(v *nvim.Nvim) error {
	for name, fn := range b.handlers() {
		if err := v.RegisterHandler(name, fn); err != nil {
			return fmt.Errorf("register rpc handler %q: %w", name, err)
		}
	}
	return nil
}

// handlers are the calls Lua makes, by name: each handler's arguments are
// what Lua passes, in order (a struct: a table with its msgpack fields).
// TestCallsAgree checks every Lua call against them, and the structs
// against types.lua's agentrun.request.<name>.
func (b *Bridge) handlers() map[string]any {
	return map[string]any{
		"setup":            b.handleSetup,
		"resume":           b.handleResume,
		"start":            b.sessions.Start,
		"prompt":           b.sessions.Prompt,
		"cancel":           b.sessions.Cancel,
		"stop":             b.sessions.Stop,
		"attach":           b.terminals.Attach,
		"interrupt":        b.terminals.Interrupt,
		"kill":             b.terminals.Kill,
		"input":            b.terminals.Input,
		"send_input":       b.terminals.SendInput,
		"shell":            b.terminals.Shell,
		"rerun":            b.terminals.Rerun,
		"takeover":         b.terminals.Takeover,
		"detach":           b.handleDetach,
		"set_mode":         b.sessions.SetMode,
		"set_config":       b.sessions.SetConfig,
		"list_sessions":    b.sessions.List,
		"auth_methods":     b.sessions.AuthMethods,
		"login":            b.sessions.Login,
		"remote_terminals": b.remotes.List,
		"ssh_terminals":    b.remotes.ListAt,
		"ssh_connect":      b.remotes.Connect,
		"remote_attach":    b.remotes.Attach,
		"remote_take":      b.remotes.Take,
		"remote_let_go":    b.remotes.LetGo,
		"remote_input":     b.remotes.Input,
		"remote_dispose":   b.remotes.Dispose,
		"dispose":          b.terminals.Dispose,
		"resize":           b.handleResize,
		"terminal_size":    b.terminals.SetSize,
		"status":           b.handleStatus,
		"shutdown":         b.handleShutdown,
		"answer_question":  b.questions.Answer,
		"check_command":    session.CheckCommand,
		"read_files":       boxfile.Read,
		"checkpoint":       checkpoint.Do,
		"keep_note":        b.handleKeepNote,
		"describe_rules":   session.DescribeRules,
		"log":              b.handleLog,
	}
}

// deliver sends events to Lua in one call. dispatch only schedules the
// work, so this returns as soon as Neovim has read the request.
func (b *Bridge) deliver(batch []event.Event) {
	list := make([]any, len(batch))
	for i, e := range batch {
		list[i] = []any{e.Name, e.Payload}
	}
	if err := b.nvimLink().ExecLua(`require("agentrun.events").dispatch(...)`, nil, list); err != nil {
		b.log.Warn("events not delivered", "first", batch[0].Name, "count", len(batch), "err", err)
	}
}

// setupArgs are the options Lua sends once after starting the binary.
type setupArgs struct {
	// KillGraceMS is terminal.kill_grace_ms; nil (unset): the host's
	// default (termhost.DefaultKillGrace, the one default of the option),
	// never 0.
	KillGraceMS *int `msgpack:"kill_grace_ms"`
	// ByteLimit is terminal.byte_limit, the rendered text every terminal
	// keeps (and the most an agent gets); nil (unset): the host's default
	// (termhost.DefaultByteLimit, applied by termhost.NewHost alone),
	// never 0. This is its one way in: agents' terminals get it from
	// byteLimit, which asks the host.
	ByteLimit   *int   `msgpack:"byte_limit"`
	NvimVersion string `msgpack:"nvim_version"`
	// PluginVersion is the plugin's VERSION file; a backend of another
	// version refuses to serve it ("" when Lua does not say).
	PluginVersion string `msgpack:"plugin_version"`
	// Scrollback is the terminal buffers' 'scrollback' (lines); the raw
	// log kept for each display is sized from it.
	Scrollback int `msgpack:"scrollback"`
	// Site is set when this backend runs on another machine than its
	// Neovim (started over SSH: `agentrun ssh-backend`): a short name
	// of that machine ("devbox"). Every id handed to Lua then ends in
	// "@" + Site, so Lua tells this backend's sessions and terminals from
	// its other backends' and routes calls about them here; and the
	// agent's fs/* calls read and write this machine's disk only (a
	// buffer of the same path in that Neovim is another machine's file).
	Site string `msgpack:"site"`
	// IDBase is where this backend's numbered ids start (term-1001
	// after 1000): a Neovim's next backend (here, or on the same other
	// machine) must not hand out the ids of the last one, which that
	// Neovim still holds.
	IDBase int `msgpack:"id_base"`
	// KeptBytes is terminal.kept_bytes: how much of ended terminals'
	// output is kept in memory for their splits to be made again; nil
	// (unset): defaultKeptBytes, never 0.
	KeptBytes *int `msgpack:"kept_bytes"`
	// OutputDir is where the rest goes (Lua's state folder +
	// "/agentrun/output"; "" on another machine: the same path there).
	OutputDir string `msgpack:"output_dir"`
	// LingerMS is remote.wait_hours in milliseconds, sent with Site: how
	// long this backend waits for a new link, when its link dropped with
	// sessions running, before their agents stop (linger.go); 0: no
	// limit.
	LingerMS int64 `msgpack:"linger_ms"`
}

// validSite reports whether s can end an id: letters, digits, '.', '_'
// and '-', at most 64 of them.
func validSite(s string) bool {
	if len(s) > 64 {
		return false
	}
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '.' || r == '_' || r == '-') {
			return false
		}
	}
	return true
}

// handleSetup configures the terminal host from the user's options.
func (b *Bridge) handleSetup(args setupArgs) (map[string]any, error) {
	if args.KillGraceMS != nil && *args.KillGraceMS <= 0 {
		return nil, fmt.Errorf("setup: kill_grace_ms must be a positive number of milliseconds (or unset), not %d", *args.KillGraceMS)
	}
	if args.ByteLimit != nil && *args.ByteLimit <= 0 {
		return nil, fmt.Errorf("setup: byte_limit must be a positive number of bytes (or unset), not %d", *args.ByteLimit)
	}
	if err := checkVersion(b.version, args.PluginVersion); err != nil {
		return nil, err
	}
	if args.KeptBytes != nil && *args.KeptBytes <= 0 {
		return nil, fmt.Errorf("setup: kept_bytes must be a positive number of bytes (or unset), not %d", *args.KeptBytes)
	}
	if args.IDBase < 0 {
		return nil, fmt.Errorf("setup: id_base must be >= 0, not %d", args.IDBase)
	}
	if !validSite(args.Site) {
		return nil, fmt.Errorf("setup: site %q may hold only letters, digits, '.', '_' and '-' (at most 64)", args.Site)
	}
	if args.LingerMS < 0 {
		return nil, fmt.Errorf("setup: linger_ms must be >= 0 (0: no limit), not %d", args.LingerMS)
	}
	if err := b.applySetup(args); err != nil {
		return nil, err
	}
	// Serve the socket from now on: `agentrun ls` and other editors see
	// this host (with no terminals yet) as soon as the backend runs.
	b.termHost()
	return map[string]any{"version": b.version, "pid": os.Getpid()}, nil
}

// applySetup keeps setup's options, under b.mu, for the host termHost
// makes; an error when the host is made already.
func (b *Bridge) applySetup(args setupArgs) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.host != nil {
		return fmt.Errorf("setup: already set up (terminals are running)")
	}
	var byteLimit int // unset: termhost.NewHost applies the one default
	if args.ByteLimit != nil {
		byteLimit = *args.ByteLimit
	}
	killGrace := termhost.DefaultKillGrace
	if args.KillGraceMS != nil {
		killGrace = time.Duration(*args.KillGraceMS) * time.Millisecond
	}
	b.hostOpts = termhost.Options{
		ByteLimit:    byteLimit,
		DisplayBytes: display.LogBytes(args.Scrollback),
		KillGrace:    killGrace,
		IDSuffix:     siteSuffix(args.Site),
		IDBase:       args.IDBase,
		Logf: func(format string, a ...any) {
			b.log.Debug("termhost: " + fmt.Sprintf(format, a...))
		},
	}
	kept := terminals.DefaultKeptBytes
	if args.KeptBytes != nil {
		kept = *args.KeptBytes
	}
	if b.terminals != nil {
		b.terminals.SetKept(kept, terminals.KeptDir(args.OutputDir))
	}
	b.site = args.Site
	b.lingerFor = time.Duration(args.LingerMS) * time.Millisecond
	if args.Site != "" {
		suffix := siteSuffix(args.Site)
		b.ids.SetSuffix(suffix)
		b.events.KeepAll() // for a Neovim that takes the sessions over (linger.go)
		b.terminals.KeepShownOutput()
	}
	if args.IDBase > 0 {
		b.ids.StartAfter(int64(args.IDBase))
	}
	b.log.Info("setup", "site", args.Site, "nvim", args.NvimVersion, "kill_grace", b.hostOpts.KillGrace, "byte_limit", b.hostOpts.ByteLimit, // 0: unset, the host's default
		"display_bytes", b.hostOpts.DisplayBytes)
	return nil
}

// siteSuffix is what ends every id of a backend at site ("" for none).
func siteSuffix(site string) string {
	if site == "" {
		return ""
	}
	return "@" + site
}

// remoteSite is setupArgs.Site ("" when Neovim runs on this machine).
func (b *Bridge) remoteSite() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.site
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
	return b.termHost().ByteLimit()
}

// termHost returns the terminal host, creating it on first use.
func (b *Bridge) termHost() *termhost.Host {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.host == nil {
		b.host = termhost.NewHost(guardHooks(b.hostOpts, b.guard, b.log))
		h := b.host
		b.mu.Unlock()
		b.socket.serve(h, b.sessions.MCPMethods())
		b.mu.Lock()
	}
	return b.host
}

// handleDetach keeps terminal id running after Neovim quits (socketHost.detach).
func (b *Bridge) handleDetach(id string) (map[string]any, error) {
	t, err := b.terminals.Running(id)
	if err != nil {
		return nil, fmt.Errorf("detach: %w", err)
	}
	return b.socket.detach(t)
}

// handleResize sizes terminal id's pty to its window: ours, or a remote
// one (PID:term-N).
func (b *Bridge) handleResize(id string, cols, rows int) error {
	if cols <= 0 || rows <= 0 || cols > 65535 || rows > 65535 {
		return fmt.Errorf("resize: bad size %dx%d for terminal %q", cols, rows, id)
	}
	if remote.IsName(id) {
		return b.remotes.Resize(id, cols, rows)
	}
	return b.terminals.Resize(id, cols, rows)
}

// agentEditor is the acp.Editor the agent of session key calls back:
// every call is about that session, whatever session id the agent names
// (agents choose them and may repeat another agent's), and its tool call
// and terminal ids are only meaningful with it.
type agentEditor struct {
	b   *Bridge
	key string
}

var _ acp.Editor = agentEditor{}

// agentEditor returns the acp.Editor for the agent of session key ("" for
// an agent that serves no session: one started to list sessions).
func (b *Bridge) agentEditor(key string) acp.Editor { return agentEditor{b: b, key: key} }

// TerminalCreated implements acp.Editor: Lua learns of the terminal before
// the agent gets its id, so the buffer can attach from the first byte.
func (e agentEditor) TerminalCreated(_ context.Context, sid, tid string) {
	t, err := e.b.termHost().Get(tid)
	if err != nil {
		e.b.log.Warn("terminal created but unknown to the host", "terminal", tid, "err", err)
		return
	}
	e.b.terminals.Add(t, e.key, sid, false)
}

// TerminalReleased implements acp.Editor.
func (e agentEditor) TerminalReleased(_ context.Context, _ string, tid string) {
	e.b.terminals.Released(tid)
}

// SessionUpdate implements acp.Editor (sessions).
func (e agentEditor) SessionUpdate(_ context.Context, n acpsdk.SessionNotification) {
	e.b.sessions.Update(e.key, n)
}

// SessionEnded implements acp.Editor (sessions).
func (e agentEditor) SessionEnded(_ context.Context, _ string, reason error) {
	e.b.sessions.Ended(e.key, reason)
}

// AgentTerminal implements acp.Editor (sessions).
func (e agentEditor) AgentTerminal(_ context.Context, sid string, ev agentterm.Event) {
	e.b.sessions.AgentTerminal(e.key, sid, ev)
}

// RequestPermission implements acp.Editor (permission.go).
func (e agentEditor) RequestPermission(ctx context.Context, req acpsdk.RequestPermissionRequest) (acpsdk.RequestPermissionResponse, error) {
	return e.b.requestPermission(ctx, e.key, req)
}

// Elicit implements acp.Editor (questions: elicit.go).
func (e agentEditor) Elicit(ctx context.Context, el acp.Elicitation) (acp.ElicitationAnswer, error) {
	return e.b.elicit(ctx, e.key, el)
}

// ElicitationComplete implements acp.Editor (elicit.go).
func (e agentEditor) ElicitationComplete(_ context.Context, id string) {
	e.b.events.Push(event.ElicitationComplete{Key: e.key, ElicitationID: id})
}

// ReadTextFile implements acp.Editor (fs.go).
func (e agentEditor) ReadTextFile(ctx context.Context, req acpsdk.ReadTextFileRequest) (acpsdk.ReadTextFileResponse, error) {
	return e.b.ReadTextFile(ctx, req)
}

// WriteTextFile implements acp.Editor (fs.go).
func (e agentEditor) WriteTextFile(ctx context.Context, req acpsdk.WriteTextFileRequest) (acpsdk.WriteTextFileResponse, error) {
	return e.b.WriteTextFile(ctx, req)
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
	b.mu.Lock()
	b.shutdownAsked = true
	b.mu.Unlock()
	b.endSessions()
	return nil
}

// linkDropped detaches every running terminal when this backend serves
// a Neovim on another machine (Site) whose channel ended without asking
// to shut down: the link dropped, and the commands outlive it as the
// user's detached terminals do.
func (b *Bridge) linkDropped() {
	b.mu.Lock()
	remote, asked, host := b.site != "", b.shutdownAsked, b.host
	b.mu.Unlock()
	if !remote || asked || host == nil {
		return
	}
	for _, t := range host.Terminals() {
		if _, done := t.Exited(); done || t.Released() {
			continue
		}
		if _, err := b.socket.detach(t); err != nil {
			b.log.Warn("link dropped; terminal not kept", "terminal", t.ID(), "err", err)
			continue
		}
		b.log.Info("link dropped; terminal kept running", "terminal", t.ID())
	}
}

// endSessions stops every agent and releases every terminal but the ones
// the user detached (once; Lua calls it from VimLeavePre, and the backend
// again when Neovim's channel closes).
func (b *Bridge) endSessions() {
	b.questions.Close()
	agents, first := b.sessions.Shutdown()
	if !first {
		return
	}
	b.mu.Lock()
	host := b.host
	b.mu.Unlock()
	if host != nil {
		keep := b.socket.detachedTerminals(host)
		for _, t := range host.Terminals() {
			if !slices.Contains(keep, t) {
				t.Release()
			}
		}
		if len(keep) == 0 {
			host.Close() // returns once their processes are gone
		}
	}
	b.log.Info("sessions ended", "agents", agents)
}

// shutdown ends the backend: the sessions, then (Neovim gone) the
// detached terminals' service until they end or ctx does, then the host.
func (b *Bridge) shutdown(ctx context.Context) {
	b.endSessions()
	b.mu.Lock()
	host := b.host
	b.mu.Unlock()
	if host != nil {
		if keep := b.socket.detachedTerminals(host); len(keep) > 0 {
			b.socket.linger(ctx, keep)
		}
		host.Close()
	}
	b.socket.close()
	if b.terminals != nil {
		b.terminals.RemoveKept()
	}
	b.cancel()
	b.log.Info("shut down")
}

// handleStatus describes sessions and terminals for require("agentrun").status().
func (b *Bridge) handleStatus() (map[string]any, error) {
	return map[string]any{"sessions": b.sessions.Status(), "terminals": b.terminals.Status(), "client_id": b.user.ClientID}, nil
}
