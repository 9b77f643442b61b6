package tests

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// gitRepo makes dir a git work tree holding files, committed (the
// screen's own files ignored).
func gitRepo(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	files[".gitignore"] = "/state/\n/cache/\n/data/\n/config/\n/tmux.sock\n/init.lua\n"
	for name, text := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, args := range [][]string{{"init", "-q"}, {"add", "."}, {"-c", "user.email=t@t", "-c", "user.name=t", "commit", "-qm", "init"}} {
		cmd := exec.Command("git", args...)
		cmd.Dir = dir
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
}

func fileText(t *testing.T, path string) (string, bool) {
	t.Helper()
	raw, err := os.ReadFile(path)
	if os.IsNotExist(err) {
		return "", false
	}
	if err != nil {
		t.Fatal(err)
	}
	return string(raw), true
}

// TestScreenRewindKeepsMine: a turn's command changes two
// files (sed -i, one uncommitted already) and makes a new one; the user
// then edits one of them and saves it. :AgentRewind asks about that one
// only; "Keep mine" keeps the user's version, the other is put back as
// before the turn (its buffer too), the new file is removed, and the chat
// says so. The user's index is untouched (git status as before).
func TestScreenRewindKeepsMine(t *testing.T) {
	s := startScreen(t, 150, 35, "")
	dir := s.dir
	gitRepo(t, dir, map[string]string{"a.txt": "one\n", "c.txt": "cee\n"})
	if err := os.WriteFile(filepath.Join(dir, "c.txt"), []byte("cee\nmine before\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	status := func() string {
		out, err := exec.Command("git", "-C", dir, "status", "--porcelain").CombinedOutput()
		if err != nil {
			t.Fatalf("git status: %v\n%s", err, out)
		}
		return string(out)
	}
	statusBefore := status()
	s.keys(":e c.txt", "Enter")
	s.keys(":AgentRun demo", "Enter")
	s.waitShows(10*time.Second, "agentrun · demo · ready")
	s.prompt(`sed -i 's/one/ONE/' a.txt; sed -i 's/cee/CEE/' c.txt; echo new > b.txt`)
	s.waitShows(10*time.Second, "files changed this turn (3;")
	// the user's own edit of a.txt, after the turn
	if err := os.WriteFile(filepath.Join(dir, "a.txt"), []byte("ONE\nthe user's line\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	s.keys("Escape", ":AgentRewind", "Enter")
	s.waitShows(5*time.Second, "You changed a.txt since the turn", "[K]eep mine")
	s.keys("k")
	s.waitShows(5*time.Second, "rewind: put back as before the turn: b.txt (removed: the turn made", "it), c.txt", "rewind: kept: a.txt (your version")
	if got, _ := fileText(t, filepath.Join(dir, "a.txt")); got != "ONE\nthe user's line\n" {
		t.Errorf("a.txt = %q, want the user's version kept", got)
	}
	if got, _ := fileText(t, filepath.Join(dir, "c.txt")); got != "cee\nmine before\n" {
		t.Errorf("c.txt = %q, want it as before the turn", got)
	}
	if _, ok := fileText(t, filepath.Join(dir, "b.txt")); ok {
		t.Errorf("b.txt, which the turn made, is still there")
	}
	if got := status(); got != statusBefore+"?? a.txt\n" && got != " M a.txt\n"+statusBefore {
		t.Errorf("git status after the rewind:\n%s\nwant as before but for a.txt:\n%s", got, statusBefore)
	}
	// c.txt's buffer shows it as before the turn
	s.waitShows(5*time.Second, "cee ", "mine before")
	// again: nothing more to put back
	s.keys(":AgentRewind", "Enter")
	s.waitShows(5*time.Second, "nothing more to rewind: 1 turn put back")
}

// TestScreenRewindBadUse: :AgentRewind and :AgentReview with too many
// arguments, and with no session, answer with a sentence.
func TestScreenRewindBadUse(t *testing.T) {
	s := startScreen(t, 120, 20, "")
	s.keys(":AgentRewind nonsense", "Enter")
	s.waitShows(5*time.Second, ":AgentRewind takes no arguments")
	s.keys(":AgentRewind", "Enter")
	s.waitShows(5*time.Second, "no session; :AgentRewind puts back")
	s.keys(":AgentReview", "Enter")
	s.waitShows(5*time.Second, "no session; :AgentReview shows")
	s.keys(":AgentReview turn session", "Enter")
	s.waitShows(5*time.Second, "too many arguments; usage: :AgentReview [turn|session]")
}

// TestScreenReviewHunks: a turn's command (sed -i, not an fs write)
// changes two far-apart lines of one file and makes a new file.
// :AgentReview lists both files' hunks; <CR> on one goes to its line in
// the editor window; a accepts the first hunk and r
// rejects the second (refused while the file's buffer has unsaved
// edits, told), so the file on disk and its buffer keep the first change
// only; R on the new file removes it; then nothing is left.
func TestScreenReviewHunks(t *testing.T) {
	s := startScreen(t, 150, 40, "")
	dir := s.dir
	var lines string
	for i := 1; i <= 20; i++ {
		lines += "line" + string(rune('a'+i)) + "\n"
	}
	gitRepo(t, dir, map[string]string{"f.txt": lines})
	s.keys(":e f.txt", "Enter")
	s.keys(":AgentRun demo", "Enter")
	s.waitShows(10*time.Second, "agentrun · demo · ready")
	s.keys("Escape", ":AgentReview", "Enter")
	s.waitShows(5*time.Second, "nothing to review: no turn of this session changed a file")
	s.keys(":AgentReview nonsense", "Enter")
	s.waitShows(5*time.Second, `(agentrun) :AgentReview takes turn or session, not "nonsense"`)
	s.keys(":wincmd l", "Enter", "i")
	s.prompt(`sed -i -e 's/^linec$/LINEC/' -e 's/^liner$/LINER/' f.txt; echo new > n.txt`)
	s.waitShows(10*time.Second, "files changed this turn (2;", "LINEC")
	s.keys("Escape", ":AgentReview", "Enter")
	s.waitShows(5*time.Second, "f.txt  (2 hunks)", "n.txt  (new file)", "-linec", "+LINEC", "-liner", "+LINER", "+new")
	// <CR> on a changed line goes to it in the editor window
	s.keys("/^+LINER", "Enter", "Enter")
	s.keys(`:echo "at " . expand("%:t") . " line " . line(".")`, "Enter")
	s.waitShows(5*time.Second, "at f.txt line 17")
	s.keys(":AgentReview", "Enter")
	s.waitShows(5*time.Second, "f.txt  (2 hunks)")
	s.keys("/^-linec", "Enter", "a")
	s.waitFor("the first hunk accepted", 5*time.Second, func(screen string) bool {
		return strings.Contains(screen, "f.txt  (1 hunk)") && !strings.Contains(screen, "+LINEC")
	})
	// unsaved edits in f.txt's buffer: nothing is rejected, the user is told
	s.keys(`:call nvim_buf_set_lines(bufnr('f.txt'), 0, 0, 0, ['mine'])`, "Enter")
	s.keys("/^-liner", "Enter", "r")
	s.waitShows(5*time.Second, "f.txt has unsaved edits: save them (or :e! to drop them) and reject again")
	if got, _ := fileText(t, filepath.Join(dir, "f.txt")); !strings.Contains(got, "LINER") {
		t.Errorf("f.txt = %q, rejected under unsaved edits", got)
	}
	s.keys(`:lua vim.api.nvim_buf_call(vim.fn.bufnr('f.txt'), function() vim.cmd('edit!') end)`, "Enter")
	s.keys("r")
	s.waitFor("the second hunk rejected", 5*time.Second, func(screen string) bool {
		return !strings.Contains(screen, "f.txt  (") && strings.Contains(screen, "n.txt  (new file)")
	})
	if got, _ := fileText(t, filepath.Join(dir, "f.txt")); !strings.Contains(got, "LINEC\n") || !strings.Contains(got, "liner\n") || strings.Contains(got, "LINER") {
		t.Errorf("f.txt = %q, want LINEC kept and liner back", got)
	}
	s.keys("/^n.txt", "Enter", "R")
	s.waitShows(5*time.Second, "review: nothing left to review")
	if _, ok := fileText(t, filepath.Join(dir, "n.txt")); ok {
		t.Errorf("n.txt, whose creation was rejected, is still there")
	}
	// f.txt's buffer shows what was kept
	s.keys(":wincmd t", "Enter", "/liner", "Enter")
	s.waitShows(5*time.Second, "LINEC", "liner")
}

// TestScreenReviewFsWrite: a file the agent writes through
// fs/write_text_file (not a command) is in the turn's review, opened by
// <CR> on the chat's list; after a second turn, :AgentReview shows only
// that turn's file and :AgentReview session both; R removes the new
// file, Y accepts the rest.
func TestScreenReviewFsWrite(t *testing.T) {
	s := startScreen(t, 150, 40, "")
	dir := s.dir
	gitRepo(t, dir, map[string]string{"f.txt": "f\n"})
	s.keys(":AgentRun demo", "Enter")
	s.waitShows(10*time.Second, "agentrun · demo · ready")
	s.prompt("!write " + filepath.Join(dir, "g.txt") + " written by the agent")
	s.waitShows(10*time.Second, "files changed this turn (1;")
	if _, ok := fileText(t, filepath.Join(dir, "g.txt")); !ok {
		t.Fatal("the agent's fs write made no g.txt")
	}
	// <CR> on the chat's list of the turn's files opens the review
	s.keys("Escape", ":wincmd k", "Enter", "/^files changed this turn", "Enter", "Enter")
	s.waitShows(5*time.Second, "g.txt  (new file)", "+written by the agent")
	s.keys("q")
	// a second turn's command: the turn's review shows only its file, the
	// session's both
	s.keys(":wincmd j", "Enter", "i")
	s.prompt(`sed -i 's/f/F/' f.txt`)
	s.waitFor("the second turn's list", 10*time.Second, func(screen string) bool {
		return strings.Count(screen, "files changed this turn (1;") == 2
	})
	s.keys("Escape", ":AgentReview", "Enter")
	s.waitShows(5*time.Second, "f.txt  (1 hunk)", "+F")
	if strings.Contains(s.capture(), "g.txt  (") {
		t.Errorf("the last turn's review shows the turn before's g.txt:\n%s", s.capture())
	}
	// <CR> on the hunk: the review closes, f.txt opens in the editor window
	// at the line under the cursor
	s.keys("/^+F", "Enter", "Enter")
	s.waitFor("f.txt in the editor window", 5*time.Second, func(screen string) bool {
		return !strings.Contains(screen, "agentrun review of") && strings.Contains(screen, "f.txt ")
	})
	if got := s.inside(); !strings.Contains(got, "buf: "+filepath.Join(dir, "f.txt")) && !strings.Contains(got, "buf: f.txt") {
		t.Errorf("after <CR> on the hunk, the current buffer is not f.txt: %s", got)
	}
	s.keys(":AgentReview session", "Enter")
	s.waitShows(5*time.Second, "f.txt  (1 hunk)", "g.txt  (new file)")
	s.keys("/^g.txt", "Enter", "R")
	s.waitFor("g.txt gone from the review", 5*time.Second, func(screen string) bool {
		return !strings.Contains(screen, "g.txt  (") && strings.Contains(screen, "f.txt  (1 hunk)")
	})
	if _, ok := fileText(t, filepath.Join(dir, "g.txt")); ok {
		t.Errorf("g.txt, whose creation was rejected, is still there")
	}
	s.keys("Y")
	s.waitShows(5*time.Second, "review: nothing left to review")
	if got, _ := fileText(t, filepath.Join(dir, "f.txt")); got != "F\n" {
		t.Errorf("f.txt = %q after accepting everything, want the agent's F", got)
	}
}

// TestScreenReviewBinary: binary files a command changed or made have no
// hunks; the review lists them, and R puts the changed one back as it
// was and removes the new one.
func TestScreenReviewBinary(t *testing.T) {
	s := startScreen(t, 150, 40, "")
	dir := s.dir
	gitRepo(t, dir, map[string]string{"old.dat": "o\x00p"})
	s.keys(":AgentRun demo", "Enter")
	s.waitShows(10*time.Second, "agentrun · demo · ready")
	s.prompt(`printf 'x\0y' > old.dat; printf 'a\0b' > new.dat`)
	s.waitShows(10*time.Second, "files changed this turn (2;")
	s.keys("Escape", ":AgentReview", "Enter")
	s.waitShows(5*time.Second, "new.dat  (new file, binary)", "old.dat  (binary)")
	s.keys("/^old.dat", "Enter", "R")
	s.waitFor("old.dat gone from the review", 5*time.Second, func(screen string) bool {
		return !strings.Contains(screen, "old.dat  (") && strings.Contains(screen, "new.dat  (")
	})
	s.keys("/^new.dat", "Enter", "R")
	s.waitShows(5*time.Second, "review: nothing left to review")
	if got, _ := fileText(t, filepath.Join(dir, "old.dat")); got != "o\x00p" {
		t.Errorf("old.dat = %q, want it as before the turn", got)
	}
	if _, ok := fileText(t, filepath.Join(dir, "new.dat")); ok {
		t.Errorf("new.dat, whose creation was rejected, is still there")
	}
}

// TestScreenRewindTurnByTurn: two turns change one file; while its
// buffer has unsaved edits :AgentRewind keeps it and says why; after
// :e! it goes back to before the second turn, then the first, then says
// there is nothing more.
func TestScreenRewindTurnByTurn(t *testing.T) {
	s := startScreen(t, 150, 40, "")
	dir := s.dir
	gitRepo(t, dir, map[string]string{"x.txt": "0\n"})
	s.keys(":e x.txt", "Enter")
	s.keys(":AgentRun demo", "Enter")
	s.waitShows(10*time.Second, "agentrun · demo · ready")
	s.prompt(`echo 1 > x.txt`)
	s.waitShows(10*time.Second, "files changed this turn (1;")
	s.prompt(`echo 2 > x.txt`)
	s.waitFor("the second turn's list", 10*time.Second, func(screen string) bool {
		return strings.Count(screen, "files changed this turn (1;") == 2
	})
	want := func(text string) {
		t.Helper()
		if got, _ := fileText(t, filepath.Join(dir, "x.txt")); got != text {
			t.Errorf("x.txt = %q, want %q", got, text)
		}
	}
	s.keys("Escape", `:call nvim_buf_set_lines(bufnr('x.txt'), 0, 0, 0, ['mine'])`, "Enter")
	s.keys(":AgentRewind", "Enter")
	s.waitShows(5*time.Second, "rewind: kept: x.txt (unsaved edits in its buffer")
	want("2\n")
	s.keys(`:lua vim.api.nvim_buf_call(vim.fn.bufnr('x.txt'), function() vim.cmd('edit!') end)`, "Enter")
	s.keys(":AgentRewind", "Enter")
	s.waitShows(5*time.Second, "rewind: put back as before the turn: x.txt")
	want("1\n")
	s.keys(":AgentRewind", "Enter")
	s.waitFor("the second put back", 5*time.Second, func(screen string) bool {
		return strings.Count(screen, "rewind: put back as before the turn: x.txt") == 2
	})
	want("0\n")
	// nothing more: said as what happened, not as if no turn changed files
	s.keys(":AgentRewind", "Enter")
	s.waitShows(5*time.Second, "nothing more to rewind: 2 turns put back")
	s.keys(":AgentReview", "Enter")
	s.waitShows(5*time.Second, "nothing to review: :AgentRewind put back 2 turns")
}

// TestScreenReviewPlainFolder: a session in a folder outside any git
// work tree. A turn's command (sed -i) changes two far-apart lines of a
// file and makes a new one; :AgentReview accepts the first hunk, rejects
// the second and the new file (the file on disk and its buffer keep the
// first change only). A second turn changes the file again and the user
// then edits another of its files: :AgentRewind puts the turn's file
// back and keeps the user's. The copies are under the state folder, none
// in the folder.
func TestScreenReviewPlainFolder(t *testing.T) {
	s := startScreen(t, 150, 40, "")
	dir := filepath.Join(s.dir, "proj")
	var lines string
	for i := 1; i <= 20; i++ {
		lines += "line" + string(rune('a'+i)) + "\n"
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for name, text := range map[string]string{"f.txt": lines, "u.txt": "u\n"} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	s.keys(":cd proj", "Enter", ":e f.txt", "Enter")
	s.keys(":AgentRun demo", "Enter")
	s.waitShows(10*time.Second, "agentrun · demo · ready")
	s.prompt(`sed -i -e 's/^linec$/LINEC/' -e 's/^liner$/LINER/' f.txt; echo new > n.txt`)
	s.waitShows(10*time.Second, "files changed this turn (2;", "LINEC")
	s.keys("Escape", ":AgentReview", "Enter")
	s.waitShows(5*time.Second, "f.txt  (2 hunks)", "n.txt  (new file)", "+LINEC", "+LINER", "+new")
	s.keys("/^-linec", "Enter", "a")
	s.waitFor("the first hunk accepted", 5*time.Second, func(screen string) bool {
		return strings.Contains(screen, "f.txt  (1 hunk)") && !strings.Contains(screen, "+LINEC")
	})
	s.keys("/^-liner", "Enter", "r")
	s.waitFor("the second hunk rejected", 5*time.Second, func(screen string) bool {
		return !strings.Contains(screen, "f.txt  (") && strings.Contains(screen, "n.txt  (new file)")
	})
	s.keys("/^n.txt", "Enter", "R")
	s.waitShows(5*time.Second, "review: nothing left to review")
	if got, _ := fileText(t, filepath.Join(dir, "f.txt")); !strings.Contains(got, "LINEC\n") || !strings.Contains(got, "liner\n") || strings.Contains(got, "LINER") {
		t.Errorf("f.txt = %q, want LINEC kept and liner back", got)
	}
	if _, ok := fileText(t, filepath.Join(dir, "n.txt")); ok {
		t.Errorf("n.txt, whose creation was rejected, is still there")
	}
	// f.txt's buffer shows what was kept
	s.keys(":wincmd t", "Enter", "/liner", "Enter")
	s.waitShows(5*time.Second, "LINEC", "liner")
	// a second turn; the user then changes u.txt, which it changed too
	s.keys(":wincmd l", "Enter", "i")
	s.prompt(`sed -i 's/^lined$/LINED/' f.txt; echo agent > u.txt`)
	s.waitFor("the second turn's list", 10*time.Second, func(screen string) bool {
		return strings.Count(screen, "files changed this turn (2;") == 2
	})
	if err := os.WriteFile(filepath.Join(dir, "u.txt"), []byte("mine\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	s.keys("Escape", ":AgentRewind", "Enter")
	s.waitShows(5*time.Second, "You changed u.txt since the turn", "[K]eep mine")
	s.keys("k")
	s.waitShows(5*time.Second, "rewind: put back as before the turn: f.txt", "rewind: kept: u.txt (your version")
	if got, _ := fileText(t, filepath.Join(dir, "f.txt")); !strings.Contains(got, "lined\n") || !strings.Contains(got, "LINEC\n") {
		t.Errorf("f.txt = %q after the rewind, want it as before the second turn", got)
	}
	if got, _ := fileText(t, filepath.Join(dir, "u.txt")); got != "mine\n" {
		t.Errorf("u.txt = %q, want the user's version kept", got)
	}
	stores, _ := filepath.Glob(filepath.Join(s.dir, "state", "nvim", "agentrun", "checkpoint", "*proj.git"))
	if len(stores) != 1 {
		t.Errorf("the folder's copies: %v, want one git directory under the state folder", stores)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 2 {
		t.Errorf("the folder holds %d entries, want its 2 files only (no copies in it)", len(entries))
	}
}

// TestScreenReviewHomeFolderSaysWhy: a session in the home folder
// (outside git) has no copies taken; :AgentReview and :AgentRewind say
// so and why.
func TestScreenReviewHomeFolderSaysWhy(t *testing.T) {
	s := startDemoScreenSized(t, 280, 30, "") // (wide: each sentence on one row, the path is long)
	s.prompt(`echo x > a.txt`)
	s.waitShows(10*time.Second, "exited with code 0")
	s.keys("Escape", ":AgentReview", "Enter")
	s.waitShows(5*time.Second, "nothing to review: agentrun kept no copy of this session's turns (last turn: "+s.dir+" is the home folder, outside git: start the session in a project's folder to keep its turns)")
	s.keys(":AgentRewind", "Enter")
	s.waitShows(5*time.Second, "nothing to rewind: agentrun kept no copy of this session's turns (last turn: "+s.dir+" is the home")
}

// TestScreenReviewTabLabel: at 80 columns the tab line names the review's
// tab page in words ("agentrun review of demo 1"), not as Neovim shortens
// a URL at each slash ("a//r/1").
func TestScreenReviewTabLabel(t *testing.T) {
	s := startScreen(t, 80, 24, "")
	gitRepo(t, s.dir, map[string]string{"f.txt": "f\n"})
	s.keys(":AgentRun demo", "Enter")
	s.waitShows(10*time.Second, "agentrun · demo · ready")
	s.prompt("echo new > n.txt")
	s.waitShows(10*time.Second, "files changed this turn (1;")
	s.keys("Escape", ":AgentReview", "Enter")
	s.waitShows(5*time.Second, "n.txt  (new file)", "agentrun review of demo 1")
	sc := s.capture()
	if first := strings.SplitN(sc, "\n", 2)[0]; !strings.Contains(first, "agentrun review of demo 1") || strings.Contains(first, "a//r") {
		t.Errorf("the tab line: %q\n%s", first, sc)
	}
	s.keys("q")
	s.waitFor("the review's tab to close", 5*time.Second, func(sc string) bool { return !strings.Contains(sc, "agentrun review of") })
}

// TestScreenRewindNothingFitsTheLine (issue 50): at 100 columns,
// :AgentRewind after a turn that changed no file says so in one line
// that ends before 'showcmd's columns, so no "Press ENTER" stops the
// screen (it said "… agentrun can put back (the last 20 turns that
// changed any)" on two lines).
func TestScreenRewindNothingFitsTheLine(t *testing.T) {
	s := startScreen(t, 100, 24, "")
	gitRepo(t, s.dir, map[string]string{"a.txt": "a\n"})
	s.keys(":AgentRun demo", "Enter")
	s.waitShows(10*time.Second, "agentrun · demo · ready")
	s.prompt("echo hi")
	s.waitShows(10*time.Second, "exited with code 0")
	s.keys("Escape", ":AgentRewind", "Enter")
	sc := s.waitShows(5*time.Second, "(agentrun) nothing to rewind: no turn of this session changed a file")
	if strings.Contains(sc, "Press ENTER") {
		t.Errorf("the message stopped the screen at Press ENTER:\n%s", sc)
	}
}
