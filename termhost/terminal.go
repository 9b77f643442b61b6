package termhost

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/agentrun/agentrun.nvim/ahp"
	"github.com/agentrun/agentrun.nvim/internal/procstat"
	"github.com/agentrun/agentrun.nvim/internal/rawlog"
	"github.com/agentrun/agentrun.nvim/internal/render"
)

// writeTimeout bounds a Write to a pty whose program does not read its
// input (the pty's input buffer is full).
const writeTimeout = 5 * time.Second

// Terminal is one command running in a pty: its rendered output for the
// agent, its raw output for the display, and its lifecycle.
//
// Its size (about 60 methods, half of them unexported) is what a pty
// shared by an agent, displays and other clients needs; they share one
// pty, one lock and one end, so they stay one type, spread by concern
// over files: lifecycle.go (exit, kill, release), readloop.go (the pty's
// output, never waiting on a reader), state.go and subscribe.go (the AHP
// terminal state and its subscribers), activity.go (waits for input,
// ports) and limits.go.
type Terminal struct {
	host    *Host
	id      string
	spec    Spec
	cmdline string
	limit   int

	// Set by Create before the goroutines start.
	cmd     *exec.Cmd
	pty     *os.File
	pid     int // also the process group id
	started time.Time
	// tree finds what the command started, also what left its session
	// (see markProcesses).
	tree procstat.Tree

	store *render.Store
	raw   *rawlog.Log
	live  liveState // the AHP state and its action stream (state.go)
	// scripts is this terminal's shell integration directory, if any.
	scripts string
	bytes   atomic.Int64
	// waiting counts goroutines blocked in Wait.
	waiting atomic.Int32

	leaderExited atomic.Bool
	exitAt       time.Time     // written before leaderExited is set
	exited       chan struct{} // the leader was reaped; leaderStatus is set
	done         chan struct{} // exited and the pty drained; exit is set
	readerDone   chan struct{}
	gone         chan struct{} // released and cleaned up

	writeMu sync.Mutex

	// replacedBy is the id of the terminal that runs its command again
	// (SetReplacedBy); atomic, as the listing reads it under its lock.
	replacedBy atomic.Pointer[string]
	// restarting: the user stops it to run its command again (R)
	restarting atomic.Bool

	portsMu sync.Mutex // a leaf lock: taken under the listing's (listing.go)
	ports   []int      // what Ports found last (activity.go)

	mu           sync.Mutex
	leaderStatus ExitStatus
	limitHit     string // set by watchLimits when it killed the tree
	limitReport  string // the limit that stopped the command, set at its end
	exit         *ExitStatus
	drainRule    string // how the output was found drained (lifecycle.go)
	released     bool
	killArmed    bool
	stopArmed    bool // Stop's escalation to Kill is pending or done
	cols, rows   uint16
}

func newTerminal(h *Host, id string, spec Spec, cmdline string, limit int) *Terminal {
	t := &Terminal{
		host:       h,
		id:         id,
		spec:       spec,
		cmdline:    cmdline,
		limit:      limit,
		store:      render.NewStore(limit),
		raw:        rawlog.New(h.opts.DisplayBytes),
		exited:     make(chan struct{}),
		done:       make(chan struct{}),
		readerDone: make(chan struct{}),
		gone:       make(chan struct{}),
		cols:       spec.Cols,
		rows:       spec.Rows,
	}
	return t
}

// ID returns the terminal's id ("term-1"), unique within its Host.
func (t *Terminal) ID() string { return t.id }

func (t *Terminal) seq() int {
	n, _ := strconv.Atoi(strings.TrimPrefix(t.id, "term-"))
	return n
}

// Spec returns the spec the terminal was created with, defaults filled
// in (Dir, Cols, Rows, Title).
func (t *Terminal) Spec() Spec {
	s := t.spec
	s.Args = append([]string(nil), s.Args...)
	if s.Env != nil {
		s.Env = append([]string(nil), s.Env...)
	}
	return s
}

// SetReplacedBy records that terminal id runs t's command again (a
// rerun, whose Spec.RunOf names t's row): the root listing says so, and
// a listing by rows leaves t out.
func (t *Terminal) SetReplacedBy(id string) {
	t.replacedBy.Store(&id)
	t.host.listingChanged()
}

// MarkRestarting records that the user stops t to run its command again
// (R in Neovim): whoever is told it was taken from them can be told so.
func (t *Terminal) MarkRestarting() { t.restarting.Store(true) }

// Restarting reports whether the user stopped t to run its command again.
func (t *Terminal) Restarting() bool { return t.restarting.Load() }

// ReplacedBy returns the id of the terminal that runs t's command again,
// or "".
func (t *Terminal) ReplacedBy() string {
	if p := t.replacedBy.Load(); p != nil {
		return *p
	}
	return ""
}

// CommandLine returns the command as a shell line, for display.
func (t *Terminal) CommandLine() string { return t.cmdline }

// Pid returns the process id of the command, which is also its process
// group id.
func (t *Terminal) Pid() int { return t.pid }

// Started returns when the command started.
func (t *Terminal) Started() time.Time { return t.started }

// BytesSeen returns how many raw bytes the command has printed so far.
func (t *Terminal) BytesSeen() int64 { return t.bytes.Load() }

// ByteLimit returns the effective limit of the rendered text.
func (t *Terminal) ByteLimit() int { return t.limit }

// Truncated reports whether rendered text was dropped to honour the
// limit, without copying the text.
func (t *Terminal) Truncated() bool { return t.store.Truncated() }

// Size returns the pty's current size.
func (t *Terminal) Size() (cols, rows uint16) {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.cols, t.rows
}

