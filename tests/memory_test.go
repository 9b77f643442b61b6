package tests

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// Finished splits in bounded memory (issue 48): a finished split out of
// sight, beyond the newest terminal.live_ended, is no live terminal any
// more; opened again it is made from the backend's record, whole.

// expr evaluates a Vim expression in the screen's Neovim.
func (s *screen) expr(expr string) string {
	s.t.Helper()
	cmd := exec.Command("timeout", "5", nvimBin, "--headless", "--clean", "--server", filepath.Join(s.dir, "nvim.sock"), "--remote-expr", expr)
	out, err := cmd.CombinedOutput()
	if err != nil {
		s.t.Fatalf("--remote-expr %s: %v: %s", expr, err, out)
	}
	return strings.TrimSpace(string(out))
}

// captureColours is capture with the colours, as SGR sequences.
func (s *screen) captureColours() string {
	out, err := exec.Command("tmux", "-S", s.sock, "capture-pane", "-p", "-e", "-t", "0").CombinedOutput()
	if err != nil {
		return fmt.Sprintf("(capture-pane failed: %v: %s)", err, out)
	}
	return string(out)
}

// termBuffers counts the buffers of terminal id's split.
const termBuffers = `luaeval("#vim.tbl_filter(function(b) local n = vim.api.nvim_buf_get_name(b) return n:match('terminal/%s$') or n:match('terminal/%s ') end, vim.api.nvim_list_bufs())")`

// sgrBefore returns the SGR sequences right before word on the screen
// (tmux writes the foreground and the background apart).
func sgrBefore(screen, word string) string {
	i := strings.Index(screen, word)
	if i < 0 {
		return ""
	}
	m := regexp.MustCompile(`(\x1b\[[0-9;:]*m)+$`).FindString(screen[:i])
	return m
}

// TestScreenOldFinishedSplitReopensWhole: the first of five finished
// commands has no buffer once out of sight (live_ended = 3); opened from
// :AgentTerminals it shows its first and last lines in their colours and
// its end marker, and /, yank and gf work in it.
func TestScreenOldFinishedSplitReopensWhole(t *testing.T) {
	s := startDemoScreen(t)
	if err := os.WriteFile(filepath.Join(s.dir, "notes.txt"), []byte("one\ntwo\nthree\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	// (the words printed are not in the command line, which the list shows)
	s.prompt(`printf '\033[31mFIRST-%s\033[0m\n' red; seq 1 8000; printf 'see notes.txt:2\n\033[32mLAST-%s\033[0m\n' green`)
	s.waitShows(20*time.Second, "LAST-green", exitMarker(0))
	for i := 2; i <= 5; i++ {
		s.prompt(fmt.Sprintf("echo later-%d", i))
		s.waitShows(10*time.Second, fmt.Sprintf("echo later-%d exited with code 0.", i))
	}
	term1 := fmt.Sprintf(termBuffers, `term%-1`, `term%-1`)
	eventually(t, "term-1's buffer to be wiped (out of sight, older than the newest 3)", 10*time.Second, func() (bool, string) {
		n := s.expr(term1)
		return n == "0", "buffers of term-1: " + n
	})
	if n := s.expr(fmt.Sprintf(termBuffers, `term%-4`, `term%-4`)); n != "1" {
		t.Errorf("term-4 (among the newest 3 ended) has %s buffers, want 1 (a live terminal)", n)
	}

	s.keys("Escape", ":AgentTerminals", "Enter")
	s.waitShows(5*time.Second, "agentrun terminals —", "term-1 ")
	s.keys("/term-1 ", "Enter", "Enter")
	s.waitShows(10*time.Second, "see notes.txt:2", "LAST-green", exitMarker(0))
	if got := s.expr(`&buftype`); got != "terminal" {
		t.Errorf("the reopened split's buftype is %q, want terminal", got)
	}
	coloured := func(word string, codes ...string) {
		t.Helper()
		eventually(t, word+" in its colour", 5*time.Second, func() (bool, string) {
			sc := s.captureColours()
			c := sgrBefore(sc, word)
			for _, code := range codes {
				if strings.Contains(c, code) {
					return true, ""
				}
			}
			return false, fmt.Sprintf("SGR before it %q:\n%s", c, sc)
		})
	}
	coloured("LAST-green", "[32m", ";32m", "38;5;2m", "38:5:2m")
	// its first line, scrolled to
	s.keys("g", "g")
	s.waitShows(5*time.Second, "FIRST-red")
	coloured("FIRST-red", "[31m", ";31m", "38;5;1m", "38:5:1m")
	// / finds, y yanks, gf opens the file a line names
	s.keys("/7999", "Enter")
	s.keys("y", "y")
	eventually(t, "yy to yank the line / found", 5*time.Second, func() (bool, string) {
		r := s.expr(`getreg('"')`)
		return strings.TrimSpace(r) == "7999", "the register: " + r
	})
	s.keys("/see notes", "Enter", "w", "g", "f")
	eventually(t, "gf to open notes.txt", 5*time.Second, func() (bool, string) {
		b := s.expr(`bufname()`)
		return strings.HasSuffix(b, "notes.txt"), "current buffer: " + b + "\n" + s.capture()
	})
}
