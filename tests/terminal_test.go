package tests

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/agentrun/agentrun.nvim/internal/lineshell"
	"github.com/agentrun/agentrun.nvim/internal/proctest"
)

func TestEchoShowsInTerminalSplit(t *testing.T) {
	e := startEditor(t, "")
	e.startSession()
	e.cmd("AgentPrompt echo hi")
	term := e.waitTerminal("echo hi", 10*time.Second)
	text := e.waitBuf(term.Bufnr, 10*time.Second, "hi", exitMarker(0), "[released]")
	if lines := strings.Split(text, "\n"); lines[0] != "hi" {
		t.Errorf("first line of the terminal buffer = %q, want %q\n%s", lines[0], "hi", text)
	}
	var bt string
	e.lua(`return vim.bo[...].buftype`, &bt, term.Bufnr)
	if bt != "terminal" {
		t.Errorf("buftype = %q, want terminal", bt)
	}
	e.waitChat("`echo hi` exited with code 0.", 5*time.Second)
}

func TestCtrlCInTerminalSplitInterruptsSleep(t *testing.T) {
	e := startEditor(t, "")
	e.startSession()
	e.cmd("AgentPrompt sleep 30")
	term := e.waitTerminal("sleep 30", 10*time.Second)
	e.waitFor("sleep to be running", 5*time.Second, func() (bool, string) {
		for _, x := range e.terminals() {
			if x.ID == term.ID {
				return x.State == "running", fmt.Sprintf("%+v", x)
			}
		}
		return false, "gone"
	})
	// Enter the split (normal mode) and type <C-c> as a user would.
	e.lua(`vim.api.nvim_set_current_win(vim.fn.bufwinid(...))`, nil, term.Bufnr)
	start := time.Now()
	e.ctrlC()
	text := e.waitFor("the sleep to end", 10*time.Second, func() (bool, string) {
		text := e.bufLines(term.Bufnr)
		return strings.Contains(text, interruptedMarker), text
	})
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("sleep 30 took %v to stop after <C-c>", d)
	}
	t.Logf("terminal after <C-c>:\n%s", text)
	e.waitChat("· interrupted", 5*time.Second) // not failed (issue 50)
}

func TestDisplayOnlyAgentTerminal(t *testing.T) {
	e := startEditor(t, "")
	e.startSession()
	e.cmd("AgentPrompt !meta printf 'from-the-agent\\n'")
	buf := e.waitAgentShownTerminal()
	e.waitBuf(buf, 10*time.Second, "from-the-agent", exitMarker(0))
}

// TestQuitKillsTerminals: leaving Neovim leaves no command running.
func TestQuitKillsTerminals(t *testing.T) {
	e := startEditor(t, "")
	e.startSession()
	e.cmd("AgentPrompt sleep 3117")
	e.waitTerminal("sleep 3117", 10*time.Second)
	// the split shows before the shell has exec'd the command
	eventually(t, "sleep 3117 to run", 10*time.Second, func() (bool, string) {
		return len(findProcesses("sleep 3117")) > 0, "not found"
	})
	_ = e.v.Command("qa!") // Neovim exits; the reply may never come
	eventually(t, "sleep 3117 to end after :qa!", 10*time.Second, func() (bool, string) {
		pids := findProcesses("sleep 3117")
		return len(pids) == 0, fmt.Sprintf("pids %v", pids)
	})
}

// findProcesses returns the pids whose command line is exactly cmdline,
// among the processes of this test run (they inherit its runMarker): the
// suites of several Neovims may run side by side (make test).
func findProcesses(cmdline string) []string {
	var pids []string
	for _, p := range proctest.All() {
		if p.Cmdline == cmdline && ofThisRun(p.PID) {
			pids = append(pids, strconv.Itoa(p.PID))
		}
	}
	return pids
}

// lineCmdline is the command line (/proc/PID/cmdline, spaces between
// the arguments) of the shell that runs line in our terminals.
func lineCmdline(line string) string {
	return strings.Join(lineshell.Argv(line), " ")
}

// ofThisRun reports whether process pid carries this test run's marker in
// its environment (every process the tests start inherits it).
func ofThisRun(pid int) bool {
	env, err := os.ReadFile(fmt.Sprintf("/proc/%d/environ", pid))
	return err == nil && bytes.Contains(append([]byte{0}, env...), []byte("\x00"+runMarker+"\x00"))
}

