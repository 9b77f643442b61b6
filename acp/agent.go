package acp

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"sync"
	"sync/atomic"
	"time"

	"github.com/agentrun/agentrun.nvim/acp/agentterm"
	"github.com/agentrun/agentrun.nvim/internal/procstat"
	"github.com/agentrun/agentrun.nvim/internal/sandbox"

	acpsdk "github.com/coder/acp-go-sdk"

	"github.com/agentrun/agentrun.nvim/termhost"
)

// ProtocolVersion is the ACP protocol version we speak.
const ProtocolVersion = 1

// AgentConfig says how to start one agent.
type AgentConfig struct {
	// Name identifies the agent in messages and logs ("claude", "demo").
	Name string
	// Command is the agent's argv; Command[0] is looked up in $PATH.
	Command []string
	// Env holds extra KEY=VALUE entries laid over our own environment.
	Env []string
	// Dir is the agent process's working directory; empty means ours.
	Dir string
}

// Options configures the client side of a connection.
type Options struct {
	// Host runs the agent's terminals. Required.
	Host *termhost.Host
	// Logger receives diagnostics, the agent's stderr and the audit log;
	// nil discards them.
	Logger *slog.Logger
	// ClientName and ClientVersion are sent as clientInfo (defaults
	// "agentrun" and "dev").
	ClientName, ClientVersion string
	// StopGrace is how long the agent gets to exit after its stdin is
	// closed (and again after SIGTERM) before it is signalled (default 2s).
	StopGrace time.Duration

	// AllowedCwdRoots limits terminal working directories to these absolute
	// roots and below. Empty means the session's cwd and below.
	AllowedCwdRoots []string
	// Sandbox, when set, says how to confine each terminal command: a
	// profile (its Writable gets the session's cwd roots), nil to run it
	// unconfined, or an error, which refuses the command.
	Sandbox func(ctx context.Context, cmd Command) (*sandbox.Profile, error)
	// Limits bound every terminal command (termhost.Limits).
	Limits termhost.Limits
	// Approve, when set, is asked before each terminal command runs; false
	// refuses the command with an error to the agent, saying the user
	// did not allow it, and a *Refusal error says who refused it and why.
	Approve func(ctx context.Context, cmd Command) (bool, error)
	// CheckWrite, when set, is asked before each fs/write_text_file: nil
	// writes the file; an error refuses the write, and the agent is told
	// the error's text (a *Refusal: its Why alone). Like Approve, a
	// pending answer belongs to the session's turn.
	CheckWrite func(ctx context.Context, w FileWrite) error
	// MaxRunTime kills a terminal's command (as terminal/kill would) after
	// this long; zero means no limit.
	MaxRunTime time.Duration
	// ByteLimit caps every terminal's retained output, whatever the agent
	// asks for (its outputByteLimit), and is what a terminal keeps when the
	// agent asks for no limit; zero means no cap but the host's default.
	ByteLimit int
	// Audit, when set, receives an AuditRecord for every command started,
	// refused and finished, besides the audit line in the log.
	Audit func(AuditRecord)
	// TerminalSize, when set, gives the size new terminals start with (the
	// editor's split), so a command that asks at once sees its real width;
	// zero values mean 80x24.
	TerminalSize func() (cols, rows uint16)
	// Notice, when set, receives messages for the user about agent
	// misbehaviour that does not end the session: the first line the agent
	// writes to stdout that is not JSON-RPC (all of them go to the log).
	Notice func(msg string)
	// ProcessStarted, when set, is called with the agent's pid (also its
	// process group id) right after it started, and the environment entry
	// (termhost.MarkerEnv=token) it and everything it starts inherit;
	// ProcessEnded once nothing of its group is left. A watcher outside
	// the backend (the guard) uses them to kill an agent a dead backend
	// can no longer stop.
	ProcessStarted func(pid int, marker string)
	ProcessEnded   func(pid int)
}

// ErrStopped is the error pending calls get when the agent was stopped
// with Close.
var ErrStopped = errors.New("agent stopped")

// stderrTailLines is how many stderr lines an ExitError carries.
const stderrTailLines = 5

