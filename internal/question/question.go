package question

import (
	"context"
	"errors"
	"log/slog"
	"strconv"
	"sync"
	"sync/atomic"

	"github.com/agentrun/agentrun.nvim/acp"
	"github.com/agentrun/agentrun.nvim/internal/event"
)

// ErrClosing is what Ask returns once the backend is shutting down.
var ErrClosing = errors.New("the editor is shutting down")

// IDs hands out fresh ids: a prefix and one counter for the backend
// ("1", "p2", "list-3", ...), and the site's suffix when setup gave one
// ("1@devbox": a backend on another machine, see setupArgs.Site).
type IDs struct {
	n      atomic.Int64
	suffix atomic.Pointer[string]
}

// Next returns a fresh id with prefix.
func (c *IDs) Next(prefix string) string {
	id := prefix + strconv.FormatInt(c.n.Add(1), 10)
	if s := c.suffix.Load(); s != nil {
		id += *s
	}
	return id
}

// SetSuffix makes every id from now on end in suffix ("@devbox").
func (c *IDs) SetSuffix(suffix string) { c.suffix.Store(&suffix) }

// Suffix is what ends every id ("" for none).
func (c *IDs) Suffix() string {
	if s := c.suffix.Load(); s != nil {
		return *s
	}
	return ""
}

// StartAfter makes the counter start after base, unless ids were handed
// out already.
func (c *IDs) StartAfter(base int64) { c.n.CompareAndSwap(0, base) }

// Questions are the open questions to the user (permission requests,
// command approvals): the one way the backend asks the user something and
// waits for the answer Lua sends with "answer_question".
type Questions struct {
	events *event.Queue
	ids    *IDs
	log    *slog.Logger

	mu      sync.Mutex
	pending map[string]chan Answer // by token
	closed  bool
}

// New returns the questions part: it asks by pushing into events, with
// tokens from ids.
func New(events *event.Queue, ids *IDs, log *slog.Logger) *Questions {
	return &Questions{events: events, ids: ids, log: log, pending: map[string]chan Answer{}}
}

// Answer is the user's answer to a question, as Lua sends it: the option
// picked (a permission's option id, "run", "write", an elicitation's
// JSON; "" for none: refused, or the picker closed) and, for a command
// the user's rules refused without asking, the rule's reason (Why), which
// the agent is told.
type Answer struct {
	ID  string
	Why string
}

// Ask registers a fresh token (prefix + counter) for answer, pushes the
// event asking(token) makes, and waits for the answer. It fails
// with ErrClosing when the questions are (or get) closed at
// shutdown, and with ctx's error when ctx ends first, after telling Lua
// to forget the question with q.Withdrawn.
func (qs *Questions) Ask(ctx context.Context, prefix string, q event.Question, asking func(token string) event.Payload) (token string, a Answer, err error) {
	token = qs.ids.Next(prefix)
	ch := make(chan Answer, 1)
	qs.mu.Lock()
	if qs.closed {
		qs.mu.Unlock()
		return token, Answer{}, ErrClosing
	}
	qs.pending[token] = ch
	qs.mu.Unlock()
	defer func() {
		qs.mu.Lock()
		delete(qs.pending, token)
		qs.mu.Unlock()
	}()

	qs.events.Push(asking(token))
	select {
	case a, ok := <-ch:
		if !ok {
			return token, Answer{}, ErrClosing
		}
		return token, a, nil
	case <-ctx.Done():
		why := "withdrawn" // the agent withdrew it ($/cancel_request)
		if errors.Is(context.Cause(ctx), acp.ErrTurnCancelled) {
			why = "turn" // the turn was cancelled, or the session ended
		}
		qs.events.Push(q.Withdrawn(token, why))
		return token, Answer{}, ctx.Err()
	}
}

// Answer delivers the user's choice for token ("answer_question"), and
// why the user's rules refused it when they did (approve.lua); a late
// Answer (the question was withdrawn) is dropped.
func (qs *Questions) Answer(token, optionID, why string) {
	qs.mu.Lock()
	ch, ok := qs.pending[token]
	qs.mu.Unlock()
	if !ok {
		qs.log.Debug("late permission answer", "token", token)
		return
	}
	select {
	case ch <- Answer{ID: optionID, Why: why}:
	default:
	}
}

// Close answers every open question, and every later one, with
// errEditorClosing.
func (qs *Questions) Close() {
	qs.mu.Lock()
	defer qs.mu.Unlock()
	qs.closed = true
	for token, ch := range qs.pending {
		close(ch)
		delete(qs.pending, token)
	}
}

// IsOpen reports whether question token still waits for its answer.
func (qs *Questions) IsOpen(token string) bool {
	qs.mu.Lock()
	defer qs.mu.Unlock()
	_, ok := qs.pending[token]
	return ok
}
