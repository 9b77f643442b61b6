package tests

import (
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
