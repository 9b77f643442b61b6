package demoagent

import (
	"context"
	"fmt"

	acpsdk "github.com/coder/acp-go-sdk"
)

// Permission option ids the demo offers.
const (
	optionAllow  = "allow"
	optionReject = "reject"
)

// runWithPermission announces a pending tool call for line, asks
// session/request_permission, and runs line only if allowed.
func (d *demo) runWithPermission(ctx context.Context, s *session, line string) (acpsdk.StopReason, error) {
	if line == "" {
		return d.say(s, "Usage: `!permission CMD`")
	}
	toolID := d.id("call")
	title := line
	if err := d.update(s, acpsdk.StartToolCall(acpsdk.ToolCallId(toolID), title,
		acpsdk.WithStartKind(acpsdk.ToolKindExecute),
		acpsdk.WithStartStatus(acpsdk.ToolCallStatusPending),
		acpsdk.WithStartRawInput(map[string]any{"command": line}))); err != nil {
		return "", err
	}
	resp, err := d.conn.RequestPermission(d.ctx, acpsdk.RequestPermissionRequest{
		SessionId: acpsdk.SessionId(s.id),
		ToolCall: acpsdk.ToolCallUpdate{
			ToolCallId: acpsdk.ToolCallId(toolID),
			Title:      &title,
			Kind:       acpsdk.Ptr(acpsdk.ToolKindExecute),
			Status:     acpsdk.Ptr(acpsdk.ToolCallStatusPending),
		},
		Options: []acpsdk.PermissionOption{
			{OptionId: optionAllow, Name: "Allow", Kind: acpsdk.PermissionOptionKindAllowOnce},
			{OptionId: optionReject, Name: "Reject", Kind: acpsdk.PermissionOptionKindRejectOnce},
		},
	})
	failed := func() error {
		return d.update(s, acpsdk.UpdateToolCall(acpsdk.ToolCallId(toolID), acpsdk.WithUpdateStatus(acpsdk.ToolCallStatusFailed)))
	}
	switch {
	case err != nil:
		_ = failed()
		return d.say(s, fmt.Sprintf("The permission request failed: %s", errText(err)))
	case resp.Outcome.Cancelled != nil:
		if err := failed(); err != nil {
			return "", err
		}
		if err := d.update(s, acpsdk.UpdateAgentMessageText("Permission request cancelled.")); err != nil {
			return "", err
		}
		return acpsdk.StopReasonCancelled, nil
	case resp.Outcome.Selected != nil && resp.Outcome.Selected.OptionId == optionAllow:
		return d.run(ctx, s, line, toolID)
	}
	if err := failed(); err != nil {
		return "", err
	}
	return d.say(s, fmt.Sprintf("Permission denied: not running %s.", codeSpan(line)))
}
