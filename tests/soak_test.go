package tests

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestSoakRandomThenHundredTerminals is issue 24's acceptance run, on the
// screen: 20 MB of /dev/urandom into one split, then 100 terminals at once
// (the demo agent's !parallel), while Neovim draws it all in tmux. It
// killed Neovim 0.7.2 in 2 of 5 runs before the filter's second round.
// Neovim must live through every run and end the last command's turn.
// AGENTRUN_SOAK_RUNS sets the number of runs (default 5). It runs only
// under `make soak` (AGENTRUN_SOAK=1).
func TestSoakRandomThenHundredTerminals(t *testing.T) {
	if os.Getenv("AGENTRUN_SOAK") == "" {
		t.Skip("soak test: set AGENTRUN_SOAK=1 (make soak)")
	}
	runs := 5
	if v, err := strconv.Atoi(os.Getenv("AGENTRUN_SOAK_RUNS")); err == nil && v > 0 {
		runs = v
	}
	for i := range runs {
		t.Run(fmt.Sprintf("run %d", i+1), func(t *testing.T) {
			s := startDemoScreen(t)
			s.tmux("set-option", "-t", "0", "remain-on-exit", "on")
			alive := func(what string, timeout time.Duration, want string) {
				t.Helper()
				s.waitFor(what, timeout, func(sc string) bool {
					if s.exited() {
						t.Fatalf("Neovim died while %s:\n%s", what, sc)
					}
					return strings.Contains(sc, want)
				})
			}
			s.prompt("head -c 20000000 /dev/urandom")
			alive("20 MB of random bytes went through a split", 2*time.Minute, exitMarker(0))
			s.prompt("!parallel 100 seq 1 200")
			alive("100 terminals ran at once", 2*time.Minute, "exit0=100")
			s.keys("Escape", ":qa!", "Enter")
			s.waitFor("Neovim to quit", 10*time.Second, func(string) bool { return s.exited() })
			if sc := s.capture(); strings.Contains(sc, "Segmentation") || strings.Contains(sc, "core dumped") {
				t.Fatalf("Neovim crashed on the way out:\n%s", sc)
			}
		})
	}
}
