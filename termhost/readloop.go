package termhost

import (
	"errors"
	"os"
	"syscall"
	"time"
	"unicode/utf8"

	"github.com/agentrun/agentrun.nvim/ahp"
)

// readBufSize is the read loop's buffer; a pty hands out at most a few
// KiB per read, so this is never the bottleneck.
const readBufSize = 32 << 10

// readLoop is the terminal's only reader of the pty. It hands every
// chunk to the AHP filter, which appends it to the raw log, the store and
// the state (shell integration markers cut out), and does nothing that
// can wait on a consumer: the raw log's notification is a non-blocking
// send, subscribers are woken by closing a channel.
func (t *Terminal) readLoop() {
	defer close(t.readerDone)
	buf := make([]byte, readBufSize)
	drained := false
	for {
		n, err := t.pty.Read(buf)
		if n > 0 {
			t.bytes.Add(int64(n))
			t.feed(buf[:n]) // raw log, rendered text and AHP state
			if !drained && t.leaderExited.Load() {
				t.armDrainDeadline()
			}
		}
		if err == nil {
			continue
		}
		if errors.Is(err, os.ErrDeadlineExceeded) {
			// Deadlines are armed only after the leader exited: the pty
			// was quiet for drainQuiet (or drainMax passed), so the output
			// is drained. Keep reading what stragglers print, without a
			// deadline.
			if !drained {
				drained = true
				_ = t.pty.SetReadDeadline(time.Time{})
				rule := drainedByQuiet
				if t.leaderExited.Load() && time.Since(t.exitAt) >= t.host.drainMax {
					rule = drainedByLimit
				}
				t.finish(rule)
			}
			continue
		}
		// EIO: every holder of the pty's other end has closed it and all
		// output has been read. ErrClosed: released.
		if !errors.Is(err, syscall.EIO) && !errors.Is(err, os.ErrClosed) {
			t.host.opts.Logf("termhost: %s: read: %v", t.id, err)
		}
		break
	}
	t.flushFeed()
	if t.spec.Limits.Zero() {
		// With limits the log stays open until finish, which may add
		// the line that says which limit stopped the command.
		t.raw.Close()
	}
	if !drained {
		<-t.exited
		t.finish(drainedAtEOF)
	}
}

// armDrainDeadline lets the read block for at most drainQuiet, and not
// past drainMax after the leader's exit.
func (t *Terminal) armDrainDeadline() {
	dl := time.Now().Add(t.host.drainQuiet)
	if limit := t.exitAt.Add(t.host.drainMax); dl.After(limit) {
		dl = limit
	}
	_ = t.pty.SetReadDeadline(dl)
}

// feed takes one read from the pty (read loop only).
func (t *Terminal) feed(p []byte) {
	t.live.filter.Feed(p, t.live.out, t.live.osc)
}

// flushFeed passes on what the filter still holds at the end of the
// stream, and the incomplete character held back (read loop only).
func (t *Terminal) flushFeed() {
	t.live.filter.Flush(t.live.out)
	t.flushPartial()
}

// passOn receives the bytes the filter passes on: the display, the
// agent's text and the state's content get the same bytes. An incomplete
// UTF-8 character at the end waits for the next read, so every
// terminal/data is whole characters (it travels as a JSON string).
func (t *Terminal) passOn(d []byte) {
	t.raw.Append(d)
	t.store.Append(d)
	a := &t.live
	b := d
	if a.npart > 0 {
		// A character split across reads (rare): join the two.
		b = append(a.partial[:a.npart:a.npart], d...)
		a.npart = 0
	}
	keep := incompleteTail(b)
	if keep > 0 {
		a.npart = copy(a.partial[:], b[len(b)-keep:])
		b = b[:len(b)-keep]
	}
	t.appendContent(b)
}

// flushPartial applies a held-back incomplete character as it is
// (something other than its continuation came: it is invalid anyway).
func (t *Terminal) flushPartial() {
	a := &t.live
	if a.npart == 0 {
		return
	}
	b := append([]byte(nil), a.partial[:a.npart]...)
	a.npart = 0
	t.appendContent(b)
}

// incompleteTail returns how many bytes at the end of b are the start of
// a UTF-8 character that is not complete yet.
func incompleteTail(b []byte) int {
	for i := len(b) - 1; i >= 0 && i >= len(b)-utf8.UTFMax+1; i-- {
		if utf8.RuneStart(b[i]) {
			if utf8.FullRune(b[i:]) {
				return 0
			}
			return len(b) - i
		}
	}
	return 0
}

// appendContent applies terminal/data. While no one subscribes it costs
// one copy of b into the content ring and no allocation; a subscriber's
// action gets its own copy.
func (t *Terminal) appendContent(b []byte) {
	if len(b) == 0 {
		return
	}
	a := &t.live
	a.mu.Lock()
	a.dataLocked(b)
	a.seq++
	if a.subs > 0 {
		a.log.add(SeqAction{Seq: a.seq, Action: ahp.DataAction{Terminal: a.uri, Data: string(b)}})
	}
	a.wakeLocked()
	a.mu.Unlock()
}

// handleOSC receives every OSC payload in stream order, after everything
// printed before it was passed on: shell integration turns it into
// actions, then the OSC observers see it.
func (t *Terminal) handleOSC(p []byte) {
	acts := t.live.si.HandleOSC(p, time.Now())
	if len(acts) > 0 {
		t.flushPartial()
		for _, act := range acts {
			t.publish(act)
		}
	}
}
