package editor

import (
	"context"

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
	token, a, err := b.questions.Ask(ctx, "p", event.PermissionQuestion, func(token string) event.Payload {
		return event.Permission{Key: key, SessionID: sid, ToolCall: event.JSONValue(req.ToolCall), Options: event.JSONValue(req.Options), Token: token}
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
