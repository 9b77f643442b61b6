package terminals

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/agentrun/agentrun.nvim/ahp"
	"github.com/agentrun/agentrun.nvim/ahp/server"
	"github.com/agentrun/agentrun.nvim/internal/event"
	"github.com/agentrun/agentrun.nvim/termhost"
)

// The user's side of the AHP terminal model: shells the user starts
// (:AgentShell, claim {client}), taking an agent's terminal over (its
// claim becomes {client}; acp then lets go of it, see acp/claims.go),
// disposing of a terminal, and input through the Lua API, which only
// reaches terminals the user holds. status() shows each terminal's AHP
// state (termStatus).

// maxStatusParts bounds the content parts status() looks at for commands.
const maxStatusParts = 60

// shellArgs is what Lua sends to start a user terminal.
type shellArgs struct {
	// Cmd, when set, runs through the shell (shell -c cmd); else the shell
	// runs interactively with our shell integration.
	Cmd   string `msgpack:"cmd"`
	Shell string `msgpack:"shell"` // $SHELL; "" means /bin/sh
	Cwd   string `msgpack:"cwd"`
}

// Shell starts a terminal the user holds and returns its id ("shell");
// Lua opens its split.
func (ts *Terminals) Shell(args shellArgs) (map[string]any, error) {
	shell := args.Shell
	if shell == "" {
		shell = "/bin/sh"
	}
	if !filepath.IsAbs(args.Cwd) {
		return nil, fmt.Errorf("shell: cwd %q is not absolute", args.Cwd)
	}
	spec := termhost.Spec{Command: shell, Dir: args.Cwd}
	if strings.TrimSpace(args.Cmd) == "" {
		spec.ShellIntegration = true
		spec.Title = filepath.Base(shell)
	} else {
		spec.Args = []string{"-c", args.Cmd}
		spec.Title = args.Cmd
	}
	t, err := ts.UserTerminal(spec, nil)
	if err != nil {
		return nil, fmt.Errorf("shell: %w", err)
	}
	ts.log.Info("user terminal started", "terminal", t.ID(), "shell", shell, "cmd", args.Cmd, "cwd", args.Cwd)
	return map[string]any{"id": t.ID(), "command": spec.Title}, nil
}

// Takeover ("takeover") gives terminal id to the user (claim {client}): the user
// may type into it, and it outlives the agent's release and its session.
func (ts *Terminals) Takeover(id string) error {
	t, err := ts.Running(id)
	if err != nil {
		return fmt.Errorf("take over: %w", err)
	}
	if err := ts.deps.ClaimForUser(t); err != nil {
		var held *server.HeldError
		if errors.As(err, &held) {
			return fmt.Errorf("%s is %v", id, held)
		}
		return fmt.Errorf("take over terminal %q: %w", id, err)
	}
	ts.log.Info("terminal taken over by the user", "terminal", id)
	return nil
}

// Dispose ("dispose") kills terminal id if it runs, releases it and forgets it
// (AHP disposeTerminal); Lua wipes its buffer.
func (ts *Terminals) Dispose(id string) error {
	tm, err := ts.lookup(id)
	if err != nil {
		return fmt.Errorf("dispose: %w", err)
	}
	tm.mu.Lock()
	t, p := tm.t, tm.pump
	tm.mu.Unlock()
	if t != nil {
		t.Release()
	}
	if p != nil {
		p.Stop()
	}
	tm.releaseOnce.Do(func() {
		tm.mu.Lock()
		tm.state = "released"
		tm.mu.Unlock()
		close(tm.released)
	})
	ts.mu.Lock()
	delete(ts.byID, id)
	for i, x := range ts.order {
		if x == id {
			ts.order = append(ts.order[:i:i], ts.order[i+1:]...)
			break
		}
	}
	ts.mu.Unlock()
	ts.log.Info("terminal disposed", "terminal", id)
	return nil
}

