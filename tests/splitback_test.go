package tests

import (
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestScreenChatBackAfterTabonlyBringsItsSplit: a session's running
// command, its chat's tab page closed by :tabonly in another one, then
// :AgentRun: the chat comes back with the running command's split below
// it, the prompt still where you type (the chat came back alone, and
// stayed so after q in :AgentTerminals and :AgentRun again). A split
// closed with q stays closed when the chat comes back the same way.
func TestScreenChatBackAfterTabonlyBringsItsSplit(t *testing.T) {
	s := startDemoScreen(t)
	s.prompt("sleep 100")
	s.waitShows(10*time.Second, "[execute] · in progress", splitOf("term-1", "running"))
	s.keys("Escape", ":tabnew", "Enter", ":tabonly", "Enter")
	s.waitFor("the chat's tab page to close", 5*time.Second, func(sc string) bool {
		return !strings.Contains(sc, "agentrun · demo") && !shows(sc, splitOf("term-1"))
	})
	s.keys(":AgentRun", "Enter")
	s.waitShows(5*time.Second, "agentrun · demo", "[execute] · in progress", splitOf("term-1", "running"))
	s.typeText("typed-here")
	s.waitFor("the prompt to take what is typed", 5*time.Second, func(string) bool {
		return strings.Contains(s.expr(`getbufline("prompt of demo 1", 1)[0]`), "typed-here")
	})

	// q in the split: that one stays closed
	s.keys("Escape", ":lua vim.api.nvim_set_current_win(vim.fn.bufwinid(require('agentrun.state').terminals['term-1'].bufnr))", "Enter", "q")
	s.waitFor("the split to close", 5*time.Second, func(sc string) bool { return !shows(sc, splitOf("term-1")) })
	s.keys(":tabnew", "Enter", ":tabonly", "Enter")
	s.waitFor("the chat's tab page to close", 5*time.Second, func(sc string) bool { return !strings.Contains(sc, "agentrun · demo") })
	s.keys(":AgentRun", "Enter")
	s.waitShows(5*time.Second, "agentrun · demo", "[execute] · in progress")
	if sc := s.capture(); shows(sc, splitOf("term-1")) {
		t.Errorf("the split closed with q came back with the chat:\n%s", sc)
	}
}

// cursorRow returns the screen's row the terminal's cursor is on: where
// a user sees the cursor. The row and the screen are read in one tmux
// command, so a screen that scrolls meanwhile (a message) cannot pair
// one's row with the other's text.
func (s *screen) cursorRow() string {
	s.t.Helper()
	out := s.tmux("display-message", "-p", "-t", "0", "#{cursor_y}", ";", "capture-pane", "-p", "-t", "0")
	first, rest, _ := strings.Cut(out, "\n")
	y, err := strconv.Atoi(strings.TrimSpace(first))
	if err != nil {
		s.t.Fatalf("tmux cursor_y: %v: %q", err, first)
	}
	rows := strings.Split(rest, "\n")
	if y < 0 || y >= len(rows) {
		return ""
	}
	return rows[y]
}

// waitCursorOn waits until the screen's cursor is on a row matching re.
func (s *screen) waitCursorOn(what string, re *regexp.Regexp) {
	s.t.Helper()
	eventually(s.t, what, 5*time.Second, func() (bool, string) {
		row := s.cursorRow()
		return re.MatchString(row), "the cursor's row: " + row + "\nthe screen:\n" + s.capture()
	})
}

// TestScreenAgentTerminalsGoesToTheNewestRunning: the list open with its
// cursor on an ended command (term-1), the agent starts another (term-2):
// the list's refresh leaves the cursor where it was; :AgentTerminals
// typed elsewhere (focusing the open list) puts it on term-2, the newest
// running, as opening the list does (it stayed on term-1, and R reran
// that one). With nothing running, :AgentTerminals keeps the row the
// cursor was put on.
func TestScreenAgentTerminalsGoesToTheNewestRunning(t *testing.T) {
	s := startDemoScreen(t)
	s.prompt("echo one")
	s.waitShows(10*time.Second, "echo one exited with code 0.")
	s.keys("Escape", ":AgentTerminals", "Enter")
	term1 := regexp.MustCompile(`^term-1 +exit 0 `)
	term2 := regexp.MustCompile(`^term-2 +running `)
	s.waitCursorOn("the list's cursor on term-1", term1)

	s.keys(":AgentRun", "Enter") // back to the prompt, the list still open
	s.waitShows(5*time.Second, "-- INSERT --")
	s.prompt("sleep 100")
	s.waitShows(10*time.Second, "[execute] · in progress", splitOf("term-2", "running"))
	s.waitFor("the list's row of term-2", 5*time.Second, func(sc string) bool {
		return regexp.MustCompile(`(?m)^term-2 +running `).MatchString(sc)
	})
	s.keys("Escape", ":lua vim.api.nvim_set_current_win(vim.fn.bufwinid('agentrun terminals'))", "Enter")
	s.waitCursorOn("the refresh to leave the list's cursor on term-1", term1)
	s.keys("C-w", "p", ":AgentTerminals", "Enter")
	s.waitCursorOn(":AgentTerminals to put the cursor on term-2, the newest running", term2)

	// nothing running: the row the cursor was put on stays
	s.keys("X")
	s.waitFor("term-2 to end", 10*time.Second, func(sc string) bool {
		return regexp.MustCompile(`(?m)^term-2 +killed `).MatchString(sc)
	})
	s.keys("k") // onto term-1
	s.waitCursorOn("the cursor moved onto term-1", term1)
	s.keys("C-w", "p", ":AgentTerminals", "Enter")
	s.waitFor("the list focused", 5*time.Second, func(string) bool { return s.expr(`bufname()`) == "agentrun terminals" })
	if row := s.cursorRow(); !term1.MatchString(row) {
		t.Errorf("with nothing running, :AgentTerminals moved the cursor from term-1 to: %s\n%s", row, s.capture())
	}
}
