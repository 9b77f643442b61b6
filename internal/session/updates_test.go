package session

import (
	"testing"

	"github.com/agentrun/agentrun.nvim/internal/event"
)

// TestAgentEnd: the line the split of a command an agent ran itself ends
// with, and why its display ended, as Lua shows them (it builds neither).
func TestAgentEnd(t *testing.T) {
	code := func(n int) *int { return &n }
	tests := []struct {
		name          string
		ev            event.AgentTerminal
		endedBy, line string
	}{
		{"exit code", event.AgentTerminal{ExitCode: code(1)}, "", "[exit 1]"},
		{"signal", event.AgentTerminal{Signal: "SIGKILL"}, "", "[signal SIGKILL]"},
		{"not run", event.AgentTerminal{NotRun: "cancelled", ExitCode: code(1)}, "cancelled", "[cancelled]"},
		{"failed with a code", event.AgentTerminal{Failed: true, ExitCode: code(2)}, "failed", "[exit 2]"},
		{"failed", event.AgentTerminal{Failed: true}, "failed", "[failed]"},
		{"unreported", event.AgentTerminal{Unreported: true}, "ended; the agent did not say its exit code", "[ended; the agent did not say its exit code]"},
		{"nothing said", event.AgentTerminal{}, "", "[failed]"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			endedBy, line := agentEnd(&tc.ev)
			if endedBy != tc.endedBy || line != tc.line {
				t.Errorf("agentEnd = %q, %q; want %q, %q", endedBy, line, tc.endedBy, tc.line)
			}
		})
	}
}
