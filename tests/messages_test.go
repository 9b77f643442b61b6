package tests

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestScreenMessagesNeverAskPressEnter (issue 50): at 60 columns a
// message longer than the room beside the ruler (:AgentModel x with no
// session, :AgentKill 99, :AgentRewind) says a shorter form, or is cut
// to one line ending in "…", with no "Press ENTER" (it stopped the
// screen there; fails without the fix).
func TestScreenMessagesNeverAskPressEnter(t *testing.T) {
	s := startScreen(t, 60, 15, "")
	for _, c := range []struct{ cmd, want string }{
		{":AgentModel x", "(agentrun) no session; :AgentRun starts one"},
		{":AgentKill 99", "(agentrun) no terminal \"99\" (:AgentTerminals)"},
		{":AgentKill term-99", "(agentrun) no terminal \"term-99\""},
		{":AgentRewind", "(agentrun) no session to rewind"},
		{":AgentReview", "(agentrun) no session to review"},
	} {
		s.keys(c.cmd, "Enter")
		sc := s.waitShows(5*time.Second, c.want)
		if strings.Contains(sc, "Press ENTER") {
			t.Errorf("%s stops at Press ENTER:\n%s", c.cmd, sc)
		}
		last := strings.Split(sc, "\n")
		if l := last[len(last)-1]; !strings.HasPrefix(l, c.want) || (len([]rune(l)) > 49 && !strings.HasSuffix(strings.TrimSpace(l), "…")) {
			t.Errorf("%s: the last line %q is not one cut line", c.cmd, l)
		}
	}
}

// TestScreenRerunOfTheAgentsServerFits (issue 50): R on a server the
// agent runs, at 100 columns, restarts it in place as yours with no
// "Press ENTER" (it refused, in a message that stopped at "Press ENTER",
// then in one line; README says R restarts it).
func TestScreenRerunOfTheAgentsServerFits(t *testing.T) {
	s := startDemoScreen(t)
	s.prompt("python3 -m http.server 0")
	s.waitShows(10*time.Second, splitOf("term-1", "running"))
	s.keys("Escape", ":lua vim.fn.win_gotoid(vim.fn.bufwinid(require('agentrun.state').terminals['term-1'].bufnr))", "Enter")
	s.keys("R")
	sc := s.waitShows(10*time.Second, splitOf("term-1", "run 2 · running · yours"))
	if strings.Contains(sc, "Press ENTER") {
		t.Errorf("R stops at Press ENTER:\n%s", sc)
	}
}

// TestScreenNothingToCancelSaysSo (issue 50): <C-c> in the prompt with no
// turn and no command running says so in the chat, once however often
// pressed ("-- INSERT --" hid the message; fails without the fix), and
// :AgentMode with the demo agent, which offers no modes, says so.
func TestScreenNothingToCancelSaysSo(t *testing.T) {
	s := startDemoScreen(t)
	s.keys("C-c")
	s.waitShows(5*time.Second, "(no turn to cancel: nothing runs)")
	s.keys("C-c")
	s.keys("Escape", ":AgentMode", "Enter")
	sc := s.waitShows(5*time.Second, "(agentrun) demo offers no modes")
	if n := strings.Count(sc, "(no turn to cancel"); n != 1 {
		t.Errorf("the chat says it %d times, want once:\n%s", n, sc)
	}
}

// TestScreenEmptyListUnderHelp (issue 50): :help over an empty
// :AgentTerminals leaves the list one row: that row says the list is
// empty (it showed only the keys; fails without the fix).
func TestScreenEmptyListUnderHelp(t *testing.T) {
	s := startScreen(t, 80, 24, "")
	s.keys(":AgentTerminals", "Enter")
	s.waitShows(5*time.Second, "(no terminals yet; :AgentShell opens one)", "agentrun terminals —")
	s.keys(":help", "Enter")
	s.waitShows(5*time.Second, "help.txt", "(no terminals yet; :AgentShell opens one)")
}

