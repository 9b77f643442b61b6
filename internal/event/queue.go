package event

import (
	"slices"
	"sync"
)

// Event is one Go -> Lua event: require("agentrun.events").dispatch(name, payload).
type Event struct {
	Name    string // Payload.EventName()
	Payload Payload
	// ReplayOnly: not sent as it happens (Lua did it and shows it
	// already: the user's prompt), only in a replay to a Neovim that
	// takes the sessions over (linger.go).
	ReplayOnly bool
}

// Queue is an unbounded FIFO drained by one goroutine, so producers
// (the ACP connection, terminal watchers) never wait on Neovim and Lua
// sees events in the order they happened.
//
// A backend on another machine also keeps every event (keep): when its
// link drops it lingers (linger.go), the queue pauses, and the Neovim
// that takes the sessions over gets them again, as replay picks them,
// before what happens next.
type Queue struct {
	mu     sync.Mutex
	cond   *sync.Cond
	items  []Event
	closed bool
	paused bool
	// keep: every event also goes to log (at most maxKept, the oldest
	// dropped first; dropped counts those).
	keep    bool
	log     []Event
	dropped int
}

func NewQueue() *Queue {
	q := &Queue{}
	q.cond = sync.NewCond(&q.mu)
	return q
}

// maxKept bounds the events a lingering backend keeps for a replay: a
// long conversation's chunks, not its terminals' output (their own logs).
const maxKept = 200_000

// Push appends an event; it never blocks.
func (q *Queue) Push(p Payload) {
	q.add(Event{Name: p.EventName(), Payload: p})
}

// PushReplayOnly keeps an event for a replay without sending it now.
func (q *Queue) PushReplayOnly(p Payload) {
	q.add(Event{Name: p.EventName(), Payload: p, ReplayOnly: true})
}

func (q *Queue) add(e Event) {
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
	if !e.ReplayOnly {
		q.items = append(q.items, e)
		q.cond.Signal()
	}
}

// KeepAll makes the queue keep every event from now on, for a replay.
func (q *Queue) KeepAll() {
	q.mu.Lock()
	q.keep = true
	q.mu.Unlock()
}

// Pause holds delivery (the link is down): events queue up, and the
// replay that ends the pause sends what the next Neovim must have.
func (q *Queue) Pause() {
	q.mu.Lock()
	q.paused = true
	q.mu.Unlock()
}

// Replay replaces what waits for delivery with the kept events pick
// keeps, in order, and ends a pause; it returns how many of the oldest
// were no longer kept.
func (q *Queue) Replay(pick func([]Event) []Event) int {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.items = pick(q.log)
	q.paused = false
	q.cond.Signal()
	return q.dropped
}

// Close stops Run after the events already queued are dropped.
func (q *Queue) Close() {
	q.mu.Lock()
	q.closed = true
	q.items = nil
	q.log = nil
	q.cond.Broadcast()
	q.mu.Unlock()
}

// maxBatch bounds how many events go to Lua in one call.
const maxBatch = 256

// Run delivers events in order, in batches of what has queued up (at most
// maxBatch per call), until close.
func (q *Queue) Run(deliver func([]Event)) {
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

// Waiting is a copy of the events not yet delivered, oldest first (what
// the parts' tests read).
func (q *Queue) Waiting() []Event {
	q.mu.Lock()
	defer q.mu.Unlock()
	return slices.Clone(q.items)
}
