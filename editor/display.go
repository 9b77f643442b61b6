package editor

import (
	"context"
	"log/slog"
)

// displays start the pumps that feed terminal buffers (pump.go), ours and
// remote ones alike: one pacer for all of them, so the pumps of one Neovim
// take turns, and one way to send to a buffer's channel.
type displays struct {
	ctx   context.Context
	log   *slog.Logger
	pacer *pacer
	// send writes p to Neovim channel ch (nvim_chan_send).
	send func(ch int, p []byte) error
}

// show starts a pump feeding src into channel ch of a buffer with
// 'scrollback' lines; it ends with src's display, when released closes
// (nil: never), or at stop.
func (d *displays) show(src displaySource, released <-chan struct{}, ch, scrollback int) *pump {
	send := func(p []byte) error { return d.send(ch, p) }
	return startPump(d.ctx, src, released, send, pumpOptions{MaxLines: scrollback, Pacer: d.pacer}, d.log.With("terminal", src.ID()))
}
