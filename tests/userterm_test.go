package tests

import (
	"fmt"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
)

// ahpTerm is one terminal of status() with its AHP fields.
type ahpTerm struct {
	ID                       string            `msgpack:"id"`
	State                    string            `msgpack:"state"`
	Bufnr                    int               `msgpack:"bufnr"`
	Pid                      int               `msgpack:"pid"`
	Cwd                      string            `msgpack:"cwd"`
	Title                    string            `msgpack:"title"`
	ExitCode                 *int              `msgpack:"exit_code"`
	Signal                   string            `msgpack:"signal"`
	Claim                    map[string]string `msgpack:"claim"`
	SupportsCommandDetection bool              `msgpack:"supports_command_detection"`
	Commands                 []struct {
		CommandLine string `msgpack:"command_line"`
		ExitCode    *int   `msgpack:"exit_code"`
		DurationMs  *int64 `msgpack:"duration_ms"`
		IsComplete  bool   `msgpack:"is_complete"`
	} `msgpack:"commands"`
}

// ahpTerminal returns terminal id as status() reports it.
func (e *editor) ahpTerminal(id string) ahpTerm {
	e.t.Helper()
	var ts []ahpTerm
	e.lua(`return require("agentrun").status().terminals`, &ts)
	for _, t := range ts {
		if t.ID == id {
			return t
		}
	}
	e.t.Fatalf("status() has no terminal %s: %+v", id, ts)
	return ahpTerm{}
}

// waitAHP waits until terminal id's status satisfies ok.
func (e *editor) waitAHP(id, what string, ok func(ahpTerm) bool) ahpTerm {
	e.t.Helper()
	var t ahpTerm
	e.waitFor(what, 15*time.Second, func() (bool, string) {
		t = e.ahpTerminal(id)
		return ok(t), fmt.Sprintf("%+v", t)
	})
	return t
}

// alive reports whether pid runs (and is not a zombie).
func alive(pid int) bool {
	out, err := exec.Command("ps", "-o", "stat=", "-p", strconv.Itoa(pid)).Output()
	return err == nil && len(out) > 0 && !strings.HasPrefix(strings.TrimSpace(string(out)), "Z")
}

// agentShell opens :AgentShell (bash, HOME the editor's folder) and
// returns its terminal's id once the split is in terminal mode.
func (e *editor) agentShell() string {
	e.t.Helper()
	e.lua(`vim.env.SHELL = "/bin/bash"; vim.env.HOME = ...; vim.env.PS1 = nil`, nil, e.dir)
	e.cmd("AgentShell")
	var id string
	e.lua(`return require("agentrun.state").terminal_for_buf(vim.api.nvim_get_current_buf()).id`, &id)
	// :startinsert takes effect when the main loop next runs (a user's
	// next key already lands in terminal mode), so wait for the mode
	// instead of reading it once ("nt" for a few ms).
	e.waitFor("terminal mode after :AgentShell", 2*time.Second, func() (bool, string) {
		var mode string
		e.lua(`return vim.api.nvim_get_mode().mode`, &mode)
		return mode == "t", "mode " + mode
	})
	return id
}

