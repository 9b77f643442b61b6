package tests

import (
	"fmt"
	"regexp"
	"strconv"
	"testing"
	"time"
)

// TestSwitchingSessionsShowsTheirTerminal: a command runs in demo's
// split; the user opens another session, runs something there, stops it
// and goes back to demo with :AgentRun demo: the split shows demo's
// running terminal again, not the other session's ended one.
func TestSwitchingSessionsShowsTheirTerminal(t *testing.T) {
	s := startDemoScreenSized(t, 120, 35, `require("agentrun").setup({ agents = { other = { cmd = { vim.g.agentrun_bin, "demo-agent" } } } })`)
	s.prompt("for i in $(seq 1 3000); do echo demo-tick $i; sleep 0.2; done")
	s.waitShows(10*time.Second, "demo-tick 3", splitOf("term-1"))
	s.keys("Escape", ":AgentRun other", "Enter")
	s.waitShows(10*time.Second, "agentrun · other · ready")
	s.prompt("echo in-other")
	s.waitShows(10*time.Second, splitOf("term-2"), "echo in-other exited with code 0.")
	s.keys("Escape", ":AgentStop", "Enter")
	s.waitShows(5*time.Second, "agentrun · other · ended")
	s.keys(":AgentRun demo", "Enter")
	sc := s.waitShows(5*time.Second, "agentrun · demo · working…", splitOf("term-1"))
	if shows(sc, splitOf("term-2")) {
		t.Fatalf("demo's chat beside other's split:\n%s", sc)
	}
	m := regexp.MustCompile(`demo-tick (\d+)`).FindAllStringSubmatch(sc, -1)
	if m == nil {
		t.Fatalf("demo's split shows no tick:\n%s", sc)
	}
	s.waitShows(5*time.Second, fmt.Sprintf("demo-tick %d", atoi(m[len(m)-1][1])+5))
}

func atoi(s string) int {
	n, _ := strconv.Atoi(s)
	return n
}
