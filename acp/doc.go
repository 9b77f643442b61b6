// Package acp is the client side of the Agent Client Protocol (protocol
// version 1): it starts a coding agent as a subprocess, talks JSON-RPC to it
// over its stdio, and serves the methods an agent calls on its client —
// fs/*, session/request_permission, elicitation/*, session/update and
// terminal/* — through the Editor interface and a termhost.Host. It knows
// nothing of Neovim.
//
// # Connection
//
// The SDK's generic acpsdk.Connection carries the JSON-RPC; we do not use
// its ClientSideConnection because its response types drop nulls (the spec
// wants "exitCode": null / "signal": null spelled out) and its errors do not
// say which field was wrong. Our own dispatch table (rpc.go) decodes each
// request into the SDK's type, validates it, and answers bad input with
// -32602 naming the field, unknown methods with -32601, unknown sessions
// and terminals with -32002. A handler panic becomes an internal error.
//
// Requests from the agent run concurrently (one goroutine each, as the SDK
// does). session/update notifications never reach the SDK: a filter between
// the agent's stdout and the connection (update.go) takes them out of the
// stream as it is read and appends them to an unbounded queue that one
// goroutine delivers to the editor in order. So an update sent before a
// request is queued before that request is even parsed — the permission
// handler flushes the queue and the editor has shown the tool call before
// it asks — and a slow editor never backs up into the SDK's bounded
// notification queue, which drops the connection when it overflows.
// Session.Prompt flushes the queue too: when it returns, the editor has
// every update the agent sent before answering.
//
// # Process
//
// The agent runs in its own process group with stdout/stderr on pipes we
// own (agent.go). Stderr goes to the log line by line and the last lines are
// kept for the exit message. Lines on stdout that are not JSON are logged
// and skipped; the first one is reported through Options.Notice. When the agent exits, crashes or closes its stdout, the
// watcher makes sure the process is gone (SIGTERM, then SIGKILL to the
// group), ends every session — releasing its terminals and calling
// Editor.SessionEnded with an *ExitError saying how it ended — and closes
// Agent.Done. Pending prompts return that error.
//
// A turn (turn.go) begins and is cancelled in the editor's order, at
// once (StartTurn, CancelTurn); its prompt is written later. A cancel
// before the prompt was sent keeps it unsent; one while it is written is
// sent after it (the writer under the connection sees the prompt go): a
// cancel on the wire before its prompt was lost by the agent.
//
// # Terminals
//
// terminal.go maps the terminal methods onto termhost: the id returns at
// once (the editor hears of the terminal first), args mean exec without a
// shell, no args mean a line run by bash --noprofile --norc -c
// (internal/lineshell), cwd must be absolute and defaults to the session's, env is our environment plus agent-friendly defaults
// plus the agent's entries. A session sees only its own terminals.
// Terminals never released are released when their session ends.
// terminal/output's text (up to the byte limit, often a MiB) does not go
// through encoding/json: the SDK would escape it once and scan it twice
// more. termhost's Store hands it over already encoded (it keeps the
// escaped form of a polled output), the result carries a placeholder, and
// the writer under the connection writes the encoded text in its place
// straight into the agent's stdin pipe (bigtext.go).
//
// Claims (claims.go) follow the AHP model: a terminal is {session} in
// the background and {session, toolCallId} while a tool call embeds it,
// set as the update is read, so before any later request of the agent. A
// terminal the user took over ({client}) is the user's: the agent's
// wait_for_exit ends with an error, kill is refused, and release and the
// end of the session only forget the id; the process runs on.
//
// Agent-owned terminals (agents that run commands themselves and only
// show them: tool_call _meta, the v2 draft's terminal_update) are decoded
// by package agentterm (an agentterm.Decoder per agent, fed each update
// as it is read) into agentterm.Events for Editor.AgentTerminal.
//
// # Agents: one profile each
//
// What is known of one agent's ways (its names, its session set-up, how
// it reports the commands it runs itself) is its profile, a file of its
// own in package agentterm (acp/agentterm/profile_<key>.go), whose doc
// holds the recipe for adding an agent: three files, none in this
// package.
//
// # Sessions and sign-in
//
// A session is new (session/new), or an earlier one opened again
// (sessions.go): session/load, whose replayed history arrives as updates
// before it returns, or session/resume; ListSessions follows
// session/list's pages. Close sends session/close for each session first
// when the agent has it. Each is asked for only when the agent's
// initialize answer offers it. auth.go reads the agent's sign-in methods
// (agent, terminal, env_var), runs authenticate for the agent kind and
// builds the command a terminal kind runs; we announce that we can run
// those (clientCapabilities.auth.terminal). IsAuthRequired tells an
// auth_required answer from other errors.
//
// # Policy
//
// Options carries the user's limits (policy.go): allowed cwd roots (by
// default the session cwd and below), an approval hook (a pending approval
// belongs to the turn, like a permission request: cancel refuses it), a
// maximum run time, an output cap; every command start, refusal and exit
// is written to the log as an "audit: terminal command" line.
package acp
