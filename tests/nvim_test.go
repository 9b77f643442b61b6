package tests

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/agentrun/agentrun.nvim/internal/wait"
	"github.com/neovim/go-client/nvim"
)

// editor is one headless Neovim with the plugin loaded.
type editor struct {
	t      *testing.T
	v      *nvim.Nvim
	pid    int    // Neovim's, to kill it when it hangs (call)
	dir    string // its XDG home and scratch space
	rt     string // its $XDG_RUNTIME_DIR
	events userEvents
	hung   atomic.Bool
}

// rpcPatience is how long Neovim may take to answer one call of a test.
// Every call answers in well under a second unless Neovim hangs (what
// hostile terminal output once made it do): then it is killed and the
// test fails saying so, instead of waiting for the package's timeout.
const rpcPatience = 60 * time.Second

// call runs one RPC to Neovim (what: for the failure message).
func (e *editor) call(what string, rpc func() error) {
	e.t.Helper()
	watchdog := time.AfterFunc(rpcPatience, func() {
		e.hung.Store(true)
		if e.pid > 0 {
			_ = syscall.Kill(e.pid, syscall.SIGKILL)
		}
	})
	err := rpc()
	watchdog.Stop()
	if e.hung.Load() {
		e.t.Fatalf("%s: Neovim did not answer within %s: it hung, and was killed", what, rpcPatience)
	}
	if err != nil {
		e.t.Fatalf("%s: %v", what, err)
	}
}

// userEvents records the plugin's User AgentRun… autocommands, in order,
// as Neovim reports them to the test's channel.
type userEvents struct {
	mu      sync.Mutex
	seen    []string
	arrived chan struct{} // closed and replaced at each event
}

func (u *userEvents) add(pattern string) {
	u.mu.Lock()
	u.seen = append(u.seen, pattern)
	close(u.arrived)
	u.arrived = make(chan struct{})
	u.mu.Unlock()
}

// mark returns how many events arrived so far, for waitEvent's since.
func (e *editor) mark() int {
	e.events.mu.Lock()
	defer e.events.mu.Unlock()
	return len(e.events.seen)
}

// waitEvent waits for the User autocommand pattern (AgentRunTurnEnd, …)
// to fire after the first `since` events, without polling.
func (e *editor) waitEvent(pattern string, since int, timeout time.Duration) {
	e.t.Helper()
	deadline := time.After(timeout)
	for {
		e.events.mu.Lock()
		for _, p := range e.events.seen[min(since, len(e.events.seen)):] {
			if p == pattern {
				e.events.mu.Unlock()
				return
			}
		}
		seen, arrived := append([]string(nil), e.events.seen...), e.events.arrived
		e.events.mu.Unlock()
		select {
		case <-arrived:
		case <-deadline:
			e.t.Fatalf("no User %s within %v; events so far: %v; chat:\n%s", pattern, timeout, seen, e.chat())
		}
	}
}

// startEditor starts `nvim --embed --headless --clean` with the plugin on
// the runtimepath, the test binary as g:agentrun_bin and XDG directories
// (so the log) under a temp dir; setup is Lua run before the test.
func startEditor(t *testing.T, setup string) *editor {
	t.Helper()
	return startEditorIn(t, runtimeDir(t), setup)
}

// runtimeDir is a private $XDG_RUNTIME_DIR (short: socket paths are at
// most 107 bytes), where the backends put their sockets; editors started
// in the same one see each other's terminals.
func runtimeDir(t *testing.T) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "ar")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	return dir
}

