package editor

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/agentrun/agentrun.nvim/termhost"
)

// One nvim_chan_send carries between pumpMinChunk and pumpMaxChunk bytes.
// The pump adapts the size so each send keeps Neovim busy for about
// pumpTargetSend: large enough that a flood costs few round trips, small
// enough that the editor's event loop stays responsive between them
// (Neovim parses and scrolls a terminal chunk in one go).
const (
	pumpMinChunk   = 8 << 10
	pumpMaxChunk   = 256 << 10
	pumpTargetSend = 15 * time.Millisecond
)

// pumpOptions tune a display pump.
type pumpOptions struct {
	// MaxLines is how far behind (in lines) the pump may fall before it
	// skips ahead to the newest output: the buffer's 'scrollback', since
	// anything older would scroll out of the buffer anyway.
	MaxLines int
}

// pump feeds one terminal's raw output into one Neovim terminal channel.
// It runs apart from the pty reader (which only appends to the raw log),
// coalesces whatever has arrived into one send, and never has more than
// one send in flight, so a slow Neovim slows only the display.
//
// What the user sees stays truthful: when the pump skips ahead it writes
// a marker line "[… N bytes skipped …]" (attributes reset) where output
// is missing; at the end it writes "[exit N]" or "[signal SIGTERM]", and
// "[released]" once the agent released the terminal.
type pump struct {
	cancel context.CancelFunc
	done   chan struct{}

	mu       sync.Mutex
	complete bool // everything, including the last marker, was sent
}

// startPump starts a pump reading t's raw log from the start.
func startPump(ctx context.Context, t *termhost.Terminal, released <-chan struct{}, send func([]byte) error, opts pumpOptions, log *slog.Logger) *pump {
	ctx, cancel := context.WithCancel(ctx)
	p := &pump{cancel: cancel, done: make(chan struct{})}
	if opts.MaxLines <= 0 {
		opts.MaxLines = 10000
	}
	go func() {
		defer close(p.done)
		err := p.run(ctx, t, released, send, opts)
		if err != nil && ctx.Err() == nil {
			log.Debug("display pump stopped", "err", err)
		}
	}()
	return p
}

// stop ends the pump and waits for it.
func (p *pump) stop() {
	p.cancel()
	<-p.done
}

// finished reports that the pump sent everything through "[released]".
func (p *pump) finished() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.complete
}

func (p *pump) run(ctx context.Context, t *termhost.Terminal, released <-chan struct{}, send func([]byte) error, opts pumpOptions) error {
	log := t.Display()
	var off int64
	atLineStart := true // the display's cursor is at the start of a line
	chunk := 64 << 10
	for {
		c := log.Read(off, chunk, opts.MaxLines)
		if c.Skipped {
			start := c.Next - int64(len(c.Data))
			msg := "\x1b[0m"
			if !atLineStart {
				msg += "\r\n"
			}
			msg += fmt.Sprintf("[… %d bytes skipped …]\r\n", start-off)
			if err := send([]byte(msg)); err != nil {
				return err
			}
			atLineStart = true
		}
		if len(c.Data) > 0 {
			began := time.Now()
			if err := send(c.Data); err != nil {
				return err
			}
			chunk = adaptChunk(chunk, len(c.Data), time.Since(began))
			atLineStart = c.Data[len(c.Data)-1] == '\n'
		}
		off = c.Next
		if c.Closed {
			if len(c.Data) == 0 {
				break
			}
			continue // drain to the end before the exit line
		}
		if len(c.Data) > 0 || c.Skipped {
			continue // more may already be waiting
		}
		select {
		case <-log.Notify():
		case <-ctx.Done():
			return ctx.Err()
		}
	}

	st, err := exitStatus(ctx, t)
	if err != nil {
		return err
	}
	end := "\x1b[0m"
	if !atLineStart {
		end += "\r\n"
	}
	if err := send([]byte(end + "[" + exitText(st) + "]")); err != nil {
		return err
	}
	select {
	case <-released:
	case <-ctx.Done():
		return ctx.Err()
	}
	if err := send([]byte("\r\n[released]")); err != nil {
		return err
	}
	p.mu.Lock()
	p.complete = true
	p.mu.Unlock()
	return nil
}

// adaptChunk returns the next chunk size after a send of n bytes took d:
// halved when full sends run long, doubled when they are quick.
func adaptChunk(chunk, n int, d time.Duration) int {
	switch {
	case d > 2*pumpTargetSend:
		chunk /= 2
	case d < pumpTargetSend/2 && n == chunk:
		chunk *= 2
	}
	return min(max(chunk, pumpMinChunk), pumpMaxChunk)
}

// exitStatus waits for t to exit (and be drained) and returns how it
// ended. Unlike Wait it keeps working after the terminal is released.
func exitStatus(ctx context.Context, t *termhost.Terminal) (termhost.ExitStatus, error) {
	select {
	case <-t.Done():
	case <-ctx.Done():
		return termhost.ExitStatus{}, ctx.Err()
	}
	st, ok := t.Exited()
	if !ok {
		return termhost.ExitStatus{}, fmt.Errorf("terminal %q is done but has no exit status", t.ID())
	}
	return st, nil
}
