package tests

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestRemoteReviewOnScreen: a session on the box, in a folder there
// (outside git). A turn's command (sed -i) changes two lines of a file
// and makes another; :AgentReview lists them, read over the link; a
// accepts one hunk, r rejects the other and R the new file, on the box's
// files; <CR> shows the box's file (its buffer named for the machine)
// as it is now, and goes with the file; :AgentRewind then puts the
// turn's file back there.
func TestRemoteReviewOnScreen(t *testing.T) {
	r := startSSHRemote(t)
	dir := r.Home + "/proj"
	var lines string
	for i := 1; i <= 20; i++ {
		lines += "line" + string(rune('a'+i)) + "\n"
	}
	if out, err := r.SSH(fmt.Sprintf("cd && mkdir -p proj && printf '%s' > proj/f.txt", lines)).CombinedOutput(); err != nil {
		t.Fatalf("the box's folder: %v\n%s", err, out)
	}
	s := startScreen(t, 150, 40, fmt.Sprintf("vim.env.AGENTRUN_SSH_CONFIG = %q", r.Config))
	s.keys(":AgentRun "+r.URL()+dir+" demo", "Enter")
	s.waitShows(20*time.Second, "demo on "+remoteAlias)
	s.prompt(`sed -i -e 's/^linec$/LINEC/' -e 's/^liner$/LINER/' f.txt; echo new > n.txt`)
	s.waitShows(20*time.Second, "files changed this turn (2;")
	s.keys("Escape", ":AgentReview", "Enter")
	s.waitShows(10*time.Second, "f.txt  (2 hunks)", "n.txt  (new file)", "+LINEC", "+LINER", "+new")
	s.keys("/^-linec", "Enter", "a")
	s.waitFor("the first hunk accepted", 10*time.Second, func(screen string) bool {
		return strings.Contains(screen, "f.txt  (1 hunk)") && !strings.Contains(screen, "+LINEC")
	})
	s.keys("/^-liner", "Enter", "r")
	s.waitFor("the second hunk rejected", 10*time.Second, func(screen string) bool {
		return !strings.Contains(screen, "f.txt  (") && strings.Contains(screen, "n.txt  (new file)")
	})
	box := func(name string) (string, bool) {
		t.Helper()
		return fileText(t, filepath.Join(dir, name))
	}
	if got, _ := box("f.txt"); !strings.Contains(got, "LINEC\n") || !strings.Contains(got, "liner\n") || strings.Contains(got, "LINER") {
		t.Errorf("the box's f.txt = %q, want LINEC kept and liner back", got)
	}
	// <CR> on the new file's line: the box's file, read over the link
	s.keys("/^+new", "Enter", "Enter")
	s.keys(`:echo "in " . bufname() . ": " . getline(1)`, "Enter")
	s.waitShows(10*time.Second, "in "+r.URL()+dir+"/n.txt: new")
	s.keys(":AgentReview", "Enter")
	s.waitShows(10*time.Second, "n.txt  (new file)")
	s.keys("/^n.txt", "Enter", "R")
	s.waitShows(10*time.Second, "review: nothing left to review")
	if _, ok := box("n.txt"); ok {
		t.Errorf("the box's n.txt, whose creation was rejected, is still there")
	}
	// its buffer here is gone with it
	s.keys(`:echo "n.txt buffers: " . len(filter(getbufinfo(), 'v:val.name =~ "n.txt$"'))`, "Enter")
	s.waitShows(10*time.Second, "n.txt buffers: 0")
	// f.txt differs from the turn's end (a hunk rejected): asked, put back
	s.keys(":AgentRewind", "Enter")
	s.waitShows(10*time.Second, "You changed "+dir+"/f.txt since the turn", "[K]eep mine")
	s.keys("p")
	s.waitShows(10*time.Second, "rewind: put back as before the turn: "+dir+"/f.txt")
	if got, _ := box("f.txt"); got != lines {
		t.Errorf("the box's f.txt = %q after the rewind, want it as before the turn", got)
	}
	if _, err := os.Stat(filepath.Join(dir, ".git")); err == nil {
		t.Errorf("the box's folder got a .git of its own; the copies belong in the state folder")
	}
}