// Exited returns the exit status once Done is closed.
func (t *Terminal) Exited() (ExitStatus, bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.exit == nil {
		return ExitStatus{}, false
	}
	return *t.exit, true
}

// Output returns a snapshot of the rendered text (the tail within the
// byte limit) and, once Done is closed, the exit status. It keeps
// answering after Release (the last output).
func (t *Terminal) Output() Output {
	text, truncated := t.store.Snapshot()
	out := Output{Text: text, Truncated: truncated}
	t.mu.Lock()
	if t.exit != nil {
		st := *t.exit
		out.Exit = &st
	}
	t.mu.Unlock()
	return out
}

// AppendOutputJSON is Output with the text appended to dst as a JSON
// string (quotes included) instead of in Output.Text (left empty): the
// form terminal/output sends, which the Store keeps ready for a reader
// that polls a big output, into a buffer the caller reuses (a MiB of
// text per call makes no garbage of that size).
func (t *Terminal) AppendOutputJSON(dst []byte) ([]byte, Output) {
	text, truncated := t.store.AppendJSON(dst)
	out := Output{Truncated: truncated}
	t.mu.Lock()
	if t.exit != nil {
		st := *t.exit
		out.Exit = &st
	}
	t.mu.Unlock()
	return text, out
}

// Done returns a channel closed once the command has exited and its
// output has been read to the end (see doc.go for the drain rule).
func (t *Terminal) Done() <-chan struct{} { return t.done }

// Wait blocks until Done and returns the exit status; any number of
// goroutines may wait. A Wait begun before Release returns the status
// the release's kill produced; a Wait after Release fails.
func (t *Terminal) Wait(ctx context.Context) (ExitStatus, error) {
	if err := t.usable(); err != nil {
		return ExitStatus{}, err
	}
	t.waiting.Add(1)
	defer t.waiting.Add(-1)
	select {
	case <-t.done:
		st, _ := t.Exited()
		return st, nil
	case <-ctx.Done():
		return ExitStatus{}, ctx.Err()
	}
}

// Kill sends SIGTERM to the command's process group and, if any of the
// group is still alive after Options.KillGrace, SIGKILL. It returns at
// once; the terminal stays valid (Output, Wait). Killing an exited
// command is not an error.
func (t *Terminal) Kill() error {
	if err := t.usable(); err != nil {
		return err
	}
	t.terminate()
	return nil
}

// Signal sends sig to the command's process group (SIGINT for Ctrl-C).
// A group that is already gone is not an error.
func (t *Terminal) Signal(sig syscall.Signal) error {
	if err := t.usable(); err != nil {
		return err
	}
	if err := syscall.Kill(-t.pid, sig); err != nil && !errors.Is(err, syscall.ESRCH) {
		return fmt.Errorf("signal %s to terminal %q: %w", SignalName(sig), t.id, err)
	}
	return nil
}

// Write sends p to the command as typed input. It fails after Release,
// and after 5s when the command does not read its input.
func (t *Terminal) Write(p []byte) (int, error) {
	if err := t.usable(); err != nil {
		return 0, err
	}
	t.writeMu.Lock()
	defer t.writeMu.Unlock()
	_ = t.pty.SetWriteDeadline(time.Now().Add(writeTimeout))
	n, err := t.pty.Write(p)
	if err != nil {
		return n, fmt.Errorf("write to terminal %q: %w", t.id, err)
	}
	return n, nil
}

// Resize sets the pty's size (the command gets SIGWINCH).
func (t *Terminal) Resize(cols, rows uint16) error {
	_, err := t.resize(cols, rows)
	return err
}

// resize is Resize returning the resized action's sequence number.
func (t *Terminal) resize(cols, rows uint16) (uint64, error) {
	if err := t.usable(); err != nil {
		return 0, err
	}
	if cols == 0 || rows == 0 {
		return 0, fmt.Errorf("resize terminal %q: invalid size %dx%d", t.id, cols, rows)
	}
	if err := setSize(t.pty, cols, rows); err != nil {
		return 0, fmt.Errorf("resize terminal %q to %dx%d: %w", t.id, cols, rows, err)
	}
	t.mu.Lock()
	t.cols, t.rows = cols, rows
	t.mu.Unlock()
	return t.publish(ahp.ResizedAction{Terminal: t.live.uri, Cols: int(cols), Rows: int(rows)}), nil
}

// Release kills the command if it is running (its whole process group,
// background children included: SIGTERM, SIGKILL after the grace), frees
// the pty and goroutines once it is gone, and makes the Host forget the
// id. Waits already pending get the exit status; later calls that can
// fail return ErrReleased. Display keeps working so a view can show the
// last output. Release returns at once and may be called more than once.
func (t *Terminal) Release() {
	if t.markReleased() {
		t.releaseNow()
	}
}

// markReleased sets the released flag; it reports whether this call did.
func (t *Terminal) markReleased() bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.released {
		return false
	}
	t.released = true
	return true
}

// releaseNow does Release's work once the flag is set.
func (t *Terminal) releaseNow() {
	t.host.forget(t)
	t.terminate()
	go t.cleanup()
	t.host.opts.Logf("termhost: %s released", t.id)
}

// Released reports whether Release was called.
func (t *Terminal) Released() bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.released
}

// Display returns the raw output log (escape sequences and all) for the
// display.
func (t *Terminal) Display() *rawlog.Log { return t.raw }

// usable fails once the terminal was released.
func (t *Terminal) usable() error {
	if t.Released() {
		return fmt.Errorf("%w: terminal %q", ErrReleased, t.id)
	}
	return nil
}
