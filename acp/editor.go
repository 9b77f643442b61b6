package acp

import (
	"context"

	"github.com/agentrun/agentrun.nvim/acp/agentterm"
	acpsdk "github.com/coder/acp-go-sdk"
)

// Editor is what the ACP client needs from the user's editor. The Neovim
// bridge implements it; tests use a struct of function fields.
type Editor interface {
	// SessionUpdate shows one session/update notification (every variant).
	SessionUpdate(ctx context.Context, n acpsdk.SessionNotification)
	// RequestPermission asks the user to pick one of the agent's options.
	// A cancelled prompt answers with the "cancelled" outcome.
	RequestPermission(ctx context.Context, req acpsdk.RequestPermissionRequest) (acpsdk.RequestPermissionResponse, error)
	// Elicit asks the user what the agent asks through elicitation/create
	// (a form, or a URL to open); a cancelled turn ends ctx.
	Elicit(ctx context.Context, e Elicitation) (ElicitationAnswer, error)
	// ElicitationComplete says that URL elicitation id is done.
	ElicitationComplete(ctx context.Context, id string)
	// ReadTextFile returns a file's text, from a loaded buffer when there is one.
	ReadTextFile(ctx context.Context, req acpsdk.ReadTextFileRequest) (acpsdk.ReadTextFileResponse, error)
	// WriteTextFile writes a file, through a loaded buffer when there is one.
	WriteTextFile(ctx context.Context, req acpsdk.WriteTextFileRequest) (acpsdk.WriteTextFileResponse, error)
	// TerminalCreated announces a terminal the agent created in a session,
	// before its id is returned to the agent, so its display can attach.
	TerminalCreated(ctx context.Context, sessionID string, terminalID string)
	// TerminalReleased announces that the agent released a terminal.
	TerminalReleased(ctx context.Context, sessionID string, terminalID string)
	// AgentTerminal shows what an update says of a terminal the agent runs
	// itself (package agentterm), right after the update it came with.
	AgentTerminal(ctx context.Context, sessionID string, ev agentterm.Event)
	// SessionEnded reports that a session ended, with the reason (nil when
	// the user stopped it).
	SessionEnded(ctx context.Context, sessionID string, reason error)
}
