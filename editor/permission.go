package editor

import (
	"context"

	acpsdk "github.com/coder/acp-go-sdk"
)

// RequestPermission implements acp.Editor: Lua shows vim.ui.select and
// answers with "permission_answer" (token, optionId or "" for cancel).
// When ctx ends first (the turn was cancelled) the answer is "cancelled"
// and Lua is told to forget the request.
func (b *Bridge) RequestPermission(ctx context.Context, req acpsdk.RequestPermissionRequest) (acpsdk.RequestPermissionResponse, error) {
	cancelled := acpsdk.RequestPermissionResponse{Outcome: acpsdk.NewRequestPermissionOutcomeCancelled()}
	token := b.nextID("p")
	answer := make(chan string, 1)
	b.mu.Lock()
	if b.closing {
		b.mu.Unlock()
		return cancelled, nil
	}
	b.perms[token] = answer
	b.mu.Unlock()
	defer func() {
		b.mu.Lock()
		delete(b.perms, token)
		b.mu.Unlock()
	}()

	sid := string(req.SessionId)
	b.events.push("permission", map[string]any{
		"token":      token,
		"key":        b.keyOf(sid),
		"session_id": sid,
		"tool_call":  jsonValue(req.ToolCall),
		"options":    jsonValue(req.Options),
	})
	select {
	case id := <-answer:
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
	case <-ctx.Done():
		b.events.push("permission_cancelled", map[string]any{"token": token})
		return cancelled, nil
	}
}

// handlePermissionAnswer delivers the user's choice for token.
func (b *Bridge) handlePermissionAnswer(token, optionID string) {
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
