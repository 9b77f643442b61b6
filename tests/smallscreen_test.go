package tests

import (
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"
)

// TestShortScreenKeepsTheChatReadable: on a short screen a command's
// split takes at most a third of the rows, so the chat above it keeps a
// readable height; the chat's status line never runs its state into its
// line counter.
func TestShortScreenKeepsTheChatReadable(t *testing.T) {
	cases := []struct {
		cols, rows     int
		maxTerm, minCh int
	}{
		{60, 20, 6, 5},
		{100, 24, 7, 8},
	}
	for _, c := range cases {
		t.Run(fmt.Sprintf("%dx%d", c.cols, c.rows), func(t *testing.T) {
			s := startScreen(t, c.cols, c.rows, sizesLua)
			s.keys(":e main.go", "Enter", ":AgentRun", "Enter")
			s.waitShows(10*time.Second, "agentrun · demo · ready")
			s.prompt("ls")
			sc := s.waitShows(10*time.Second, "ls exited with code 0.", splitOf("term-1"))
			if regexp.MustCompile(`(ready|working…)\d`).MatchString(sc) {
				t.Errorf("the status line runs into its counter:\n%s", sc)
			}
			got := s.sizes()
			if got["term"] > c.maxTerm || got["term"] < 3 || got["chat"] < c.minCh || got["prompt"] != 3 {
				t.Errorf("at %dx%d the split takes %d rows (at most %d) and leaves the chat %d (at least %d): %v\n%s",
					c.cols, c.rows, got["term"], c.maxTerm, got["chat"], c.minCh, got, s.capture())
			}
		})
	}
}

// TestTerminalListInANarrowWindow: :AgentTerminals at 70 columns below a
// command's split: the list is tall enough for its key hint, its column
// headers and its terminals, and the other columns give way so that the
// LAST LINE column shows the output's last line.
func TestTerminalListInANarrowWindow(t *testing.T) {
	s := startRunScreen(t, runtimeDir(t), 70, 24)
	s.prompt("echo the-first-command-output")
	s.waitShows(10*time.Second, "[released]") // its split: ended
	s.prompt("echo the-second-command-output")
	s.waitShows(10*time.Second, splitOf("term-2"))
	s.keys("Escape", ":AgentTerminals", "Enter")
	sc := s.waitShows(5*time.Second, "<CR> open", "│ LAST LINE", "│ the-first-command-out", "│ the-second-command-out")
	if strings.Contains(sc, "│ LA ") || strings.HasSuffix(strings.TrimSpace(sc), "│ LA") {
		t.Errorf("the LAST LINE column is cut:\n%s", sc)
	}
}

// TestTerminalListOfTwoSessionsAt70x20: with a SESSION column too, on a
// screen 20 rows high, the list keeps its key hint and headers in sight
// (the split above gives it rows) and its last lines readable.
func TestTerminalListOfTwoSessionsAt70x20(t *testing.T) {
	s := startDemoScreenSized(t, 70, 20, `require("agentrun").setup({ agents = { other = { cmd = { vim.g.agentrun_bin, "demo-agent" } } } })`)
	s.prompt("sleep 300")
	s.waitShows(10*time.Second, splitOf("term-1"))
	s.keys("Escape", ":AgentRun other", "Enter")
	s.waitShows(10*time.Second, "agentrun · other · ready")
	s.prompt("echo the-other-command-output")
	s.waitShows(10*time.Second, splitOf("term-2"))
	s.prompt("echo from-queue-and-more")
	s.waitShows(10*time.Second, splitOf("term-3"))
	s.keys("Escape", ":AgentTerminals", "Enter")
	s.waitShows(5*time.Second, "<CR> open", "│ LAST LINE", "demo 1", "│ the-other-command-out", "│ from-queue-and-more")
}

// TestTerminalListAt80KeepsHowTheyEnded: at 80 columns, with a SESSION
// column (an agent's command and a shell of yours), the STATE column gives
// way by keeping how each command ended ("exit 1", "killed": you killed
// it) rather than cutting "exited (signal SIGTERM)" to "exited (…".
func TestTerminalListAt80KeepsHowTheyEnded(t *testing.T) {
	s := startRunScreen(t, runtimeDir(t), 80, 30)
	s.prompt("echo a-long-command-that-fails-with-one; false")
	s.waitShows(10*time.Second, "exited with code 1")
	s.keys("Escape", ":AgentShell sleep 300", "Enter")
	s.waitShows(10*time.Second, splitOf("term-2"))
	s.keys(`C-\`, "C-n", ":AgentKill", "Enter")
	s.waitShows(10*time.Second, signalMarker("SIGTERM"))
	s.keys(":AgentTerminals", "Enter")
	sc := s.waitShows(5*time.Second, "agentrun terminals —", "│ LAST LINE")
	for _, want := range []*regexp.Regexp{regexp.MustCompile(`(?m)^term-1 .*\bexit 1\b`), regexp.MustCompile(`(?m)^term-2 .*\bkilled\b`)} {
		if !want.MatchString(sc) {
			t.Errorf("the list does not show %s:\n%s", want, sc)
		}
	}
}

// TestScreenPromptNameWholeAt60: at 60 columns the prompt's status line
// keeps its name whole (it read "<of demo 1" beside its ruler).
func TestScreenPromptNameWholeAt60(t *testing.T) {
	s := startDemoScreenSized(t, 60, 15, "")
	s.prompt("sleep 4330")
	sc := s.waitShows(10*time.Second, splitOf("term-1"), "prompt of demo 1")
	if strings.Contains(sc, "<of demo") || strings.Contains(sc, "<prompt") {
		t.Errorf("the prompt's name is cut from its start:\n%s", sc)
	}
}
