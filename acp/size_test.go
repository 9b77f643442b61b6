package acp

import (
	"context"
	"testing"
)

// A terminal starts at the editor's split size, so a command that asks for
// its size at once sees the real one, not 80x24.
func TestTerminalStartsAtEditorSize(t *testing.T) {
	r := newRecorder()
	outputs := make(chan string, 1)
	var s *Session
	r.fakeEditor.terminalCreated = func(_ context.Context, _, tid string) {
		term, _ := s.Terminal(tid)
		go func() {
			<-term.Done()
			outputs <- term.Output().Text
		}()
	}
	a, _ := start(t, selfAgent(t, "demo"), r, Options{TerminalSize: func() (uint16, uint16) { return 132, 43 }})
	s = newSession(t, a)
	prompt(t, s, "stty size")
	if got := next(t, outputs, "terminal output"); got != "43 132\n" {
		t.Fatalf("stty size printed %q, want %q", got, "43 132\n")
	}
}
