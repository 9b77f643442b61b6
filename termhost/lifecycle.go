package termhost

import (
	"os"
	"syscall"
	"time"

	"github.com/agentrun/agentrun.nvim/internal/vtsafe"
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

// waitLoop reaps the command and starts the drain clock.
func (t *Terminal) waitLoop() {
	_ = t.cmd.Wait()
	st := ExitStatus{Signal: "unknown"}
	if ps := t.cmd.ProcessState; ps != nil {
		if ws, ok := ps.Sys().(syscall.WaitStatus); ok {
			st = exitStatusOf(ws)
		}
	}
	t.exitAt = time.Now()
	st.Ran = t.exitAt.Sub(t.started)
	t.mu.Lock()
	t.leaderStatus = st
	t.mu.Unlock()
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
	t.mu.Lock()
	st := t.leaderStatus
	t.mu.Unlock()
	if why := t.limitText(st); why != "" {
		// Said where the agent and the user read the output: the last
		// line of the text and of the split.
		t.passOn([]byte(vtsafe.Reset + "\r\n[agentrun: stopped: " + why + "]\r\n"))
		t.mu.Lock()
		t.limitReport = why
		t.mu.Unlock()
	}
	t.raw.Close()
	t.store.Flush()
	t.mu.Lock()
	t.exit = &st
	t.drainRule = rule
	t.mu.Unlock()
	t.recordExit(st) // in the state before anyone sees Done
	close(t.done)
	t.host.opts.Logf("termhost: %s exited: %s (output drained: %s)", t.id, st, rule)
}

// KillGrace is how long Kill leaves the command between SIGTERM and
// SIGKILL (Options.KillGrace).
func (t *Terminal) KillGrace() time.Duration { return t.host.opts.KillGrace }

// Stop ends the command gently: SIGINT to its process group (what <C-c>
// sends, so it can clean up), and, if it has not exited after
// Options.KillGrace, Kill (SIGTERM, then SIGKILL after the grace). It
// returns at once; a command that already exited is left alone. A
// cancelled turn stops its commands this way.
func (t *Terminal) Stop() error {
	if err := t.usable(); err != nil {
		return err
	}
	if t.leaderExited.Load() && !t.alive() {
		return nil
	}
	if err := t.Signal(syscall.SIGINT); err != nil {
		return err
	}
	t.mu.Lock()
	armed := t.stopArmed
	t.stopArmed = true
	t.mu.Unlock()
	if !armed {
		time.AfterFunc(t.host.opts.KillGrace, func() {
			if t.leaderExited.Load() && !t.alive() {
				return
			}
			t.host.opts.Logf("termhost: %s: the command outlived SIGINT by the grace period, killing it", t.id)
			t.terminate()
		})
	}
	return nil
}

// terminate sends SIGTERM (and SIGCONT, so a stopped job can act on it)
// to the process group and to every other group of the terminal's tree
// (a shell's jobs, what left the session with setsid), and arms a SIGKILL
// for whatever of them is still alive after the grace period.
func (t *Terminal) terminate() {
	if t.leaderExited.Load() && !t.alive() {
		return
	}
	if t.spec.ShellIntegration {
		// An interactive shell ignores SIGTERM and runs each job in a
		// process group of its own; SIGHUP (what closing a terminal
		// sends) ends it, and it hangs up its jobs in turn. The shell
		// gets the SIGHUP alone: with a SIGTERM in flight beside it,
		// bash once sat at its prompt with the hangup unhandled until
		// the SIGKILL (a CI run; suspected readline's signal handoff).
		_ = syscall.Kill(-t.pid, syscall.SIGHUP)
		t.signalAll(syscall.SIGTERM, t.pid) // what left the shell's group
	} else {
		_ = syscall.Kill(-t.pid, syscall.SIGTERM)
		t.signalAll(syscall.SIGTERM, 0) // also what left the session (setsid, daemons)
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
			t.signalAll(syscall.SIGKILL, 0)
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
			t.signalAll(syscall.SIGKILL, 0)
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
// terminal's tree (its own group when /proc cannot be read) but the group
// except (0: none).
func (t *Terminal) signalAll(sig syscall.Signal, except int) {
	groups, err := t.tree.Groups()
	if err != nil {
		groups = []int{t.pid}
	}
	for _, g := range groups {
		if g != except {
			_ = syscall.Kill(-g, sig)
		}
	}
}
