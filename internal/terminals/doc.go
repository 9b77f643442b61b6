// Package terminals is this backend's terminals as Neovim shows them:
// the agents' and the user's, each with its split's display pump
// (internal/display), its input writer and what Lua learns of it
// (terminal_created, terminal_exit, terminal_released,
// terminal_activity). The editor bridge routes Lua's attach, interrupt,
// kill, input, send_input, shell, takeover, dispose, rerun and
// terminal_size calls here.
//
// The files: terminal.go (the part, a terminal's record, attach, input,
// kill), userterm.go (the user's side of the AHP model: shells, taking
// over, disposing, input only to terminals no session holds),
// status.go (status()'s entries), activity.go (each running terminal
// looked at every second: waits for input, listening ports),
// rerun.go, keptoutput.go (a finished split's output, kept to make it
// again).
//
// It reaches the terminal host, the socket host's claim and the
// sessions' shutdown only through the functions it is given (Deps,
// SetClosing); it knows neither the bridge nor the sessions.
package terminals