// TestPtySizeFollowsWindow: the program sees the split's size, and a new
// size after the window is resized.
func TestPtySizeFollowsWindow(t *testing.T) {
	e := startEditor(t, "")
	e.startSession()
	// The split opens right after the command starts; the pause lets a
	// loaded machine catch up before the first look at the size.
	e.cmd(`AgentPrompt sleep 0.2; stty size; read line; stty size`)
	term := e.waitTerminal("sleep 0.2; stty size; read line; stty size", 10*time.Second)
	var size []int
	e.lua(`local w = vim.fn.bufwinid(...); local i = vim.fn.getwininfo(w)[1]; return { i.height, i.width - i.textoff }`, &size, term.Bufnr)
	e.waitBuf(term.Bufnr, 5*time.Second, fmt.Sprintf("%d %d", size[0], size[1]))
	// Shrink the split, then type a line in terminal mode as a user would.
	e.lua(`local w = vim.fn.bufwinid(...); vim.api.nvim_win_set_height(w, 5); vim.api.nvim_set_current_win(w)`, nil, term.Bufnr)
	e.normalKeys("ihello<CR>")
	e.waitBuf(term.Bufnr, 5*time.Second, "hello", fmt.Sprintf("5 %d", size[1]), exitMarker(0))
}

func TestKillKeysAndCommand(t *testing.T) {
	tests := []struct {
		name string
		kill func(e *editor, term termInfo)
		want string
	}{
		{"X in the split", func(e *editor, term termInfo) {
			e.lua(`vim.api.nvim_set_current_win(vim.fn.bufwinid(...))`, nil, term.Bufnr)
			e.normalKeys("X")
		}, signalMarker("SIGTERM")},
		{":AgentKill id", func(e *editor, term termInfo) { e.cmd("AgentKill " + term.ID) }, signalMarker("SIGTERM")},
		{":AgentKill! id", func(e *editor, term termInfo) { e.cmd("AgentKill! " + term.ID) }, signalMarker("SIGKILL")},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e := startEditor(t, "")
			e.startSession()
			e.cmd("AgentPrompt sleep 30")
			term := e.waitTerminal("sleep 30", 10*time.Second)
			tc.kill(e, term)
			e.waitBuf(term.Bufnr, 10*time.Second, tc.want, "[released]")
			// yours, not a failure, in the chat as in the split
			e.waitChat("· killed by you", 5*time.Second)
		})
	}
}

func TestCancelAndStop(t *testing.T) {
	e := startEditor(t, "")
	e.startSession()
	e.cmd("AgentPrompt sleep 30")
	term := e.waitTerminal("sleep 30", 10*time.Second)
	e.cmd("AgentCancel")
	// The cancelled turn's command gets SIGINT, and the demo agent kills
	// it on session/cancel at once: either may be what ends it.
	if text := e.waitBuf(term.Bufnr, 10*time.Second, "[released]"); !strings.Contains(text, interruptedMarker) && !strings.Contains(text, signalMarker("SIGTERM")) {
		t.Errorf("the cancelled command did not end by SIGINT or the agent's kill:\n%s", text)
	}
	e.waitChat("(turn ended: cancelled)", 10*time.Second)

	e.cmd("AgentPrompt sleep 31")
	term = e.waitTerminal("sleep 31", 10*time.Second)
	e.cmd("AgentStop")
	e.waitBuf(term.Bufnr, 10*time.Second, "[released]")
	e.waitChat("you stopped this session (:AgentStop)", 10*time.Second)
	var st struct {
		Sessions []struct {
			Ended bool `msgpack:"ended"`
			Busy  bool `msgpack:"busy"`
		} `msgpack:"sessions"`
	}
	e.lua(`return require("agentrun").status()`, &st)
	if len(st.Sessions) != 1 || !st.Sessions[0].Ended || st.Sessions[0].Busy {
		t.Errorf("status().sessions = %+v, want one ended, idle session", st.Sessions)
	}
}

