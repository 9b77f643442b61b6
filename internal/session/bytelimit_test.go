package session

import (
	"log/slog"
	"testing"
)

// TestAgentsGetTheByteLimit: every agent's byte limit is the one the
// bridge gives (Deps.ByteLimit: setup's, else the host's default), so
// terminal.byte_limit has one route (editor's TestByteLimitHasOneRoute).
func TestAgentsGetTheByteLimit(t *testing.T) {
	ss := &Sessions{log: slog.New(slog.DiscardHandler), deps: Deps{ByteLimit: func() int { return 4 }}}
	if got := ss.agentOptions(nil).ByteLimit; got != 4 {
		t.Errorf("an agent's byte limit is %d, want the bridge's 4", got)
	}
}