// startEditorIn is startEditor with $XDG_RUNTIME_DIR set to rt.
func startEditorIn(t *testing.T, rt, setup string) *editor {
	t.Helper()
	dir := t.TempDir()
	env := append(os.Environ(),
		"XDG_CONFIG_HOME="+filepath.Join(dir, "config"),
		"XDG_CACHE_HOME="+filepath.Join(dir, "cache"),
		"XDG_DATA_HOME="+filepath.Join(dir, "data"),
		"XDG_STATE_HOME="+filepath.Join(dir, "state"),
		"XDG_RUNTIME_DIR="+rt,
	)
	v, err := nvim.NewChildProcess(
		nvim.ChildProcessCommand(nvimBin),
		nvim.ChildProcessArgs("--embed", "--headless", "--clean", "-n",
			"--cmd", "set rtp^="+root,
			"--cmd", "let g:agentrun_bin = '"+binary+"'",
			"--cmd", "let g:loaded_python3_provider = 0"), // as in the screens (screen_test.go)
		nvim.ChildProcessEnv(env),
		nvim.ChildProcessDir(dir),
		nvim.ChildProcessLogf(t.Logf),
	)
	if err != nil {
		t.Fatalf("start nvim: %v", err)
	}
	e := &editor{t: t, v: v, dir: dir, rt: rt, events: userEvents{arrived: make(chan struct{})}}
	if err := v.ExecLua(`return vim.fn.getpid()`, &e.pid); err != nil {
		t.Fatalf("nvim: %v", err)
	}
	t.Cleanup(func() {
		if t.Failed() {
			e.dumpLog()
		}
		_ = v.Close()
	})
	// Collect notifications instead of echoing them (no UI here).
	e.lua(`_G.notes = {}; vim.notify = function(msg, level) table.insert(_G.notes, { msg = msg, level = level }) end`, nil)
	if err := v.RegisterHandler("agentrun_event", func(pattern string) { e.events.add(pattern) }); err != nil {
		t.Fatal(err)
	}
	// The chat opens in Insert mode, where a question waits until the
	// user stops typing (ui/ready.lua): this user is not typing, so a
	// session that starts leaves them in Normal mode.
	e.lua(`local chan = ...
vim.api.nvim_create_autocmd("User", { pattern = "AgentRun*", callback = function(a)
	if a.match == "AgentRunSessionStarted" then vim.cmd("stopinsert") end
	vim.rpcnotify(chan, "agentrun_event", a.match)
end })`, nil, v.ChannelID())
	if setup != "" {
		e.lua(setup, nil)
	}
	return e
}

// dumpLog prints the backend's log into the test output.
func (e *editor) dumpLog() {
	// The log is in the state directory on every version.
	for _, dir := range []string{filepath.Join(e.dir, "state", "nvim")} {
		if data, err := os.ReadFile(filepath.Join(dir, "agentrun.log")); err == nil {
			e.t.Logf("agentrun.log:\n%s", data)
			return
		}
	}
}

// lua runs Lua code with args (as ...) and decodes its result.
func (e *editor) lua(code string, result any, args ...any) {
	e.t.Helper()
	e.call(fmt.Sprintf("lua %q", firstLine(code)), func() error { return e.v.ExecLua(code, result, args...) })
}

// cmd runs an Ex command.
func (e *editor) cmd(c string) {
	e.t.Helper()
	e.call(fmt.Sprintf("command %q", c), func() error { return e.v.Command(c) })
}

func firstLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i] + "…"
	}
	return s
}

// eventually is wait.Until, the tests' one wait.
func eventually(t testing.TB, what string, timeout time.Duration, check func() (bool, string)) string {
	t.Helper()
	return wait.Until(t, what, timeout, check)
}

// waitFor is eventually for this editor's test.
func (e *editor) waitFor(what string, timeout time.Duration, check func() (bool, string)) string {
	e.t.Helper()
	return eventually(e.t, what, timeout, check)
}

// normalKeys types keys as a user does in normal mode: first leaving
// insert or terminal mode with <C-\><C-n> (the prompt opens in insert mode,
// and a window entered from it is in insert or terminal mode too).
func (e *editor) normalKeys(keys string) {
	e.t.Helper()
	// Apart, and processed first: a <C-c> in the same input would
	// interrupt and flush what comes before it.
	if _, err := e.v.Input(`<C-\><C-n>`); err != nil {
		e.t.Fatal(err)
	}
	e.waitFor("normal mode", 2*time.Second, func() (bool, string) {
		var mode string
		e.lua(`return vim.api.nvim_get_mode().mode`, &mode)
		return mode == "n" || mode == "nt", "mode " + mode
	})
	if _, err := e.v.Input(keys); err != nil {
		e.t.Fatal(err)
	}
}

