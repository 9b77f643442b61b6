package tests

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
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
	sc = s.waitShows(5*time.Second, splitOf("term-2"), "from-queue")
	if strings.Contains(sc, "[Command Line]") || strings.Contains(sc, "internal error") {
		t.Fatalf("after q: closed:\n%s", sc)
	}
	// And the commands work again.
	s.keys(":AgentTerminals", "Enter")
	s.waitShows(5*time.Second, "agentrun terminals")
}

// TestWriteQuitFromTheChat: :wq and :x typed in the prompt (where
// :AgentRun leaves you) or in the chat do what they do in the user's
// window: the user's file is written and Neovim quits. While the prompt
// holds text not sent, every quit (:wq, :x, ZZ, :qa, :wqa, :q in your
// last window) says so and asks, as for your running commands (issue 50: :qa
// lost it without a word, fails without the fix); Stay keeps every window
// and the text, with no Vim error. With terminal.ask_before_quit = false
// :wq refuses with a sentence and :qa quits without asking.
func TestWriteQuitFromTheChat(t *testing.T) {
	const asked = "(agentrun) Quitting loses what you typed in the prompt and did not send:"
	// stays answers Stay to the question and checks that nothing moved
	stays := func(t *testing.T, s *screen, layout string) {
		t.Helper()
		s.waitShows(5*time.Second, asked, "demo 1: echo kept", "[S]tay")
		s.keys("s")
		sc := s.waitShows(5*time.Second, "(agentrun) not quit (:qa! quits without asking)", "echo kept")
		for _, bad := range []string{"E37", "E162", "Press ENTER"} {
			if strings.Contains(sc, bad) {
				t.Errorf("Stay shows %q:\n%s", bad, sc)
			}
		}
		if got := s.expr(`tabpagenr('$') .. ' ' .. winnr('$')`); !alive(s.nvimPid()) || got != layout {
			t.Fatalf("after Stay: tab pages and windows %q, want %q (Neovim alive: %v):\n%s", got, layout, alive(s.nvimPid()), s.capture())
		}
	}
	cases := []struct {
		name  string
		setup string
		keys  func(t *testing.T, s *screen)
		saved bool // notes.txt written
	}{
		{":wq in the prompt", "", func(t *testing.T, s *screen) { s.keys("Escape", ":wq", "Enter") }, true},
		{":x in the prompt", "", func(t *testing.T, s *screen) { s.keys("Escape", ":x", "Enter") }, true},
		{"ZZ in the prompt", "", func(t *testing.T, s *screen) { s.keys("Escape", "ZZ") }, true},
		{":wq in the chat", "", func(t *testing.T, s *screen) { s.keys("Escape", ":wincmd k", "Enter", ":wq", "Enter") }, true},
		{"w file in the prompt writes its text there", "", func(t *testing.T, s *screen) {
			s.typeText("keep this")
			s.keys("Escape", ":w prompt.txt", "Enter")
			eventually(t, "prompt.txt written", 5*time.Second, func() (bool, string) {
				b, err := os.ReadFile(filepath.Join(s.dir, "prompt.txt"))
				return string(b) == "keep this\n", fmt.Sprintf("%q %v; the screen:\n%s", b, err, s.capture())
			})
			s.keys(":wincmd t", "Enter", ":w", "Enter", ":qa", "Enter")
			s.waitShows(5*time.Second, "demo 1: keep this", "[S]tay")
			s.keys("q")
		}, true},
		{"x in a terminal split closes only the split", "", func(t *testing.T, s *screen) {
			s.prompt("echo hi")
			s.waitShows(10*time.Second, splitOf("term-1"), "echo hi exited with code 0.")
			s.keys("Escape", ":wincmd b", "Enter", ":x", "Enter")
			s.waitFor("the split to close", 5*time.Second, func(sc string) bool { return !shows(sc, splitOf("term-1")) })
			if !alive(s.nvimPid()) {
				t.Fatal(":x in the split quit Neovim")
			}
			s.keys(":wincmd t", "Enter", ":w", "Enter", ":qa", "Enter")
		}, true},
		{"unsent text: x and ZZ ask and Stay keeps every window", "", func(t *testing.T, s *screen) {
			s.typeText("echo kept")
			s.keys("Escape", ":x", "Enter")
			stays(t, s, "1 3")
			s.keys("ZZ")
			stays(t, s, "1 3")
			s.keys(":x", "Enter")
			s.waitShows(5*time.Second, asked, "[S]tay")
			s.keys("q") // your file written, Neovim quits
		}, true},
		{"unsent text: wq and qa and q in your last window ask", "", func(t *testing.T, s *screen) {
			s.typeText("echo kept")
			// the prompt is no file: no [+] however much it holds
			s.waitShows(5*time.Second, "echo kept")
			time.Sleep(200 * time.Millisecond)
			if sc := s.capture(); strings.Contains(sc, "prompt of demo 1 [+]") {
				t.Errorf("the prompt shows as modified:\n%s", sc)
			}
			// :w {file} writes the text there and says so, as Neovim does
			s.keys("Escape", ":w kept.txt", "Enter")
			s.waitShows(5*time.Second, `"kept.txt" written, 1 line`)
			if b, err := os.ReadFile(filepath.Join(s.dir, "kept.txt")); err != nil || string(b) != "echo kept\n" {
				t.Errorf(":w kept.txt in the prompt wrote %q, %v", b, err)
			}
			// :w alone writes nothing and says why (no quit to ask about)
			s.keys(":w", "Enter")
			s.waitShows(5*time.Second, "the prompt is no file")
			s.waitFor("the prompt not shown modified after the refused write", 5*time.Second, func(sc string) bool {
				return regexp.MustCompile(`(?m)prompt of demo 1( |$)`).MatchString(sc) && !strings.Contains(sc, "prompt of demo 1 [+]")
			})
			s.keys(":wq", "Enter")
			stays(t, s, "1 3")
			s.keys(":wincmd t", "Enter", ":w", "Enter", ":qa", "Enter")
			stays(t, s, "1 3")
			s.keys(":q", "Enter")
			stays(t, s, "1 3")
			s.keys(":wqa", "Enter")
			stays(t, s, "1 3")
			s.keys(":wqa", "Enter") // asked once (Neovim 0.7 runs no ExitPre for it)
			s.waitShows(5*time.Second, asked, "[S]tay")
			s.keys("q")
		}, true},
		{"question off: wq refuses and qa quits without asking", `require("agentrun").setup({ terminal = { ask_before_quit = false } })`, func(t *testing.T, s *screen) {
			s.typeText("echo kept")
			s.keys("Escape", ":wq", "Enter")
			sc := s.waitShows(5*time.Second, "the prompt is no file")
			if strings.Contains(sc, "E382") || strings.Contains(sc, asked) {
				t.Fatalf(":wq with text in the prompt:\n%s", sc)
			}
			time.Sleep(300 * time.Millisecond)
			if !alive(s.nvimPid()) || !strings.Contains(s.capture(), "echo kept") {
				t.Fatalf(":wq lost the prompt's text or quit:\n%s", s.capture())
			}
			s.keys("Enter", ":wincmd t", "Enter", ":w", "Enter", ":qa", "Enter")
		}, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel() // each its own Neovim, screen and runtime directory
			s := startScreenIn(t, runtimeDir(t), 100, 30, `vim.fn.writefile({ tostring(vim.fn.getpid()) }, "nvim.pid")`+"\n"+c.setup)
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
