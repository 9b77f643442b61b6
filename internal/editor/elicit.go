package editor

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/agentrun/agentrun.nvim/acp"
	"github.com/agentrun/agentrun.nvim/internal/event"
)

// elicit asks the user what the agent of session key asks through
// elicitation/create (acp.Editor's Elicit, from agentEditor): Lua asks
// each field of a form in turn (vim.ui.select, vim.ui.input), or offers
// to open a URL, and answers with "answer_question" (token, the answer
// as JSON: {action, content}). When ctx ends first (the turn was
// cancelled) the answer is "cancel" and Lua is told the question is gone.
func (b *Bridge) elicit(ctx context.Context, key string, e acp.Elicitation) (acp.ElicitationAnswer, error) {
	cancel := acp.ElicitationAnswer{Action: "cancel"}
	fields := e.Fields
	if fields == nil {
		fields = []acp.ElicitationField{}
	}
	required := e.Required
	if required == nil {
		required = []string{}
	}
	token, a, err := b.questions.Ask(ctx, "e", event.ElicitQuestion, func(token string) event.Payload {
		return event.Elicitation{
			Key: key, SessionID: e.SessionID, ToolCall: e.ToolCallID, Mode: e.Mode, Message: e.Message,
			Fields: event.JSONValue(fields), Required: required, URL: e.URL, ElicitationID: e.ID, Token: token,
		}
	})
	if err != nil {
		return cancel, nil
	}
	var ans acp.ElicitationAnswer
	if err := json.Unmarshal([]byte(a.ID), &ans); err != nil {
		return cancel, fmt.Errorf("the answer to question %s is not {action, content}: %w", token, err)
	}
	b.log.Info("elicitation answered", "token", token, "action", ans.Action)
	return ans, nil
}