// Agent is a running agent process and the ACP connection to it.
//
// Its size (about 60 methods) is the protocol's: one unexported handler
// per method the agent may call (handle*), each in the file of its
// protocol feature (terminal.go, fs.go, permission.go, elicitation.go,
// update.go, …), next to the exported calls the editor makes (sessions,
// sign-in, listing, stopping). They share one connection, one lock and
// one process, so they stay one type.
type Agent struct {
	cfg  AgentConfig
	opts Options
	ed   Editor
	log  *slog.Logger

	cmd     *exec.Cmd
	stdin   io.WriteCloser
	stdout  *os.File
	stderr  *os.File
	conn    *acpsdk.Connection
	splice  *spliceWriter // stdin as the connection writes it (bigtext.go)
	table   map[string]methodFunc
	updates *updateQueue
	// agentTerms follows the terminals the agent runs itself (package
	// agentterm).
	agentTerms *agentterm.Decoder
	tail       *lineTail
	exited     chan struct{} // closed when the process has been reaped
	closeReq   chan struct{} // closed by Close
	stderrEOF  chan struct{}
	waitErr    error

	info acpsdk.InitializeResponse

	// ctx lives as long as the agent; editor calls made outside a request
	// use it.
	ctx    context.Context
	cancel context.CancelFunc

	nonJSON atomic.Int64 // lines on stdout that were not JSON-RPC

	// marker is the environment entry the agent and all it starts carry;
	// tree finds them, also those that left its process group.
	marker string
	tree   procstat.Tree
	// urgent makes stopping send SIGTERM at once (Terminate).
	urgent atomic.Bool

	mu          sync.Mutex
	sessions    map[string]*Session
	newInFlight int
	sessChanged chan struct{} // closed and replaced when sessions change
	closing     bool
	ended       bool

	done chan struct{}
	err  error
}

// Start spawns the agent in its own process group (stderr to the log),
// initializes the connection with protocol version 1 and our capabilities,
// and returns once the agent has answered. ctx bounds the startup only.
func Start(ctx context.Context, cfg AgentConfig, ed Editor, opts Options) (*Agent, error) {
	if len(cfg.Command) == 0 || cfg.Command[0] == "" {
		return nil, fmt.Errorf("agent %q: command is empty", cfg.Name)
	}
	if ed == nil {
		return nil, fmt.Errorf("agent %q: no editor", cfg.Name)
	}
	if opts.Host == nil {
		return nil, fmt.Errorf("agent %q: options have no terminal host", cfg.Name)
	}
	for _, root := range opts.AllowedCwdRoots {
		if !isAbs(root) {
			return nil, fmt.Errorf("agent %q: allowed cwd root %q is not absolute", cfg.Name, root)
		}
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	if opts.ClientName == "" {
		opts.ClientName = "agentrun"
	}
	if opts.ClientVersion == "" {
		opts.ClientVersion = "dev"
	}
	if opts.StopGrace <= 0 {
		opts.StopGrace = 2 * time.Second
	}
	a := &Agent{
		cfg:         cfg,
		opts:        opts,
		ed:          ed,
		log:         opts.Logger.With("agent", cfg.Name),
		tail:        newLineTail(stderrTailLines),
		exited:      make(chan struct{}),
		closeReq:    make(chan struct{}),
		stderrEOF:   make(chan struct{}),
		sessions:    make(map[string]*Session),
		sessChanged: make(chan struct{}),
		done:        make(chan struct{}),
	}
	a.ctx, a.cancel = context.WithCancel(context.Background())
	a.table = a.methods()
	a.updates = newUpdateQueue(a.log)
	a.agentTerms = agentterm.NewDecoder()
	if err := a.spawn(); err != nil {
		a.cancel()
		return nil, err
	}
	filter := newUpdateFilter(a.stdout, a.readUpdate)
	filter.onNonJSON = a.nonJSONLine
	filter.onOtherNotification = a.otherNotification
	a.splice = newSpliceWriter(a.stdin)
	a.splice.observe = func(n int, took, writing time.Duration) {
		a.log.Debug("terminal/output answered", "bytes", n, "took", took, "writing", writing)
	}
	a.conn = acpsdk.NewConnection(a.handle, promptWatch{w: a.splice, written: a.promptWritten}, filter)
	// The SDK logs lines that are not JSON-RPC here and keeps reading.
	a.conn.SetLogger(a.log.With("component", "acp-connection"))
	go a.updates.run(a.deliverUpdate)
	go a.watch()

	if err := a.initialize(ctx); err != nil {
		if ctx.Err() != nil {
			_ = a.Terminate() // the caller gave up (shutting down): no grace
		} else {
			_ = a.Close()
		}
		return nil, err
	}
	return a, nil
}

// initialize negotiates the protocol version and capabilities.
func (a *Agent) initialize(ctx context.Context) error {
	req := acpsdk.InitializeRequest{
		ProtocolVersion: ProtocolVersion,
		ClientCapabilities: acpsdk.ClientCapabilities{
			Fs:       acpsdk.FileSystemCapabilities{ReadTextFile: true, WriteTextFile: true},
			Terminal: true,
			// We run terminal sign-in methods in one of our terminals (auth.go).
			Auth: acpsdk.AuthCapabilities{Terminal: true},
			// We ask the user what the agent asks: a form (each field a
			// picker or an input) or a URL opened on the user's key
			// (elicitation.go).
			Elicitation: &acpsdk.ElicitationCapabilities{Form: &acpsdk.ElicitationFormCapabilities{}, Url: &acpsdk.ElicitationUrlCapabilities{}},
			// Agents that run commands themselves (codex-acp) stream their
			// output to us in tool_call_update._meta.terminal_output (Zed's
			// opt-in; claude-agent-acp 0.18–0.23 knows only this one) or
			// terminal_output_delta: with it codex-acp 2.6 sends every
			// chunk, also those a command printed before its tool call
			// (agentterm's decoder holds them until the tool call comes).
			Meta: map[string]any{"terminal_output": true, "terminal_output_delta": true},
		},
		ClientInfo: &acpsdk.Implementation{Name: a.opts.ClientName, Version: a.opts.ClientVersion},
	}
	resp, err := acpsdk.SendRequest[acpsdk.InitializeResponse](a.conn, ctx, acpsdk.AgentMethodInitialize, req)
	if err != nil {
		if endErr := a.endedErr(); endErr != nil {
			return fmt.Errorf("initialize: %w", endErr)
		}
		return fmt.Errorf("agent %q: %w", a.cfg.Name, describeRPCError("initialize", err))
	}
	if resp.ProtocolVersion != ProtocolVersion {
		return fmt.Errorf("agent %q speaks ACP protocol version %d, want %d", a.cfg.Name, resp.ProtocolVersion, ProtocolVersion)
	}
	a.info = resp
	a.agentTerms.ForAgent(agentterm.ProfileOf(resp), a.cfg.Name)
	a.log.Info("agent initialized", "agentInfo", resp.AgentInfo, "loadSession", resp.AgentCapabilities.LoadSession)
	return nil
}

// OwnShellKept tells what the agent's commands show why agentrun kept
// its own shell for its session (said once, in the split of its first
// command that sent no output).
func (a *Agent) OwnShellKept(why string) { a.agentTerms.OwnShellKept(why) }

// Info returns the agent's answer to initialize (capabilities, agentInfo).
func (a *Agent) Info() acpsdk.InitializeResponse { return a.info }

// Name returns the agent's configured name.
func (a *Agent) Name() string { return a.cfg.Name }

// Done is closed when the agent has ended and its sessions are cleaned up.
func (a *Agent) Done() <-chan struct{} { return a.done }

// ClaimCommand gives our MCP tool's command line to the agent's tool call
// in session sessionID that runs it, when the tool call did not say so
// (Copilot CLI): that tool call is then no agent-owned terminal, and its
// id is returned ("" when none runs line). See agentterm's ClaimCommand.
func (a *Agent) ClaimCommand(sessionID, line string) string {
	return a.agentTerms.ClaimCommand(sessionID, line)
}

// Err says why the agent ended: an *ExitError when it exited or crashed,
// nil when it was stopped with Close or is still running.
func (a *Agent) Err() error {
	select {
	case <-a.done:
		return a.err
	default:
		return nil
	}
}

// endedErr waits (bounded) for the agent to finish ending after its
// connection dropped, and returns why it ended (ErrStopped after Close).
// It returns nil if the connection is still up.
func (a *Agent) endedErr() error {
	select {
	case <-a.conn.Done():
	default:
		return nil
	}
	select {
	case <-a.done:
	case <-time.After(3*a.opts.StopGrace + time.Second):
		return fmt.Errorf("agent %q closed its connection", a.cfg.Name)
	}
	if a.err != nil {
		return a.err
	}
	return fmt.Errorf("agent %q: %w", a.cfg.Name, ErrStopped)
}

// isClosing reports whether Close was called.
func (a *Agent) isClosing() bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.closing
}

