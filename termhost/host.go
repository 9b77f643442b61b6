package termhost

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"sort"
	"strconv"
	"sync"
	"time"

	"github.com/agentrun/agentrun.nvim/ahp"
	"github.com/agentrun/agentrun.nvim/internal/procstat"
	"github.com/agentrun/agentrun.nvim/internal/shquote"
)

// Option defaults.
const (
	DefaultByteLimit    = 16 << 20
	DefaultKillGrace    = 3 * time.Second
	DefaultDisplayBytes = 1 << 20
)

// Host owns a set of terminals: it creates them, finds them by id and
// releases them all on Close.
type Host struct {
	opts Options
	// The drain rule's timings (drainQuiet, drainMax; tests shorten them).
	drainQuiet, drainMax time.Duration

	mu     sync.Mutex
	seq    int
	live   map[string]*Terminal
	used   map[string]bool        // every id a terminal ever had
	active map[*Terminal]struct{} // not yet cleaned up (includes released)
	closed bool
	// shellDir holds the shell integration scripts (shell.go), made on
	// first use and removed by Close.
	shellDir string

	root rootListing
}

// ByteLimit is the rendered-text cap of a terminal whose Spec gives none:
// Options.ByteLimit, or DefaultByteLimit when that was zero (this is the
// one place the option's default is applied).
func (h *Host) ByteLimit() int { return h.opts.ByteLimit }

// NewHost returns a Host; zero Options fields take their defaults.
func NewHost(opts Options) *Host {
	resetIgnoredSignals()
	if opts.ByteLimit <= 0 {
		opts.ByteLimit = DefaultByteLimit
	}
	if opts.KillGrace <= 0 {
		opts.KillGrace = DefaultKillGrace
	}
	if opts.DisplayBytes <= 0 {
		opts.DisplayBytes = DefaultDisplayBytes
	}
	if opts.Logf == nil {
		opts.Logf = func(string, ...any) {}
	}
	return &Host{
		opts:       opts,
		seq:        max(opts.IDBase, 0),
		drainQuiet: drainQuiet,
		drainMax:   drainMax,
		live:       make(map[string]*Terminal),
		used:       make(map[string]bool),
		active:     make(map[*Terminal]struct{}),
	}
}

