package tests

import (
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"
)

// TestRemoteListAt80ColumnsOnScreen: at 80 columns, a command of
// an agent on another machine beside a shell here reads whole in
// :AgentTerminals: the machine is said once, on a line above its
// terminals, whose ids are short (term-1), and the list's keys act on
// them (X kills the one there).
func TestRemoteListAt80ColumnsOnScreen(t *testing.T) {
	r := startSSHRemote(t)
	s := startShellScreen(t, 80, 30, fmt.Sprintf("vim.env.AGENTRUN_SSH_CONFIG = %q", r.Config))
	s.waitShows(10*time.Second, "~")
	s.keys(":AgentRun "+r.URL()+" demo", "Enter")
	s.waitShows(20*time.Second, "demo on "+remoteAlias)
	s.typeText(`sleep 300; true`)
	s.keys("C-s")
	s.waitShows(20*time.Second, "sleep 300; true")
	s.keys("Escape", `C-\`, "C-n", ":AgentShell echo here-done", "Enter")
	s.waitShows(10*time.Second, "here-done")
	eventually(t, "both terminals in status()", 10*time.Second, func() (bool, string) {
		n := s.expr(`luaeval("#require('agentrun').status().terminals")`)
		return n == "2", n + " terminals"
	})
	s.keys(`C-\`, "C-n", ":AgentTerminals", "Enter")
	sc := s.waitFor("both terminals listed", 10*time.Second, func(sc string) bool {
		return strings.Contains(sc, "│ here-done") && strings.Contains(sc, "tool call")
	})
	// the machine once, above its terminal; its row whole within 80 columns
	line := regexp.MustCompile(`(?m)^on ssh://` + remoteAlias + ` \(its ids end with @` + remoteAlias + `\)$`)
	row := regexp.MustCompile(`(?m)^term-1 +demo 1 +running +tool call +\d+s +sleep 300; true +│`)
	list := sc[strings.Index(sc, "agentrun terminals —"):]
	if !line.MatchString(list) || !row.MatchString(list) || strings.Contains(list, "term-1@") {
		t.Fatalf("at 80 columns the list does not show the machine once and its row whole:\n%s", list)
	}
	// X on its row kills the one there (the list's keys take its whole id)
	s.keys("G", "X")
	s.waitFor("the command there killed", 10*time.Second, func(sc string) bool {
		return regexp.MustCompile(`(?m)^term-1 +demo 1 +killed +\S+ +\d+s +sleep 300; true`).MatchString(sc)
	})
}
