// Package display feeds terminal buffers: one Pump per buffer reads a
// terminal's raw log (internal/rawlog) at its own pace, passes it
// through the display filter (internal/vtsafe) and hands it to Neovim
// with nvim_chan_send, in chunks sized to about a millisecond of
// Neovim's time, taking turns with the other pumps (one pacer per
// Displays) and skipping ahead, saying so, when it falls further behind
// than the buffer's scrollback (pump.go says how and why). At the end it
// writes the end marker ("[exit N]", EndLine) and "[released]", and
// says which lines the split ends with.
//
// A Source is anything with a raw log and an end: a terminal of ours
// (*termhost.Terminal), one of another host followed over its socket,
// or a finished one's kept output. The package knows nothing of
// sessions or of where the terminal runs; the editor's terminals and
// remotes parts start a Pump with Displays.Show.
package display
