package terminals

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"sync"
	"syscall"

	"github.com/agentrun/agentrun.nvim/ahp"
	"github.com/agentrun/agentrun.nvim/internal/display"
	"github.com/agentrun/agentrun.nvim/internal/event"
	"github.com/agentrun/agentrun.nvim/internal/vtsafe"
	"github.com/agentrun/agentrun.nvim/termhost"
)

// Why this file is long: the terminals part: every operation on our ptys
// as the editor sees them (create, attach, input, resize, interrupt, kill,
// release) next to the state they share.

// keepReleased is how many released terminals that no buffer ever showed
// keep their output for a later :AgentTerminals open; older ones drop it.
const keepReleased = 16

// terminal is how one terminal is shown here (an agent's or the user's):
// its display pump, its input writer and what status() reports after it
// is gone.
type terminal struct {
	id      string
	sid     string // ACP session id
	key     string // session key
	command string
	cwd     string
	claim   ahp.Claim

	released     chan struct{}
	releaseOnce  sync.Once
	input        chan []byte
	mu           sync.Mutex
	t            *termhost.Terminal // nil once its output was dropped
	exit         *termhost.ExitStatus
	state        string // running, exited, released
	pump         *display.Pump
	everAttached bool
	bytes        int64 // raw bytes printed (kept after the output is dropped)
	truncated    bool
	// user is set for terminals the user started (:AgentShell).
	user bool
	// sandbox describes the command's confinement ("" when none).
	sandbox string
	// limit says which limit stopped the command (set at its exit).
	limit string
	// last is what status() shows of the AHP state once t is dropped.
	last *termState
	// kept is what a released terminal that was shown keeps once t is let
	// go, for a split made again (keptoutput.go).
	kept *keptOutput
	// spec is what it ran, for a rerun (rerun.go); its RunOf and Run say
	// which row and run a rerun is.
	spec termhost.Spec
	// rerunAs is the id of the terminal that ran its command again.
	rerunAs string
	// waiting and ports are what watchActivity saw last (activity.go).
	waiting bool
	ports   []int
}

// Terminals are the terminals of this backend's host shown here (the
// agents', the user's) with their display pumps and input writers: they
// own their state and lock, and reach the rest of the backend only
// through what New is given.
type Terminals struct {
	ctx    context.Context
	log    *slog.Logger
	events *event.Queue
	disp   *display.Displays
	// user is this editor's claim (the user's terminals hold it).
	user ahp.Claim
	deps Deps

	mu    sync.Mutex
	byID  map[string]*terminal
	order []string // ids, oldest first
	// cols, rows are the text area a new terminal's split will have, as
	// Lua last reported it (0 = unknown).
	cols, rows uint16
	// keepShown: a terminal shown to the end keeps its output too (among
	// the newest keepReleased), for the Neovim that may take this
	// backend's sessions over (linger.go) and show them again.
	keepShown bool
	// keptBytes bounds the kept output held in memory (0: the default);
	// beyond it, the oldest goes to files in keptDir (keptoutput.go).
	keptBytes int
	keptDir   string
}

// SetClosing tells the terminals how to learn that the backend is
// shutting down (the sessions part's, made after this one).
func (ts *Terminals) SetClosing(closing func() bool) { ts.deps.Closing = closing }

// Deps are what terminals need of the other parts.
type Deps struct {
	// Host returns the terminal host (made on first use).
	Host func() *termhost.Host
	// ClaimForUser gives a terminal to this editor's user (socketHost).
	ClaimForUser func(t *termhost.Terminal) error
	// Closing reports that the backend is shutting down.
	Closing func() bool
}

// New returns the terminals part: it tells Lua through events and
// shows terminals through disp.
func New(ctx context.Context, log *slog.Logger, events *event.Queue, disp *display.Displays, user ahp.Claim, deps Deps) *Terminals {
	return &Terminals{ctx: ctx, log: log, events: events, disp: disp, user: user, deps: deps, byID: map[string]*terminal{}}
}

// Size is the size of the split a new terminal will get, as Lua last
// reported it (0x0 before it did).
func (ts *Terminals) Size() (cols, rows uint16) {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	return ts.cols, ts.rows
}

