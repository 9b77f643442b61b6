package display

import (
	"context"
	"fmt"
	"log/slog"
	"strconv"
	"sync"
	"time"

	"github.com/agentrun/agentrun.nvim/internal/rawlog"
	"github.com/agentrun/agentrun.nvim/internal/vtsafe"
	"github.com/agentrun/agentrun.nvim/termhost"
)

// Display pacing. Neovim feeds what nvim_chan_send hands a terminal to
// libvterm inside the call, scrolling the screen line by line, and its
// event loop waits meanwhile: timers, keys and redraws are late by as long
// as a send takes. On Neovim 0.7.2 that is some 5-10 µs a line, so 64 KiB
// of short lines blocks the editor for 50 ms. Hence:
//
//   - each send carries what Neovim handles in about pumpTargetSend: the
//     pump adapts its chunk size to the measured duration of its sends
//     (within pumpMinChunk..pumpMaxChunk);
//   - the pumps of all terminals take turns (pacer): one send at a time,
//     and after a send of duration d Neovim has idle×d to itself before the
//     next one. While the command runs idle is pumpIdleRunning (the
//     displays take at most a fifth of Neovim's time; the rest is the
//     user's, and the CPU is the command's); once it has exited,
//     pumpIdleCatchUp (none: the sends follow each other, Neovim's loop
//     still runs between any two) lets the display reach the final
//     screen quickly: after a flood that is 'scrollback' lines, 40-60 ms
//     of Neovim's own work at 120x40 (libvterm scrolls the screen and
//     Neovim copies each line into its scrollback), which an idle of 1×
//     doubled. Those sends aim at pumpTargetCatchUp instead of
//     pumpTargetSend: a quarter of the round trips (each ~0.2 ms of
//     overhead), while a key typed meanwhile still waits at most a few
//     ms;
//   - when a display is more lines behind than its buffer keeps
//     ('scrollback'), it skips ahead to the newest of them (what it
//     skips would have scrolled out anyway), at most every pumpSkipEvery
//     while the command runs (each skip writes a marker line) and at once
//     after the exit;
//   - a display that is that far behind while the command runs (a flood:
//     most of what it could send now will scroll out before the end)
//     sends once per pumpFloodFrame, enough to show the output streaming
//     by; the CPU goes to the command and its reader, and the display
//     catches up at the exit.
const (
	pumpMinChunk      = 512
	pumpFirstChunk    = 2 << 10
	pumpMaxChunk      = 64 << 10
	pumpTargetSend    = time.Millisecond
	pumpTargetCatchUp = 4 * time.Millisecond
	pumpIdleRunning   = 4
	pumpIdleCatchUp   = 0
	pumpMaxIdle       = 100 * time.Millisecond
	pumpSkipEvery     = 250 * time.Millisecond
	pumpFloodFrame    = 33 * time.Millisecond
)

// pumpOptions tune a display pump.
type pumpOptions struct {
	// MaxLines is how far behind (in lines) the pump may fall before it
	// skips ahead to the newest output: the buffer's 'scrollback', since
	// anything older would scroll out of the buffer anyway.
	MaxLines int
	// Pacer spaces this pump's sends with those of the other pumps of the
	// same Neovim; nil gives the pump a pacer of its own.
	Pacer *pacer
	// Ended, when set, is called once the end marker ("[exit N]") went
	// out, and again after "[released]", with the lines the split ends
	// with as they were written: Lua checks that the split shows them
	// (Neovim may drop the lines of a tiny terminal window; ui/termend.lua
	// writes them again then), and never builds them itself.
	Ended func(lines []string)
}

// Pump feeds one terminal's raw output into one Neovim terminal channel.
// It runs apart from the pty reader (which only appends to the raw log),
// coalesces whatever has arrived into one send, and never has more than
// one send in flight, so a slow Neovim slows only the display.
//
// What the user sees stays truthful: when the pump skips ahead it writes
// a marker line "[… N bytes skipped …]" (attributes reset) where output
// is missing; at the end it writes "[exit N]" or "[signal SIGTERM]", and
// "[released]" once the agent released the terminal.
type Pump struct {
	cancel context.CancelFunc
	done   chan struct{}
	pacer  *pacer

	mu       sync.Mutex
	complete bool // everything, including the last marker, was sent
}

