package event

import (
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/agentrun/agentrun.nvim/internal/wait"
)

// TestEventQueueKeepsOrderAndNeverBlocks: pushes return at once even while
// delivery is stuck, and events arrive in order in bounded batches.
func TestEventQueueKeepsOrderAndNeverBlocks(t *testing.T) {
	q := NewQueue()
	gate := make(chan struct{})
	var mu sync.Mutex
	var got []string
	maxSeen := 0
	done := make(chan struct{})
	go func() {
		q.Run(func(batch []Event) {
			<-gate
			mu.Lock()
			defer mu.Unlock()
			maxSeen = max(maxSeen, len(batch))
			for _, e := range batch {
				got = append(got, e.Payload.(Message).Text)
			}
		})
		close(done)
	}()
	const n = 1000
	start := time.Now()
	for i := range n {
		q.Push(Message{Text: fmt.Sprint(i)})
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
	q.Close()
	<-done
}

func TestJSONValueDropsNulls(t *testing.T) {
	in := map[string]any{"a": nil, "b": map[string]any{"c": nil, "d": 1}, "e": []any{map[string]any{"f": nil}}}
	got := fmt.Sprint(JSONValue(in))
	if want := "map[b:map[d:1] e:[map[]]]"; got != want {
		t.Errorf("jsonValue = %s, want %s", got, want)
	}
}
