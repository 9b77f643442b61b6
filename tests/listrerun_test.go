package tests

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// TestScreenRerunKeepsItsName: R on an agent's command that failed runs
// it again in its row, under the name the user knows it by: the list
// stays in order (term-1, term-2 (run 2), term-3), grows no SESSION
// column, the chat's line of the new run says it and <CR> on it
// opens that run, status() says which run it is and whose row it takes,
// and a command given term-2 acts on its newest run, named term-2. (The
// row read term-4 between term-1 and term-3, a SESSION column appeared,
// and the chat's link opened the old output the list no longer showed.)
func TestScreenRerunKeepsItsName(t *testing.T) {
	s := startDemoScreenSized(t, 80, 24, "")
	s.prompt("echo one")
	s.waitShows(10*time.Second, splitOf("term-1", "exit 0"))
	s.prompt("sh -c 'echo failing; exit 1'")
	s.waitShows(10*time.Second, splitOf("term-2", "exit 1"))
	s.prompt("echo three")
	s.waitShows(10*time.Second, splitOf("term-3", "exit 0"))
	s.keys("Escape", ":AgentTerminals", "Enter")
	s.waitShows(5*time.Second, "agentrun terminals —", "│ three")
	s.keys("/failing", "Enter", "R")
	s.waitShows(10*time.Second, splitOf("term-2", "run 2 · exit 1"))
	s.keys(`C-\`, "C-n", ":AgentTerminals", "Enter")
	sc := s.waitShows(5*time.Second, "(run 2)", "│ three")
	rows := regexp.MustCompile(`(?m)^(term-\d+)  .*$`).FindAllStringSubmatch(sc, -1)
	var order []string
	for _, r := range rows {
		order = append(order, r[1])
	}
	if strings.Join(order, " ") != "term-1 term-2 term-3" {
		t.Errorf("the list's rows are %v, want term-1 term-2 term-3 (the rerun in its row, by its name):\n%s", order, sc)
	}
	if !regexp.MustCompile(`(?m)^term-2 +exit 1 +you .*\(run 2\)`).MatchString(sc) {
		t.Errorf("term-2's row does not say run 2, exit 1, yours:\n%s", sc)
	}
	if strings.Contains(sc, "SESSION") {
		t.Errorf("a rerun alone made a SESSION column:\n%s", sc)
	}
	var st []map[string]any
	s.luaValue(`vim.tbl_map(function(t) return { id = t.id, runs = t.runs or 0, rerun_of = t.rerun_of or "", rerun_as = t.rerun_as or "" } end, require("agentrun").status().terminals)`, &st)
	byID := map[string]map[string]any{}
	for _, x := range st {
		byID[x["id"].(string)] = x
	}
	if x := byID["term-4"]; x == nil || x["runs"] != float64(2) || x["rerun_of"] != "term-2" || byID["term-2"]["rerun_as"] != "term-4" {
		t.Errorf("status() does not say term-4 is run 2 of term-2: %v", st)
	}
	// the chat says the new run on a line of its own, below the first's
	// (TestScreenRerunReadsInOrder); <CR> opens it
	chat := s.chatText()
	if !strings.Contains(chat, "▸ terminal term-2 · exit 1 · ") || !strings.Contains(chat, "▸ terminal term-2 (run 2) · exit 1 · ") {
		t.Errorf("the chat's lines of term-2 do not say its two runs:\n%s", chat)
	}
	s.keys(":lua vim.api.nvim_set_current_win(vim.fn.bufwinid(require('agentrun.state').session().chat.buf))", "Enter")
	s.keys("G", "?▸ terminal term-2", "Enter", "Enter")
	s.waitShows(5*time.Second, splitOf("term-2", "run 2"))
	var cur string
	s.luaValue(`vim.b.agentrun_terminal`, &cur)
	if cur != "term-4" {
		t.Errorf("<CR> on the chat's line opened %q, want the newest run's split", cur)
	}
	// :AgentType on it, ended: its split, focused, where R runs it again
	// (it left you in your window, where the R went into your file)
	s.keys(`C-\`, "C-n", ":wincmd p", "Enter", ":AgentType term-2", "Enter")
	s.waitShows(5*time.Second, "ended (exit 1): R here runs it again")
	s.luaValue(`vim.b.agentrun_terminal or ""`, &cur)
	if cur != "term-4" {
		t.Errorf(":AgentType on the ended term-2 left the cursor in %q, want its split", cur)
	}
	s.keys("R")
	s.waitShows(10*time.Second, splitOf("term-2", "run 3"))
}

// TestReadmeSaysTheListsKeysAsShown: the README's picture of the terminal
// list names its keys in the words the list shows (it said "T take over
// · dd dispose · Q quickfix · gx browse", the screen "T take · dd wipe ·
// Q qf · gx web"): both come from the action table.
func TestReadmeSaysTheListsKeysAsShown(t *testing.T) {
	e := startEditor(t, "")
	var hint string
	e.lua(`return require("agentrun.ui.actions").hint("list", 100, "agentrun terminals — ")`, &hint)
	readme, err := os.ReadFile(filepath.Join(root, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(readme), "\n"+hint+"\n") {
		t.Errorf("README.md does not show the list's key line as a 100-column screen shows it:\n%s", hint)
	}
}

// TestScreenTerminalListKeepsItsHeaders: the terminal list longer than its
// window keeps its key line and column headers in sight at 80×24 with a
// command's split opened under it, at 60×15 and at 100×30; the split and
// the list leave the chat a usable height; the list grows back with the
// screen; at 60 columns the key line names every key whole. (The split
// took a third of the screen besides the list's and left the chat 2 rows,
// the headers scrolled away, the list stayed 3 rows high once the screen
// grew again, and 60 columns cut the keys to "…Q qf R".) Once the list
// closes, the split has its rows back.
func TestScreenTerminalListKeepsItsHeaders(t *testing.T) {
	s := startDemoScreenSized(t, 80, 24, sizesLua)
	for i := 1; i <= 5; i++ {
		s.prompt(fmt.Sprintf("echo out-%d", i))
		s.waitShows(10*time.Second, splitOf(fmt.Sprintf("term-%d", i), "exit 0"))
	}
	s.keys("Escape", ":lua vim.api.nvim_win_close(vim.fn.bufwinid(require('agentrun.state').terminals['term-5'].bufnr), true)", "Enter")
	s.keys(":AgentTerminals", "Enter")
	s.waitShows(5*time.Second, "agentrun terminals —", "│ out-5")
	s.keys("C-w", "p", "i")
	s.prompt("sleep 300")
	s.waitShows(10*time.Second, splitOf("term-6", "running"))
	headers := regexp.MustCompile(`(?m)^(agentrun terminals — )?<CR> open.*\n(ID +STATE .*)\n`)
	s.keys("Escape", ":AgentTerminals", "Enter", "G")
	sc := s.waitFor("the list's headers above its last row at 80×24", 5*time.Second, func(sc string) bool {
		return headers.MatchString(sc) && strings.Contains(sc, "term-6  running")
	})
	if got := s.sizes(); got["chat"] < 6 || got["list"] < 3 || got["term"] < 2 {
		t.Errorf("at 80×24 the list is %d rows, the split %d, the chat %d (want 6 at least):\n%s", got["list"], got["term"], got["chat"], sc)
	}
	s.tmux("resize-window", "-t", "0", "-x", "60", "-y", "15")
	s.waitFor("the list's headers and a row at 60×15", 5*time.Second, func(sc string) bool {
		return headers.MatchString(sc) && strings.Contains(sc, "<CR> open X kill T take dd wipe Q qf R rerun gx web q close") && regexp.MustCompile(`(?m)^term-\d `).MatchString(sc)
	})
	s.tmux("resize-window", "-t", "0", "-x", "100", "-y", "30")
	sc = s.waitFor("the list to grow back at 100×30", 5*time.Second, func(sc string) bool {
		return strings.Contains(sc, "agentrun terminals — <CR> open · X kill") && strings.Contains(sc, "term-1 ") && strings.Contains(sc, "term-6 ")
	})
	if !headers.MatchString(sc) {
		t.Errorf("at 100×30 the headers are not in sight:\n%s", sc)
	}
	// the list closed: the split it shared rows with has them back
	s.keys("q")
	s.waitFor("the list to close", 5*time.Second, func(sc string) bool { return !strings.Contains(sc, "agentrun terminals") })
	if got := s.sizes(); got["term"] < 5 || got["prompt"] != 3 {
		t.Errorf("with the list closed the split is %d rows, the prompt %d: %v", got["term"], got["prompt"], got)
	}
}

// TestScreenRerunHasOneName: after R, the id the list shows is the one
// name said and typed everywhere: the split's status line (its name
// first, the tail cut at 60 columns, not the head), its buffer's name in
// words (the tab line showed "a//t/term-2"), the list's tab label, the
// quit question and :AgentKill's completion (it offered term-1 and
// term-2, the split said term-2 "run 2 of term-1" and the quit question
// a third id). R on the agent's running command restarts it as yours.
func TestScreenRerunHasOneName(t *testing.T) {
	s := startDemoScreenSized(t, 80, 24, "")
	cmd := "sleep 4325 # a comment long enough to need more than sixty columns"
	s.prompt(cmd)
	s.waitShows(10*time.Second, splitOf("term-1", "running · agent's · sleep 4325"))
	s.keys("Escape", "C-w", "b", "R") // the agent's, running: restarted in place, yours
	s.waitShows(10*time.Second, splitOf("term-1", "run 2 · running · yours · sleep 4325"))
	if sc := s.capture(); strings.Contains(sc, "term-2") {
		t.Errorf("the rerun shows its own id besides term-1:\n%s", sc)
	}
	s.keys(`C-\`, "C-n")
	var how string
	s.luaValue(`vim.tbl_filter(function(t) return t.id == "term-1" end, require("agentrun").status().terminals)[1].how`, &how)
	if how != "restarted" {
		t.Errorf("the agent's run did not end by the restart: %q", how)
	}
	var done []string
	s.luaValue(`vim.fn.getcompletion("AgentKill ", "cmdline")`, &done)
	if strings.Join(done, " ") != "term-1" {
		t.Errorf(":AgentKill <Tab> offers %v, want term-1 alone", done)
	}
	// 60 columns: the status line keeps its head, the tail is cut
	s.tmux("resize-window", "-t", "0", "-x", "60")
	sc := s.waitShows(5*time.Second, splitOf("term-1", "run 2 · running · yours · sleep 4325 # a"))
	if regexp.MustCompile(`(?m)^<`).MatchString(sc) {
		t.Errorf("a line is cut from the left at 60 columns:\n%s", sc)
	}
	// tab labels in words: the split's, whole at 60 columns with two
	// tab pages (Neovim cut its start: "erm-1 …"), then the list's
	s.keys(":tabnew", "Enter")
	s.waitFor("the split's tab label", 5*time.Second, func(sc string) bool {
		return strings.Contains(strings.SplitN(sc, "\n", 2)[0], " term-1 sleep 4325 # a c…")
	})
	s.keys(":tabclose", "Enter")
	s.tmux("resize-window", "-t", "0", "-x", "80")
	s.keys(":AgentTerminals", "Enter")
	// the number of runs before the command, which is cut at its end
	s.waitShows(5*time.Second, "agentrun terminals —", "term-1  running  you", "(run 2) sleep 4325")
	s.keys(":tabnew", "Enter")
	s.waitFor("the list's tab label", 5*time.Second, func(sc string) bool {
		return strings.Contains(strings.SplitN(sc, "\n", 2)[0], "agentrun terminals")
	})
	s.keys(":tabclose", "Enter", "q")
	s.keys(":qa", "Enter")
	s.waitShows(5*time.Second, "(agentrun) Quitting ends your command:", "term-1  "+cmd[:30])
	if sc := s.capture(); strings.Contains(sc, "term-2") {
		t.Errorf("the quit question names the rerun by another id:\n%s", sc)
	}
	s.keys("s")
	s.waitShows(5*time.Second, "(agentrun) not quit")
}

// TestScreenTheAgentsCommandMadeYours: R on a command the agent still
// waits on restarts it as yours, and the chat says so: its tool call
// reads "run again by you", its first run "restarted", and the agent is
// told it was stopped to run again, the new run the user's (it read
// "completed", "signal SIGTERM", and the agent said "it keeps running
// in your terminal" of a command R had restarted, then "taken over").
// T on another reads "taken over by you".
func TestScreenTheAgentsCommandMadeYours(t *testing.T) {
	s := startDemoScreenSized(t, 160, 40, winsLua)
	s.prompt("echo serving; sleep 300")
	s.waitShows(10*time.Second, splitOf("term-1"), "serving")
	s.keys("Escape", ":AgentTerminals", "Enter")
	s.waitShows(5*time.Second, "agentrun terminals —")
	s.keys("/sleep 300", "Enter", "R")
	s.waitShows(10*time.Second, splitOf("term-1", "run 2"), "serving")
	// the split and the list closed: the chat in sight
	s.keys(`C-\`, "C-n", "q", ":lua vim.api.nvim_win_close(vim.fn.bufwinid('agentrun terminals'), false)", "Enter")
	var seen string
	eventually(t, "the chat to say R made the command yours", 10*time.Second, func() (bool, string) {
		seen = s.chatSeen()
		return strings.Contains(seen, "● echo serving; sleep 300 [execute] · run again by you") &&
			strings.Contains(seen, "▸ terminal term-1 · restarted · ") &&
			strings.Contains(seen, "▸ terminal term-1 (run 2) · running, yours") &&
			strings.Contains(seen, "stopped: the user runs it anew") &&
			strings.Contains(seen, "again yourself: the new run is yours"), seen + "\n" + s.capture()
	})
	if strings.Contains(seen, "keeps running") || strings.Contains(seen, "· completed") || strings.Contains(seen, "taken over") {
		t.Errorf("the chat says the restarted command completed, keeps running or was taken over:\n%s", seen)
	}
	s.keys(":AgentKill term-1", "Enter", ":lua vim.api.nvim_set_current_win(vim.fn.bufwinid(require('agentrun.state').session().chat.prompt_buf))", "Enter", "i")
	s.prompt("echo second; sleep 301")
	s.waitShows(10*time.Second, splitOf("term-3"), "second")
	s.keys("Escape", ":AgentTakeover term-3", "Enter", ":lua vim.api.nvim_win_close(vim.fn.bufwinid(vim.b.agentrun_terminal and 0 or require('agentrun.state').terminals['term-3'].bufnr), false)", "Enter")
	eventually(t, "the chat to say T made the command yours", 10*time.Second, func() (bool, string) {
		seen = s.chatSeen()
		return strings.Contains(seen, "● echo second; sleep 301 [execute] · taken over by you") &&
			strings.Contains(seen, "▸ terminal term-3 · running, yours"), seen + "\n" + s.capture()
	})
}

// TestScreenRerunIsOneRowInLs: after R on a finished command in Neovim,
// `agentrun ls` (the real binary, from a shell) lists it as Neovim's list
// does: one row, term-1, saying run 2, not the rerun's own id beside the
// first run's; `agentrun kill term-1` kills the newest run, as
// :AgentKill term-1 does. (ls listed PID:term-2 running and PID:term-1
// exited, and kill term-1 removed the finished first run.)
func TestScreenRerunIsOneRowInLs(t *testing.T) {
	s := startScreen(t, 80, 24, "")
	s.keys(":AgentRun demo", "Enter")
	s.waitShows(10*time.Second, "agentrun · demo · ready")
	// finishes at once the first time, runs on the second
	mark := filepath.Join(t.TempDir(), "ran")
	s.prompt(fmt.Sprintf("test -e %s && exec sleep 4326; touch %s", mark, mark))
	s.waitShows(10*time.Second, splitOf("term-1", "exit 0"))
	s.keys("Escape", "C-w", "b", "R")
	s.waitShows(10*time.Second, splitOf("term-1", "run 2 · running · yours"))
	var out string
	eventually(t, "agentrun ls to list term-1's run 2", 10*time.Second, func() (bool, string) {
		var err error
		out, err = s.cli("ls")
		return err == nil && regexp.MustCompile(`(?m)^\d+:term-1 +\(run 2\) test -e .* running `).MatchString(out), out
	})
	if rows := regexp.MustCompile(`(?m)^\d+:term-\d+ `).FindAllString(out, -1); len(rows) != 1 {
		t.Errorf("agentrun ls lists %d rows, want term-1 alone (its run 2):\n%s", len(rows), out)
	}
	js, err := s.cli("ls", "--json")
	if err != nil || !regexp.MustCompile(`"run": 2,\s+"run_id": "\d+:term-2"`).MatchString(js) {
		t.Errorf("agentrun ls --json does not say run 2 and its own id term-2: %v\n%s", err, js)
	}
	killed, err := s.cli("kill", "term-1")
	if err != nil || !regexp.MustCompile(`^killed \d+:term-1 \(run 2\) `).MatchString(killed) {
		t.Errorf("agentrun kill term-1 said %v: %q, want it killed term-1's run 2", err, killed)
	}
	// the newest run ended by the kill; the first run is as it was
	s.waitShows(10*time.Second, splitOf("term-1", "run 2 · signal SIGTERM"))
	var how map[string]string
	s.luaValue(`(function() local h = {} for _, t in ipairs(require("agentrun").status().terminals) do h[t.id] = t.how or "running" end return h end)()`, &how)
	if how["term-1"] != "exit 0" || how["term-2"] != "signal SIGTERM" {
		t.Errorf("after kill term-1 the runs are %v, want term-1 exit 0 and its run 2 (term-2) signal SIGTERM", how)
	}
}