// TestCancelInTheSameTickAsThePrompt: :AgentCancel given in the same
// Lua tick as the prompt (before the backend has sent it) cancels that
// turn at once; the cancel reached the agent before the prompt and was
// lost, the turn ran on ("it may be hung" after 3 s). The next prompt runs
// as usual: nothing of the cancel is left over.
func TestCancelInTheSameTickAsThePrompt(t *testing.T) {
	e := startEditor(t, "")
	e.startSession()
	e.lua(`vim.cmd("AgentPrompt sleep 30") vim.cmd("AgentCancel")`, nil)
	// The turn ends at once, its command not run, and the agent says it
	// ended cancelled wherever the prompt was: not yet sent, or on the
	// wire (then the command it asks for is refused only after the agent
	// has read the cancel; refused first, the demo agent ended it end_turn).
	e.waitFor("the cancelled turn to end", 5*time.Second, func() (bool, string) {
		var busy bool
		e.lua(`return require("agentrun").status().sessions[1].busy`, &busy)
		return !busy, "still busy"
	})
	if chat := e.chat(); !strings.Contains(chat, "(turn ended: cancelled)") {
		t.Errorf("the chat does not say the turn ended cancelled:\n%s", chat)
	}
	var running int
	e.lua(`local n = 0 for _, x in ipairs(require("agentrun").status().terminals) do if x.state == "running" then n = n + 1 end end return n`, &running)
	if running != 0 {
		t.Errorf("%d commands run on after the cancelled turn", running)
	}
	e.cmd("AgentPrompt echo after-the-cancel")
	term := e.waitTerminal("echo after-the-cancel", 10*time.Second)
	e.waitBuf(term.Bufnr, 10*time.Second, "after-the-cancel", "[released]")
	e.idle(10 * time.Second)
}

func TestAgentTerminalsListsStates(t *testing.T) {
	e := startEditor(t, "")
	e.startSession()
	e.cmd("AgentPrompt exit 3")
	e.idle(10 * time.Second)
	e.cmd("AgentPrompt sleep 30")
	e.waitTerminal("sleep 30", 10*time.Second)
	// A released terminal is nobody's; its state is how it ended, as its
	// split says it; columns line up whatever their width. (The list is
	// asked for again until the running command's claim names its tool
	// call: under load the claim may come after the terminal.)
	var buf int
	e.waitFor("the list to show term-1 released with exit 3 and term-2 running for its tool call, in aligned columns", 10*time.Second, func() (bool, string) {
		e.cmd("AgentTerminals")
		e.lua(`return vim.api.nvim_get_current_buf()`, &buf)
		var text string
		e.lua(`return table.concat(vim.api.nvim_buf_get_lines(..., 0, -1, false), "\n")`, &text, buf)
		return regexp.MustCompile(`(?m)^ID      STATE    HOLDER     AGE  COMMAND   │ LAST LINE$`).MatchString(text) &&
			regexp.MustCompile(`(?m)^term-1  exit 3   —          \d+s +exit 3    │$`).MatchString(text) &&
			regexp.MustCompile(`(?m)^term-2  running  tool call  \d+s +sleep 30  │$`).MatchString(text), text
	})
	var row int
	e.lua(`return vim.api.nvim_win_get_cursor(0)[1]`, &row)
	if row != 4 {
		t.Errorf("the list opened with the cursor on row %d, want 4 (the newest terminal, under the hint and the column headers)", row)
	}
	// X on the running terminal's line kills it; the list refreshes.
	e.lua(`vim.fn.search("sleep 30")`, nil)
	e.normalKeys("X")
	e.waitBuf(buf, 10*time.Second, "killed") // by you: not a failure's signal
}

// TestFloodShowsTheExactTail: a command printing far more lines than the
// scrollback ends with its last lines and the exit line in the buffer.
func TestFloodShowsTheExactTail(t *testing.T) {
	e := startEditor(t, `require("agentrun").setup({ terminal = { scrollback = 1000 } })`)
	e.startSession()
	e.cmd("AgentPrompt seq 1 300000")
	term := e.waitTerminal("seq 1 300000", 10*time.Second)
	text := e.waitBuf(term.Bufnr, 30*time.Second, exitMarker(0))
	lines := strings.Split(text, "\n")
	var tail []string
	for i := len(lines) - 1; i >= 0 && len(tail) < 4; i-- {
		if lines[i] != "" && lines[i] != "[released]" {
			tail = append([]string{lines[i]}, tail...)
		}
	}
	if got := strings.Join(tail, ","); got != "299998,299999,300000,"+exitMarker(0) {
		t.Errorf("buffer ends with %q", got)
	}
}

