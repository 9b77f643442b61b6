package tests

import (
	"regexp"
	"strings"
	"testing"
	"time"
)

// TestScreenSplitStatusSaysHowItStands: at 80 columns a split's status
// line says whether its command runs and who holds it (the agent's, yours
// once taken over or your own :AgentShell), and how it ended (exit 3),
// not only its ports and "waiting for input".
func TestScreenSplitStatusSaysHowItStands(t *testing.T) {
	s := startDemoScreenSized(t, 80, 24, "")
	s.prompt("sleep 0.5; exit 3")
	s.waitShows(10*time.Second, splitOf("term-1", "exit 3"))
	s.prompt("sleep 100")
	s.waitShows(10*time.Second, splitOf("term-2", "running · agent's"))
	s.keys("Escape", ":AgentTakeover term-2", "Enter")
	s.waitShows(5*time.Second, splitOf("term-2", "running · yours"))
	s.keys(":AgentKill term-2", "Enter")
	s.waitShows(10*time.Second, splitOf("term-2", "killed"))
	s.keys(":AgentShell sleep 100", "Enter")
	s.waitShows(10*time.Second, splitOf("term-3", "running · yours"))
}

// TestScreenTerminalListFitsNarrowWindows: :AgentTerminals at 80 and at
// 60 columns keeps every column's header whole (it read "SESSI…"), says
// how each command ended in the same words on every row (one "SIGTERM",
// another "released (exit 0)" before), and cuts the command last.
func TestScreenTerminalListFitsNarrowWindows(t *testing.T) {
	s := startDemoScreenSized(t, 80, 24, "")
	s.prompt("echo hi")
	s.waitShows(10*time.Second, "echo hi exited with code 0.")
	s.prompt("sleep 100")
	s.waitShows(10*time.Second, splitOf("term-2", "running"))
	s.keys("Escape", ":AgentKill term-2", "Enter")
	s.waitShows(10*time.Second, splitOf("term-2", "killed"))
	s.keys(":AgentShell sleep 200", "Enter")
	s.waitShows(10*time.Second, splitOf("term-3", "running · yours"))
	s.keys(`C-\`, "C-n", ":AgentTerminals", "Enter")
	for _, cols := range []int{80, 60} {
		if cols != 80 {
			s.tmux("resize-window", "-t", "0", "-x", "60")
		}
		header := regexp.MustCompile(`(?m)^ID +SESSION +STATE +HOLDER +AGE +COMMAND +│ LAST`)
		if cols == 60 {
			header = regexp.MustCompile(`(?m)^ID +SESSION +STATE +HOLDER +COMMAND +│ LAST`) // no room for the age
		}
		rows := []*regexp.Regexp{
			regexp.MustCompile(`(?m)^term-1 +demo 1 +exit 0 +— .*echo hi +│ hi`),
			regexp.MustCompile(`(?m)^term-2 +demo 1 +killed +— .*sleep`),
			regexp.MustCompile(`(?m)^term-3 +you +running +you .*sleep`),
		}
		sc := s.waitFor("the list's header and rows at "+map[int]string{80: "80", 60: "60"}[cols]+" columns", 5*time.Second, func(sc string) bool {
			if !header.MatchString(sc) {
				return false
			}
			for _, r := range rows {
				if !r.MatchString(sc) {
					return false
				}
			}
			return true
		})
		if strings.Contains(sc, "released (") || strings.Contains(sc, "exited (") {
			t.Errorf("at %d columns the list says how they ended in two ways:\n%s", cols, sc)
		}
	}
}
