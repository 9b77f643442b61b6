package demoagent

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"sync"
)

// The SDK handles each request in a goroutine of its own and the
// notifications in another, so a session/cancel sent right after its
// session/prompt can be handled before the prompt's handler has started:
// the SDK then finds no turn to cancel, and the turn runs on as if never
// cancelled (a replay waiting for the cancel hung). wireOrder keeps the
// order the two came in on the wire instead: a cancel read after a
// session's nth prompt cancels that prompt, whenever its handler starts.
type wireOrder struct {
	mu        sync.Mutex
	read      map[string]int // prompts read so far, per session
	cancelled map[string]int // the prompts read when the last cancel was
	started   map[string]int // prompt handlers started so far
	turns     map[string]turnCancel
}

// turnCancel is the running turn of a session: its number and its cancel.
type turnCancel struct {
	n      int
	cancel context.CancelFunc
}

func newWireOrder() *wireOrder {
	return &wireOrder{read: map[string]int{}, cancelled: map[string]int{}, started: map[string]int{}, turns: map[string]turnCancel{}}
}

// reader returns r, noting each line's prompt or cancel before the SDK
// reads it.
func (w *wireOrder) reader(r io.Reader) io.Reader { return &sniffer{r: r, w: w} }

// saw notes one JSON-RPC line read from the client.
func (w *wireOrder) saw(line []byte) {
	var m struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
		Params struct {
			SessionID string `json:"sessionId"`
		} `json:"params"`
	}
	if json.Unmarshal(line, &m) != nil {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	sid := m.Params.SessionID
	switch {
	case m.Method == "session/prompt" && len(m.ID) > 0:
		w.read[sid]++
	case m.Method == "session/cancel":
		w.cancelled[sid] = w.read[sid]
		if t, ok := w.turns[sid]; ok && t.n <= w.cancelled[sid] {
			t.cancel()
		}
	}
}

// turn returns the context a session's prompt handler runs its turn
// with: cancelled by a session/cancel read after its prompt, even one
// handled before the handler started. done forgets the turn.
func (w *wireOrder) turn(ctx context.Context, sid string) (turnCtx context.Context, done func()) {
	turnCtx, cancel := context.WithCancel(ctx)
	w.mu.Lock()
	w.started[sid]++
	n := w.started[sid]
	w.turns[sid] = turnCancel{n: n, cancel: cancel}
	if n <= w.cancelled[sid] {
		cancel()
	}
	w.mu.Unlock()
	return turnCtx, func() {
		w.mu.Lock()
		if w.turns[sid].n == n {
			delete(w.turns, sid)
		}
		w.mu.Unlock()
		cancel()
	}
}

// sniffer is a reader that shows each whole line to its wireOrder before
// passing it on.
type sniffer struct {
	r    io.Reader
	w    *wireOrder
	part []byte
}

func (s *sniffer) Read(p []byte) (int, error) {
	n, err := s.r.Read(p)
	s.part = append(s.part, p[:n]...)
	for {
		i := bytes.IndexByte(s.part, '\n')
		if i < 0 {
			break
		}
		s.w.saw(s.part[:i])
		s.part = s.part[i+1:]
	}
	return n, err
}
