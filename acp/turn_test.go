package acp

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
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

// TestCancelReachesTheAgentBeforeItsAnswers: when a turn is cancelled
// while the agent waits on a question, the agent reads session/cancel
// before the question's "cancelled" answer, and before the refusal of a
// command it asks for after it, however slow the cancel is to be written.
// An answer read first is the user's (the demo agent ended such a turn
// end_turn, and the chat said nothing of the cancel). Fails without the
// wait (refuseCancelled).
func TestCancelReachesTheAgentBeforeItsAnswers(t *testing.T) {
	var s *Session
	r := newRecorder()
	r.requestPermission = func(ctx context.Context, req acpsdk.RequestPermissionRequest) (acpsdk.RequestPermissionResponse, error) {
		tell := s.CancelTurn() // the user cancels while the question is up
		go func() {
			time.Sleep(300 * time.Millisecond) // a cancel slow to be written
			_ = tell(context.Background())
		}()
		<-ctx.Done()
		return acpsdk.RequestPermissionResponse{}, context.Cause(ctx)
	}
	approve := func(context.Context, Command) (bool, error) { return true, nil }
	a, _ := start(t, selfAgent(t, "probe"), r, Options{Approve: approve})
	s = newSession(t, a)
	res := probe(t, s, r,
		rawReq("session/request_permission", `{"sessionId":"$SESSION","toolCall":{"toolCallId":"c1"},"options":[{"optionId":"a","name":"Allow","kind":"allow_once"}]}`),
		rawReq("terminal/create", `{"sessionId":"$SESSION","command":"echo","args":["not run"]}`),
	)
	var outcome struct {
		Outcome struct {
			Outcome string `json:"outcome"`
		} `json:"outcome"`
	}
	if res[0].Error != nil || json.Unmarshal(res[0].Result, &outcome) != nil || outcome.Outcome.Outcome != "cancelled" {
		t.Fatalf("the question of a cancelled turn was answered %s %v, want the outcome cancelled", res[0].Result, res[0].Error)
	}
	if res[0].Cancels != 1 {
		t.Errorf("the agent had read %d session/cancel when the question's answer reached it, want 1: it read the answer first", res[0].Cancels)
	}
	if res[1].Error == nil || !strings.Contains(res[1].Error.Message+fmt.Sprint(res[1].Error.Data), "cancelled the turn") {
		t.Fatalf("a command asked for after the cancel: %s %+v, want it refused as the turn was cancelled", res[1].Result, res[1].Error)
	}
	if res[1].Cancels != 1 {
		t.Errorf("the agent had read %d session/cancel when the command's refusal reached it, want 1", res[1].Cancels)
	}
}
