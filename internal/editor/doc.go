// Package editor is the Go side of the Neovim front end: the msgpack-RPC
// host that Neovim starts with jobstart({bin}, {rpc = true}), and the
// bridge that routes Lua's calls to the parts that own what they are
// about.
//
// It gives each session's agent its own acp.Editor, bound to the
// session's key (agentEditor in bridge.go: ACP session ids are the
// agents' and may repeat across them), and routes each of Lua's
// requests by name (Bridge.handlers; TestCallsAgree checks every Lua
// call against them). Each part owns its state and its lock; those of
// other packages know nothing of the bridge:
//
//   - sessions (internal/session): the ACP sessions and their agents:
//     start, prompt, cancel, stop, set_mode, set_config, list_sessions,
//     auth_methods, login, check_command; our MCP terminal tool.
//   - questions (internal/question): the user's open questions, which
//     the sessions and the bridge's acp.Editor (permission.go,
//     elicit.go) ask through; answer_question.
//   - remotes (internal/remote): other hosts' terminals, on this machine
//     or on another over SSH (sshlink): remote_* and ssh_*.
//   - checkpoints (internal/checkpoint) and a machine's files read for
//     Lua (internal/boxfile): stateless, one call each.
//   - terminals (internal/terminals): our host's terminals shown in
//     buffers (attach, interrupt, kill, input, send_input, shell,
//     takeover, dispose, rerun, terminal_size), each fed by a pump of
//     internal/display.
//   - socketHost (hostserve.go), here: the socket other clients reach
//     our host on, and the terminals the user detached.
//
// Every part that tells Lua something pushes it into the one ordered
// event queue (internal/event) drained by a single goroutine that calls
// require("agentrun.events").dispatch with nvim_exec_lua; Lua handles
// them on its main loop. Dependencies run one way: editor uses session,
// terminals, remote, checkpoint and boxfile; session uses question;
// terminals and remote use display; all use event. A part needs another
// only through function values or small structs it is given when
// newBridge makes it (session.Deps, terminals.Deps, remote.Options),
// never through the bridge, so each is tested alone.
//
// On another machine than its Neovim (setup's site) the backend outlives
// a link that drops while a session runs (linger.go): it waits on a
// socket of its own, and the Neovim of a new link takes the sessions up
// with "resume", replayed from the event queue's log.
//
// Three rules shape it:
//
//   - Nothing on the agent's path waits on Neovim except what must: an
//     fs read/write (fs.go) or a permission answer.
//   - The pty read loop never waits on Neovim: each terminal buffer is fed
//     by its own display pump (internal/display) reading the terminal's
//     raw log at its own pace.
//   - Lua creates every terminal buffer (nvim_open_term needs a Lua
//     on_input callback) and hands its channel id to Go with "attach".
//
// stdout carries the RPC stream, so Serve points os.Stdout at stderr
// before anything can print, and logs with slog to the file Lua names in
// $AGENTRUN_LOG (stdpath("log")/agentrun.log).
package editor
