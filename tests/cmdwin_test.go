package tests

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestCmdwinWaitsForWindowWork: the command-line window (q:) allows no
// other window to be entered, opened or closed (E11). A command's split
// that opens while it is open (a queued prompt sent once the turn ended)
// waits until the user leaves it, then shows; agentrun's commands typed
// there answer with a sentence, not a traceback or an internal error.
func TestCmdwinWaitsForWindowWork(t *testing.T) {
	s := startRunScreen(t, runtimeDir(t), 120, 35)
	s.prompt("sleep 2")
	s.waitShows(10*time.Second, "sleep 2 [execute] · in progress")
	s.prompt("echo from-queue")
	s.waitShows(5*time.Second, "· 1 queued")
	s.keys("Escape", "q:")
	s.waitShows(5*time.Second, "[Command Line]")
	// The queued prompt runs while the command-line window is open.
	sc := s.waitShows(15*time.Second, "echo from-queue exited with code 0.")
	if strings.Contains(sc, "internal error") || !strings.Contains(sc, "[Command Line]") {
		t.Fatalf("a command's split while q: is open:\n%s", sc)
	}
	for _, cmd := range []string{"AgentRun", "AgentTerminals", "AgentShell", "AgentAttach term-1"} {
		s.keys(":"+cmd, "Enter")
		sc = s.waitShows(5*time.Second, "cannot open windows from the command-line window; leave it (:q) first")
		for _, bad := range []string{"E5108", "traceback", "E11", "internal error"} {
			if strings.Contains(sc, bad) {
				t.Fatalf(":%s in q: shows %q:\n%s", cmd, bad, sc)
			}
		}
		if !strings.Contains(sc, "[Command Line]") {
			t.Fatalf(":%s in q: closed it:\n%s", cmd, sc)
		}
		s.keys(":echo ''", "Enter")
	}
	// Leaving it shows the split the queued command opened.
	s.keys(":q", "Enter")
	sc = s.waitShows(5*time.Second, "agentrun://terminal/term-2", "from-queue")
	if strings.Contains(sc, "[Command Line]") || strings.Contains(sc, "internal error") {
		t.Fatalf("after q: closed:\n%s", sc)
	}
	// And the commands work again.
	s.keys(":AgentTerminals", "Enter")
	s.waitShows(5*time.Second, "agentrun://terminals")
}

// TestWriteQuitFromTheChat: :wq and :x typed in the prompt (where
// :AgentRun leaves you) or in the chat do what they do in the user's
// window: the user's file is written and Neovim quits; the prompt's text
// not sent yet makes :wq fail with a sentence instead of losing it, and
// :qa still quits without asking about the prompt.
func TestWriteQuitFromTheChat(t *testing.T) {
	cases := []struct {
		name  string
		keys  func(t *testing.T, s *screen)
		saved bool // notes.txt written
	}{
		{":wq in the prompt", func(t *testing.T, s *screen) { s.keys("Escape", ":wq", "Enter") }, true},
		{":x in the prompt", func(t *testing.T, s *screen) { s.keys("Escape", ":x", "Enter") }, true},
		{"ZZ in the prompt", func(t *testing.T, s *screen) { s.keys("Escape", "ZZ") }, true},
		{":wq in the chat", func(t *testing.T, s *screen) { s.keys("Escape", ":wincmd k", "Enter", ":wq", "Enter") }, true},
		{"w file in the prompt writes its text there", func(t *testing.T, s *screen) {
			s.typeText("keep this")
			s.keys("Escape", ":w prompt.txt", "Enter")
			eventually(t, "prompt.txt written", 5*time.Second, func() (bool, string) {
				b, err := os.ReadFile(filepath.Join(s.dir, "prompt.txt"))
				return string(b) == "keep this\n", fmt.Sprintf("%q %v; the screen:\n%s", b, err, s.capture())
			})
			s.keys(":wincmd t", "Enter", ":w", "Enter", ":qa", "Enter")
		}, true},
		{"x in a terminal split closes only the split", func(t *testing.T, s *screen) {
			s.prompt("echo hi")
			s.waitShows(10*time.Second, "agentrun://terminal/term-1", "echo hi exited with code 0.")
			s.keys("Escape", ":wincmd b", "Enter", ":x", "Enter")
			s.waitFor("the split to close", 5*time.Second, func(sc string) bool { return !strings.Contains(sc, "agentrun://terminal/term-1") })
			if !alive(s.nvimPid()) {
				t.Fatal(":x in the split quit Neovim")
			}
			s.keys(":wincmd t", "Enter", ":w", "Enter", ":qa", "Enter")
		}, true},
		{"x with unsent text closes only the prompt window", func(t *testing.T, s *screen) {
			s.typeText("echo kept")
			s.keys("Escape", ":x", "Enter")
			s.waitShows(5*time.Second, "the prompt is no file and its text is not sent yet")
			s.keys("Enter", ":AgentRun", "Enter")
			s.waitShows(5*time.Second, "echo kept", "-- INSERT --")
			if !alive(s.nvimPid()) {
				t.Fatal(":x with text in the prompt quit Neovim")
			}
			s.keys("Escape", ":wincmd t", "Enter", ":w", "Enter", ":qa", "Enter")
		}, true},
		{"unsent text makes wq refuse and qa quits without asking", func(t *testing.T, s *screen) {
			s.typeText("echo kept")
			// the prompt is no file: no [+] however much it holds
			s.waitShows(5*time.Second, "echo kept")
			time.Sleep(200 * time.Millisecond)
			if sc := s.capture(); strings.Contains(sc, "prompt of demo 1 [+]") {
				t.Errorf("the prompt shows as modified:\n%s", sc)
			}
			s.keys("Escape", ":wq", "Enter")
			sc := s.waitShows(5*time.Second, "the prompt is no file and its text is not sent yet")
			if strings.Contains(sc, "E382") {
				t.Fatalf(":wq with text in the prompt:\n%s", sc)
			}
			time.Sleep(300 * time.Millisecond)
			if !alive(s.nvimPid()) || !strings.Contains(s.capture(), "echo kept") {
				t.Fatalf(":wq lost the prompt's text or quit:\n%s", s.capture())
			}
			// the user's file written, :qa quits: the prompt's text asks nothing
			s.keys("Enter", ":wincmd t", "Enter", ":w", "Enter", ":qa", "Enter")
		}, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel() // each its own Neovim, screen and runtime directory
			s := startScreenIn(t, runtimeDir(t), 100, 30, `vim.fn.writefile({ tostring(vim.fn.getpid()) }, "nvim.pid")`)
			pid := s.nvimPid()
			s.keys(":e notes.txt", "Enter", "inotes", "Escape", ":AgentRun", "Enter")
			s.waitShows(10*time.Second, "agentrun · demo · ready", "-- INSERT --")
			c.keys(t, s)
			eventually(t, "Neovim to exit", 10*time.Second, func() (bool, string) { return !alive(pid), "alive; the screen:\n" + s.capture() })
			b, err := os.ReadFile(filepath.Join(s.dir, "notes.txt"))
			if c.saved && (err != nil || string(b) != "notes\n") {
				t.Errorf("notes.txt after the quit: %q %v", b, err)
			}
			if !c.saved && err == nil {
				t.Errorf("notes.txt written: %q", b)
			}
		})
	}
}