// TestAgentShellReportsCommands: :AgentShell opens bash with our shell
// integration in terminal mode; what the user types there shows up in
// status() as command parts with their exit codes, and the cwd follows cd.
// The markers never reach the buffer.
func TestAgentShellReportsCommands(t *testing.T) {
	if _, err := exec.LookPath("bash"); err != nil {
		t.Skip("no bash")
	}
	e := startEditor(t, "")
	id := e.agentShell()
	sh := e.waitAHP(id, "the shell's integration to load", func(x ahpTerm) bool { return x.SupportsCommandDetection })
	if sh.Claim["kind"] != "client" || sh.Title != "bash" || sh.State != "running" {
		t.Fatalf("shell terminal %+v", sh)
	}
	for i, line := range []string{"echo one", "false", "cd /tmp"} {
		if _, err := e.v.Input(line + "<CR>"); err != nil { // typed in terminal mode
			t.Fatal(err)
		}
		e.waitAHP(id, fmt.Sprintf("%q to be reported", line), func(x ahpTerm) bool {
			return len(x.Commands) == i+1 && x.Commands[i].IsComplete
		})
	}
	sh = e.waitAHP(id, "cwd /tmp", func(x ahpTerm) bool { return x.Cwd == "/tmp" })
	var got []string
	for _, c := range sh.Commands {
		code := "none"
		if c.ExitCode != nil {
			code = strconv.Itoa(*c.ExitCode)
		}
		got = append(got, c.CommandLine+" -> "+code)
		if c.DurationMs == nil {
			t.Errorf("command %q has no duration", c.CommandLine)
		}
	}
	if want := "echo one -> 0|false -> 1|cd /tmp -> 0"; strings.Join(got, "|") != want {
		t.Errorf("commands %q, want %q", strings.Join(got, "|"), want)
	}
	// The display follows the state asynchronously: wait for the output
	// line (not the echoed command line).
	if text := e.waitBuf(sh.Bufnr, 10*time.Second, "\none\n"); strings.Contains(text, "633") {
		t.Errorf("shell buffer shows the integration's sequences:\n%s", text)
	}
	// The Lua input API reaches a terminal the user holds.
	var ok bool
	e.lua(`return require("agentrun").input(..., "echo typed-by-api\r")`, &ok, id)
	if !ok {
		t.Fatalf("input() to the user's shell refused: %v", e.noteText())
	}
	e.waitAHP(id, "the API's command", func(x ahpTerm) bool {
		return len(x.Commands) == 4 && x.Commands[3].CommandLine == "echo typed-by-api"
	})

	// With a command, :AgentShell runs it through the shell, as a task.
	e.cmd("AgentShell echo task-done; exit 3")
	var task string
	e.lua(`return require("agentrun.state").terminal_for_buf(vim.api.nvim_get_current_buf()).id`, &task)
	done := e.waitAHP(task, "the task to end", func(x ahpTerm) bool { return x.State == "exited" })
	if done.ExitCode == nil || *done.ExitCode != 3 || done.Title != "echo task-done; exit 3" || done.SupportsCommandDetection {
		t.Errorf("task terminal %+v", done)
	}
	e.waitBuf(done.Bufnr, 5*time.Second, "task-done", exitMarker(3))

	// X ends the interactive shell at once (it ignores SIGTERM; it gets SIGHUP).
	e.lua(`require("agentrun").open_terminal(...)`, nil, id)
	if _, err := e.v.Input("<C-\\><C-n>X"); err != nil {
		t.Fatal(err)
	}
	gone := e.waitAHP(id, "the shell to end after X", func(x ahpTerm) bool { return x.State == "exited" })
	if gone.Signal != "SIGHUP" || alive(gone.Pid) {
		t.Errorf("shell after X: %+v", gone)
	}
}

// TestTakeoverSurvivesAgentRelease: `T` in an agent's terminal split makes
// it the user's: the agent's wait ends, it releases the terminal, and the
// process keeps running until the user kills it with `X`. Input through
// the Lua API is refused before the takeover. :AgentTerminals shows all
// of it, and `dd` disposes of the terminal.
func TestTakeoverSurvivesAgentRelease(t *testing.T) {
	e := startEditor(t, `require("agentrun").setup({ terminal = { kill_grace_ms = 500 } })`)
	e.startSession()
	e.cmd("AgentPrompt sleep 3201")
	term := e.waitTerminal("sleep 3201", 10*time.Second)
	info := e.waitAHP(term.ID, "the tool call to hold the terminal", func(x ahpTerm) bool { return x.Claim["tool_call_id"] != "" })
	if !alive(info.Pid) {
		t.Fatalf("sleep (pid %d) is not running", info.Pid)
	}
	var ok bool
	e.lua(`return require("agentrun").input(..., "x")`, &ok, term.ID)
	if ok || !strings.Contains(e.noteText(), "is held by session") {
		t.Fatalf("input() into the agent's terminal: %v, notes %s", ok, e.noteText())
	}

	e.lua(`vim.api.nvim_set_current_win(vim.fn.bufwinid(...))`, nil, term.Bufnr)
	e.normalKeys("T")
	e.idle(10 * time.Second) // the agent's wait ended, it released the terminal
	e.waitChat("taken over by the user", 5*time.Second)
	info = e.ahpTerminal(term.ID)
	if info.State != "running" || info.Claim["kind"] != "client" || !alive(info.Pid) {
		t.Fatalf("after the takeover and the agent's release: %+v (alive %v)", info, alive(info.Pid))
	}

	e.cmd("AgentTerminals")
	var list int
	e.lua(`return vim.api.nvim_get_current_buf()`, &list)
	text := e.waitBuf(list, 5*time.Second, term.ID)
	if !regexp.MustCompile(`(?m)^` + term.ID + `\s+running\s+you\s+\d+s\s+sleep 3201`).MatchString(text) {
		t.Errorf("list does not show %s as running and yours:\n%s", term.ID, text)
	}

	e.lua(`vim.api.nvim_set_current_win(vim.fn.bufwinid(...))`, nil, term.Bufnr)
	e.normalKeys("X")
	e.waitFor("the process to end after X", 10*time.Second, func() (bool, string) {
		return !alive(info.Pid), fmt.Sprintf("pid %d", info.Pid)
	})
	text = e.waitBuf(list, 5*time.Second, "killed")
	if !regexp.MustCompile(`(?m)^` + term.ID + `\s+killed\s+you\b`).MatchString(text) {
		t.Errorf("list after X:\n%s", text)
	}

	// dd on the list line disposes of it: gone from the list, buffer wiped.
	e.lua(`local buf, pat = ...; vim.api.nvim_set_current_win(vim.fn.bufwinid(buf)); vim.fn.search(pat)`, nil, list, "^"+term.ID)
	e.normalKeys("dd")
	e.waitFor("the disposed terminal to leave the list", 5*time.Second, func() (bool, string) {
		text := e.bufLines(list)
		return !strings.Contains(text, term.ID), text
	})
	var valid bool
	e.lua(`return vim.api.nvim_buf_is_valid(...)`, &valid, term.Bufnr)
	if valid {
		t.Error("the disposed terminal's buffer still exists")
	}
}