// ctrlC types <C-c> in normal mode into the typeahead, where the plugin's
// mapping takes it. (nvim_input of <C-c> also sets Neovim's interrupt
// flag, which flushes the typeahead when it arrives while Neovim is busy:
// the key is then lost, as it would be for a user typing into a busy
// Neovim, and the test would wait for nothing.)
func (e *editor) ctrlC() {
	e.t.Helper()
	e.normalKeys("") // normal mode first
	e.lua(`vim.api.nvim_feedkeys(vim.api.nvim_replace_termcodes("<C-c>", true, false, true), "m", false)`, nil)
}

// bufLines returns buffer buf's lines joined with newlines.
func (e *editor) bufLines(buf int) string {
	e.t.Helper()
	var lines []string
	e.lua(`return vim.api.nvim_buf_get_lines(..., 0, -1, false)`, &lines, buf)
	return strings.TrimRight(strings.Join(lines, "\n"), "\n")
}

// chat returns the current session's chat transcript.
func (e *editor) chat() string {
	e.t.Helper()
	var buf int
	e.lua(`local s = require("agentrun.state").session(); return s and s.chat and s.chat.buf or -1`, &buf)
	if buf < 0 {
		return "(no chat)"
	}
	return e.bufLines(buf)
}

// waitChat waits until the chat contains want; a one-line want may be
// wrapped (a note breaks before a command name when it does not fit).
func (e *editor) waitChat(want string, timeout time.Duration) string {
	e.t.Helper()
	return e.waitFor(fmt.Sprintf("chat to show %q", want), timeout, func() (bool, string) {
		c := e.chat()
		return strings.Contains(c, want) || (!strings.Contains(want, "\n") && strings.Contains(strings.ReplaceAll(c, "\n", " "), want)), c
	})
}

// termInfo is one terminal as status() reports it.
type termInfo struct {
	ID       string `msgpack:"id"`
	State    string `msgpack:"state"`
	Command  string `msgpack:"command"`
	Bufnr    int    `msgpack:"bufnr"`
	ExitCode *int   `msgpack:"exit_code"`
	Signal   string `msgpack:"signal"`
	// DisplayOnly: the agent ran it itself; we only show what it said.
	DisplayOnly bool `msgpack:"display_only"`
}

// terminals returns status().terminals.
func (e *editor) terminals() []termInfo {
	e.t.Helper()
	var ts []termInfo
	e.lua(`return require("agentrun").status().terminals`, &ts)
	return ts
}

// waitTerminal waits for the terminal running command to have a buffer
// shown in a window, and returns it.
func (e *editor) waitTerminal(command string, timeout time.Duration) termInfo {
	e.t.Helper()
	var found termInfo
	e.waitFor(fmt.Sprintf("a terminal split running %q", command), timeout, func() (bool, string) {
		ts := e.terminals()
		for _, t := range ts {
			if t.Command == command && t.Bufnr > 0 {
				var win int
				e.lua(`return vim.fn.bufwinid(...)`, &win, t.Bufnr)
				if win > 0 {
					found = t
					return true, ""
				}
			}
		}
		return false, fmt.Sprintf("%+v", ts)
	})
	return found
}

// waitAgentShownTerminal waits for the split of a terminal the agent runs
// itself (display-only) and returns its buffer.
func (e *editor) waitAgentShownTerminal() int {
	e.t.Helper()
	var buf int
	// (30 s: a real agent's turn asks the model first, and opencode asks
	// twice; under load that took over 10 s)
	e.waitFor("a display-only terminal buffer", 30*time.Second, func() (bool, string) {
		var st struct {
			Terminals []struct {
				Bufnr       int  `msgpack:"bufnr"`
				DisplayOnly bool `msgpack:"display_only"`
			} `msgpack:"terminals"`
		}
		e.lua(`return require("agentrun").status()`, &st)
		for _, x := range st.Terminals {
			if x.DisplayOnly && x.Bufnr > 0 {
				buf = x.Bufnr
				return true, ""
			}
		}
		return false, fmt.Sprintf("%+v", st)
	})
	return buf
}