// SetSize records the size a new terminal's split will have
// ("terminal_size").
func (ts *Terminals) SetSize(cols, rows int) error {
	if cols <= 0 || rows <= 0 || cols > 65535 || rows > 65535 {
		return fmt.Errorf("terminal_size: bad size %dx%d", cols, rows)
	}
	ts.mu.Lock()
	ts.cols, ts.rows = uint16(cols), uint16(rows)
	ts.mu.Unlock()
	return nil
}

// Released marks terminal tid released (the agent, or the host, let go
// of it) and lets go of output nobody will show.
func (ts *Terminals) Released(tid string) {
	ts.mu.Lock()
	tm, ok := ts.byID[tid]
	ts.mu.Unlock()
	if !ok {
		return
	}
	tm.releaseOnce.Do(func() {
		tm.mu.Lock()
		tm.state = "released"
		if tm.t != nil {
			tm.bytes, tm.truncated = tm.t.BytesSeen(), tm.t.Truncated()
		}
		tm.mu.Unlock()
		close(tm.released)
	})
	ts.events.Push(event.TerminalReleased{ID: tid})
	ts.dropReleasedOutput()
}

// Add starts showing t: the agent's (of session key, whose agent calls
// it sid) or the user's.
func (ts *Terminals) Add(t *termhost.Terminal, key, sid string, user bool) *terminal {
	tid := t.ID()
	spec := t.Spec()
	tm := &terminal{
		id: tid, sid: sid, key: key,
		command:  t.CommandLine(),
		cwd:      spec.Dir,
		claim:    spec.Claim,
		released: make(chan struct{}),
		input:    make(chan []byte, 1024),
		t:        t,
		spec:     spec,
		state:    "running",
		user:     user,
		sandbox:  spec.Confined,
	}
	if user {
		tm.command = spec.Title
	}
	ts.mu.Lock()
	ts.byID[tid] = tm
	ts.order = append(ts.order, tid)
	ts.mu.Unlock()
	// The command already started at the split's size (acp.Options.
	// TerminalSize); attach sets it again once the window exists.
	ev := event.TerminalCreated{
		ID: tid, Session: tm.key, SessionID: sid, Command: tm.command, Cwd: tm.cwd, User: user, Sandbox: tm.sandbox,
	}
	if !user && spec.Title != tm.command {
		ev.Title = spec.Title // the description the agent gave it
	}
	ts.events.Push(ev)
	go ts.watchExit(tm, t)
	go ts.writeInput(tm, t)
	go ts.watchActivity(tm, t)
	return tm
}

// watchExit reports the terminal's exit to Lua.
func (ts *Terminals) watchExit(tm *terminal, t *termhost.Terminal) {
	st, err := display.ExitStatus(ts.ctx, t)
	if err != nil {
		return
	}
	tm.mu.Lock()
	tm.exit = &st
	tm.limit = t.LimitHit()
	if tm.state == "running" {
		tm.state = "exited"
	}
	tm.mu.Unlock()
	ts.events.Push(event.Exit(tm.id, st, event.LastLine(t.Output().Text)))
}

// writeInput writes the user's keystrokes to the pty in order, off the RPC
// notification goroutine (a full pty input buffer must not stall Neovim).
func (ts *Terminals) writeInput(tm *terminal, t *termhost.Terminal) {
	for {
		select {
		case p := <-tm.input:
			if _, err := t.Write(p); err != nil {
				ts.log.Debug("terminal input not written", "terminal", tm.id, "err", err)
			}
		case <-tm.released:
			return
		case <-ts.ctx.Done():
			return
		}
	}
}