// Terminate is Close for a backend that is going away (Neovim quit or
// sent SIGTERM): the agent gets SIGTERM together with its stdin's end
// instead of a grace period first, since agents such as claude-agent-acp
// never exit on EOF and the backend may be killed before the grace ends.
func (a *Agent) Terminate() error {
	a.urgent.Store(true)
	return a.Close()
}

// Close ends every session (telling the agent with session/close when it
// has it, unless Terminate asked for haste, then releasing their
// terminals), closes the agent's stdin, and stops it: SIGTERM to its process group after StopGrace, then
// SIGKILL. It returns once everything is cleaned up.
func (a *Agent) Close() error {
	a.mu.Lock()
	already := a.closing
	a.closing = true
	sessions := a.sessionList()
	a.mu.Unlock()
	if !already {
		if !a.urgent.Load() {
			a.closeSessions(sessions, a.opts.StopGrace)
		}
		for _, s := range sessions {
			s.end(nil)
		}
		_ = a.stdin.Close()
		close(a.closeReq)
	}
	<-a.done
	return nil
}

// finish ends the sessions with err, delivers the last updates and closes
// Done.
func (a *Agent) finish(err error) {
	a.mu.Lock()
	a.ended = true
	sessions := a.sessionList()
	a.mu.Unlock()
	a.updates.close(5 * time.Second)
	for _, s := range sessions {
		s.end(err)
	}
	a.err = err
	a.cancel()
	close(a.done)
}

// sessionList snapshots the sessions; a.mu must be held.
func (a *Agent) sessionList() []*Session {
	out := make([]*Session, 0, len(a.sessions))
	for _, s := range a.sessions {
		out = append(out, s)
	}
	return out
}
