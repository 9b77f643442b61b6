package tests

import (
	"regexp"
	"strconv"
	"testing"
	"time"
)

// tickOf is the number of the last "tick N" in text that match re finds
// (its first group), 0 when none.
func tickOf(re *regexp.Regexp, text string) int {
	n := 0
	for _, m := range re.FindAllStringSubmatch(text, -1) {
		n, _ = strconv.Atoi(m[1])
	}
	return n
}

// TestScreenTerminalListFollowsAfterAnotherTabPage: the terminal list
// shown in one tab page goes on refreshing after a visit to another tab
// page (gt, gt): its row's LAST LINE keeps up with the split's output,
// and it re-fits its key line when the screen shrinks to 60×15. (The
// refresh stopped for good the first time it ran while the list was in
// another tab page: the row stayed at "tick 20" with the split at tick
// 29, and at 60 columns the key line was cut.)
func TestScreenTerminalListFollowsAfterAnotherTabPage(t *testing.T) {
	s := startDemoScreenSized(t, 80, 24, "")
	s.prompt("for i in $(seq 1 400); do echo tick $i; sleep 0.25; done")
	s.waitShows(10*time.Second, splitOf("term-1", "running"), "tick 2")
	s.keys("Escape", ":tabnew", "Enter", ":AgentRun", "Enter") // the chat in the second tab page too
	s.waitShows(10*time.Second, "agentrun · demo · working")
	s.keys("Escape", "gt", ":AgentTerminals", "Enter")
	row := regexp.MustCompile(`(?m)^term-1 +running .*│ tick (\d+)`)
	s.waitFor("the list's row of term-1", 5*time.Second, func(sc string) bool { return row.MatchString(sc) })
	s.keys("gt")
	// in the other tab page for longer than the list's refresh: the
	// command's output moves on by more than a second's ticks
	last := regexp.MustCompile(`tick (\d+)`)
	from := tickOf(last, s.expr(`luaeval('require("agentrun").status().terminals[1].last_line')`))
	eventually(t, "term-1's output to move on by 6 ticks", 10*time.Second, func() (bool, string) {
		got := s.expr(`luaeval('require("agentrun").status().terminals[1].last_line')`)
		return tickOf(last, got) >= from+6, got
	})
	s.keys("gt")
	split := regexp.MustCompile(`(?m)^tick (\d+)`)
	sc := s.waitFor("the split's output back in sight", 5*time.Second, func(sc string) bool { return tickOf(split, sc) > from+6 })
	shown := tickOf(split, sc)
	s.waitFor("the list's row to keep up with the split", 5*time.Second, func(sc string) bool {
		return tickOf(row, sc) >= shown
	})
	var keys string
	s.luaValue(`require("agentrun.ui.actions").hint("list", 60, "agentrun terminals — ")`, &keys)
	s.tmux("resize-window", "-t", "0", "-x", "60", "-y", "15")
	s.waitShows(5*time.Second, keys)
}

// TestScreenRerunSplitFollowsAfterTerminalMode: R in a command's split
// runs it again there, in terminal mode; <C-\><C-n> leaves terminal mode,
// and the split goes on showing the newest output, as a terminal does.
// (On 0.7.2 it stopped at "tick 9" with the output at tick 36: leaving
// terminal mode put the cursor on the terminal's cursor row, which was
// taken for the user scrolling up.)
func TestScreenRerunSplitFollowsAfterTerminalMode(t *testing.T) {
	s := startDemoScreenSized(t, 80, 24, "")
	s.prompt("for i in $(seq 1 400); do echo tick $i; sleep 0.1; done")
	s.waitShows(10*time.Second, splitOf("term-1", "running"), "tick 2")
	s.keys("Escape", "C-w", "b", "R")
	s.waitShows(10*time.Second, splitOf("term-1", "run 2 · running"))
	s.keys(`C-\`, "C-n")
	split := regexp.MustCompile(`(?m)^tick (\d+)`)
	sc := s.waitFor("normal mode in the split", 5*time.Second, func(sc string) bool { return !regexp.MustCompile(`-- TERMINAL --`).MatchString(sc) })
	from := tickOf(split, sc)
	s.waitFor("the split to show newer output than when terminal mode was left", 10*time.Second, func(sc string) bool {
		return tickOf(split, sc) >= from+30
	})
}