// dropReleasedOutput lets go of the output of released terminals: of
// those fully shown (their pump finished) all but their display's raw
// bytes (kept, for a split made again: within keptBytes in memory, the
// oldest beyond it in files), and that of those no buffer showed beyond
// the newest keepReleased, so memory stays bounded.
func (ts *Terminals) dropReleasedOutput() {
	ts.mu.Lock()
	unshown, inMemory := 0, 0
	budget := ts.keptBytes
	if budget <= 0 {
		budget = DefaultKeptBytes
	}
	var spill []*keptOutput
	for i := len(ts.order) - 1; i >= 0; i-- {
		tm := ts.byID[ts.order[i]]
		tm.mu.Lock()
		if tm.state == "released" && tm.t != nil {
			switch {
			case tm.everAttached && tm.pump != nil && tm.pump.Finished() && !ts.keepShown:
				tm.keepOutputLocked()
			case !tm.everAttached || ts.keepShown:
				unshown++
				if unshown > keepReleased && tm.everAttached && tm.pump != nil && tm.pump.Finished() {
					tm.keepOutputLocked() // shown: its split may be made again
				} else if unshown > keepReleased {
					tm.dropOutputLocked()
				}
			}
		}
		if tm.kept != nil {
			if n := tm.kept.inMemory(); n > 0 {
				inMemory += n
				if inMemory > budget {
					spill = append(spill, tm.kept)
				}
			}
		}
		tm.mu.Unlock()
	}
	dir := ts.keptDir
	ts.mu.Unlock()
	for _, k := range spill {
		if err := k.spill(dir); err != nil {
			ts.log.Warn("kept output let go", "err", err)
		}
	}
}

// keepOutputLocked keeps the display's bytes of a released terminal that
// was shown and lets go of the rest; tm.mu held.
func (tm *terminal) keepOutputLocked() {
	st, ok := tm.t.Exited()
	if tm.exit != nil {
		st, ok = *tm.exit, true
	}
	if ok {
		tm.kept = newKeptOutput(tm.t, st)
	}
	tm.dropOutputLocked()
}

// SetKept sets the budget of kept output in memory and the folder beyond
// it (setup: terminal.kept_bytes).
func (ts *Terminals) SetKept(bytes int, dir string) {
	ts.mu.Lock()
	ts.keptBytes, ts.keptDir = bytes, dir
	ts.mu.Unlock()
	removeStaleKept(dir)
}

// RemoveKept removes the folder of kept output (the backend ends).
func (ts *Terminals) RemoveKept() {
	ts.mu.Lock()
	dir := ts.keptDir
	ts.mu.Unlock()
	if dir != "" {
		_ = os.RemoveAll(dir)
	}
}

// lookup returns the terminal with id, or an error naming it.
func (ts *Terminals) lookup(id string) (*terminal, error) {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	tm, ok := ts.byID[id]
	if !ok {
		return nil, fmt.Errorf("unknown terminal %q", id)
	}
	return tm, nil
}

// Running returns the live termhost terminal, or an error saying why not.
func (ts *Terminals) Running(id string) (*termhost.Terminal, error) {
	tm, err := ts.lookup(id)
	if err != nil {
		return nil, err
	}
	tm.mu.Lock()
	defer tm.mu.Unlock()
	switch {
	case tm.state == "released":
		return nil, fmt.Errorf("terminal %q was released", id)
	case tm.exit != nil:
		return nil, fmt.Errorf("terminal %q has already exited (%s)", id, tm.exit.String())
	}
	return tm.t, nil
}

// Attach ("attach") starts feeding terminal id's output into Neovim channel ch
// (a buffer from nvim_open_term), replacing an earlier pump, and sizes
// the pty to the window.
func (ts *Terminals) Attach(id string, ch int, args display.Buffer) error {
	tm, err := ts.lookup(id)
	if err != nil {
		return fmt.Errorf("attach: %w", err)
	}
	tm.mu.Lock()
	t := tm.t
	kept := tm.kept
	shown := tm.everAttached
	old := tm.pump
	running := tm.state == "running" && tm.exit == nil
	tm.mu.Unlock()
	if t == nil && kept == nil {
		// Released before any buffer showed it, and beyond the newest
		// keepReleased: nothing to show, which is no error. The buffer
		// says so (after this request returns: Lua is waiting on it).
		send := ts.disp.Sender(ch)
		msg := "[released before it was shown; its output is no longer kept]"
		if shown {
			msg = "[released; its output is no longer kept]"
		}
		go func() {
			_ = send([]byte(vtsafe.Guard + msg))
		}()
		return nil
	}
	if old != nil {
		old.Stop()
	}
	if running && args.Cols > 0 && args.Rows > 0 {
		if err := t.Resize(uint16(args.Cols), uint16(args.Rows)); err != nil {
			ts.log.Debug("resize on attach", "terminal", id, "err", err)
		}
	}
	var src display.Source = kept
	if t != nil {
		src = t
	}
	p := ts.disp.Show(src, tm.released, ch, args.Scrollback, func(lines []string) {
		ts.events.Push(event.DisplayEnded{ID: tm.id, Lines: lines})
	})
	tm.mu.Lock()
	tm.pump = p
	tm.everAttached = true
	tm.mu.Unlock()
	go func() {
		<-p.Done()
		ts.dropReleasedOutput()
	}()
	return nil
}

