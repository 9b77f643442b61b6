package display

import (
	"context"
	"errors"
	"log/slog"

	"github.com/neovim/go-client/nvim"
)

// Displays start the pumps that feed terminal buffers (pump.go), ours and
// remote ones alike: one pacer for all of them, so the pumps of one Neovim
// take turns, and one way to send to a buffer's channel.
type Displays struct {
	ctx   context.Context
	log   *slog.Logger
	pacer *pacer
	// link is the client of the Neovim connected now (another one once
	// a lingering backend is resumed: linger.go); its channel numbers
	// are that Neovim's.
	link func() *nvim.Nvim
	// send, when set (tests), writes p to channel ch in link's place.
	send func(ch int, p []byte) error
}

// New returns the displays of the Neovim link returns (the one
// connected now), ending at ctx.
func New(ctx context.Context, log *slog.Logger, link func() *nvim.Nvim) *Displays {
	return &Displays{ctx: ctx, log: log, pacer: newPacer(), link: link}
}

// ToChannels returns displays that write to channel ch with send, in a
// Neovim's place (the parts' tests).
func ToChannels(ctx context.Context, log *slog.Logger, send func(ch int, p []byte) error) *Displays {
	return &Displays{ctx: ctx, log: log, pacer: newPacer(), send: send}
}

// ErrLinkGone ends a pump whose Neovim is no longer the one connected:
// its channel numbers mean nothing to the next.
var ErrLinkGone = errors.New("the Neovim this display fed is gone")

// Sender returns how to write to channel ch of the Neovim connected now
// (nvim_chan_send); it fails once another Neovim took its place.
func (d *Displays) Sender(ch int) func(p []byte) error {
	if d.send != nil {
		return func(p []byte) error { return d.send(ch, p) }
	}
	v := d.link()
	return func(p []byte) error {
		if d.link() != v {
			return ErrLinkGone
		}
		return v.Request("nvim_chan_send", nil, ch, p)
	}
}

// Show starts a pump feeding src into channel ch of a buffer with
// 'scrollback' lines; it ends with src's display, when released closes
// (nil: never), or at stop. ended (may be nil) is called with the lines
// the split ends with once they went out (pumpOptions.Ended).
func (d *Displays) Show(src Source, released <-chan struct{}, ch, scrollback int, ended func(lines []string)) *Pump {
	return startPump(d.ctx, src, released, d.Sender(ch), pumpOptions{MaxLines: scrollback, Pacer: d.pacer, Ended: ended}, d.log.With("terminal", src.ID()))
}

// DefaultScrollback is terminal.scrollback's default in config.lua, for
// a caller that sends none (TestScrollbackDefaultIsLuas keeps them equal):
// Lua sends the option with setup (the raw logs' size) and each buffer's
// 'scrollback' with attach (the lines a display replays).
const DefaultScrollback = 10000

// displayBytesPerLine sizes the displays' raw logs: a generous average
// line (colours included), so a log holds what 'scrollback' can show.
const displayBytesPerLine = 100

// LogBytes is the raw log size for a 'scrollback' of lines (0:
// DefaultScrollback's), within 64 KiB..16 MiB.
func LogBytes(scrollback int) int {
	if scrollback <= 0 {
		scrollback = DefaultScrollback
	}
	return min(max(scrollback*displayBytesPerLine, 64<<10), 16<<20)
}

// Buffer describes the terminal buffer Lua created for a display
// ("attach", "remote_attach"): its window's size and 'scrollback'.
type Buffer struct {
	Cols       int `msgpack:"cols"`
	Rows       int `msgpack:"rows"`
	Scrollback int `msgpack:"scrollback"`
}
