package editor

import "sync"

// event is one Go -> Lua event: require("agentrun.events").dispatch(name, payload).
type event struct {
	name    string
	payload map[string]any
}

// eventQueue is an unbounded FIFO drained by one goroutine, so producers
// (the ACP connection, terminal watchers) never wait on Neovim and Lua
// sees events in the order they happened.
type eventQueue struct {
	mu     sync.Mutex
	cond   *sync.Cond
	items  []event
	closed bool
}

func newEventQueue() *eventQueue {
	q := &eventQueue{}
	q.cond = sync.NewCond(&q.mu)
	return q
}

// push appends an event; it never blocks.
func (q *eventQueue) push(name string, payload map[string]any) {
	q.mu.Lock()
	if !q.closed {
		q.items = append(q.items, event{name, payload})
		q.cond.Signal()
	}
	q.mu.Unlock()
}

// close stops run after the events already queued are dropped.
func (q *eventQueue) close() {
	q.mu.Lock()
	q.closed = true
	q.items = nil
	q.cond.Broadcast()
	q.mu.Unlock()
}

// maxBatch bounds how many events go to Lua in one call.
const maxBatch = 256

// run delivers events in order, in batches of what has queued up (at most
// maxBatch per call), until close.
func (q *eventQueue) run(deliver func([]event)) {
	for {
		q.mu.Lock()
		for len(q.items) == 0 && !q.closed {
			q.cond.Wait()
		}
		if q.closed {
			q.mu.Unlock()
			return
		}
		batch := q.items
		q.items = nil
		q.mu.Unlock()
		for len(batch) > 0 {
			n := min(len(batch), maxBatch)
			deliver(batch[:n])
			batch = batch[n:]
		}
	}
}