// Source is what a pump shows: a terminal of ours
// (*termhost.Terminal) or one of another host followed over its socket
// (internal/remote).
type Source interface {
	ID() string
	Display() *rawlog.Log
	Done() <-chan struct{}
	Exited() (termhost.ExitStatus, bool)
}

// startPump starts a pump reading t's raw log from the start.
func startPump(ctx context.Context, t Source, released <-chan struct{}, send func([]byte) error, opts pumpOptions, log *slog.Logger) *Pump {
	ctx, cancel := context.WithCancel(ctx)
	p := &Pump{cancel: cancel, done: make(chan struct{}), pacer: opts.Pacer}
	if p.pacer == nil {
		p.pacer = newPacer()
	}
	if opts.MaxLines <= 0 {
		opts.MaxLines = DefaultScrollback
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

// Stop ends the pump and waits for it.
func (p *Pump) Stop() {
	p.cancel()
	<-p.done
}

// Done is closed when the pump ended (stopped, or all sent).
func (p *Pump) Done() <-chan struct{} { return p.done }

// Finished reports that the pump sent everything through "[released]".
func (p *Pump) Finished() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.complete
}

func (p *Pump) run(ctx context.Context, t Source, released <-chan struct{}, send func([]byte) error, opts pumpOptions) error {
	log := t.Display()
	r := log.NewReader(opts.MaxLines)
	chunk := pumpFirstChunk
	atLineStart := true // the display's cursor is at the start of a line
	var lastSkip time.Time
	var nextFrame time.Time // while flooding: the earliest next send
	var frame *time.Timer
	var safe vtsafe.Filter // what Neovim's libvterm can take (see internal/vtsafe)
	var msg []byte         // a skip marker and the data, made safe
	for {
		closed := log.Closed() // before Behind: once closed, Behind 0 is the end
		if pending, _ := r.Behind(); pending == 0 {
			if closed {
				break
			}
			select {
			case <-log.Notify():
			case <-ctx.Done():
				return ctx.Err()
			}
			continue
		}
		if wait := time.Until(nextFrame); wait > 0 && !closed {
			if frame == nil {
				frame = time.NewTimer(wait)
			} else {
				frame.Reset(wait)
			}
			select {
			case <-frame.C:
			case <-ctx.Done():
				return ctx.Err()
			}
			continue // the command may have ended meanwhile
		}
		if err := p.pacer.wait(ctx); err != nil {
			return err
		}
		// Read only now that it is our turn: the newest output goes out.
		closed = log.Closed()
		var skipped int64
		if closed || time.Since(lastSkip) >= pumpSkipEvery {
			skipped = r.SkipAhead()
		}
		c := r.Read(chunk)
		skipped += c.SkippedBytes
		msg = safe.Guard(msg[:0]) // Neovim may have resized the terminal meanwhile
		guard := len(msg)
		if skipped > 0 {
			lastSkip = time.Now()
			safe.Drop() // a character cut at the skip is gone with it
			msg = safe.Append(msg, skipMarker(nil, atLineStart, skipped))
		}
		msg = safe.Append(msg, c.Data)
		began := time.Now()
		var err error
		if len(msg) > guard { // nothing when all it read is half a character
			err = send(msg)
		}
		took := time.Since(began)
		idle := pumpIdleRunning
		if closed {
			idle = pumpIdleCatchUp
		}
		p.pacer.done(took, idle)
		if err != nil {
			return err
		}
		if len(c.Data) > 0 {
			target := pumpTargetSend
			if closed {
				target = pumpTargetCatchUp
			}
			chunk = adaptChunk(chunk, len(c.Data), took, target)
			atLineStart = c.Data[len(c.Data)-1] == '\n'
		} else if skipped > 0 {
			atLineStart = true
		}
		nextFrame = time.Time{}
		if _, lines := r.Behind(); !closed && (lines > int64(opts.MaxLines) || c.SkippedBytes > 0) {
			nextFrame = began.Add(pumpFloodFrame)
		}
	}

	st, err := ExitStatus(ctx, t)
	if err != nil {
		return err
	}
	end := vtsafe.Reset
	if !atLineStart {
		end += "\r\n"
	}
	// A character cut at the very end shows as U+FFFD.
	lines := []string{EndLine(st)}
	if err := p.pacer.send(ctx, safe.Append(safe.Flush(safe.Guard(nil)), []byte(end+lines[0])), send); err != nil {
		return err
	}
	if opts.Ended != nil {
		opts.Ended(lines)
	}
	select {
	case <-released:
	case <-ctx.Done():
		return ctx.Err()
	}
	lines = append(lines, releasedLine)
	if err := p.pacer.send(ctx, safe.Append(safe.Guard(nil), []byte(vtsafe.Reset+"\r\n"+releasedLine)), send); err != nil {
		return err
	}
	if opts.Ended != nil {
		opts.Ended(lines)
	}
	p.mu.Lock()
	p.complete = true
	p.mu.Unlock()
	return nil
}

// EndLine is the line a split ends with once its command ended: "[exit
// 0]", "[signal SIGTERM]", "[interrupted]" (SIGINT, or the exit 130 a
// shell gives for a command SIGINT stopped: <C-c>, a cancel; the word
// the split's status line, the list and the chat say too). The one place
// it is made: the pump writes it, display_ended and agent_terminal carry
// it to Lua, which looks for that very text in the split and never
// builds it.
func EndLine(st termhost.ExitStatus) string {
	if st.Signal == "SIGINT" || (st.Code != nil && *st.Code == 130) {
		return "[interrupted]"
	}
	return "[" + st.String() + "]"
}

// releasedLine follows endLine once the agent released the terminal.
const releasedLine = "[released]"

// skipMarker appends the line that stands for n skipped bytes: on a line
// of its own, after vtsafe.Reset. A line the skip cut (the display was
// not at a line's start) ends in "…" first, so its head does not read as
// a whole line the command printed ("205151" of "20515175").
func skipMarker(b []byte, atLineStart bool, n int64) []byte {
	b = append(b, vtsafe.Reset...)
	if !atLineStart {
		b = append(b, "…\r\n"...)
	}
	b = append(b, "[… "...)
	b = strconv.AppendInt(b, n, 10)
	return append(b, " bytes skipped …]\r\n"...)
}

// adaptChunk returns the next chunk size after a send of n bytes took d:
// cut in proportion when a send of at least half a chunk ran long, doubled
// when a full one was quick, within pumpMinChunk..pumpMaxChunk.
func adaptChunk(chunk, n int, d, target time.Duration) int {
	switch {
	case d > target*3/2 && 2*n >= chunk:
		chunk = max(chunk/4, int(int64(n)*int64(target)/int64(d)))
	case d < target/2 && n == chunk:
		chunk *= 2
	}
	return min(max(chunk, pumpMinChunk), pumpMaxChunk)
}

// pacer spaces the sends of every display pump of one Neovim: one send at
// a time, and after a send that took d, idle×d (at most pumpMaxIdle) in
// which Neovim gets no display work.
type pacer struct {
	turn  chan struct{} // holds a token when nobody is sending
	next  time.Time     // earliest start of the next send; guarded by the token
	timer *time.Timer   // guarded by the token
}

func newPacer() *pacer {
	p := &pacer{turn: make(chan struct{}, 1)}
	p.turn <- struct{}{}
	return p
}

// wait blocks until it is the caller's turn to send; the caller must call
// done afterwards (unless wait failed).
func (p *pacer) wait(ctx context.Context) error {
	select {
	case <-p.turn:
	case <-ctx.Done():
		return ctx.Err()
	}
	pause := time.Until(p.next)
	if pause <= 0 {
		return nil
	}
	if p.timer == nil {
		p.timer = time.NewTimer(pause)
	} else {
		p.timer.Reset(pause)
	}
	select {
	case <-p.timer.C:
		return nil
	case <-ctx.Done():
		p.timer.Stop()
		p.turn <- struct{}{}
		return ctx.Err()
	}
}

// done ends a turn whose send took d.
func (p *pacer) done(d time.Duration, idle int) {
	p.next = time.Now().Add(min(time.Duration(idle)*d, pumpMaxIdle))
	p.turn <- struct{}{}
}

// send sends msg in its turn (for the exit and release lines).
func (p *pacer) send(ctx context.Context, msg []byte, send func([]byte) error) error {
	if err := p.wait(ctx); err != nil {
		return err
	}
	began := time.Now()
	err := send(msg)
	p.done(time.Since(began), pumpIdleCatchUp)
	return err
}

// ExitStatus waits for t to exit (and be drained) and returns how it
// ended. Unlike Wait it keeps working after the terminal is released.
func ExitStatus(ctx context.Context, t Source) (termhost.ExitStatus, error) {
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