// Create starts spec's command in a new pty and returns its terminal at
// once (the command runs on). Errors: an invalid working directory
// (ErrInvalidDir), a command that cannot be found (ErrCommandNotFound,
// `command "x" not found`), a command that fails to start, a closed host.
func (h *Host) Create(ctx context.Context, spec Spec) (*Terminal, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if spec.Dir == "" {
		wd, err := os.Getwd()
		if err != nil {
			return nil, fmt.Errorf("%w: no working directory given and ours is unknown: %w", ErrInvalidDir, err)
		}
		spec.Dir = wd
	}
	if err := checkDir(spec.Dir); err != nil {
		return nil, err
	}
	env := spec.Env
	if env == nil {
		env = os.Environ()
	}
	path, argv, err := resolveCommand(spec, envValue(env, "PATH"), spec.Dir)
	if err != nil {
		return nil, err
	}
	if spec.Cols == 0 {
		spec.Cols = 80
	}
	if spec.Rows == 0 {
		spec.Rows = 24
	}
	limit := h.opts.ByteLimit
	if spec.ByteLimit != nil {
		limit = max(*spec.ByteLimit, 0) // 0 (or less) keeps nothing
	}
	cmdline := commandLine(spec)
	if spec.Title == "" {
		spec.Title = cmdline
	}
	if spec.Claim == (ahp.Claim{}) {
		spec.Claim = ahp.ClientClaim("local")
	}
	if err := spec.Claim.Validate(); err != nil {
		return nil, fmt.Errorf("terminal claim: %w", err)
	}
	if spec.ShellIntegration && (len(spec.Args) > 0 || spec.Shell) {
		return nil, fmt.Errorf("shell integration starts an interactive shell: %s must come without arguments", cmdline)
	}

	h.mu.Lock()
	if h.closed {
		h.mu.Unlock()
		return nil, ErrHostClosed
	}
	id := spec.ID
	if id == "" {
		for id == "" || h.used[id] {
			h.seq++
			id = "term-" + strconv.Itoa(h.seq) + h.opts.IDSuffix
		}
	} else if h.used[id] {
		h.mu.Unlock()
		return nil, fmt.Errorf("terminal id %q is taken", id)
	}
	h.used[id] = true
	h.mu.Unlock()

	nonce, scripts := spec.Nonce, ""
	if spec.ShellIntegration {
		argv, env, nonce, scripts, err = h.integrateShell(id, path, argv, env, nonce)
		if err != nil {
			return nil, err
		}
	}
	if err := spec.Limits.Validate(); err != nil {
		return nil, fmt.Errorf("terminal limits: %w", err)
	}
	rl, err := spec.Limits.rlimitPrefix()
	if err != nil {
		return nil, err
	}
	if len(rl) > 0 || len(spec.Wrap) > 0 {
		// The launchers exec the command by its resolved path.
		inner := append([]string{path}, argv[1:]...)
		argv = append(append(append([]string{}, rl...), spec.Wrap...), inner...)
		path = argv[0]
	}
	t := newTerminal(h, id, spec, cmdline, limit)
	t.scripts = scripts
	t.initState(nonce)
	marker := markProcesses(id)
	env = append(slices.Clip(env), marker)
	t.cmd = &exec.Cmd{Path: path, Args: argv, Env: env, Dir: spec.Dir}
	master, err := startPty(t.cmd, spec.Cols, spec.Rows)
	if err != nil {
		return nil, fmt.Errorf("start %s: %w", cmdline, err)
	}
	t.pty = master
	t.pid = t.cmd.Process.Pid
	t.started = time.Now()
	// Read before waitLoop can reap the leader: its start time tells the
	// processes it started from older ones that got the same marker.
	st, _ := procstat.Read(strconv.Itoa(t.pid))
	t.tree = procstat.Tree{Leader: t.pid, Since: st.Start, Marker: marker}
	if h.opts.SessionStarted != nil {
		h.opts.SessionStarted(t.pid, marker)
	}

	h.mu.Lock()
	closed := h.closed
	if !closed {
		h.live[id] = t
	}
	h.active[t] = struct{}{}
	h.mu.Unlock()

	go t.readLoop()
	go t.waitLoop()
	if spec.Limits.Memory > 0 || spec.Limits.Processes > 0 {
		go t.watchLimits()
	}
	h.opts.Logf("termhost: %s started pid %d: %s (in %s)", id, t.pid, cmdline, spec.Dir)
	if closed {
		t.Release()
		return nil, ErrHostClosed
	}
	h.listingChanged()
	return t, nil
}

// Get returns the live terminal with that id, or an error
// `unknown terminal "id"` (ErrUnknownTerminal) when there is none.
func (h *Host) Get(id string) (*Terminal, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if t, ok := h.live[id]; ok {
		return t, nil
	}
	return nil, unknownTerminal(id)
}

// Terminals returns the live (not released) terminals, oldest first.
func (h *Host) Terminals() []*Terminal {
	h.mu.Lock()
	out := make([]*Terminal, 0, len(h.live))
	for _, t := range h.live {
		out = append(out, t)
	}
	h.mu.Unlock()
	sort.Slice(out, func(i, j int) bool { return out[i].seq() < out[j].seq() })
	return out
}

// Close releases every terminal and returns once their processes are
// gone (process groups included) and their goroutines have ended, or
// once KillGrace plus a second has passed. Create fails afterwards.
func (h *Host) Close() {
	h.mu.Lock()
	h.closed = true
	live := make([]*Terminal, 0, len(h.live))
	for _, t := range h.live {
		live = append(live, t)
	}
	active := make([]*Terminal, 0, len(h.active))
	for t := range h.active {
		active = append(active, t)
	}
	h.mu.Unlock()

	for _, t := range live {
		t.Release()
	}
	deadline := time.Now().Add(h.opts.KillGrace + time.Second)
	for _, t := range active {
		t.awaitGone(deadline)
	}
	h.removeShellDir()
}

// forget drops a released terminal from the live set.
func (h *Host) forget(t *Terminal) {
	h.mu.Lock()
	if h.live[t.id] == t {
		delete(h.live, t.id)
	}
	h.mu.Unlock()
	h.listingChanged()
}

// cleaned drops a terminal whose pty and goroutines are gone.
func (h *Host) cleaned(t *Terminal) {
	h.mu.Lock()
	delete(h.active, t)
	h.mu.Unlock()
}

// commandLine renders a spec's command for display.
func commandLine(spec Spec) string {
	if spec.Shell {
		return spec.Command
	}
	return shquote.Join(append([]string{spec.Command}, spec.Args...))
}
