package editor

import (
	"context"
	"log/slog"
	"testing"

	"github.com/agentrun/agentrun.nvim/ahp"
	"github.com/agentrun/agentrun.nvim/termhost"
)

// TestByteLimitHasOneRoute: terminal.byte_limit comes in once, with setup,
// and is both what the host keeps of every terminal and the most any
// agent gets; unset (0), both are the host's one default.
func TestByteLimitHasOneRoute(t *testing.T) {
	tests := []struct {
		name  string
		setup *int
		want  int
	}{
		{"set", new(4), 4},
		{"unset: the host's default", nil, termhost.DefaultByteLimit},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			b := &Bridge{log: slog.New(slog.DiscardHandler), socket: newTestSocketHost(t, ahp.ClientClaim("me"))}
			if _, err := b.handleSetup(setupArgs{ByteLimit: tc.setup}); err != nil {
				t.Fatal(err)
			}
			// What the sessions give every agent (session.Deps.ByteLimit).
			if got := b.byteLimit(); got != tc.want {
				t.Errorf("an agent's byte limit is %d, want %d", got, tc.want)
			}
			h := b.termHost() // the host setup made, serving its socket
			defer h.Close()
			term, err := h.Create(context.Background(), termhost.Spec{Command: "true", Dir: t.TempDir()})
			if err != nil {
				t.Fatal(err)
			}
			if got := term.ByteLimit(); got != tc.want {
				t.Errorf("a terminal of the host keeps %d bytes, want %d", got, tc.want)
			}
		})
	}
	for _, bad := range []int{-1, 0} {
		if _, err := (&Bridge{log: slog.New(slog.DiscardHandler)}).handleSetup(setupArgs{ByteLimit: new(bad)}); err == nil {
			t.Errorf("setup took byte_limit %d", bad)
		}
	}
}
