package editor

import (
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentrun/agentrun.nvim/internal/wait"
)

// TestEventQueueKeepsOrderAndNeverBlocks: pushes return at once even while
// delivery is stuck, and events arrive in order in bounded batches.
func TestEventQueueKeepsOrderAndNeverBlocks(t *testing.T) {
	q := newEventQueue()
	gate := make(chan struct{})
	var mu sync.Mutex
	var got []string
	maxSeen := 0
	done := make(chan struct{})
	go func() {
		q.run(func(batch []event) {
			<-gate
			mu.Lock()
			defer mu.Unlock()
			maxSeen = max(maxSeen, len(batch))
			for _, e := range batch {
				got = append(got, e.payload.(messageEvent).Text)
			}
		})
		close(done)
	}()
	const n = 1000
	start := time.Now()
	for i := range n {
		q.push(messageEvent{Text: fmt.Sprint(i)})
	}
	if d := time.Since(start); d > time.Second {
		t.Errorf("pushing %d events with delivery stuck took %v", n, d)
	}
	close(gate)
	wait.Until(t, fmt.Sprintf("all %d events delivered", n), 10*time.Second, func() (bool, string) {
		mu.Lock()
		defer mu.Unlock()
		return len(got) == n, fmt.Sprintf("%d delivered", len(got))
	})
	for i, name := range got {
		if name != fmt.Sprint(i) {
			t.Fatalf("event %d is %q: order lost", i, name)
		}
	}
	if maxSeen > maxBatch {
		t.Errorf("a batch of %d events, want at most %d", maxSeen, maxBatch)
	}
	q.close()
	<-done
}

func TestJSONValueDropsNulls(t *testing.T) {
	in := map[string]any{"a": nil, "b": map[string]any{"c": nil, "d": 1}, "e": []any{map[string]any{"f": nil}}}
	got := fmt.Sprint(jsonValue(in))
	if want := "map[b:map[d:1] e:[map[]]]"; got != want {
		t.Errorf("jsonValue = %s, want %s", got, want)
	}
}

// TestReplayPicksWhatATakeoverNeeds: a Neovim taking sessions over gets
// every event of the sessions still running, in order, the user's
// prompts included, and what their terminals do (the ports they listen
// on); not the events of sessions that ended, of their
// terminals, of questions answered or withdrawn, or of nothing of theirs.
func TestReplayPicksWhatATakeoverNeeds(t *testing.T) {
	q := newEventQueue()
	q.keepAll()
	q.pause()
	got := make(chan []event, 10)
	go q.run(func(b []event) { got <- b })
	defer q.close()
	q.push(sessionStartedEvent{Key: "1@d"})
	q.pushReplayOnly(promptSentEvent{Key: "1@d", Text: "ls"})
	q.push(sessionStartedEvent{Key: "2@d"})
	q.push(terminalCreatedEvent{ID: "term-1@d", Session: "1@d"})
	q.push(terminalCreatedEvent{ID: "term-2@d", Session: "2@d"})
	q.push(terminalActivityEvent{ID: "term-1@d", Ports: []int{8000}})
	q.push(terminalActivityEvent{ID: "term-2@d", Ports: []int{8001}})
	q.push(messageEvent{Text: "of nothing"})
	q.push(permissionEvent{Key: "1@d", Token: "p-1@d"})
	q.push(permissionEvent{Key: "1@d", Token: "p-2@d"})
	q.push(questionWithdrawnEvent{name: evPermissionCancelled, Token: "p-1@d"})
	q.push(terminalExitEvent{ID: "term-1@d"})
	q.push(terminalExitEvent{ID: "term-2@d"})
	q.push(sessionEndedEvent{Key: "2@d"})
	q.push(turnEndEvent{Key: "1@d"})
	select {
	case b := <-got:
		t.Fatalf("a paused queue delivered %d events", len(b))
	case <-time.After(50 * time.Millisecond):
	}
	open := func(token string) bool { return token == "p-2@d" }
	q.replay(func(log []event) []event { return replayOf(log, map[string]bool{"1@d": true}, open) })
	var names []string
	for len(names) < 7 {
		select {
		case b := <-got:
			for _, e := range b {
				names = append(names, strings.TrimSpace(e.name+" "+payloadField(e.payload, "token")))
			}
		case <-time.After(5 * time.Second):
			t.Fatalf("replayed only %q", names)
		}
	}
	want := []string{"session_started", "prompt_sent", "terminal_created", "terminal_activity", "permission p-2@d", "terminal_exit", "turn_end"}
	if fmt.Sprint(names) != fmt.Sprint(want) {
		t.Errorf("replayed %q\nwant     %q", names, want)
	}
	// What happens next follows the replay, and a prompt is not sent live.
	q.pushReplayOnly(promptSentEvent{Key: "1@d", Text: "pwd"})
	q.push(turnEndEvent{Key: "1@d"})
	select {
	case b := <-got:
		if len(b) != 1 || b[0].name != evTurnEnd {
			t.Errorf("after the replay: %+v, want the turn_end alone", b)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("nothing delivered after the replay")
	}
}
