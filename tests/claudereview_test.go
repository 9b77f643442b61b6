package tests

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestRealClaudeCodeReviewPartlyRejectedOnScreen: the real Claude Code 2.1
// (0.101), offline, in one turn reads a file, edits two far-apart lines
// of it with its Edit tool, makes a new file with Write, and runs a
// command (sed -i) that changes a third line. :AgentReview lists the
// three hunks and the new file; one hunk is accepted, one rejected, the
// new file rejected, the rest accepted: the file on disk and its buffer
// hold what was kept, and the new file is gone.
func TestRealClaudeCodeReviewPartlyRejectedOnScreen(t *testing.T) {
	onceAcrossNeovims(t)
	var lines string
	for i := 1; i <= 40; i++ {
		lines += fmt.Sprintf("l%02d\n", i)
	}
	fake := startFakeAnthropic(t, "")
	setup, backend := realClaudeSetup(t, fake, claudePackages[1])
	s := startScreen(t, 150, 40, setup)
	dir := s.dir
	gitRepo(t, dir, map[string]string{"f.txt": lines})
	f := filepath.Join(dir, "f.txt")
	fake.steps = []fakeStep{
		{"Read", map[string]any{"file_path": f}},
		{"Edit", map[string]any{"file_path": f, "old_string": "l05\n", "new_string": "L05\n"}},
		{"Edit", map[string]any{"file_path": f, "old_string": "l35\n", "new_string": "L35\n"}},
		{"Write", map[string]any{"file_path": filepath.Join(dir, "new.txt"), "content": "made by claude\n"}},
		{"run", map[string]any{"command": `sed -i 's/^l20$/L20/' f.txt`}},
	}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("model API requests:\n%s\ntool results:\n%s", fake.log(), strings.Join(fake.results, "\n---\n"))
		}
	})
	s.keys(":e f.txt", "Enter")
	s.keys(":AgentRun", "Enter")
	s.waitShows(60*time.Second, "agentrun · claude · ready")
	s.luaValue(`vim.fn.jobpid(require("agentrun.rpc").channel())`, backend)
	s.keys("i")
	s.prompt("change the file")
	s.waitShows(90*time.Second, "files changed this turn (2;")
	if got, _ := fileText(t, f); !strings.Contains(got, "L05\n") || !strings.Contains(got, "L35\n") || !strings.Contains(got, "L20\n") {
		t.Fatalf("f.txt after the turn = %q, want Claude's two edits and the command's", got)
	}
	s.keys("Escape", ":AgentReview", "Enter")
	s.waitShows(10*time.Second, "f.txt  (3 hunks)", "new.txt  (new file)", "+L05", "+L20", "+L35", "+made by claude")
	s.keys("/^-l05", "Enter", "a")
	s.waitFor("the L05 hunk accepted", 10*time.Second, func(sc string) bool {
		return strings.Contains(sc, "f.txt  (2 hunks)") && !strings.Contains(sc, "+L05")
	})
	s.keys("/^-l35", "Enter", "r")
	s.waitFor("the L35 hunk rejected", 10*time.Second, func(sc string) bool {
		return strings.Contains(sc, "f.txt  (1 hunk)") && !strings.Contains(sc, "+L35")
	})
	s.keys("/^new.txt", "Enter", "R")
	s.waitFor("new.txt rejected", 10*time.Second, func(sc string) bool {
		return !strings.Contains(sc, "new.txt  (") && strings.Contains(sc, "+L20")
	})
	s.keys("Y")
	s.waitShows(10*time.Second, "review: nothing left to review")
	want := strings.NewReplacer("l05\n", "L05\n", "l20\n", "L20\n").Replace(lines)
	if got, _ := fileText(t, f); got != want {
		t.Errorf("f.txt on disk = %q, want %q (L05 and L20 kept, l35 back)", got, want)
	}
	if _, ok := fileText(t, filepath.Join(dir, "new.txt")); ok {
		t.Errorf("new.txt, whose creation was rejected, is still there")
	}
	var buf struct {
		Text     string `json:"text"`
		Modified bool   `json:"modified"`
	}
	s.luaValue(`{ text = table.concat(vim.api.nvim_buf_get_lines(vim.fn.bufnr("f.txt"), 0, -1, false), "\n") .. "\n", modified = vim.bo[vim.fn.bufnr("f.txt")].modified }`, &buf)
	if buf.Text != want || buf.Modified {
		t.Errorf("f.txt's buffer = %q (modified %v), want what is on disk, %q", buf.Text, buf.Modified, want)
	}
}
