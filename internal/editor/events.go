package editor

import "sync"

// event is one Go -> Lua event: require("agentrun.events").dispatch(name, payload).
type event struct {
	name    string // payload.eventName()
	payload payload
	// replayOnly: not sent as it happens (Lua did it and shows it
	// already: the user's prompt), only in a replay to a Neovim that
	// takes the sessions over (linger.go).
	replayOnly bool
}

// eventQueue is an unbounded FIFO drained by one goroutine, so producers
// (the ACP connection, terminal watchers) never wait on Neovim and Lua
// sees events in the order they happened.
//
// A backend on another machine also keeps every event (keep): when its
// link drops it lingers (linger.go), the queue pauses, and the Neovim
// that takes the sessions over gets them again, as replay picks them,
// before what happens next.
type eventQueue struct {
	mu     sync.Mutex
	cond   *sync.Cond
	items  []event
	closed bool
	paused bool
	// keep: every event also goes to log (at most maxKept, the oldest
	// dropped first; dropped counts those).
	keep    bool
	log     []event
	dropped int
}

func newEventQueue() *eventQueue {
	q := &eventQueue{}
	q.cond = sync.NewCond(&q.mu)
	return q
}

// maxKept bounds the events a lingering backend keeps for a replay: a
// long conversation's chunks, not its terminals' output (their own logs).
const maxKept = 200_000

// push appends an event; it never blocks.
func (q *eventQueue) push(p payload) {
	q.add(event{name: p.eventName(), payload: p})
}

// pushReplayOnly keeps an event for a replay without sending it now.
func (q *eventQueue) pushReplayOnly(p payload) {
	q.add(event{name: p.eventName(), payload: p, replayOnly: true})
}

func (q *eventQueue) add(e event) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.closed {
		return
	}
	if q.keep {
		if len(q.log) >= maxKept {
			n := maxKept / 10
			q.log = append(q.log[:0:0], q.log[n:]...)
			q.dropped += n
		}
		q.log = append(q.log, e)
	}
	if !e.replayOnly {
		q.items = append(q.items, e)
		q.cond.Signal()
	}
}

// keepAll makes the queue keep every event from now on, for a replay.
func (q *eventQueue) keepAll() {
	q.mu.Lock()
	q.keep = true
	q.mu.Unlock()
}

// pause holds delivery (the link is down): events queue up, and the
// replay that ends the pause sends what the next Neovim must have.
func (q *eventQueue) pause() {
	q.mu.Lock()
	q.paused = true
	q.mu.Unlock()
}

// replay replaces what waits for delivery with the kept events pick
// keeps, in order, and ends a pause; it returns how many of the oldest
// were no longer kept.
func (q *eventQueue) replay(pick func([]event) []event) int {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.items = pick(q.log)
	q.paused = false
	q.cond.Signal()
	return q.dropped
}

// close stops run after the events already queued are dropped.
func (q *eventQueue) close() {
	q.mu.Lock()
	q.closed = true
	q.items = nil
	q.log = nil
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
		for (len(q.items) == 0 || q.paused) && !q.closed {
			q.cond.Wait()
		}
		if q.closed {
			q.mu.Unlock()
			return
		}
		n := min(len(q.items), maxBatch)
		batch := q.items[:n:n]
		q.items = q.items[n:]
		q.mu.Unlock()
		deliver(batch)
	}
}
