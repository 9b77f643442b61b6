package editor

import (
	"context"
	"log/slog"
	"os"
	"regexp"
	"strconv"
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
			ss := &sessions{log: b.log, sessionDeps: sessionDeps{byteLimit: b.byteLimit}}
			if got := ss.agentOptions(nil).ByteLimit; got != tc.want {
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

// TestScrollbackDefaultIsLuas: terminal.scrollback has one default, the
// one config.lua gives; Go's fallback for a caller that sends none is it.
func TestScrollbackDefaultIsLuas(t *testing.T) {
	src, err := os.ReadFile("../../lua/agentrun/config.lua")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^\s*scrollback = (\d+),`).FindSubmatch(src)
	if m == nil {
		t.Fatal("config.lua has no terminal.scrollback default")
	}
	if got := string(m[1]); got != strconv.Itoa(defaultScrollback) {
		t.Errorf("config.lua's scrollback default is %s, Go's defaultScrollback %d", got, defaultScrollback)
	}
}