// noteText returns what vim.notify was given, joined.
func (e *editor) noteText() string {
	e.t.Helper()
	var msgs []string
	for _, n := range e.notes() {
		msgs = append(msgs, n.Msg)
	}
	return strings.Join(msgs, "\n")
}

// TestScreenQuitAsksBeforeEndingYourCommands (issue 50): :qa while your
// :AgentShell command runs names it and asks first (it ended without a
// word); Stay keeps Neovim, the command and the windows as they were,
// with no Vim error and no hit-enter prompt (it said E37 and E162 naming
// an internal buffer, fails without the fix), also for a :q in your last
// window beside the split (which closed the split before it asked) and a
// :wqa; :qa!
// quits without asking and ends it. A rerun (R) is named as one, not as
// an :AgentShell (fails without the fix). With
// terminal.ask_before_quit = false, :qa quits at once. One command is
// "it", not "them", and a key other than the question's says its keys
// (it waited without a word; fails without the fix).
func TestScreenQuitAsksBeforeEndingYourCommands(t *testing.T) {
	s := startScreen(t, 120, 30, "")
	s.tmux("set-option", "-t", "0", "remain-on-exit", "on")
	s.keys(":AgentShell sleep 4321", "Enter")
	s.waitShows(10*time.Second, splitOf("term-1"))
	s.keys(`C-\`, "C-n", ":qa", "Enter")
	s.waitShows(5*time.Second, "(agentrun) Quitting ends your command:", "term-1  sleep 4321  (your :AgentShell)", "(Q)uit and end it, [S]tay")
	// another key says the keys (it waited without a word)
	s.keys("x")
	s.waitShows(5*time.Second, "press q to quit and end it; s, Enter or Esc to stay")
	s.keys("s")
	// stayed checks that Stay left things as they were: where says the
	// window (its buffer's name) the quit was typed in
	stayed := func(quit, where string) {
		t.Helper()
		sc := s.waitShows(5*time.Second, "(agentrun) not quit (:qa! quits without asking)", splitOf("term-1"))
		for _, bad := range []string{"E37", "E162", "Press ENTER", "your commands still run", "Quitting ends"} {
			if strings.Contains(sc, bad) {
				t.Errorf("Stay at %s shows %q:\n%s", quit, bad, sc)
			}
		}
		if s.exited() || len(findProcesses("sleep 4321")) != 1 {
			t.Fatalf("Stay at %s quit Neovim or ended the command:\n%s", quit, s.capture())
		}
		got := s.expr(`tabpagenr('$') .. ' tab, ' .. winnr('$') .. ' windows, in [' .. bufname() .. ']'`)
		if want := "1 tab, 2 windows, in [" + where + "]"; got != want {
			t.Errorf("Stay at %s left %q, want %q", quit, got, want)
		}
	}
	stayed(":qa in the split", "term-1 sleep 4321")
	// :q in your last window: the split beside it stays open at Stay
	s.keys(":wincmd t", "Enter", ":q", "Enter")
	s.waitShows(5*time.Second, "term-1  sleep 4321  (your :AgentShell)", "[S]tay")
	s.keys("s")
	stayed(":q in your window", "")
	s.keys(":wqa", "Enter")
	s.waitShows(5*time.Second, "term-1  sleep 4321  (your :AgentShell)", "[S]tay")
	s.keys("s")
	stayed(":wqa", "")
	s.keys(":qa!", "Enter")
	eventually(t, "Neovim to quit at :qa!", 10*time.Second, func() (bool, string) { return s.exited(), s.capture() })
	eventually(t, "the command to end with Neovim", 10*time.Second, func() (bool, string) {
		return len(findProcesses("sleep 4321")) == 0, "still runs"
	})

	// R on the agent's command that ended: a rerun, named as one (its
	// first run ends at once, the second runs on)
	re := startDemoScreenSized(t, 120, 30, "")
	re.prompt("test -e m4324 && sleep 4324; touch m4324")
	re.waitShows(10*time.Second, splitOf("term-1"), "exited with code 0")
	re.keys("Escape", ":AgentTerminals", "Enter")
	re.waitShows(5*time.Second, "agentrun terminals")
	re.keys("/m4324", "Enter", "R")
	re.waitShows(5*time.Second, "(run 2)")
	re.keys(`C-\`, "C-n", ":qa", "Enter")
	sc := re.waitShows(5*time.Second, "(agentrun) Quitting ends your command:", "term-1  test -e m4324 && sleep 4324; touch m4324  (your rerun, run 2)")
	if strings.Contains(sc, ":AgentShell") {
		t.Errorf("the rerun is named as an :AgentShell:\n%s", sc)
	}
	re.keys("s")
	re.waitShows(5*time.Second, "(agentrun) not quit (:qa! quits without asking)")

	// a command of the agent's you took over is yours too
	took := startDemoScreenSized(t, 120, 30, "")
	took.prompt("sleep 4323")
	took.waitShows(10*time.Second, splitOf("term-1"))
	took.keys("Escape", ":AgentTakeover term-1", "Enter")
	took.waitShows(5*time.Second, "term-1 is yours now")
	took.keys(":qa", "Enter")
	took.waitShows(5*time.Second, "(agentrun) Quitting ends your command:", "term-1  sleep 4323  (you took it over)")
	took.keys("s")

	off := startScreen(t, 120, 30, `require("agentrun").setup({ terminal = { ask_before_quit = false } })`)
	off.tmux("set-option", "-t", "0", "remain-on-exit", "on")
	off.keys(":AgentShell sleep 4322", "Enter")
	off.waitShows(10*time.Second, splitOf("term-1"))
	off.keys(`C-\`, "C-n", ":qa", "Enter")
	eventually(t, "Neovim to quit without asking", 10*time.Second, func() (bool, string) { return off.exited(), off.capture() })
}

// TestScreenQuitQuestionCutsLongCommands: the quit question at 60 columns
// names a long command in one line cut with "…" (it wrapped in the middle
// of a word, as a new user saw), and Stay still stays.
func TestScreenQuitQuestionCutsLongCommands(t *testing.T) {
	s := startScreen(t, 60, 20, "")
	s.keys(":AgentShell sleep 4326 # "+strings.Repeat("a-long-comment ", 6), "Enter")
	s.waitShows(10*time.Second, splitOf("term-1"))
	s.keys(`C-\`, "C-n", ":qa", "Enter")
	sc := s.waitShows(5*time.Second, "(agentrun) Quitting ends your command:", "[S]tay")
	var line string
	for _, l := range strings.Split(sc, "\n") {
		if strings.Contains(l, "sleep 4326") {
			line = l
		}
	}
	if !strings.HasPrefix(line, "  term-1  sleep 4326 # a-long-comment") || !strings.HasSuffix(strings.TrimRight(line, " "), "…") {
		t.Errorf("the long command's line in the question is %q, want it cut with …:\n%s", line, sc)
	}
	s.keys("s")
	s.waitShows(5*time.Second, "(agentrun) not quit")
	s.keys(":AgentKill term-1", "Enter")
}
