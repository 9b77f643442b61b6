package editor

// The events the backend sends to Lua (lua/agentrun/events.lua handles
// each; its `names` table lists the same strings). One place, so that
// grep finds both ends of each.
const (
	evSessionStarted       = "session_started"
	evSessionFailed        = "session_failed"
	evSessionEnded         = "session_ended"
	evSessionQuiet         = "session_quiet"  // the agent has not answered initialize for a while
	evSessionUpdate        = "session_update" // payload.update: the ACP SessionUpdate
	evTurnEnd              = "turn_end"
	evMessage              = "message"
	evTerminalCreated      = "terminal_created"
	evTerminalExit         = "terminal_exit"
	evTerminalReleased     = "terminal_released"
	evTerminalActivity     = "terminal_activity" // waits for input, listens on ports (activity.go)
	evDisplayEnded         = "display_ended"     // a split's end marker went out, or [released] after it (pump.go)
	evAgentTerminal        = "agent_terminal"    // a terminal the agent runs itself
	evPermission           = "permission"
	evPermissionCancelled  = "permission_cancelled"
	evElicitation          = "elicitation"           // the agent asks the user a form or a URL (elicit.go)
	evElicitationWithdrawn = "elicitation_withdrawn" // its turn was cancelled: the question is gone
	evElicitationComplete  = "elicitation_complete"  // a URL elicitation is done
	evApprove              = "approve"
	evApproveCancelled     = "approve_cancelled"
	evRemoteClaimed        = "remote_claimed"   // a remote terminal changed hands
	evToolTerminal         = "tool_terminal"    // a terminal our MCP tool made for a tool call
	evOurTool              = "our_tool"         // what the agent did with our MCP terminal tool (mcp.go)
	evAuthRequired         = "auth_required"    // the agent wants the user to sign in (auth.go)
	evSessionList          = "session_list"     // an agent's earlier sessions (sessionlist.go)
	evHistoryReplayed      = "history_replayed" // the updates held until session_started have been sent
	evSSHConnected         = "ssh_connected"    // a remote machine's link is up, or why not (remote.go)
	evPromptSent           = "prompt_sent"      // the user's prompt: only in a replay (linger.go)
	evChatNote             = "chat_note"        // a question's record in a chat (asked, answered): only in a replay (keep_note)
)

// question is something the backend asks the user (questions.ask): the
// event that withdraws it (the one that asks is its payload's).
type question struct{ cancelled string }

var (
	permissionQuestion = question{evPermissionCancelled}
	approveQuestion    = question{evApproveCancelled}
	elicitQuestion     = question{evElicitationWithdrawn}
)
