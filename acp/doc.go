// Package acp is the client side of the Agent Client Protocol (protocol
// version 1): it starts a coding agent as a subprocess, talks JSON-RPC to it
// over its stdio, and serves the methods an agent calls on its client —
// fs/*, session/request_permission, session/update and terminal/* — through
// the Editor interface and a termhost.Host. It knows nothing of Neovim.
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
// does); notifications arrive in order. session/update notifications go to
// an unbounded queue delivered to the editor by one goroutine (update.go):
// the SDK's own queue is bounded and drops the connection when full, so a
// slow editor must never back up into it. Session.Prompt and permission
// requests flush that queue first, so the editor sees every update sent
// before a prompt's answer or a permission request.
//
// # Process
//
// The agent runs in its own process group with stdout/stderr on pipes we
// own (agent.go). Stderr goes to the log line by line and the last lines are
// kept for the exit message. Lines on stdout that are not JSON are logged
// and skipped. When the agent exits, crashes or closes its stdout, the
// watcher makes sure the process is gone (SIGTERM, then SIGKILL to the
// group), ends every session — releasing its terminals and calling
// Editor.SessionEnded with an *ExitError saying how it ended — and closes
// Agent.Done. Pending prompts return that error.
//
// # Terminals
//
// terminal.go maps the terminal methods onto termhost: the id returns at
// once (the editor hears of the terminal first), args mean exec without a
// shell, no args mean a /bin/sh -c line, cwd must be absolute and defaults
// to the session's, env is our environment plus agent-friendly defaults
// plus the agent's entries. A session sees only its own terminals.
// Terminals never released are released when their session ends.
//
// # Policy
//
// Options carries the user's limits (policy.go): allowed cwd roots (by
// default the session cwd and below), an approval hook, a maximum run time,
// an output cap; every command start, refusal and exit is written to the
// log as an "audit: terminal command" line.
package acp