// TestCtrlCInDisplayOnlyTerminalCancelsTheTurn: the agent runs the command
// itself, so <C-c> in its split cancels the agent's turn.
func TestCtrlCInDisplayOnlyTerminalCancelsTheTurn(t *testing.T) {
	e := startEditor(t, "")
	e.startSession()
	e.cmd("AgentPrompt !meta sleep 30")
	var buf int
	e.waitFor("the display-only terminal's split", 10*time.Second, func() (bool, string) {
		e.lua(`for _, t in pairs(require("agentrun.state").terminals) do
			if t.display_only and t.bufnr and vim.fn.bufwinid(t.bufnr) ~= -1 then return t.bufnr end
		end
		return 0`, &buf)
		return buf > 0, e.chat()
	})
	e.lua(`vim.api.nvim_set_current_win(vim.fn.bufwinid(...))`, nil, buf)
	e.ctrlC()
	e.waitChat("(turn ended: cancelled)", 10*time.Second)
}

// TestRawLineFeedsReachTheScreenUnchanged: a program that turned the pty's
// \n -> \r\n translation off prints a bare line feed, which moves down
// without returning to column 0 on any terminal. Neovim 0.10+ would add a
// \r by default (nvim_open_term's force_crlf); the split must not.
func TestRawLineFeedsReachTheScreenUnchanged(t *testing.T) {
	e := startEditor(t, "")
	e.startSession()
	e.cmd(`AgentPrompt stty -onlcr; printf 'ab\ncd\r\n'`)
	term := e.waitTerminal(`stty -onlcr; printf 'ab\ncd\r\n'`, 10*time.Second)
	text := e.waitBuf(term.Bufnr, 10*time.Second, "cd", exitMarker(0))
	if lines := strings.Split(text, "\n"); len(lines) < 2 || lines[0] != "ab" || lines[1] != "  cd" {
		t.Errorf("a bare line feed after \"ab\" should leave \"cd\" in column 3; the split shows:\n%s", text)
	}
}

// TestMultiLineCommandReadsAsOneLine: a command with a line break in it
// (a multi-line prompt to the demo agent; real agents send such commands)
// shows in the chat's tool call and in :AgentTerminals on one line, with
// no error and no traceback.
func TestMultiLineCommandReadsAsOneLine(t *testing.T) {
	e := startEditor(t, "")
	e.startSession()
	e.lua(`require("agentrun").prompt("echo line-a\necho line-b")`, nil)
	e.waitChat("(<CR> opens it)", 10*time.Second)
	chat := e.chat()
	if !strings.Contains(chat, "echo line-a echo line-b") {
		t.Errorf("the chat does not show the command on one line:\n%s", chat)
	}
	e.cmd("AgentTerminals")
	var list string
	e.waitFor("the terminal list to show the command", 10*time.Second, func() (bool, string) {
		e.lua(`for _, b in ipairs(vim.api.nvim_list_bufs()) do
			if vim.bo[b].filetype == "agentrun-terminals" or vim.b[b].agentrun_terminal_list then
				return table.concat(vim.api.nvim_buf_get_lines(b, 0, -1, false), "\n")
			end
		end
		return ""`, &list)
		return strings.Contains(list, "echo line-a echo line-b"), list
	})
	var msgs string
	e.lua(`return vim.fn.execute("messages")`, &msgs)
	if strings.Contains(msgs, "internal error") || strings.Contains(msgs, "newlines") || strings.Contains(msgs, "traceback") {
		t.Errorf("messages after a multi-line command:\n%s", msgs)
	}
}

// TestAttachCompletesRunningFirst: :AgentAttach <Tab> offers the running
// terminals before the ended ones, whatever order they started in.
func TestAttachCompletesRunningFirst(t *testing.T) {
	e := startEditor(t, "")
	e.startSession()
	e.cmd("AgentPrompt echo early")
	done := e.waitTerminal("echo early", 10*time.Second)
	e.waitBuf(done.Bufnr, 10*time.Second, exitMarker(0))
	e.cmd("AgentPrompt sleep 30")
	running := e.waitTerminal("sleep 30", 10*time.Second)
	var ids []string
	e.lua(`return vim.fn.getcompletion("AgentAttach ", "cmdline")`, &ids)
	if len(ids) != 2 || ids[0] != running.ID || ids[1] != done.ID {
		t.Errorf(":AgentAttach <Tab> offers %v, want %s (running) before %s (ended)", ids, running.ID, done.ID)
	}
	e.cmd("AgentCancel")
}

