package editor

import (
	"context"
	"fmt"
	"sync"
	"syscall"

	"github.com/agentrun/agentrun.nvim/internal/vtsafe"
	"github.com/agentrun/agentrun.nvim/termhost"
	"github.com/agentrun/agentrun.nvim/termhost/ahp"
)

// keepReleased is how many released terminals that no buffer ever showed
// keep their output for a later :AgentTerminals open; older ones drop it.
const keepReleased = 16

// terminal is the bridge's view of one agent terminal: its display pump,
// its input writer and what status() reports after it is gone.
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
	pump         *pump
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
}

// TerminalCreated implements acp.Editor: Lua learns of the terminal before
// the agent gets its id, so the buffer can attach from the first byte.
func (b *Bridge) TerminalCreated(_ context.Context, sid, tid string) {
	t, err := b.termHost().Get(tid)
	if err != nil {
		b.log.Warn("terminal created but unknown to the host", "terminal", tid, "err", err)
		return
	}
	b.addTerminal(t, sid, false)
}

// addTerminal starts showing t: the agent's (session sid) or the user's.
func (b *Bridge) addTerminal(t *termhost.Terminal, sid string, user bool) *terminal {
	tid := t.ID()
	spec := t.Spec()
	tm := &terminal{
		id: tid, sid: sid, key: b.keyOf(sid),
		command:  t.CommandLine(),
		cwd:      spec.Dir,
		claim:    spec.Claim,
		released: make(chan struct{}),
		input:    make(chan []byte, 1024),
		t:        t,
		state:    "running",
		user:     user,
		sandbox:  spec.Confined,
	}
	if user {
		tm.command = spec.Title
	}
	b.mu.Lock()
	b.terms[tid] = tm
	b.termOrder = append(b.termOrder, tid)
	b.mu.Unlock()
	// The command already started at the split's size (acp.Options.
	// TerminalSize); attach sets it again once the window exists.
	ev := map[string]any{
		"id": tid, "session": tm.key, "session_id": sid, "command": tm.command, "cwd": tm.cwd, "user": user, "sandbox": tm.sandbox,
	}
	if !user && spec.Title != tm.command {
		ev["title"] = spec.Title // the description the agent gave it
	}
	b.events.push(evTerminalCreated, ev)
	go b.watchExit(tm, t)
	go b.writeInput(tm, t)
	return tm
}

// watchExit reports the terminal's exit to Lua.
func (b *Bridge) watchExit(tm *terminal, t *termhost.Terminal) {
	st, err := exitStatus(b.ctx, t)
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
	p := map[string]any{"id": tm.id}
	if st.Code != nil {
		p["exit_code"] = *st.Code
	} else {
		p["signal"] = st.Signal
	}
	b.events.push(evTerminalExit, p)
}

// writeInput writes the user's keystrokes to the pty in order, off the RPC
// notification goroutine (a full pty input buffer must not stall Neovim).
func (b *Bridge) writeInput(tm *terminal, t *termhost.Terminal) {
	for {
		select {
		case p := <-tm.input:
			if _, err := t.Write(p); err != nil {
				b.log.Debug("terminal input not written", "terminal", tm.id, "err", err)
			}
		case <-tm.released:
			return
		case <-b.ctx.Done():
			return
		}
	}
}

// TerminalReleased implements acp.Editor.
func (b *Bridge) TerminalReleased(_ context.Context, _ string, tid string) {
	b.mu.Lock()
	tm, ok := b.terms[tid]
	b.mu.Unlock()
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
	b.events.push(evTerminalReleased, map[string]any{"id": tid})
	b.dropReleasedOutput()
}

// dropReleasedOutput lets go of the output of released terminals that are
// fully shown (their pump finished) or that no buffer showed and are
// beyond the newest keepReleased, so memory stays bounded.
func (b *Bridge) dropReleasedOutput() {
	b.mu.Lock()
	defer b.mu.Unlock()
	unshown := 0
	for i := len(b.termOrder) - 1; i >= 0; i-- {
		tm := b.terms[b.termOrder[i]]
		tm.mu.Lock()
		if tm.state == "released" && tm.t != nil {
			switch {
			case tm.everAttached && tm.pump != nil && tm.pump.finished():
				tm.dropOutputLocked()
			case !tm.everAttached:
				unshown++
				if unshown > keepReleased {
					tm.dropOutputLocked()
				}
			}
		}
		tm.mu.Unlock()
	}
}

// lookup returns the terminal with id, or an error naming it.
func (b *Bridge) lookup(id string) (*terminal, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	tm, ok := b.terms[id]
	if !ok {
		return nil, fmt.Errorf("unknown terminal %q", id)
	}
	return tm, nil
}

// running returns the live termhost terminal, or an error saying why not.
func (b *Bridge) running(id string) (*termhost.Terminal, error) {
	tm, err := b.lookup(id)
	if err != nil {
		return nil, err
	}
	tm.mu.Lock()
	defer tm.mu.Unlock()
	switch {
	case tm.state == "released":
		return nil, fmt.Errorf("terminal %q was released", id)
	case tm.exit != nil:
		return nil, fmt.Errorf("terminal %q has already exited (%s)", id, exitText(*tm.exit))
	}
	return tm.t, nil
}

