package termhost

import (
	"errors"
	"os"
	"syscall"
	"time"

	"github.com/agentrun/agentrun.nvim/internal/procstat"
)

// The drain rule (see doc.go): after the command exited, its output is
// drained at EOF, or once the pty was quiet for drainQuiet, or at the
// latest drainMax after the exit (a chatty background child that keeps
// the pty open must not hold the exit back forever).
const (
	drainQuiet = 100 * time.Millisecond
	drainMax   = time.Second
)

// Drain rules, recorded for diagnostics and tests.
const (
	drainedAtEOF   = "eof"
	drainedByQuiet = "quiet"
	drainedByLimit = "limit"
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
			t.ahpFeed(buf[:n]) // raw log, store and AHP state (ahp.go)
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
	t.ahpFlush()
	t.raw.Close()
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

// waitLoop reaps the command and starts the drain clock.
func (t *Terminal) waitLoop() {
	_ = t.cmd.Wait()
	st := ExitStatus{Signal: "unknown"}
	if ps := t.cmd.ProcessState; ps != nil {
		if ws, ok := ps.Sys().(syscall.WaitStatus); ok {
			st = exitStatusOf(ws)
		}
	}
	t.mu.Lock()
	t.leaderStatus = st
	t.mu.Unlock()
	t.exitAt = time.Now()
	t.leaderExited.Store(true) // publishes exitAt to the reader
	close(t.exited)
	// If a background child keeps the pty open there is no EOF: the
	// deadline bounds the drain.
	t.armDrainDeadline()
}

// finish reports the exit: the output read so far is everything the
// command printed.
func (t *Terminal) finish(rule string) {
	// The display's stream ends with the exit too (RawChunk.Closed): what
	// stragglers print afterwards still reaches the Store, not the display.
	t.raw.Close()
	t.store.Flush()
	t.mu.Lock()
	st := t.leaderStatus
	t.exit = &st
	t.drainRule = rule
	t.mu.Unlock()
	t.ahpExited(st) // in the state before anyone sees Done
	close(t.done)
	t.host.opts.Logf("termhost: %s exited: %s (output drained: %s)", t.id, st, rule)
	for _, fn := range t.hooks.exit {
		fn(st)
	}
}

// terminate sends SIGTERM (and SIGCONT, so a stopped job can act on it)
// to the process group and to every other group of the terminal's tree
// (a shell's jobs, what left the session with setsid), and arms a SIGKILL
// for whatever of them is still alive after the grace period.
func (t *Terminal) terminate() {
	if t.leaderExited.Load() && !t.alive() {
		return
	}
	_ = syscall.Kill(-t.pid, syscall.SIGTERM)
	t.signalAll(syscall.SIGTERM) // also what left the session (setsid, daemons)
	if t.spec.ShellIntegration {
		// An interactive shell ignores SIGTERM and runs each job in a
		// process group of its own; SIGHUP (what closing a terminal
		// sends) ends it, and it hangs up its jobs in turn.
		_ = syscall.Kill(-t.pid, syscall.SIGHUP)
	}
	_ = syscall.Kill(-t.pid, syscall.SIGCONT)
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.killArmed {
		return
	}
	t.killArmed = true
	time.AfterFunc(t.host.opts.KillGrace, func() {
		t.mu.Lock()
		t.killArmed = false
		t.mu.Unlock()
		if t.alive() {
			t.host.opts.Logf("termhost: %s: processes of terminal (group %d) outlived SIGTERM, sending SIGKILL", t.id, t.pid)
			t.signalAll(syscall.SIGKILL)
		}
	})
}

// cleanup runs after Release: once the command is gone and its output
// drained, it closes the pty (ending the read loop).
func (t *Terminal) cleanup() {
	<-t.done
	_ = t.pty.Close()
	<-t.readerDone
	if t.scripts != "" {
		_ = os.RemoveAll(t.scripts)
	}
	close(t.gone)
	t.host.cleaned(t)
	if fn := t.host.opts.SessionEnded; fn != nil {
		t.awaitSessionEnd()
		fn(t.pid)
	}
}

// sessionPollMax bounds the interval at which awaitSessionEnd looks for
// the session's processes.
const sessionPollMax = 500 * time.Millisecond

// awaitSessionEnd waits until no process the terminal started is alive. Release's kill (terminate) ends them, at the latest with the
// SIGKILL after KillGrace, so this poll is short; it backs off in case a
// process takes long to die (uninterruptible sleep).
func (t *Terminal) awaitSessionEnd() {
	wait := 5 * time.Millisecond
	for t.alive() {
		time.Sleep(wait)
		wait = min(2*wait, sessionPollMax)
	}
}

// awaitGone waits until the terminal is cleaned up and its process group
// is gone, or until deadline; then it SIGKILLs what is left.
func (t *Terminal) awaitGone(deadline time.Time) {
	timer := time.NewTimer(time.Until(deadline))
	defer timer.Stop()
	select {
	case <-t.gone:
	case <-timer.C:
	}
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	for t.alive() {
		select {
		case <-tick.C:
		case <-timer.C:
			t.signalAll(syscall.SIGKILL)
			return
		}
	}
}

// alive reports whether anything the terminal started still runs: a
// process of its group or session, or one that left the session but
// carries the terminal's marker (tree.go). An unreadable /proc counts as
// alive.
func (t *Terminal) alive() bool {
	groups, err := t.tree.Groups()
	return err != nil || len(groups) > 0
}

// signalAll sends sig to every process group with a live member of the
// terminal's tree (its own group when /proc cannot be read).
func (t *Terminal) signalAll(sig syscall.Signal) {
	groups, err := t.tree.Groups()
	if err != nil {
		groups = []int{t.pid}
	}
	for _, g := range groups {
		_ = syscall.Kill(-g, sig)
	}
}

// procState reads a process's state letter and process group from
// /proc/<pid>/stat.
func procState(pid string) (state byte, pgrp int, ok bool) {
	st, ok := procstat.Read(pid)
	return st.State, st.Pgrp, ok
}