// TestDetachedShowsInTheList: a terminal this Neovim detached reads "you
// (detached)" in :AgentTerminals (it outlives this Neovim), not "you".
func TestDetachedShowsInTheList(t *testing.T) {
	e := startEditor(t, "")
	e.cmd("AgentShell sleep 500")
	term := e.waitTerminal("sleep 500", 10*time.Second)
	e.cmd("AgentDetach " + term.ID)
	e.cmd("AgentTerminals")
	var buf int
	e.lua(`return vim.api.nvim_get_current_buf()`, &buf)
	text := e.waitBuf(buf, 5*time.Second, "sleep 500")
	if !regexp.MustCompile(`(?m)^term-1  running  you \(detached\) `).MatchString(text) {
		t.Errorf("the list:\n%s", text)
	}
	e.cmd("AgentKill " + term.ID)
}

// TestEndSaidWithHowLong: a command of ours that ends fires User
// AgentRunTerminalExited once, with how it ended as the split says it and
// how long it ran; status() says the same.
func TestEndSaidWithHowLong(t *testing.T) {
	for _, tc := range []struct{ command, how string }{
		{"sleep 0.4; exit 3", "exit 3"},
		{"sleep 0.4; kill -TERM $$", "signal SIGTERM"},
	} {
		t.Run(tc.how, func(t *testing.T) {
			e := startEditor(t, "")
			e.startSession()
			e.recordExits()
			e.cmd("AgentPrompt " + tc.command)
			term := e.waitTerminal(tc.command, 10*time.Second)
			e.waitBuf(term.Bufnr, 10*time.Second, "["+tc.how+"]", "[released]")
			exits := e.exits()
			var st []exitSaid
			e.lua(`local id = ...; return vim.tbl_filter(function(t) return t.id == id end, require("agentrun").status().terminals)`, &st, term.ID)
			ok := func(s exitSaid) bool {
				return s.ID == term.ID && s.How == tc.how && s.RanMS != nil && *s.RanMS >= 400 && *s.RanMS < 10000
			}
			switch {
			case len(exits) != 1:
				t.Errorf("User AgentRunTerminalExited fired %d times, want once: %+v", len(exits), exits)
			case !exits[0].NoData && !ok(exits[0]):
				t.Errorf("User AgentRunTerminalExited said %+v, want id %s, how %q, ran_ms from 400", exits[0], term.ID, tc.how)
			}
			if len(st) != 1 || !ok(st[0]) {
				t.Errorf("status() says %+v, want how %q and ran_ms from 400", st, tc.how)
			}
		})
	}
}

// TestSplitEndIsTheBackendsOwn: a split's end is the line the backend
// wrote ("[exit 3]"), and Lua looks for that very line (display_ended
// carries it): under a split that shows its end it writes no "Neovim
// dropped the end" note, and terminal.on_failure loads the failures once
// the end is there (it polled the buffer every 100 ms for 2 s). Lua built
// its own copy of the marker: one byte changed on one side wrote the note
// under every split.
func TestSplitEndIsTheBackendsOwn(t *testing.T) {
	e := startEditor(t, `require("agentrun").setup({ terminal = { on_failure = { "quickfix" } } })`)
	if err := os.WriteFile(filepath.Join(e.dir, "notes.txt"), []byte("one\ntwo\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	e.cmd(`AgentShell sh -c 'echo notes.txt:2:1: boom; exit 3'`)
	term := e.waitTerminal("sh -c 'echo notes.txt:2:1: boom; exit 3'", 10*time.Second)
	e.waitFor("the failure in the quickfix list", 10*time.Second, func() (bool, string) {
		var n int
		e.lua(`return #vim.fn.getqflist()`, &n)
		return n == 1, e.bufLines(term.Bufnr)
	})
	// The end was checked (the quickfix list waited for it): whatever was
	// written then is in the buffer once a line sent after it is.
	e.lua(`vim.api.nvim_chan_send(require("agentrun.state").terminals[...].chan, "\r\nprobe-after-the-end")`, nil, term.ID)
	text := e.waitBuf(term.Bufnr, 5*time.Second, "probe-after-the-end")
	if strings.Contains(text, "dropped the end") {
		t.Errorf("the split, which showed its end, says Neovim dropped it:\n%s", text)
	}
	if strings.Count(text, exitMarker(3)) != 1 {
		t.Errorf("the split does not end with %s once:\n%s", exitMarker(3), text)
	}
}
