package tests

import (
	"strings"
	"testing"
	"time"
)

// Issue 25's smaller items, each walked on the screen.

// TestScreenInterruptHintGoesWithTheTurn: <C-c> in the prompt says that
// pressing it again cancels the turn and drops the queued prompt; once the
// turn has ended, that hint no longer stands in the chat. Pressed once,
// it interrupts the command only, and the queued prompt goes back into
// the prompt when the turn ends (not sent behind the user's back: they
// stopped something); <C-s> then sends it.
func TestScreenInterruptHintGoesWithTheTurn(t *testing.T) {
	s := startDemoScreen(t)
	s.prompt("trap '' INT; sleep 4") // it does not stop at SIGINT
	s.waitShows(10*time.Second, "sleep 4 [execute] · in progress")
	s.prompt("echo queued-after")
	s.waitShows(5*time.Second, "(queued: echo queued-after")
	s.keys("C-c")
	// It says what a second <C-c> would do to the queued prompt too.
	s.waitShows(3*time.Second, "(interrupted `trap", "drops the 1 queued prompt)")
	sc := s.waitShows(10*time.Second, "sleep 4 exited with code 0.", "went back to the prompt", "agentrun · demo · ready")
	if strings.Contains(sc, "(interrupted `trap") {
		t.Errorf("the hint stays after the turn ended:\n%s", sc)
	}
	if strings.Contains(s.chatText(), "> echo queued-after") {
		t.Errorf("the queued prompt was sent after the interrupted turn:\n%s", s.chatText())
	}
	var held []string
	s.luaValue(`vim.api.nvim_buf_get_lines(require("agentrun.state").session().chat.prompt_buf, 0, -1, false)`, &held)
	if strings.Join(held, "\n") != "echo queued-after" {
		t.Fatalf("the prompt holds %q, want the queued prompt", held)
	}
	s.keys("Enter") // the prompt, normal mode: send
	s.waitShows(10*time.Second, "echo queued-after exited with code 0.")
}

// TestScreenClaudeLikeSmallerItems: :AgentMode marks the current mode; a
// range of a scratch buffer (a pasted log) goes out as text; a second
// :AgentRun of another agent says the first session still runs.
func TestScreenClaudeLikeSmallerItems(t *testing.T) {
	s := claudeLikeScreenSized(t, 120, 40)
	s.keys(":AgentRun", "Enter")
	s.waitShows(20*time.Second, "agentrun · claudelike · ready")
	s.keys("Escape", ":AgentMode", "Enter")
	s.waitShows(5*time.Second, "Default  (current)")
	s.keys("Escape")

	s.keys(":wincmd t", "Enter", ":enew", "Enter", "i")
	s.typeText("error: boom at line 3")
	s.keys("Escape", ":%AgentPrompt say the log reads", "Enter")
	sc := s.waitShows(10*time.Second, "│the log reads")
	s.waitShows(10*time.Second, "│error: boom at line 3")
	if strings.Contains(sc, "#buffer and #selection name the file buffer") {
		t.Errorf("the scratch buffer's lines were refused:\n%s", sc)
	}

	s.keys(":AgentRun demo", "Enter")
	s.waitShows(10*time.Second, "agentrun · demo · ready", "the claudelike session (1) still runs in the")
	s.keys("Escape", ":AgentRun claudelike", "Enter")
	s.waitShows(10*time.Second, "agentrun · claudelike · ready")
}