// Interrupt ("interrupt") sends SIGINT to the terminal's process group.
func (ts *Terminals) Interrupt(id string) error {
	t, err := ts.Running(id)
	if err != nil {
		return fmt.Errorf("interrupt: %w", err)
	}
	if err := t.Signal(syscall.SIGINT); err != nil {
		return fmt.Errorf("interrupt terminal %q: %w", id, err)
	}
	return nil
}

// Kill ("kill") kills the terminal's process group: SIGTERM then SIGKILL after
// the grace period, or SIGKILL at once when force is set. It answers
// {grace_ms}: how long the command has before SIGKILL (0 when forced).
func (ts *Terminals) Kill(id string, force bool) (map[string]any, error) {
	t, err := ts.Running(id)
	if err != nil {
		return nil, fmt.Errorf("kill: %w", err)
	}
	grace := t.KillGrace()
	if force {
		err, grace = t.Signal(syscall.SIGKILL), 0
	} else {
		err = t.Kill()
	}
	if err != nil {
		return nil, fmt.Errorf("kill terminal %q: %w", id, err)
	}
	return map[string]any{"grace_ms": grace.Milliseconds()}, nil
}

// Input ("input") queues keystrokes (or text) for the terminal's pty.
func (ts *Terminals) Input(id string, data []byte) error {
	tm, err := ts.lookup(id)
	if err != nil {
		return fmt.Errorf("input: %w", err)
	}
	select {
	case <-tm.released:
		return fmt.Errorf("input: terminal %q was released", id)
	default:
	}
	select {
	case tm.input <- data:
		return nil
	default:
		ts.log.Warn("terminal input dropped: the process is not reading its input", "terminal", id, "bytes", len(data))
		return fmt.Errorf("input: terminal %q is not reading its input", id)
	}
}

// Resize sets the pty size of our terminal id to its window's text area
// ("resize"; the bridge sends a remote one's to remotes).
func (ts *Terminals) Resize(id string, cols, rows int) error {
	if cols <= 0 || rows <= 0 || cols > 65535 || rows > 65535 {
		return fmt.Errorf("resize: bad size %dx%d for terminal %q", cols, rows, id)
	}
	t, err := ts.Running(id)
	if err != nil {
		return nil // a resize racing the exit is not worth an error
	}
	if c := t.Claims().Holder(); c.Kind == ahp.ClaimClient && c != ts.user {
		return nil // another client holds it and sizes it to its own split
	}
	if err := t.Resize(uint16(cols), uint16(rows)); err != nil {
		return fmt.Errorf("resize terminal %q: %w", id, err)
	}
	return nil
}

// StopPumps stops every terminal's display pump: the Neovim they fed is
// gone (a link dropped); the next one attaches its own buffers.
func (ts *Terminals) StopPumps() {
	ts.mu.Lock()
	var pumps []*display.Pump
	for _, tm := range ts.byID {
		tm.mu.Lock()
		if tm.pump != nil {
			pumps = append(pumps, tm.pump)
		}
		tm.mu.Unlock()
	}
	ts.mu.Unlock()
	for _, p := range pumps {
		p.Stop()
	}
}

// KeepShownOutput makes released terminals keep their output even once
// shown to the end (the newest keepReleased of them): a Neovim taking the
// sessions over shows them again.
func (ts *Terminals) KeepShownOutput() {
	ts.mu.Lock()
	ts.keepShown = true
	ts.mu.Unlock()
}
