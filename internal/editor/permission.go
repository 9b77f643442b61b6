package editor

import (
	"context"
	"errors"
	"log/slog"
	"strconv"
	"sync"
	"sync/atomic"

	"github.com/agentrun/agentrun.nvim/acp"
	"github.com/agentrun/agentrun.nvim/internal/event"
	acpsdk "github.com/coder/acp-go-sdk"
)

// requestPermission asks the user what the agent of session key asks
// (acp.Editor's RequestPermission, from agentEditor): Lua shows
// vim.ui.select and answers with "answer_question" (token, optionId or ""
// for cancel).
// When ctx ends first (the turn was cancelled) the answer is "cancelled"
// and Lua is told to forget the request.
func (b *Bridge) requestPermission(ctx context.Context, key string, req acpsdk.RequestPermissionRequest) (acpsdk.RequestPermissionResponse, error) {
	cancelled := acpsdk.RequestPermissionResponse{Outcome: acpsdk.NewRequestPermissionOutcomeCancelled()}
	sid := string(req.SessionId)
	token, a, err := b.questions.ask(ctx, "p", event.PermissionQuestion, func(token string) event.Payload {
		return event.Permission{Key: key, SessionID: sid, ToolCall: jsonValue(req.ToolCall), Options: jsonValue(req.Options), Token: token}
	})
	if err != nil {
		return cancelled, nil
	}
	id := a.ID
	for _, o := range req.Options {
		if id != "" && string(o.OptionId) == id {
			b.log.Info("permission answered", "token", token, "option", id)
			return acpsdk.RequestPermissionResponse{Outcome: acpsdk.NewRequestPermissionOutcomeSelected(o.OptionId)}, nil
		}
	}
	if id != "" {
		b.log.Warn("permission answer is not one of the options; answering cancelled", "token", token, "option", id)
	}
	return cancelled, nil
}

// errEditorClosing is what ask returns once the backend is shutting down.
var errEditorClosing = errors.New("the editor is shutting down")

// ids hands out fresh ids: a prefix and one counter for the backend
// ("1", "p2", "list-3", ...), and the site's suffix when setup gave one
// ("1@devbox": a backend on another machine, see setupArgs.Site).
type ids struct {
	n      atomic.Int64
	suffix atomic.Pointer[string]
}

// next returns a fresh id with prefix.
func (c *ids) next(prefix string) string {
	id := prefix + strconv.FormatInt(c.n.Add(1), 10)
	if s := c.suffix.Load(); s != nil {
		id += *s
	}
	return id
}

// questions are the open questions to the user (permission requests,
// command approvals): the one way the backend asks the user something and
// waits for the answer Lua sends with "answer_question".
type questions struct {
	events *event.Queue
	ids    *ids
	log    *slog.Logger

	mu      sync.Mutex
	pending map[string]chan answer // by token
	closed  bool
}

func newQuestions(events *event.Queue, ids *ids, log *slog.Logger) *questions {
	return &questions{events: events, ids: ids, log: log, pending: map[string]chan answer{}}
}

// answer is the user's answer to a question, as Lua sends it: the option
// picked (a permission's option id, "run", "write", an elicitation's
// JSON; "" for none: refused, or the picker closed) and, for a command
// the user's rules refused without asking, the rule's reason (Why), which
// the agent is told.
type answer struct {
	ID  string
	Why string
}

// ask registers a fresh token (prefix + counter) for answer, pushes the
// event asking(token) makes, and waits for the answer. It fails
// with errEditorClosing when the questions are (or get) closed at
// shutdown, and with ctx's error when ctx ends first, after telling Lua
// to forget the question with q.Withdrawn.
func (qs *questions) ask(ctx context.Context, prefix string, q event.Question, asking func(token string) event.Payload) (token string, a answer, err error) {
	token = qs.ids.next(prefix)
	ch := make(chan answer, 1)
	qs.mu.Lock()
	if qs.closed {
		qs.mu.Unlock()
		return token, answer{}, errEditorClosing
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
			return token, answer{}, errEditorClosing
		}
		return token, a, nil
	case <-ctx.Done():
		why := "withdrawn" // the agent withdrew it ($/cancel_request)
		if errors.Is(context.Cause(ctx), acp.ErrTurnCancelled) {
			why = "turn" // the turn was cancelled, or the session ended
		}
		qs.events.Push(q.Withdrawn(token, why))
		return token, answer{}, ctx.Err()
	}
}

// answer delivers the user's choice for token ("answer_question"), and
// why the user's rules refused it when they did (approve.lua); a late
// answer (the question was withdrawn) is dropped.
func (qs *questions) answer(token, optionID, why string) {
	qs.mu.Lock()
	ch, ok := qs.pending[token]
	qs.mu.Unlock()
	if !ok {
		qs.log.Debug("late permission answer", "token", token)
		return
	}
	select {
	case ch <- answer{ID: optionID, Why: why}:
	default:
	}
}

// close answers every open question, and every later one, with
// errEditorClosing.
func (qs *questions) close() {
	qs.mu.Lock()
	defer qs.mu.Unlock()
	qs.closed = true
	for token, ch := range qs.pending {
		close(ch)
		delete(qs.pending, token)
	}
}