// SendInput ("send_input") types data into terminal id for the Lua API
// (require("agentrun").input): only into terminals no session holds.
// Keystrokes in a terminal split go through "input" and are not checked.
func (ts *Terminals) SendInput(id string, data []byte) error {
	tm, err := ts.lookup(id)
	if err != nil {
		return fmt.Errorf("input: %w", err)
	}
	tm.mu.Lock()
	t := tm.t
	tm.mu.Unlock()
	if t != nil {
		if c := t.Claims().Holder(); c.Kind == ahp.ClaimSession {
			return fmt.Errorf("input: terminal %q is held by session %q; take it over first (T in its split, or :AgentTakeover %s)", id, c.Session, id)
		}
	}
	return ts.Input(id, data)
}

// termState is what status() shows of a terminal's AHP state.
type termState struct {
	state    ahp.TerminalState
	lastLine string
	pid      int
	started  time.Time
}

// snapshot reads t's state for status().
func snapshot(t *termhost.Terminal) *termState {
	return &termState{state: t.StateSummary(maxStatusParts), lastLine: t.LastLine(), pid: t.Pid(), started: t.Started()}
}

// dropOutputLocked lets go of the terminal's output, keeping what status()
// shows; tm.mu held.
func (tm *terminal) dropOutputLocked() {
	if tm.t != nil {
		tm.last = snapshot(tm.t)
		tm.t = nil
	}
}

// ahpStatus adds the terminal's AHP state to its status() entry: claim,
// title, cwd (the shell's current one), size, command detection and the
// newest commands, with AHP's field names; tm.mu held.
func (tm *terminal) ahpStatus(m map[string]any) {
	ts := tm.last
	if tm.t != nil {
		ts = snapshot(tm.t)
	}
	m["user"] = tm.user
	if ts == nil {
		return
	}
	st := ts.state
	m["claim"] = event.Claim(st.Claim)
	m["title"] = st.Title
	if dir, err := ahp.FilePath(st.Cwd); err == nil {
		m["cwd"] = dir
	}
	m["cols"], m["rows"] = st.Cols, st.Rows
	m["supports_command_detection"] = st.SupportsCommandDetection
	m["last_line"] = ts.lastLine
	m["pid"] = ts.pid
	m["age_ms"] = time.Since(ts.started).Milliseconds()
	commands := []any{}
	for _, p := range st.Content {
		if p.Type != ahp.PartCommand {
			continue
		}
		c := map[string]any{"command_id": p.CommandID, "command_line": p.CommandLine, "is_complete": p.IsComplete}
		if p.ExitCode != nil {
			c["exit_code"] = *p.ExitCode
		}
		if p.DurationMs != nil {
			c["duration_ms"] = *p.DurationMs
		}
		commands = append(commands, c)
	}
	m["commands"] = commands
}

// UserTerminal starts spec in a terminal the user holds (a shell, an
// agent's sign-in), sized as a new split, with TERM and env (KEY=VALUE
// pairs) over this process's environment, and shows it.
func (ts *Terminals) UserTerminal(spec termhost.Spec, env []string) (*termhost.Terminal, error) {
	spec.Env = setEnv(os.Environ(), "TERM", "xterm-256color")
	for _, kv := range env {
		k, v, _ := strings.Cut(kv, "=")
		spec.Env = setEnv(spec.Env, k, v)
	}
	spec.Claim = ts.user
	spec.Cols, spec.Rows = ts.Size()
	if ts.deps.Closing() {
		return nil, fmt.Errorf("shutting down")
	}
	t, err := ts.deps.Host().Create(ts.ctx, spec)
	if err != nil {
		return nil, err
	}
	ts.Add(t, "", "", true)
	return t, nil
}

// setEnv returns env with key set to value (replacing earlier entries).
func setEnv(env []string, key, value string) []string {
	out := make([]string, 0, len(env)+1)
	for _, kv := range env {
		if k, _, _ := strings.Cut(kv, "="); k != key {
			out = append(out, kv)
		}
	}
	return append(out, key+"="+value)
}
