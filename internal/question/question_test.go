package question

import (
	"context"
	"errors"
	"log/slog"
	"slices"
	"testing"
	"time"

	"github.com/agentrun/agentrun.nvim/internal/event"
	"github.com/agentrun/agentrun.nvim/internal/wait"
)

// queued returns the names of the events q holds (not yet delivered).
func queued(q *event.Queue) []string {
	var names []string
	for _, e := range q.Waiting() {
		names = append(names, e.Name)
	}
	return names
}

// TestQuestions: each way a question ends, as the asker and Lua see it.
func TestQuestions(t *testing.T) {
	cases := []struct {
		name string
		// end ends the question once Lua was asked (token is its token).
		end        func(qs *Questions, token string, cancel context.CancelFunc)
		wantAnswer Answer
		wantErr    error
		wantEvents []string
	}{
		{
			name:       "answered",
			end:        func(qs *Questions, token string, _ context.CancelFunc) { qs.Answer(token, "allow", "") },
			wantAnswer: Answer{ID: "allow"},
			wantEvents: []string{event.NamePermission},
		},
		{
			name: "refused by a rule, with why",
			end: func(qs *Questions, token string, _ context.CancelFunc) {
				qs.Answer(token, "", "`rm x` matches deny \"rm *\"")
			},
			wantAnswer: Answer{Why: "`rm x` matches deny \"rm *\""},
			wantEvents: []string{event.NamePermission},
		},
		{
			name: "a late answer to another token is dropped",
			end: func(qs *Questions, token string, _ context.CancelFunc) {
				qs.Answer("p999", "allow", "")
				qs.Answer(token, "", "")
			},
			wantAnswer: Answer{},
			wantEvents: []string{event.NamePermission},
		},
		{
			name:       "withdrawn when the turn is cancelled",
			end:        func(_ *Questions, _ string, cancel context.CancelFunc) { cancel() },
			wantErr:    context.Canceled,
			wantEvents: []string{event.NamePermission, event.NamePermissionCancelled},
		},
		{
			name:       "closed at shutdown",
			end:        func(qs *Questions, _ string, _ context.CancelFunc) { qs.Close() },
			wantErr:    ErrClosing,
			wantEvents: []string{event.NamePermission},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			events := event.NewQueue()
			qs := New(events, &IDs{}, slog.New(slog.DiscardHandler))
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			type result struct {
				token  string
				answer Answer
				err    error
			}
			done := make(chan result, 1)
			go func() {
				token, answer, err := qs.Ask(ctx, "p", event.PermissionQuestion, func(token string) event.Payload { return event.Permission{Token: token} })
				done <- result{token, answer, err}
			}()
			wait.For(t, "the question registered", 5*time.Second, func() bool {
				qs.mu.Lock()
				defer qs.mu.Unlock()
				return len(qs.pending) == 1
			})
			tc.end(qs, "p1", cancel)
			var r result
			select {
			case r = <-done:
			case <-time.After(10 * time.Second):
				t.Fatal("ask did not return")
			}
			if r.token != "p1" || r.answer != tc.wantAnswer || !errors.Is(r.err, tc.wantErr) {
				t.Errorf("ask = (%q, %+v, %v), want (p1, %+v, %v)", r.token, r.answer, r.err, tc.wantAnswer, tc.wantErr)
			}
			if got := queued(events); !slices.Equal(got, tc.wantEvents) {
				t.Errorf("events %v, want %v", got, tc.wantEvents)
			}
			qs.mu.Lock()
			left := len(qs.pending)
			qs.mu.Unlock()
			if left != 0 {
				t.Errorf("%d questions still pending after the end", left)
			}
		})
	}
}

// TestQuestionsAfterClose: once closed, a question is not asked at all.
func TestQuestionsAfterClose(t *testing.T) {
	events := event.NewQueue()
	qs := New(events, &IDs{}, slog.New(slog.DiscardHandler))
	qs.Close()
	if _, _, err := qs.Ask(context.Background(), "a", event.ApproveQuestion, func(token string) event.Payload { return event.Approve{Token: token} }); !errors.Is(err, ErrClosing) {
		t.Errorf("ask after close: %v, want errEditorClosing", err)
	}
	if got := queued(events); len(got) != 0 {
		t.Errorf("events %v after close, want none", got)
	}
}
