package acp

import (
	"context"
	"testing"
	"time"

	acpsdk "github.com/coder/acp-go-sdk"
)

// TestCancelRightAfterPrompt: a cancel the editor gives right after a
// prompt (the same Lua tick: :AgentCancel as the prompt goes) cancels that
// turn, wherever its prompt is: not yet sent (it is never sent), being
// written, or on the wire. A cancel that reached the agent before its
// prompt was lost: the agent ran the turn (a 30 s command) to its end.
func TestCancelRightAfterPrompt(t *testing.T) {
	r := newRecorder()
	a, _ := start(t, selfAgent(t, "demo"), r, Options{})
	s := newSession(t, a)
	cases := []struct {
		name string
		// cancelFirst cancels before Send starts: the prompt is never sent
		cancelFirst bool
		runs        int
	}{
		{"before the prompt is sent", true, 1},
		{"while it is sent", false, 20},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			for i := 0; i < tc.runs; i++ {
				turn, err := s.StartTurn()
				if err != nil {
					t.Fatal(err)
				}
				done := make(chan promptResult, 1)
				send := func() {
					stop, err := turn.Send(context.Background(), []acpsdk.ContentBlock{acpsdk.TextBlock("sleep 30")})
					done <- promptResult{stop, err}
				}
				if !tc.cancelFirst {
					go send()
				}
				tell := s.CancelTurn() // as the editor's cancel request: at once, in order
				go func() { _ = tell(context.Background()) }()
				if tc.cancelFirst {
					go send()
				}
				select {
				case res := <-done:
					if res.err != nil || res.stop != "cancelled" {
						t.Fatalf("run %d: turn ended %q, %v; want cancelled", i, res.stop, res.err)
					}
				case <-time.After(5 * time.Second):
					t.Fatalf("run %d: the turn runs on 5 s after its cancel: the agent never heard of it", i)
				}
			}
			if tc.cancelFirst {
				select {
				case c := <-r.created:
					t.Fatalf("a turn cancelled before its prompt was sent ran a command: %v", c)
				default:
				}
			}
		})
	}
	// the session goes on: the next turn is not cancelled by what came before
	if stop := prompt(t, s, "echo after"); stop != "end_turn" {
		t.Fatalf("the turn after the cancels ended %q, want end_turn", stop)
	}
}
