package tests

import (
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