// attachArgs describe the terminal buffer Lua created.
type attachArgs struct {
	Cols       int `msgpack:"cols"`
	Rows       int `msgpack:"rows"`
	Scrollback int `msgpack:"scrollback"`
}

// handleAttach starts feeding terminal id's output into Neovim channel ch
// (a buffer from nvim_open_term), replacing an earlier pump, and sizes
// the pty to the window.
func (b *Bridge) handleAttach(id string, ch int, args attachArgs) error {
	tm, err := b.lookup(id)
	if err != nil {
		return fmt.Errorf("attach: %w", err)
	}
	tm.mu.Lock()
	t := tm.t
	old := tm.pump
	running := tm.state == "running" && tm.exit == nil
	tm.mu.Unlock()
	if t == nil {
		// Released before any buffer showed it, and beyond the newest
		// keepReleased: nothing to show, which is no error. The buffer
		// says so (after this request returns: Lua is waiting on it).
		go func() {
			_ = b.v.Request("nvim_chan_send", nil, ch, []byte(vtsafe.Guard+"[released before it was shown; its output is no longer kept]"))
		}()
		return nil
	}
	if old != nil {
		old.stop()
	}
	if running && args.Cols > 0 && args.Rows > 0 {
		if err := t.Resize(uint16(args.Cols), uint16(args.Rows)); err != nil {
			b.log.Debug("resize on attach", "terminal", id, "err", err)
		}
	}
	p := b.display.show(t, tm.released, ch, args.Scrollback)
	tm.mu.Lock()
	tm.pump = p
	tm.everAttached = true
	tm.mu.Unlock()
	go func() {
		<-p.done
		b.dropReleasedOutput()
	}()
	return nil
}

// handleInterrupt sends SIGINT to the terminal's process group.
func (b *Bridge) handleInterrupt(id string) error {
	t, err := b.running(id)
	if err != nil {
		return fmt.Errorf("interrupt: %w", err)
	}
	if err := t.Signal(syscall.SIGINT); err != nil {
		return fmt.Errorf("interrupt terminal %q: %w", id, err)
	}
	return nil
}

// handleKill kills the terminal's process group: SIGTERM then SIGKILL after
// the grace period, or SIGKILL at once when force is set.
func (b *Bridge) handleKill(id string, force bool) error {
	t, err := b.running(id)
	if err != nil {
		return fmt.Errorf("kill: %w", err)
	}
	if force {
		err = t.Signal(syscall.SIGKILL)
	} else {
		err = t.Kill()
	}
	if err != nil {
		return fmt.Errorf("kill terminal %q: %w", id, err)
	}
	return nil
}

// handleInput queues keystrokes (or text) for the terminal's pty.
func (b *Bridge) handleInput(id string, data []byte) error {
	tm, err := b.lookup(id)
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
		b.log.Warn("terminal input dropped: the process is not reading its input", "terminal", id, "bytes", len(data))
		return fmt.Errorf("input: terminal %q is not reading its input", id)
	}
}

// handleResize sets the pty size to the window's text area.
func (b *Bridge) handleResize(id string, cols, rows int) error {
	if cols <= 0 || rows <= 0 || cols > 65535 || rows > 65535 {
		return fmt.Errorf("resize: bad size %dx%d for terminal %q", cols, rows, id)
	}
	if _, _, err := remoteName(id); err == nil {
		return b.remotes.resize(id, cols, rows)
	}
	t, err := b.running(id)
	if err != nil {
		return nil // a resize racing the exit is not worth an error
	}
	if c := t.Claim(); c.Kind == ahp.ClaimClient && c != b.user {
		return nil // another client holds it and sizes it to its own split
	}
	if err := t.Resize(uint16(cols), uint16(rows)); err != nil {
		return fmt.Errorf("resize terminal %q: %w", id, err)
	}
	return nil
}

// handleTerminalSize records the size a new terminal's split will have.
// terminalSize is the size of the split a new terminal will get, as Lua
// last reported it (0x0 before it did).
func (b *Bridge) terminalSize() (cols, rows uint16) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.newCols, b.newRows
}

func (b *Bridge) handleTerminalSize(cols, rows int) error {
	if cols <= 0 || rows <= 0 || cols > 65535 || rows > 65535 {
		return fmt.Errorf("terminal_size: bad size %dx%d", cols, rows)
	}
	b.mu.Lock()
	b.newCols, b.newRows = uint16(cols), uint16(rows)
	b.mu.Unlock()
	return nil
}

// exitText renders an exit status as the buffers show it: "exit 0",
// "signal SIGTERM".
func exitText(st termhost.ExitStatus) string {
	if st.Code != nil {
		return fmt.Sprintf("exit %d", *st.Code)
	}
	return "signal " + st.Signal
}