// waitBuf waits until buffer buf contains every string in want.
func (e *editor) waitBuf(buf int, timeout time.Duration, want ...string) string {
	e.t.Helper()
	return e.waitFor(fmt.Sprintf("buffer %d to show %q", buf, want), timeout, func() (bool, string) {
		text := e.bufLines(buf)
		for _, w := range want {
			if !strings.Contains(text, w) {
				return false, text
			}
		}
		return true, text
	})
}

// startSession runs :AgentRun and waits until the session is ready.
func (e *editor) startSession() {
	e.t.Helper()
	e.startSessionWithin(10 * time.Second)
}

// startSessionWithin is startSession for agents slow to start (a real
// agent's first start loads much from a cold disk cache).
func (e *editor) startSessionWithin(d time.Duration) {
	e.t.Helper()
	since := e.mark()
	e.cmd("AgentRun")
	e.waitEvent("AgentRunSessionStarted", since, d)
}

// idle waits until the current session's turn has ended.
func (e *editor) idle(timeout time.Duration) {
	e.t.Helper()
	since := e.mark()
	var busy bool
	e.lua(`for _, s in ipairs(require("agentrun").status().sessions) do if s.busy then return true end end return false`, &busy)
	if busy {
		e.waitEvent("AgentRunTurnEnd", since, timeout)
	}
}

// exitMarker is the line a split ends with when its command exited with
// code, and signalMarker when a signal (sig, "SIGTERM") ended it: the one
// spelling of the end marker every test matches (ui/term.lua and
// internal/display/pump.go write it).
func exitMarker(code int) string { return fmt.Sprintf("[exit %d]", code) }

// signalMarker is the line a split ends with when signal sig ended its
// command: "[signal SIGTERM]"; SIGINT's is interruptedMarker.
func signalMarker(sig string) string {
	if sig == "SIGINT" {
		return interruptedMarker
	}
	return "[signal " + sig + "]"
}

// interruptedMarker is the line a split ends with when SIGINT stopped its
// command (or a shell's exit 130 for it): <C-c>, a cancel.
const interruptedMarker = "[interrupted]"

// exitSaid is what User AgentRunTerminalExited said of a terminal's end
// (NoData: Neovim 0.7, whose User autocommands carry none).
type exitSaid struct {
	ID     string `msgpack:"id"`
	How    string `msgpack:"how"`
	RanMS  *int   `msgpack:"ran_ms"`
	NoData bool   `msgpack:"no_data"`
}

// recordExits records every User AgentRunTerminalExited from now on.
func (e *editor) recordExits() {
	e.t.Helper()
	e.lua(`_G.exits = {}
		vim.api.nvim_create_autocmd("User", { pattern = "AgentRunTerminalExited", callback = function(a)
			table.insert(_G.exits, a.data or { no_data = true })
		end })`, nil)
}

// exits returns what recordExits recorded.
func (e *editor) exits() []exitSaid {
	e.t.Helper()
	var out []exitSaid
	e.lua(`return _G.exits`, &out)
	return out
}

// logOnFailure prints the backend's log, and what more says (the fake
// model API's requests), when the test fails; it returns the log's path.
func (e *editor) logOnFailure(more func() string) string {
	e.t.Helper()
	var logFile string
	e.lua(`return require("agentrun.binary").log_path()`, &logFile)
	e.t.Cleanup(func() {
		if e.t.Failed() {
			b, _ := os.ReadFile(logFile)
			e.t.Logf("agentrun.log:\n%s", b)
			e.t.Logf("model API requests:\n%s", more())
		}
	})
	return logFile
}
