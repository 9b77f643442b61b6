package event

// The events the backend sends to Lua (lua/agentrun/events.lua handles
// each; its `names` table lists the same strings). One place, so that
// grep finds both ends of each.
const (
	NameSessionStarted       = "session_started"
	NameSessionFailed        = "session_failed"
	NameSessionEnded         = "session_ended"
	NameSessionQuiet         = "session_quiet"  // the agent has not answered initialize for a while
	NameSessionUpdate        = "session_update" // payload.update: the ACP SessionUpdate
	NameTurnEnd              = "turn_end"
	NameMessage              = "message"
	NameTerminalCreated      = "terminal_created"
	NameTerminalExit         = "terminal_exit"
	NameTerminalReleased     = "terminal_released"
	NameTerminalActivity     = "terminal_activity" // waits for input, listens on ports (internal/terminals/activity.go)
	NameDisplayEnded         = "display_ended"     // a split's end marker went out, or [released] after it (pump.go)
	NameAgentTerminal        = "agent_terminal"    // a terminal the agent runs itself
	NamePermission           = "permission"
	NamePermissionCancelled  = "permission_cancelled"
	NameElicitation          = "elicitation"           // the agent asks the user a form or a URL (elicit.go)
	NameElicitationWithdrawn = "elicitation_withdrawn" // its turn was cancelled: the question is gone
	NameElicitationComplete  = "elicitation_complete"  // a URL elicitation is done
	NameApprove              = "approve"
	NameApproveCancelled     = "approve_cancelled"
	NameRemoteClaimed        = "remote_claimed"   // a remote terminal changed hands
	NameToolTerminal         = "tool_terminal"    // a terminal our MCP tool made for a tool call
	NameOurTool              = "our_tool"         // what the agent did with our MCP terminal tool (mcp.go)
	NameAuthRequired         = "auth_required"    // the agent wants the user to sign in (auth.go)
	NameSessionList          = "session_list"     // an agent's earlier sessions (sessionlist.go)
	NameHistoryReplayed      = "history_replayed" // the updates held until session_started have been sent
	NameSSHConnected         = "ssh_connected"    // a remote machine's link is up, or why not (internal/remote)
	NamePromptSent           = "prompt_sent"      // the user's prompt: only in a replay (linger.go)
	NameChatNote             = "chat_note"        // a question's record in a chat (asked, answered): only in a replay (keep_note)
)

// Question is something the backend asks the user (questions.ask): the
// event that withdraws it (the one that asks is its payload's).
type Question struct{ cancelled string }

var (
	PermissionQuestion = Question{NamePermissionCancelled}
	ApproveQuestion    = Question{NameApproveCancelled}
	ElicitQuestion     = Question{NameElicitationWithdrawn}
)

// Withdrawn is the event that tells Lua question token is no longer
// asked; why is "turn" (its turn was cancelled, or its session ended) or
// "withdrawn".
func (q Question) Withdrawn(token, why string) QuestionWithdrawn {
	return QuestionWithdrawn{name: q.cancelled, Token: token, Why: why}
}
