package editor

import "testing"

// TestAgentEnd: the line the split of a command an agent ran itself ends
// with, and why its display ended, as Lua shows them (it builds neither).
func TestAgentEnd(t *testing.T) {
	code := func(n int) *int { return &n }
	tests := []struct {
		name          string
		ev            agentTerminalEvent
		endedBy, line string
	}{
		{"exit code", agentTerminalEvent{ExitCode: code(1)}, "", "[exit 1]"},
		{"signal", agentTerminalEvent{Signal: "SIGKILL"}, "", "[signal SIGKILL]"},
		{"not run", agentTerminalEvent{NotRun: "cancelled", ExitCode: code(1)}, "cancelled", "[cancelled]"},
		{"failed with a code", agentTerminalEvent{Failed: true, ExitCode: code(2)}, "failed", "[exit 2]"},
		{"failed", agentTerminalEvent{Failed: true}, "failed", "[failed]"},
		{"unreported", agentTerminalEvent{Unreported: true}, "ended; the agent did not say its exit code", "[ended; the agent did not say its exit code]"},
		{"nothing said", agentTerminalEvent{}, "", "[failed]"},
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
