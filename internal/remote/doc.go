// Package remote is the terminals of other hosts as this Neovim sees
// them: the editor bridge routes Lua's remote_* and ssh_* calls here.
//
// Terminals of other hosts (another Neovim's backend, or one that stayed
// for detached terminals), followed over their sockets as an AHP client:
// :AgentTerminals lists them, :AgentAttach (or <CR> in the list) shows
// one live in a split. A remote terminal is named "PID:term-N" (its
// host's process id). Its output goes through a local display log and the
// same pump as our own terminals, so the display filter and pacing are
// the same; input goes to the host only while we hold the terminal.
//
// Hosts on another machine are reached over SSH (package sshlink): their
// terminals are named "ssh://[user@]host[:port]/PID:term-N", listed by
// :AgentAttach ssh://host, and shown, taken, typed into and killed as
// this machine's; when the link drops, the split says so and the
// connection resumes (host.go).
//
// It pushes what Lua must learn (a terminal's end, a change of hands, a
// link's state) into the event queue it is given (internal/event) and
// shows a terminal through the displays it is given (internal/display);
// it knows nothing of sessions or of the bridge.
package remote
