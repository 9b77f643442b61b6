package editor

import (
	"context"
	"errors"

	acpsdk "github.com/coder/acp-go-sdk"
)

// RequestPermission implements acp.Editor: Lua shows vim.ui.select and
// answers with "answer_question" (token, optionId or "" for cancel).
// When ctx ends first (the turn was cancelled) the answer is "cancelled"
// and Lua is told to forget the request.
func (b *Bridge) RequestPermission(ctx context.Context, req acpsdk.RequestPermissionRequest) (acpsdk.RequestPermissionResponse, error) {
	cancelled := acpsdk.RequestPermissionResponse{Outcome: acpsdk.NewRequestPermissionOutcomeCancelled()}
	sid := string(req.SessionId)
	token, id, err := b.ask(ctx, "p", permissionQuestion, map[string]any{
		"key":        b.keyOf(sid),
		"session_id": sid,
		"tool_call":  jsonValue(req.ToolCall),
		"options":    jsonValue(req.Options),
	})
	if err != nil {
		return cancelled, nil
	}
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

// errEditorClosing is what ask returns once the bridge is shutting down.
var errEditorClosing = errors.New("the editor is shutting down")

// ask is the one way the bridge asks the user something: it registers a
// fresh token (prefix + counter) for handleAnswer, pushes event
// q.ask with payload plus "token", and waits for the answer. It fails
// with errEditorClosing when the bridge is (or starts) shutting down, and
// with ctx's error when ctx ends first, after telling Lua to forget the
// question with q.cancelled.
func (b *Bridge) ask(ctx context.Context, prefix string, q question, payload map[string]any) (token, answer string, err error) {
	token = b.nextID(prefix)
	ch := make(chan string, 1)
	b.mu.Lock()
	if b.closing {
		b.mu.Unlock()
		return token, "", errEditorClosing
	}
	b.perms[token] = ch
	b.mu.Unlock()
	defer func() {
		b.mu.Lock()
		delete(b.perms, token)
		b.mu.Unlock()
	}()

	payload["token"] = token
	b.events.push(q.ask, payload)
	select {
	case answer, ok := <-ch:
		if !ok {
			return token, "", errEditorClosing
		}
		return token, answer, nil
	case <-ctx.Done():
		b.events.push(q.cancelled, map[string]any{"token": token})
		return token, "", ctx.Err()
	}
}

// handleAnswer delivers the user's choice for token.
func (b *Bridge) handleAnswer(token, optionID string) {
	b.mu.Lock()
	ch, ok := b.perms[token]
	b.mu.Unlock()
	if !ok {
		b.log.Debug("late permission answer", "token", token)
		return
	}
	select {
	case ch <- optionID:
	default:
	}
}
