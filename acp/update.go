package acp

import (
	"context"
	"encoding/json"
	"log/slog"
	"sync"
	"time"

	acpsdk "github.com/coder/acp-go-sdk"
)

// handleSessionUpdate queues a session/update notification for the editor.
// It never waits on the editor: the SDK reads notifications through a
// bounded queue and drops the connection when it overflows, so an agent
// flooding updates while the editor is busy must not back up into it.
func (a *Agent) handleSessionUpdate(_ context.Context, params json.RawMessage) (any, *acpsdk.RequestError) {
	var n acpsdk.SessionNotification
	if rerr := decodeParams(acpsdk.ClientMethodSessionUpdate, params, &n); rerr != nil {
		a.log.Warn("dropping malformed session/update", "err", rerr.Message, "params", truncateForLog(params))
		return nil, rerr
	}
	if n.SessionId == "" {
		a.log.Warn("dropping session/update without sessionId", "params", truncateForLog(params))
		return nil, invalidParams(acpsdk.ClientMethodSessionUpdate, "sessionId is required")
	}
	a.updates.push(n)
	return nil, nil
}

// deliverUpdate hands one update to the editor, in arrival order.
func (a *Agent) deliverUpdate(n acpsdk.SessionNotification) {
	a.ed.SessionUpdate(a.ctx, n)
}

// truncateForLog keeps log lines readable.
func truncateForLog(b []byte) string {
	const max = 512
	if len(b) > max {
		return string(b[:max]) + "…"
	}
	return string(b)
}

// updateQueue delivers session updates to the editor one at a time, in
// order, from its own goroutine. It is unbounded so the reader never waits
// on the editor; flush lets a caller wait until everything queued so far
// has been delivered.
type updateQueue struct {
	log *slog.Logger

	mu        sync.Mutex
	items     []acpsdk.SessionNotification
	queued    uint64        // updates ever pushed
	delivered uint64        // updates ever delivered
	progress  chan struct{} // closed and replaced when delivered advances
	wake      chan struct{} // 1-buffered: items were pushed
	closed    bool
	stopped   chan struct{} // closed when run returns
	warnedAt  int
}

func newUpdateQueue(log *slog.Logger) *updateQueue {
	return &updateQueue{
		log:      log,
		progress: make(chan struct{}),
		wake:     make(chan struct{}, 1),
		stopped:  make(chan struct{}),
		warnedAt: 10000,
	}
}

// push appends n; it never blocks.
func (q *updateQueue) push(n acpsdk.SessionNotification) {
	q.mu.Lock()
	if q.closed {
		q.mu.Unlock()
		return
	}
	q.items = append(q.items, n)
	q.queued++
	if len(q.items) >= q.warnedAt {
		q.log.Warn("editor is behind on session updates", "queued", len(q.items))
		q.warnedAt *= 2
	}
	q.mu.Unlock()
	select {
	case q.wake <- struct{}{}:
	default:
	}
}

// run delivers updates until close has been called and the queue is empty.
func (q *updateQueue) run(deliver func(acpsdk.SessionNotification)) {
	defer close(q.stopped)
	for {
		q.mu.Lock()
		if len(q.items) == 0 {
			closed := q.closed
			q.mu.Unlock()
			if closed {
				return
			}
			<-q.wake
			continue
		}
		n := q.items[0]
		q.items[0] = acpsdk.SessionNotification{}
		q.items = q.items[1:]
		q.mu.Unlock()

		deliver(n)

		q.mu.Lock()
		q.delivered++
		close(q.progress)
		q.progress = make(chan struct{})
		q.mu.Unlock()
	}
}

// flush waits until every update pushed before the call was delivered.
func (q *updateQueue) flush(ctx context.Context) error {
	q.mu.Lock()
	target := q.queued
	for q.delivered < target {
		ch := q.progress
		q.mu.Unlock()
		select {
		case <-ch:
		case <-q.stopped:
			return nil
		case <-ctx.Done():
			return ctx.Err()
		}
		q.mu.Lock()
	}
	q.mu.Unlock()
	return nil
}

// close stops accepting updates and waits (up to timeout) for the queued
// ones to be delivered.
func (q *updateQueue) close(timeout time.Duration) {
	q.mu.Lock()
	q.closed = true
	q.mu.Unlock()
	select {
	case q.wake <- struct{}{}:
	default:
	}
	select {
	case <-q.stopped:
	case <-time.After(timeout):
		q.log.Warn("editor did not take the last session updates in time")
	}
}
