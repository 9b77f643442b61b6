package editor

import (
	"context"
	"errors"
	"log/slog"

	"github.com/neovim/go-client/nvim"
)

// displays start the pumps that feed terminal buffers (pump.go), ours and
// remote ones alike: one pacer for all of them, so the pumps of one Neovim
// take turns, and one way to send to a buffer's channel.
type displays struct {
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

// errLinkGone ends a pump whose Neovim is no longer the one connected:
// its channel numbers mean nothing to the next.
var errLinkGone = errors.New("the Neovim this display fed is gone")

// sender returns how to write to channel ch of the Neovim connected now
// (nvim_chan_send); it fails once another Neovim took its place.
func (d *displays) sender(ch int) func(p []byte) error {
	if d.send != nil {
		return func(p []byte) error { return d.send(ch, p) }
	}
	v := d.link()
	return func(p []byte) error {
		if d.link() != v {
			return errLinkGone
		}
		return v.Request("nvim_chan_send", nil, ch, p)
	}
}

// show starts a pump feeding src into channel ch of a buffer with
// 'scrollback' lines; it ends with src's display, when released closes
// (nil: never), or at stop. ended (may be nil) is called with the lines
// the split ends with once they went out (pumpOptions.Ended).
func (d *displays) show(src displaySource, released <-chan struct{}, ch, scrollback int, ended func(lines []string)) *pump {
	return startPump(d.ctx, src, released, d.sender(ch), pumpOptions{MaxLines: scrollback, Pacer: d.pacer, Ended: ended}, d.log.With("terminal", src.ID()))
}
