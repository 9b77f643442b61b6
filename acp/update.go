package acp

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"sync"
	"time"

	"github.com/agentrun/agentrun.nvim/acp/agentterm"
	acpsdk "github.com/coder/acp-go-sdk"
)

// session/update notifications never reach the SDK's connection: the
// updateFilter between the agent's stdout and the connection takes them out
// of the stream as it is read and queues them for the editor (readUpdate).
// That keeps them in stream order relative to requests — a permission
// request's handler flushes the queue and so finds the tool_call sent just
// before it already shown — and never backs up into the SDK's bounded
// notification queue, which drops the connection when full.

// handleSessionUpdate serves a session/update that came as a request (with
// an id), which the filter lets through; it is queued all the same.
func (a *Agent) handleSessionUpdate(_ context.Context, params json.RawMessage) (any, *acpsdk.RequestError) {
	return nil, a.queueUpdate(params)
}

// readUpdate queues a session/update notification taken out of the
// stream. The terminal claims it implies (claims.go) are set here, in
// stream order: before any later request of the agent is even parsed.
func (a *Agent) readUpdate(params json.RawMessage) {
	_ = a.queueUpdate(params)
}

// queueUpdate decodes a session/update and queues it with what it says of
// agent-owned terminals. The v2 draft's terminal updates, which the SDK
// does not know (it would take them for another variant), are read first.
func (a *Agent) queueUpdate(params json.RawMessage) *acpsdk.RequestError {
	if sid, ev, ok, err := a.agentTerms.FromV2(params); ok {
		if err != nil {
			a.log.Warn("dropping malformed session/update", "err", err, "params", truncateForLog(params))
			return invalidParams(acpsdk.ClientMethodSessionUpdate, "%v", err)
		}
		a.updates.push(queued{terms: []agentterm.Event{ev}, sid: sid})
		return nil
	}
	n, rerr := decodeUpdate(params)
	if rerr != nil {
		a.log.Warn("dropping malformed session/update", "err", rerr.Message, "params", truncateForLog(params))
		return rerr
	}
	a.claimFromUpdate(n)
	a.mu.Lock()
	s := a.sessions[string(n.SessionId)]
	a.mu.Unlock()
	if s != nil {
		s.followModeUpdates(n.Update)
	}
	a.updates.push(queued{n: &n, sid: string(n.SessionId), terms: a.agentTerms.FromUpdate(n, a.isOurTerminal)})
	return nil
}

// queued is one update for the editor: a session/update (nil for a v2
// terminal update) and what it says of agent-owned terminals.
type queued struct {
	n     *acpsdk.SessionNotification
	sid   string
	terms []agentterm.Event
}

// isOurTerminal reports whether session sid created terminal id (released
// since or not): a tool call embedding it shows our terminal.
func (a *Agent) isOurTerminal(sid, id string) bool {
	a.mu.Lock()
	s := a.sessions[sid]
	a.mu.Unlock()
	if s == nil {
		return false
	}
	return s.createdTerminal(id)
}

func decodeUpdate(params json.RawMessage) (acpsdk.SessionNotification, *acpsdk.RequestError) {
	var n acpsdk.SessionNotification
	if rerr := decodeParams(acpsdk.ClientMethodSessionUpdate, params, &n); rerr != nil {
		return n, rerr
	}
	if n.SessionId == "" {
		return n, invalidParams(acpsdk.ClientMethodSessionUpdate, "sessionId is required")
	}
	return n, nil
}

// deliverUpdate hands one update to the editor, in arrival order.
func (a *Agent) deliverUpdate(q queued) {
	if q.n != nil {
		a.ed.SessionUpdate(a.ctx, *q.n)
	}
	for _, ev := range q.terms {
		a.ed.AgentTerminal(a.ctx, q.sid, ev)
	}
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
	items     []queued
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
func (q *updateQueue) push(n queued) {
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

// pending returns how many updates wait for delivery.
func (q *updateQueue) pending() int {
	q.mu.Lock()
	defer q.mu.Unlock()
	return len(q.items)
}

// run delivers updates until close has been called and the queue is empty.
func (q *updateQueue) run(deliver func(queued)) {
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
		q.items[0] = queued{}
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

// maxFilteredLine is the longest line the filter parses; longer ones pass
// through to the connection untouched (which refuses lines over 10 MiB).
const maxFilteredLine = 16 << 20

// updateFilter reads the agent's stdout line by line, hands session/update
// notifications to onUpdate and passes every other byte on unchanged.
type updateFilter struct {
	src      *bufio.Reader
	onUpdate func(params json.RawMessage)
	// onNonJSON, when set, takes lines that cannot be JSON-RPC (not an
	// object or a batch) out of the stream.
	onNonJSON func(line []byte)
	// onOtherNotification, when set, is asked about every notification
	// but session/update; it takes the line out of the stream by
	// returning true (an agent's extension notification we do not
	// handle, which the SDK would log as an error).
	onOtherNotification func(method string) bool
	line                []byte // the line being assembled
	out                 []byte // bytes ready for the connection
	passing             bool   // inside an overlong line: pass through until its end
	err                 error
}

func newUpdateFilter(r io.Reader, onUpdate func(json.RawMessage)) *updateFilter {
	return &updateFilter{src: bufio.NewReaderSize(r, 64<<10), onUpdate: onUpdate}
}

func (f *updateFilter) Read(p []byte) (int, error) {
	for len(f.out) == 0 {
		if f.err != nil {
			return 0, f.err
		}
		chunk, err := f.src.ReadSlice('\n')
		complete := err == nil
		switch {
		case f.passing:
			f.out = append(f.out[:0], chunk...)
			f.passing = !complete
		case complete:
			f.line = append(f.line, chunk...)
			if !f.take(f.line) {
				f.out = append(f.out[:0], f.line...)
			}
			f.line = f.line[:0]
		default:
			f.line = append(f.line, chunk...)
			if len(f.line) > maxFilteredLine {
				f.out = append(f.out[:0], f.line...)
				f.line = f.line[:0]
				f.passing = true
			}
		}
		if err != nil && err != bufio.ErrBufferFull {
			f.err = err
			if len(f.line) > 0 { // a last line without newline
				if !f.take(f.line) {
					f.out = append(f.out, f.line...)
				}
				f.line = nil
			}
		}
	}
	n := copy(p, f.out)
	f.out = f.out[n:]
	return n, nil
}

// take consumes line if it is a session/update notification, or a line
// that cannot be JSON-RPC (reported to onNonJSON; the SDK would only skip it).
func (f *updateFilter) take(line []byte) bool {
	if f.onNonJSON != nil {
		if t := bytes.TrimSpace(line); len(t) > 0 && t[0] != '{' && t[0] != '[' {
			f.onNonJSON(t)
			return true
		}
	}
	if !bytes.Contains(line, []byte(`"session/update"`)) {
		// cheap test first: most other lines are not updates
		if f.onOtherNotification == nil || !bytes.Contains(line, []byte(`"method"`)) {
			return false
		}
		var head struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
		}
		if json.Unmarshal(line, &head) != nil || head.ID != nil || head.Method == "" {
			return false
		}
		return f.onOtherNotification(head.Method)
	}
	var head struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
		Params json.RawMessage `json:"params"`
	}
	if json.Unmarshal(line, &head) != nil || head.Method != acpsdk.ClientMethodSessionUpdate || head.ID != nil {
		return false
	}
	f.onUpdate(head.Params)
	return true
}
