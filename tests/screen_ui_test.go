package tests

import (
	"fmt"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// These tests are a new user's first minutes, as seen on the screen: Neovim
// in tmux (100×30), keys typed as a person types them, the terminal read
// back. Each starts with :AgentRun on the demo agent. The agent's messages
// are markdown: `code` shows as code, without its backticks.

// TestScreenPromptOpensInInsertMode: after :AgentRun the cursor is in the
// prompt, in insert mode, so what the user types next is the prompt.
func TestScreenPromptOpensInInsertMode(t *testing.T) {
	s := startDemoScreen(t)
	s.waitShows(5*time.Second, "-- INSERT --")
	s.prompt("echo typed-right-away")
	s.waitShows(10*time.Second, "echo typed-right-away exited with code 0.")
	if sc := s.capture(); !strings.Contains(sc, "-- INSERT --") {
		t.Errorf("after sending, the prompt is no longer in insert mode:\n%s", sc)
	}
	// i in the transcript (read, not edited) types in the prompt: no E21.
	s.keys("Escape", "C-w", "k")
	s.waitFor("normal mode in the chat", 5*time.Second, func(sc string) bool { return !strings.Contains(sc, "-- INSERT --") })
	s.keys("i")
	s.typeText("echo from-the-chat")
	s.keys("C-s")
	sc := s.waitShows(10*time.Second, "echo from-the-chat exited with code 0.", "-- INSERT --")
	if strings.Contains(sc, "E21") {
		t.Errorf("i in the chat:\n%s", sc)
	}
}

// TestScreenSplitFollowsOutput: a 400-line command's last line and its
// end marker are on screen without the user touching the split.
func TestScreenSplitFollowsOutput(t *testing.T) {
	s := startDemoScreen(t)
	s.prompt("for i in $(seq 1 400); do echo row-$i; done")
	sc := s.waitShows(15*time.Second, "row-400", exitMarker(0))
	if strings.Contains(sc, "row-1\n") {
		t.Errorf("the split shows its first line as well as its last:\n%s", sc)
	}
}

// TestScreenScrolledUpSplitStaysPut: a user who went into the split and
// scrolled up to read is not yanked back down by new output.
func TestScreenScrolledUpSplitStaysPut(t *testing.T) {
	s := startDemoScreen(t)
	s.prompt("for i in $(seq 1 100); do echo line-$i; sleep 0.05; done")
	s.waitShows(10*time.Second, "line-20")
	s.keys("Escape")
	s.keys("C-w", "j") // prompt -> the split below
	s.keys("g", "g")
	s.waitFor("the split to show its first line", 5*time.Second, func(sc string) bool {
		return regexp.MustCompile(`(?m)^line-1\s*$`).MatchString(sc)
	})
	sc := s.waitShows(10*time.Second, "exited with code 0.") // the chat says it ended
	if !regexp.MustCompile(`(?m)^line-1\s*$`).MatchString(sc) || strings.Contains(sc, "line-100") {
		t.Errorf("the split the user scrolled up in moved on to the end:\n%s", sc)
	}
	s.keys("G")
	s.waitShows(5*time.Second, "line-100", exitMarker(0))
}

// TestScreenCtrlCInPromptStopsTheCommand: <C-c> typed in the prompt (in
// insert mode, where the user is after sending) stops the running command.
func TestScreenCtrlCInPromptStopsTheCommand(t *testing.T) {
	s := startDemoScreen(t)
	s.prompt("sleep 60")
	s.waitShows(10*time.Second, "sleep 60 [execute] · in progress")
	s.keys("C-c")
	s.waitShows(10*time.Second, interruptedMarker, "sleep 60 was killed by SIGINT.")
	if sc := s.capture(); strings.Contains(sc, "Type  :qa") {
		t.Errorf("<C-c> reached Vim instead of the command:\n%s", sc)
	}
}

// TestScreenQueuedPromptRunsAfterTheTurn: a prompt sent while a command
// runs shows as queued, on one line of the chat (a long one, in this
// narrow chat, cut with …), and runs when the turn ends.
func TestScreenQueuedPromptRunsAfterTheTurn(t *testing.T) {
	s := startDemoScreen(t)
	s.prompt("sleep 3")
	s.waitShows(10*time.Second, "sleep 3 [execute] · in progress")
	s.prompt("echo queued-1")
	s.waitShows(5*time.Second, "│(queued: echo queued-1 — sent after this turn)")
	s.prompt("echo a-longer-one with many words that do not fit the chat")
	s.waitFor("the long queued prompt on one line", 5*time.Second,
		regexp.MustCompile(`│\(queued: echo a-longer-one with many words [^│\n]*…\)`).MatchString)
	eventually(t, "the queued prompts to run", 15*time.Second, func() (bool, string) {
		text := s.chatText()
		return strings.Contains(text, "`echo queued-1` exited with code 0.") && strings.Contains(text, "`echo a-longer-one wi…` exited with code 0."), text
	})
}

// TestScreenQuitLeavesNoMessage: :qa right after a command ran leaves the
// terminal without any message (no error from work queued during exit).
func TestScreenQuitLeavesNoMessage(t *testing.T) {
	s := startDemoScreen(t)
	s.tmux("set-option", "-t", "0", "remain-on-exit", "on")
	s.prompt("echo before-quit")
	s.waitShows(10*time.Second, "echo before-quit exited with code 0.")
	s.keys("Escape", ":qa", "Enter")
	s.waitFor("Neovim to exit", 10*time.Second, func(string) bool { return s.exited() })
	sc := s.capture()
	// Neovim left the alternate screen: whatever it printed while exiting
	// is what remains.
	if strings.Contains(sc, "agentrun") || strings.Contains(sc, "rror") {
		t.Errorf(":qa left a message:\n%s", sc)
	}
}

// TestScreenHelpOpens: :help agentrun works right after installing (doc/tags).
func TestScreenHelpOpens(t *testing.T) {
	s := startScreen(t, 100, 30, "")
	s.keys(":help agentrun", "Enter")
	s.waitShows(5*time.Second, "agentrun.txt", "QUICK START")
	if sc := s.capture(); strings.Contains(sc, "E149") {
		t.Errorf(":help agentrun failed:\n%s", sc)
	}
}

// TestScreenTakeoverLeavesAReadableChat: T in the split makes the command
// the user's; the chat says so in a sentence (it showed nested JSON).
func TestScreenTakeoverLeavesAReadableChat(t *testing.T) {
	s := startDemoScreen(t)
	s.prompt("sleep 30")
	s.waitShows(10*time.Second, "sleep 30 [execute] · in progress")
	s.keys("Escape")
	s.keys("C-w", "j")
	s.keys("T")
	sc := s.waitShows(10*time.Second, "You took sleep 30 over", "agentrun · demo · ready")
	for _, bad := range []string{`{"`, "code -32", "Internal error", "turn failed"} {
		if strings.Contains(sc, bad) {
			t.Errorf("the chat shows %q after the takeover:\n%s", bad, sc)
		}
	}
}

// TestScreenRulesAndLogInOnePlaceOnEveryNeovim: the always-allow rules and
// the log are in $XDG_STATE_HOME/nvim on every Neovim (0.7 has no
// stdpath("state")), so they survive an upgrade; rules an older agentrun
// kept under stdpath("data") on 0.7 are moved there and stay in force,
// as :checkhealth shows.
func TestScreenRulesAndLogInOnePlaceOnEveryNeovim(t *testing.T) {
	s := startScreen(t, 250, 40, `local name = vim.fn.getcwd():gsub("/", "%%")
local old = vim.fn.stdpath("data") .. "/agentrun/allow"
vim.fn.mkdir(old, "p")
vim.fn.writefile({ "# kept by Neovim 0.7", "make lint" }, old .. "/" .. name .. ".txt")`)
	s.keys(":checkhealth agentrun", "Enter")
	state := filepath.Join(s.dir, "state", "nvim")
	s.waitShows(10*time.Second, "always allowed in this project on this machine ("+filepath.Join(state, "agentrun", "allow"), "): make lint",
		"log file: "+filepath.Join(state, "agentrun.log"))
	if m, _ := filepath.Glob(filepath.Join(s.dir, "data", "nvim", "agentrun", "allow", "*.txt")); len(m) != 0 {
		t.Errorf("the old rules file is still there: %v", m)
	}
}

// TestScreenCheckhealthLinksWithoutBars: the ":help tag" pointers of
// :checkhealth agentrun read as typed on every Neovim, also where
// filetype plugins are off (a by-hand config on 0.7.2 showed the |tag| bars
// its report makes of them: only its ftplugin conceals them).
func TestScreenCheckhealthLinksWithoutBars(t *testing.T) {
	s := startScreen(t, 200, 40, `vim.cmd("filetype plugin off")`)
	s.keys(":checkhealth agentrun", "Enter")
	want := "Neovim " // the first item, on every version
	if knownOpen07() {
		want = "see :help agentrun-neovim-0.7" // the 0.7 warning's advice
	}
	sc := s.waitShows(10*time.Second, want)
	if strings.Contains(sc, "|agentrun-") {
		t.Errorf(":checkhealth shows a help link with its bars:\n%s", sc)
	}
}

// TestScreenAgentBuildOfflineKeepsTheBinary: :AgentBuild download with no
// network says the download failed and that the binary you have is kept
// and still works; and it does (:AgentRun starts).
func TestScreenAgentBuildOfflineKeepsTheBinary(t *testing.T) {
	s := startScreen(t, 250, 30, `local dest = vim.fn.getcwd() .. "/agentrun"
assert(vim.loop.fs_copyfile(vim.g.agentrun_bin, dest))
vim.loop.fs_chmod(dest, 493)
vim.g.agentrun_bin = dest
vim.g.agentrun_release_url = "http://127.0.0.1:9"`)
	s.keys(":AgentBuild download", "Enter")
	s.waitFor("the failed download and the kept binary told", 30*time.Second, func(sc string) bool {
		sc = strings.ReplaceAll(sc, "\n", "")
		// (the reason kept, the binary's path left out where the whole
		// line would not fit: one line, no Press ENTER)
		return strings.Contains(sc, "(agentrun) the download failed: curl could not download http://127.0.0.1:9/") &&
			(strings.Contains(sc, "; the binary you have ("+filepath.Join(s.dir, "agentrun")+", version ") && strings.Contains(sc, ") is kept as it was and still works") ||
				strings.Contains(sc, "; your binary (version ") && strings.Contains(sc, ") is kept and still works"))
	})
	s.keys("Enter", ":AgentRun", "Enter")
	s.waitShows(10*time.Second, "agentrun · demo · ready")
}

// TestScreenListClosesFromAnyLine: q closes :AgentTerminals also on its
// header and on the "no terminals yet" line (it did nothing unless the
// cursor was on a terminal's row); another key there says to move to one.
func TestScreenListClosesFromAnyLine(t *testing.T) {
	s := startScreen(t, 100, 30, "")
	// :AgentAttach with nothing to attach: one line, no "Press ENTER".
	s.keys(":AgentAttach", "Enter")
	if sc := s.waitShows(5*time.Second, "(agentrun) nothing to attach here; a remote machine's: :AgentAttach ssh://host"); strings.Contains(sc, "Press ENTER") {
		t.Errorf(":AgentAttach with nothing to attach stops at Press ENTER:\n%s", sc)
	}
	s.keys(":AgentTerminals", "Enter")
	s.waitShows(5*time.Second, "no terminals yet")
	s.keys("q")
	s.waitFor("the empty list to close", 5*time.Second, func(sc string) bool { return !strings.Contains(sc, "agentrun terminals —") })
	s.keys(":AgentShell sleep 300", "Enter")
	s.waitShows(10*time.Second, splitOf("term-1"))
	s.keys(`C-\`, "C-n", ":AgentTerminals", "Enter")
	s.waitShows(5*time.Second, "agentrun terminals —", "sleep 300")
	s.keys("gg", "X")
	s.waitShows(5*time.Second, "no terminal on this line to kill; move to a terminal's row")
	s.keys("gg", "q")
	s.waitFor("the list to close from its header", 5*time.Second, func(sc string) bool { return !strings.Contains(sc, "agentrun terminals —") })
	if sc := s.capture(); strings.Contains(sc, "[signal") {
		t.Errorf("X on the header killed something:\n%s", sc)
	}
}

// TestScreenSendToAnEndedSessionIsSaid: <C-s> in the prompt of a session
// that ended (insert mode, where "-- INSERT --" hides a message at once)
// is answered in the chat, and the prompt's text stays.
func TestScreenSendToAnEndedSessionIsSaid(t *testing.T) {
	s := startDemoScreen(t)
	s.keys("Escape", ":AgentStop", "Enter")
	s.waitShows(10*time.Second, "you stopped this session")
	s.keys("A") // still in the ended session's prompt
	s.typeText("echo after")
	s.keys("C-s")
	sc := s.waitShows(5*time.Second, "(agentrun) this session has ended;", "-- INSERT --")
	if !strings.Contains(sc, "echo after") {
		t.Errorf("the prompt's text went:\n%s", sc)
	}
}

// TestScreenBadCommandsFitOneLine: at 80 columns (with 'showcmd' a
// message has 68 of them) and at 60 (48) each command given bad words
// says what was wrong and what to do in one line, "(agentrun) " first:
// the screen never stops at "Press ENTER". An action on the newest running terminal (no id given) says so
// in its one message, not in a line before it.
func TestScreenBadCommandsFitOneLine(t *testing.T) {
	s := startScreen(t, 80, 30, "")
	for _, c := range []struct{ cmd, says string }{
		{"AgentRun nosuch", `(agentrun) no agent "nosuch"; you have demo; setup() adds more`},
		{"AgentRun demo extra", "(agentrun) :AgentRun takes [ssh://host] [agent], not: demo extra"},
		{"AgentKill term-1 term-2", "(agentrun) too many arguments; usage: :AgentKill[!] [id]"},
		{"AgentDetach a b", "(agentrun) too many arguments; usage: :AgentDetach [id]"},
		{"AgentConfig a b c", "(agentrun) too many arguments; usage: :AgentConfig {id} [value]"},
		{"AgentSessions nosuch", `(agentrun) no agent "nosuch"; you have demo; setup() adds more`},
		{"AgentLogin", "(agentrun) no session to sign in for; :AgentRun starts one"},
		{"AgentBuild bogus", `(agentrun) :AgentBuild takes auto, download or go, not "bogus"`},
		{"AgentAttach nope", `(agentrun) unknown terminal "nope"; :AgentTerminals lists them`},
		{"AgentAttach http://foo", `(agentrun) unknown terminal "http://foo"; :AgentTerminals lists them`},
		{"AgentAttach 12345:term-9", "(agentrun) no agentrun host 12345 is running; see :AgentTerminals"},
		{"AgentAttach term-99", `(agentrun) unknown terminal "term-99"; :AgentTerminals lists them`},
	} {
		s.keys(":"+c.cmd, "Enter")
		if sc := s.waitShows(10*time.Second, c.says); strings.Contains(sc, "Press ENTER") {
			t.Errorf(":%s stops at Press ENTER:\n%s", c.cmd, sc)
			s.keys("Enter")
		}
	}
	// At 60 columns, in shorter words (a new user saw these wrap in the
	// middle of a word, at Press ENTER).
	n := startScreen(t, 60, 20, "")
	for _, c := range []struct{ cmd, says string }{
		{"AgentAttach nosuch", `(agentrun) no terminal "nosuch"`},
		{"AgentBuild nosuch", "(agentrun) :AgentBuild takes auto/download/go"},
		{"AgentSessions", "(agentrun) demo does not list its sessions"},
	} {
		n.keys(":"+c.cmd, "Enter")
		if sc := n.waitShows(10*time.Second, c.says); strings.Contains(sc, "Press ENTER") {
			t.Errorf(":%s at 60 columns stops at Press ENTER:\n%s", c.cmd, sc)
			n.keys("Enter")
		}
	}
	// In a session, at 60 and 80 columns (a new user saw these wrap in
	// the middle of a word at Press ENTER, or lose the "(agentrun) "
	// prefix at 80 columns): each the whole last line, prefixed.
	for _, size := range [][2]int{{60, 15}, {80, 24}} {
		d := startDemoScreenSized(t, size[0], size[1], "")
		d.keys("Escape")
		for _, c := range []struct{ cmd, at60, at80 string }{
			{"AgentDiff nosuchfile", "nosuchfile is in no buffer; :e it", "no buffer holds nosuchfile; open it, then :AgentDiff"},
			{"AgentReview bogus", ":AgentReview takes turn or session", `:AgentReview takes turn or session, not "bogus"`},
			{"AgentReview", "nothing to review: no file changed", "nothing to review: no turn of this session changed a file"},
			{"AgentAttach 1:term-1", "no host 1 (:AgentTerminals)", "no agentrun host 1 is running; see :AgentTerminals"},
			{"AgentRun demo extra", "usage: :AgentRun [ssh://host] [agent]", ":AgentRun takes [ssh://host] [agent], not: demo extra"},
			{"AgentConfig foo bar", "demo has no options to set", "demo has no options to set"},
			{"AgentLogin", "demo has no sign-in here", "demo offers no way to sign in from here"},
			{"AgentBuild bogus", ":AgentBuild takes auto/download/go", `:AgentBuild takes auto, download or go, not "bogus"`},
			{"AgentPrompt", "nothing to send; :AgentPrompt {text}", "an empty prompt; try :AgentPrompt {text}"},
			{"AgentQuickfix term-1 x", "usage: :AgentQuickfix [id]", "too many arguments; usage: :AgentQuickfix [id]"},
			{"AgentMode bogus", "demo offers no modes", "demo offers no modes"},
			{"AgentShell echo hi", "", ""},
			{"AgentQuickfix", "term-1: no file:line in its output", "term-1: no file:line in its output"},
		} {
			d.keys(":"+c.cmd, "Enter")
			if c.at60 == "" { // a command for the next
				d.waitShows(10*time.Second, splitOf("term-1", "exit 0"))
				d.keys(`C-\`, "C-n")
				continue
			}
			want := "(agentrun) " + c.at80
			if size[0] == 60 {
				want = "(agentrun) " + c.at60
			}
			sc := d.waitFor(want, 10*time.Second, func(sc string) bool {
				l := strings.Split(sc, "\n")
				return strings.TrimSpace(l[len(l)-1]) == want || strings.Contains(sc, "Press ENTER")
			})
			if strings.Contains(sc, "Press ENTER") {
				t.Errorf(":%s at %d columns stops at Press ENTER:\n%s", c.cmd, size[0], sc)
				d.keys("Enter")
			}
		}
	}
	// At 160 columns, :AgentDetach without an id in the chat asks which
	// (what outlives Neovim is never picked for you: a new user's bare
	// :AgentDetach kept the agent's command running after :qa), then
	// says it in one line.
	w := startScreen(t, 160, 30, "")
	w.keys(":AgentShell sleep 300", "Enter")
	w.waitShows(10*time.Second, splitOf("term-1"))
	w.keys(`C-\`, "C-n", ":wincmd p", "Enter", ":AgentDetach", "Enter")
	w.waitShows(10*time.Second, "Keep which command running after Neovim quits?", "1: term-1 sleep 300 (yours)")
	w.keys("1", "Enter")
	sc := w.waitShows(10*time.Second, "(agentrun) term-1 is detached (it outlives Neovim): :AgentAttach ")
	if strings.Contains(sc, "Press ENTER") {
		t.Errorf(":AgentDetach says more than one line:\n%s", sc)
	}
	w.killDetached("term-1") // it would outlive the test
}

// killDetached kills terminal id, which :AgentDetach kept running after
// this Neovim quits, and waits for its end: a test leaves nothing behind.
func (s *screen) killDetached(id string) {
	s.t.Helper()
	s.keys("Escape", ":AgentKill "+id, "Enter")
	eventually(s.t, id+" to end", 10*time.Second, func() (bool, string) {
		st := s.expr(fmt.Sprintf(`luaeval("require('agentrun.state').terminals['%s'].state")`, id))
		return st != "running", st
	})
}

// TestScreenTerminalListOpensOnARow: :AgentTerminals opens with its title
// and column header in sight and the cursor on a terminal's row (it
// started on the last row, the header scrolled away, with 11 terminals;
// on the header when the list had shown its empty line), and once there
// were terminals its empty line does not say "yet".
func TestScreenTerminalListOpensOnARow(t *testing.T) {
	s := startScreen(t, 160, 40, "")
	s.keys(":AgentTerminals", "Enter")
	s.waitShows(5*time.Second, "(no terminals yet; :AgentShell opens one)")
	// The list stays open; a shell starts; the list is opened again.
	s.keys(":AgentShell sleep 301", "Enter")
	s.waitShows(10*time.Second, splitOf("term-1"))
	s.keys(`C-\`, "C-n", ":AgentTerminals", "Enter")
	s.waitShows(5*time.Second, "agentrun terminals —", "sleep 301")
	var line string
	s.luaValue(`vim.api.nvim_get_current_line()`, &line)
	if !strings.HasPrefix(line, "term-1 ") {
		t.Errorf("the list opened again with the cursor on %q, not on term-1's row", line)
	}
	s.keys("q")
	for i := 2; i <= 11; i++ {
		s.keys(fmt.Sprintf(":AgentShell sleep %d", 300+i), "Enter")
		s.waitShows(10*time.Second, splitOf(fmt.Sprintf("term-%d", i)))
		s.keys(`C-\`, "C-n")
	}
	s.keys(":AgentTerminals", "Enter")
	sc := s.waitShows(5*time.Second, "agentrun terminals —", "HOLDER", "sleep 310")
	s.luaValue(`vim.api.nvim_get_current_line()`, &line)
	if !strings.HasPrefix(line, "term-") {
		t.Errorf("the cursor is on %q, not on a terminal's row:\n%s", line, sc)
	}
	// Every terminal gone: the empty line says so, without "yet".
	for i := 1; i <= 11; i++ {
		s.keys(fmt.Sprintf(":lua require('agentrun').dispose('term-%d')", i), "Enter")
	}
	s.keys(":AgentTerminals", "Enter")
	sc = s.waitShows(5*time.Second, "(no terminals now; :AgentShell opens one)")
	if strings.Contains(sc, "no terminals yet") {
		t.Errorf("the list says \"yet\" after terminals were there:\n%s", sc)
	}
}

// listHeight is the height of the :AgentTerminals window on screen sc:
// the rows from its title line to its status line (0: not shown).
func listHeight(sc string) int {
	lines := strings.Split(sc, "\n")
	for i, l := range lines {
		if !strings.HasPrefix(l, "agentrun terminals —") {
			continue
		}
		for j := i + 1; j < len(lines); j++ {
			if strings.HasPrefix(lines[j], "agentrun terminals ") {
				return j - i
			}
		}
	}
	return 0
}

// TestScreenListKeepsItsHeight: a terminal opened from :AgentTerminals
// (<CR>: its split opens below the list), then closed, leaves the list
// as high as it was, each time (it took an equal share of the rows with
// the split, 11 rows then 17, and the split's rows once it closed).
func TestScreenListKeepsItsHeight(t *testing.T) {
	s := startScreen(t, 100, 50, "")
	for i := 1; i <= 8; i++ {
		s.keys(fmt.Sprintf(":AgentShell sleep %d", 300+i), "Enter")
		s.waitShows(10*time.Second, splitOf(fmt.Sprintf("term-%d", i)))
		s.keys(`C-\`, "C-n")
	}
	s.keys("q") // the terminal split closes: the list opens alone below the code
	s.waitFor("the terminal split to close", 5*time.Second, func(sc string) bool { return !regexp.MustCompile(`(?m)^term-\d+ · `).MatchString(sc) })
	s.keys(":AgentTerminals", "Enter")
	sc := s.waitShows(5*time.Second, "agentrun terminals —", "sleep 308")
	h := listHeight(sc)
	if h != 11 {
		t.Fatalf("the list opened %d rows high, want 11 (the hint, the header, 8 terminals, the title's row):\n%s", h, sc)
	}
	for _, id := range []string{"term-1", "term-2"} {
		// in the list (not :AgentTerminals, which sets its height), on id's row
		s.keys(`:lua vim.api.nvim_set_current_win(vim.fn.bufwinid("agentrun terminals"))`, "Enter")
		s.keys("/^"+id+" ", "Enter", "Enter")
		sc = s.waitShows(10*time.Second, splitOf(id))
		if got := listHeight(sc); got != h {
			t.Errorf("with %s opened from it the list is %d rows high, was %d:\n%s", id, got, h, sc)
		}
		s.keys("q")
		sc = s.waitFor(id+"'s split to close", 5*time.Second, func(sc string) bool { return !regexp.MustCompile(`(?m)^term-\d+ · `).MatchString(sc) })
		if got := listHeight(sc); got != h {
			t.Errorf("with %s's split closed the list is %d rows high, was %d:\n%s", id, got, h, sc)
		}
	}
}

// TestScreenListShowsTheRunningTerminal: with more terminals than the
// list's window holds, it opens on the newest running one (the last row),
// in sight, and <CR> opens that one.
func TestScreenListShowsTheRunningTerminal(t *testing.T) {
	s := startScreen(t, 100, 40, "")
	for i := 1; i <= 11; i++ {
		s.keys(fmt.Sprintf(":AgentShell echo done-%d", i), "Enter")
		s.waitShows(10*time.Second, splitOf(fmt.Sprintf("term-%d", i)), exitMarker(0))
	}
	s.keys(":AgentShell sleep 300", "Enter")
	s.waitShows(10*time.Second, splitOf("term-12"))
	s.keys(`C-\`, "C-n", ":AgentTerminals", "Enter")
	sc := s.waitShows(5*time.Second, "agentrun terminals", "term-11 ")
	if !strings.Contains(sc, "term-12 ") || !strings.Contains(sc, "sleep 300") {
		t.Fatalf("the list opened without its one running terminal in sight:\n%s", sc)
	}
	s.keys("Enter")
	s.waitFor("term-12's split, entered from the list", 10*time.Second, func(sc string) bool {
		return shows(sc, splitOf("term-12"))
	})
}

// TestScreenListGivesRowsBack: on a small screen (80x24) the terminals
// list takes at most a third of it (the chat keeps rows to read), and the
// command's split that gave it rows has them back once the list closes.
func TestScreenListGivesRowsBack(t *testing.T) {
	s := startScreen(t, 80, 24, "")
	s.keys(":AgentRun", "Enter")
	s.waitShows(20*time.Second, "agentrun · demo · ready")
	for i := 1; i <= 10; i++ { // more terminals than the list has rows
		s.keys("Escape", fmt.Sprintf(":AgentShell echo done-%d", i), "Enter")
		s.waitShows(10*time.Second, fmt.Sprintf("term-%d", i), exitMarker(0))
	}
	s.keys("Escape", ":lua vim.api.nvim_set_current_win(vim.fn.bufwinid('prompt of demo 1'))", "Enter")
	s.typeText("echo later8")
	s.keys("C-s")
	s.waitShows(10*time.Second, splitOf("term-11"), "[released]")
	// the heights of the split, the chat and the list (0: not shown)
	s.keys("Escape", ":lua _G.H = function() local o = {0, 0, 0}; for _, w in ipairs(vim.api.nvim_tabpage_list_wins(0)) do local b = vim.api.nvim_win_get_buf(w); local n = vim.api.nvim_buf_get_name(b); local i = vim.b[b].agentrun_terminal and 1 or n:find('chat of ', 1, true) and 2 or vim.b[b].agentrun_terminal_list and 3; if i then o[i] = vim.api.nvim_win_get_height(w) end end; return o end", "Enter")
	heights := func() (split, chat, list int) {
		var h []int
		s.luaValue(`_G.H()`, &h)
		return h[0], h[1], h[2]
	}
	before, _, _ := heights()
	s.keys(":AgentTerminals", "Enter")
	s.waitShows(5*time.Second, "agentrun terminals —")
	split, chat, list := heights()
	t.Logf("split %d rows before the list; with it: list %d, chat %d, split %d", before, list, chat, split)
	if list > 7 || chat < 3 {
		t.Errorf("with the list open at 80x24: list %d rows (want at most a third, 7), chat %d (want 3 or more), split %d", list, chat, split)
	}
	s.keys("q")
	s.waitFor("the list to close", 5*time.Second, func(sc string) bool { return !strings.Contains(sc, "agentrun terminals —") })
	eventually(t, "the split's rows back", 5*time.Second, func() (bool, string) {
		split, _, _ := heights()
		return split == before, fmt.Sprintf("split %d rows, was %d before the list", split, before)
	})
}

// TestScreenAgentRunReturnsToYourChat: :AgentRun without a name shows the
// chat of the session you were in, here the demo agent's, even though
// another agent is the default; it starts nothing new. Open → q →
// reopen.
func TestScreenAgentRunReturnsToYourChat(t *testing.T) {
	s := startDemoScreenSized(t, 100, 30, `require("agentrun").setup({ default_agent = "other", agents = { other = { cmd = { "sh", "-c", "sleep 100" } } } })`)
	s.prompt("echo first-prompt")
	s.waitShows(10*time.Second, "echo first-prompt exited with code 0.")
	s.keys("Escape", ":wincmd k", "Enter", "q") // the chat closes
	s.waitFor("the chat to close", 5*time.Second, func(sc string) bool { return !strings.Contains(sc, "agentrun · demo") })
	s.keys(":AgentRun", "Enter")
	s.waitShows(10*time.Second, "agentrun · demo · ready", "echo first-prompt exited with code 0.")
	s.keys("Escape", `:lua print("sessions: " .. #require("agentrun").status().sessions)`, "Enter")
	s.waitShows(5*time.Second, "sessions: 1")
}

// TestScreenInterruptHintGoesWithTheTurn: <C-c> in the prompt says that
// pressing it again cancels the turn and drops the queued prompt; once the
// turn has ended, that hint no longer stands in the chat. Pressed once,
// it interrupts the command only, and the queued prompt goes back into
// the prompt when the turn ends (not sent behind the user's back: they
// stopped something); <C-s> then sends it.
func TestScreenInterruptHintGoesWithTheTurn(t *testing.T) {
	s := startDemoScreen(t)
	s.prompt("trap '' INT; sleep 4") // it does not stop at SIGINT
	s.waitShows(10*time.Second, "sleep 4 [execute] · in progress")
	s.prompt("echo queued-after")
	s.waitShows(5*time.Second, "(queued: echo queued-after")
	s.keys("C-c")
	// It says what a second <C-c> would do to the queued prompt too.
	s.waitShows(3*time.Second, "(interrupted `trap", "drops the 1 queued prompt)")
	sc := s.waitShows(10*time.Second, "sleep 4 exited with code 0.", "is back in the prompt", "agentrun · demo · ready")
	if strings.Contains(sc, "(interrupted `trap") {
		t.Errorf("the hint stays after the turn ended:\n%s", sc)
	}
	if strings.Contains(s.chatText(), "> echo queued-after") {
		t.Errorf("the queued prompt was sent after the interrupted turn:\n%s", s.chatText())
	}
	var held []string
	s.luaValue(`vim.api.nvim_buf_get_lines(require("agentrun.state").session().chat.prompt_buf, 0, -1, false)`, &held)
	if strings.Join(held, "\n") != "echo queued-after" {
		t.Fatalf("the prompt holds %q, want the queued prompt", held)
	}
	s.keys("Enter") // the prompt, normal mode: send
	s.waitShows(10*time.Second, "echo queued-after exited with code 0.")
}

// TestScreenInterruptAgainCancelsTheTurn: <C-c> again cancels the turn,
// as its hint says, also pressed later than 3 s after the first (it did
// nothing then), and the hint goes with the turn.
func TestScreenInterruptAgainCancelsTheTurn(t *testing.T) {
	s := startDemoScreen(t)
	s.prompt("trap '' INT; sleep 30") // it does not stop at SIGINT
	s.waitShows(10*time.Second, "sleep 30 [execute] · in progress")
	s.keys("C-c")
	s.waitShows(3*time.Second, "(interrupted `trap", "cancels the turn)")
	time.Sleep(3500 * time.Millisecond) // the user presses it again, later
	s.keys("C-c")
	sc := s.waitShows(10*time.Second, "(turn ended: cancelled)", "agentrun · demo · ready")
	if strings.Contains(sc, "cancels the turn)") {
		t.Errorf("the hint stays after the turn ended:\n%s", sc)
	}
}

// TestScreenKillCompletesRunningOnly: :AgentKill <Tab> offers the
// running terminals, not the ended or released ones (nothing to kill).
func TestScreenKillCompletesRunningOnly(t *testing.T) {
	s := startScreen(t, 100, 30, "")
	s.keys(":AgentShell echo done", "Enter")
	s.waitShows(10*time.Second, "done", exitMarker(0))
	s.keys(`C-\`, "C-n", ":AgentShell sleep 300", "Enter")
	s.waitShows(10*time.Second, splitOf("term-2"))
	s.keys(`C-\`, "C-n", ":AgentKill ", "Tab")
	sc := s.waitShows(5*time.Second, ":AgentKill term-2")
	s.keys("Tab")
	sc = s.waitShows(5*time.Second, ":AgentKill term-2")
	if strings.Contains(sc, "term-1  ") || strings.Contains(sc, ":AgentKill term-1") {
		t.Errorf(":AgentKill <Tab> offers the ended term-1:\n%s", sc)
	}
	var got []string
	s.keys("C-u", "Escape")
	s.luaValue(`vim.fn.getcompletion("AgentKill ", "cmdline")`, &got)
	if strings.Join(got, ",") != "term-2" {
		t.Errorf(":AgentKill completes %q, want term-2", got)
	}
}

// TestScreenDetachAsksWhich: :AgentDetach without an id, out of a split,
// asks which command to keep running after Neovim quits, naming whose
// each is; an empty answer keeps none, and :qa then ends the agent's
// command as usual. (A new user's bare :AgentDetach detached the agent's
// newest command, which then outlived Neovim.)
func TestScreenDetachAsksWhich(t *testing.T) {
	s := startDemoScreen(t)
	s.prompt("sleep 4329")
	s.waitShows(10*time.Second, splitOf("term-1"))
	s.keys("Escape", ":AgentDetach", "Enter")
	s.waitShows(10*time.Second, "Keep which command running after Neovim quits?", "1: term-1 sleep 4329 (the agent's)")
	s.keys("Enter") // no answer
	var detached bool
	s.luaValue(`require("agentrun.state").terminals["term-1"].detached == true`, &detached)
	if detached {
		t.Fatal("an empty answer detached the agent's command")
	}
	if sc := s.capture(); strings.Contains(sc, "is detached") {
		t.Errorf("an empty answer says something was detached:\n%s", sc)
	}
	// at 60 columns what it says keeps what a reattach needs whole
	n := startDemoScreenSized(t, 60, 15, "")
	n.prompt("sleep 4331")
	n.waitShows(10*time.Second, splitOf("term-1"))
	n.keys("Escape", ":AgentDetach", "Enter")
	n.waitShows(10*time.Second, "Keep which command running after Neovim quits?")
	n.keys("1", "Enter")
	sc := n.waitFor("the detach said with its name", 10*time.Second, func(sc string) bool {
		return regexp.MustCompile(`(?m)detached: :AgentAttach \d+:term-1\s*$`).MatchString(sc)
	})
	if last := regexp.MustCompile(`(?m)^.*detached: :AgentAttach.*$`).FindString(sc); strings.Contains(last, "…") || strings.Contains(sc, "Press ENTER") {
		t.Errorf("the detach is said cut:\n%s", sc)
	}
	n.killDetached("term-1")
}

// TestScreenXInTheChatKillsYourRerun: X in the chat kills the session's
// newest running command, your R rerun of one included (it said "no turn
// to cancel: nothing runs in this session", a cancel's words, while the
// rerun ran in the session's rows), and with nothing running it says
// there is nothing to kill.
func TestScreenXInTheChatKillsYourRerun(t *testing.T) {
	s := startDemoScreen(t)
	s.prompt("sh -c 'if test -e again; then sleep 302; else touch again; fi'")
	s.waitShows(10*time.Second, splitOf("term-1", "exit 0"))
	s.keys("Escape", ":AgentTerminals", "Enter")
	s.waitShows(5*time.Second, "agentrun terminals —")
	s.keys("/sleep 302", "Enter", "R")
	s.waitShows(10*time.Second, splitOf("term-1", "run 2 · running · yours"))
	s.keys(`C-\`, "C-n", ":lua vim.api.nvim_set_current_win(vim.fn.bufwinid(require('agentrun.state').session().chat.prompt_buf))", "Enter", "X")
	sc := s.waitShows(10*time.Second, splitOf("term-1", "run 2 · killed"))
	if strings.Contains(sc, "no turn to cancel") {
		t.Errorf("X in the chat answered in a cancel's words:\n%s", sc)
	}
	s.keys("X")
	s.waitShows(5*time.Second, "(nothing to kill: no command runs)")
}