// TestScreenInterruptedIsNotFailed (issue 50): a command stopped with
// <C-c> in its split reads "interrupted" in the chat, in the list (a
// narrow state column) and in the split, its status line and its last
// line alike, not "failed" nor "signal SIGINT" (fails without the fix).
func TestScreenInterruptedIsNotFailed(t *testing.T) {
	s := startDemoScreen(t)
	s.prompt("sleep 4325")
	s.waitShows(10*time.Second, splitOf("term-1"))
	s.keys("Escape", ":lua vim.fn.win_gotoid(vim.fn.bufwinid(require('agentrun.state').terminals['term-1'].bufnr))", "Enter")
	// (in the split before <C-c>: typed while the command line still
	// runs, Neovim takes it as an interrupt of that)
	eventually(t, "the split to be the current window", 5*time.Second, func() (bool, string) {
		b := s.expr("get(b:, 'agentrun_terminal', '')")
		return b == "term-1", b
	})
	s.keys("C-c")
	s.waitShows(10*time.Second, splitOf("term-1", "interrupted"), "[interrupted]")
	s.keys("q") // the split closed: the chat in sight
	sc := s.waitShows(10*time.Second, "sleep 4325", "· interrupted")
	if strings.Contains(sc, "· failed") || strings.Contains(sc, "interrupted (") {
		t.Errorf("the chat says the interrupted command failed, or in other words than its split:\n%s", sc)
	}
	s.keys(":AgentTerminals", "Enter")
	sc = s.waitShows(5*time.Second, "agentrun terminals —", "term-1  interrupted  ")
	if strings.Contains(sc, "term-1  interrupted (SIGINT)") {
		t.Errorf("the list's state column says the signal too (it widened the column for every row):\n%s", sc)
	}
}

// TestScreenGxWithNoBrowser (issue 50): gx on a URL in a split, with no
// opener installed (no xdg-open here), says in our words what failed and
// what to do, in one line (0.12 showed vim.ui.open's "no handler found
// (tried: …)"; fails without the fix); with $BROWSER set, it opens the
// URL with that. The URL is named, cut to fit 60 columns.
func TestScreenGxWithNoBrowser(t *testing.T) {
	if _, err := exec.LookPath("xdg-open"); err == nil {
		t.Skip("xdg-open is installed here: gx would open a browser")
	}
	opened := filepath.Join(t.TempDir(), "opened")
	script := filepath.Join(t.TempDir(), "browser")
	if err := os.WriteFile(script, []byte("#!/bin/sh\necho \"$1\" > "+opened+"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, browser := range []string{"", script} {
		s := startScreen(t, 100, 30, fmt.Sprintf("vim.env.BROWSER = %q", browser))
		s.keys(":AgentShell echo http://localhost:1/docs", "Enter")
		s.waitShows(10*time.Second, splitOf("term-1", "exit 0"))
		s.keys("gg", "/localhost", "Enter", "gx")
		if browser == "" {
			sc := s.waitShows(5*time.Second, "(agentrun) no browser for http://localhost:1/docs; set $BROWSER")
			for _, bad := range []string{"vim.ui.open", "no handler", "Press ENTER"} {
				if strings.Contains(sc, bad) {
					t.Errorf("gx with no browser shows %q:\n%s", bad, sc)
				}
			}
			continue
		}
		eventually(t, "$BROWSER to open the URL", 5*time.Second, func() (bool, string) {
			b, _ := os.ReadFile(opened)
			return strings.TrimSpace(string(b)) == "http://localhost:1/docs", string(b)
		})
	}
	// At 60 columns a long URL is named, without its scheme and cut to
	// fit the line (it said only "no browser found: set $BROWSER").
	n := startScreen(t, 60, 15, `vim.env.BROWSER = ""`)
	n.keys(":AgentShell echo http://localhost:1/a/long/path/to/the/docs/page.html", "Enter")
	n.waitShows(10*time.Second, "exit 0")
	n.keys("gg", "/localhost", "Enter", "gx")
	sc := n.waitShows(5*time.Second, "(agentrun) set $BROWSER to open localhost:1/a/l…")
	if strings.Contains(sc, "Press ENTER") {
		t.Errorf("gx at 60 columns stops at Press ENTER:\n%s", sc)
	}
}

// TestScreenGxInTheChat: gx on a URL in the chat (a command's output
// there) with no browser says in our words what failed and what to do, as
// in a split (Neovim's own gx there showed vim.ui.open's "no handler
// found (tried: …)" on 0.12, as a new user saw).
func TestScreenGxInTheChat(t *testing.T) {
	if _, err := exec.LookPath("xdg-open"); err == nil {
		t.Skip("xdg-open is installed here: gx would open a browser")
	}
	s := startDemoScreen(t)
	s.keys(":let $BROWSER = ''", "Enter")
	s.prompt("echo http://localhost:1/docs")
	s.waitShows(10*time.Second, "exited with code 0.")
	s.keys("Escape", ":lua vim.api.nvim_set_current_win(vim.fn.bufwinid('chat of demo 1'))", "Enter", "gg", "/localhost:1", "Enter", "gx")
	sc := s.waitShows(5*time.Second, "(agentrun) no browser for http://localhost:1/docs; set $BROWSER")
	for _, bad := range []string{"vim.ui.open", "no handler", "Press ENTER"} {
		if strings.Contains(sc, bad) {
			t.Errorf("gx in the chat with no browser shows %q:\n%s", bad, sc)
		}
	}
}
