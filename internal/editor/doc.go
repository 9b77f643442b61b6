// Package editor is the Go side of the Neovim front end: the msgpack-RPC
// host that Neovim starts with jobstart({bin}, {rpc = true}).
//
// It gives each session's agent its own acp.Editor, bound to the
// session's key (agentEditor in bridge.go: ACP session ids are the
// agents' and may repeat across them), and serves the Lua side's
// requests: setup, start, prompt, cancel, stop, attach, interrupt, kill,
// input, send_input, shell, takeover, dispose, status, shutdown
// (rpcrequest) and input, resize, terminal_size, answer_question, log
// (rpcnotify). shell, takeover, dispose and send_input are the user's side
// of the AHP terminal model (userterm.go): shells the user holds, taking
// an agent's terminal over, and input that only reaches terminals no
// session holds. set_mode and set_config (modes.go) change a session's
// mode and options; list_sessions (sessionlist.go) lists an agent's
// earlier sessions, which start opens again (load, resume, continue);
// auth_methods and login (auth.go) sign an agent in, a terminal method in
// a terminal the user holds, after which a session waiting for it opens.
//
// The Bridge (bridge.go) only routes: each request name, and each
// acp.Editor call, goes to the part that owns what it is about, and each
// part owns its state and its lock:
//
//   - sessions (sessions.go; session.go, prompt.go, updates.go,
//     sessionlist.go, auth.go, modes.go, policy.go, mcp.go): the ACP
//     sessions and their agents.
//   - questions (permission.go): the user's open permission and approval
//     questions.
//   - terminals (terminal.go, userterm.go, status.go) with displays
//     (display.go, pump.go): our host's terminals shown in buffers.
//   - remotes (remote.go, remotehost.go): other hosts' terminals, on
//     this machine or on another over SSH (sshlink).
//   - socketHost (hostserve.go): the socket other clients reach our host
//     on, and the terminals the user detached.
//
// On another machine than its Neovim (setup's site) the backend outlives
// a link that drops while a session runs (linger.go): it waits on a
// socket of its own, and the Neovim of a new link takes the sessions up
// with "resume", replayed from the event queue's log (internal/event).
//
// A part needs others only through function values it is given when
// newBridge makes it (sessionDeps, terminalDeps, remoteOptions), never
// through the bridge, so each is tested alone (its _test.go).
//
// Three rules shape it:
//
//   - Nothing on the agent's path waits on Neovim except what must: an
//     fs read/write or a permission answer. Session updates and terminal
//     lifecycle events go into one ordered queue (internal/event) drained by a
//     single goroutine that calls require("agentrun.events").dispatch with
//     nvim_exec_lua; Lua handles them on its main loop.
//   - The pty read loop never waits on Neovim: each terminal buffer is fed
//     by its own display pump (pump.go) reading the terminal's raw log in
//     coalesced chunks sized to keep each nvim_chan_send near a
//     millisecond, the pumps of all terminals taking turns with idle time
//     between sends (so a flood never freezes the editor), and skipping
//     ahead (with a visible marker) when it falls further behind than the
//     buffer's scrollback.
//   - Lua creates every terminal buffer (nvim_open_term needs a Lua
//     on_input callback) and hands its channel id to Go with "attach".
//
// stdout carries the RPC stream, so Serve points os.Stdout at stderr
// before anything can print, and logs with slog to the file Lua names in
// $AGENTRUN_LOG (stdpath("log")/agentrun.log).
package editor
