package acp

// This file is the agent's process: spawning it in its own group, its stderr, noticing
// its end, and stopping it with everything it started.

import (
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/agentrun/agentrun.nvim/internal/procstat"
	"github.com/agentrun/agentrun.nvim/termhost"
)

// ExitError reports that an agent process ended without being asked to.
type ExitError struct {
	Agent string
	// Code is the exit code, or nil when a signal killed the agent.
	Code *int
	// Signal is the conventional name of the killing signal ("SIGKILL").
	Signal string
	// Stderr holds the agent's last stderr lines.
	Stderr []string
}

// Error says how the agent ended and what it last wrote to stderr.
func (e *ExitError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "agent %q ", e.Agent)
	switch {
	case e.Code != nil:
		fmt.Fprintf(&b, "exited with code %d", *e.Code)
	case e.Signal != "":
		fmt.Fprintf(&b, "was killed by %s", e.Signal)
	default:
		b.WriteString("closed its connection")
	}
	if len(e.Stderr) > 0 {
		fmt.Fprintf(&b, "; last stderr: %s", strings.Join(e.Stderr, " | "))
	}
	return b.String()
}

// spawn starts the process with our own pipes, so that reaping it never
// closes a pipe the connection is still reading.
func (a *Agent) spawn() error {
	cmd := exec.Command(a.cfg.Command[0], a.cfg.Command[1:]...)
	a.marker = termhost.NewMarker("agent-" + a.cfg.Name)
	cmd.Env = append(append(os.Environ(), a.cfg.Env...), a.marker)
	cmd.Dir = a.cfg.Dir
	// Its own process group: stopping the agent also stops what it forked,
	// and a Ctrl-C meant for the editor does not reach it.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return fmt.Errorf("agent %q: stdin pipe: %w", a.cfg.Name, err)
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		return fmt.Errorf("agent %q: stdout pipe: %w", a.cfg.Name, err)
	}
	errR, errW, err := os.Pipe()
	if err != nil {
		outR.Close()
		outW.Close()
		return fmt.Errorf("agent %q: stderr pipe: %w", a.cfg.Name, err)
	}
	cmd.Stdout, cmd.Stderr = outW, errW
	if err := cmd.Start(); err != nil {
		for _, f := range []*os.File{outR, outW, errR, errW} {
			f.Close()
		}
		return fmt.Errorf("start agent %q (%s): %w", a.cfg.Name, strings.Join(a.cfg.Command, " "), err)
	}
	outW.Close()
	errW.Close()
	a.cmd, a.stdin, a.stdout, a.stderr = cmd, stdin, outR, errR
	// Read before the process can be reaped (see termhost's SessionStarted).
	st, _ := procstat.Read(strconv.Itoa(cmd.Process.Pid))
	a.tree = procstat.Tree{Leader: cmd.Process.Pid, Since: st.Start, Marker: a.marker}
	if fn := a.opts.ProcessStarted; fn != nil {
		fn(cmd.Process.Pid, a.marker)
	}
	a.log.Info("agent started", "pid", cmd.Process.Pid, "command", a.cfg.Command)
	go a.readStderr()
	go func() {
		a.waitErr = cmd.Wait()
		close(a.exited)
	}()
	return nil
}

// nonJSONLine logs a line the agent wrote to stdout that is not JSON-RPC
// (agents that print banners or debug output there) and tells the user of
// the first one; the line is skipped and the session goes on.
func (a *Agent) nonJSONLine(line []byte) {
	n := a.nonJSON.Add(1)
	text := truncateForLog(line)
	a.log.Warn("agent wrote a line to stdout that is not JSON-RPC; ignored", "line", text, "count", n)
	if n == 1 && a.opts.Notice != nil {
		a.opts.Notice(fmt.Sprintf("agent %q wrote a line to stdout that is not JSON-RPC; it was ignored and the session goes on (further ones only in the log): %q", a.cfg.Name, text))
	}
}

// otherNotification reports whether a notification the agent sent
// (not session/update) is one we do not handle, and so takes it out of
// the stream with a debug line: an agent's extension notifications
// (Qwen Code's qwen/notify/session/mode-update) are for clients that
// know them, and ACP has a client ignore them; the SDK would log each as
// an error. "_"-prefixed ones and the protocol's own ($/…) go on to the
// SDK, which ignores or handles them.
func (a *Agent) otherNotification(method string) bool {
	if _, ok := a.table[method]; ok || strings.HasPrefix(method, "_") || strings.HasPrefix(method, "$/") {
		return false
	}
	a.log.Debug("agent notification not handled; ignored", "method", method)
	return true
}

// readStderr copies the agent's stderr to the log, line by line, keeping
// the last lines for the exit message.
func (a *Agent) readStderr() {
	defer close(a.stderrEOF)
	splitLines(a.stderr, func(line string) {
		a.tail.add(line)
		a.log.Info("agent stderr", "line", line)
	})
}

// watch waits for the process to exit, the connection to drop or Close,
// makes sure the process is gone and the connection drained, and ends the
// agent.
func (a *Agent) watch() {
	grace := a.opts.StopGrace
	select {
	case <-a.exited:
	case <-a.conn.Done():
	case <-a.closeReq:
	}
	a.stopProcess(grace)
	// Let the connection read what the agent wrote before it died; a child
	// holding stdout open must not keep us waiting.
	select {
	case <-a.conn.Done():
	case <-time.After(grace):
		a.stdout.Close()
		<-a.conn.Done()
	}
	a.killGroupLeftovers(grace)
	if fn := a.opts.ProcessEnded; fn != nil {
		fn(a.cmd.Process.Pid)
	}
	select {
	case <-a.stderrEOF:
	case <-time.After(500 * time.Millisecond):
	}
	a.stdout.Close()
	a.stderr.Close()

	a.mu.Lock()
	closing := a.closing
	a.mu.Unlock()
	var err error
	if !closing {
		err = a.exitError()
		a.log.Error("agent ended", "err", err)
	} else {
		a.log.Info("agent stopped", "exit", a.cmd.ProcessState.String())
	}
	a.finish(err)
}

// stopProcess waits up to grace for the process to exit (an agent exits
// when its stdin closes), then sends SIGTERM to its group, and SIGKILL after
// another grace.
func (a *Agent) stopProcess(grace time.Duration) {
	pid := a.cmd.Process.Pid
	for i, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGKILL} {
		wait := grace
		if i == 0 && a.urgent.Load() {
			wait = 0
		}
		select {
		case <-a.exited:
			return
		case <-time.After(wait):
		}
		a.log.Info("signalling agent", "signal", termhost.SignalName(sig))
		_ = syscall.Kill(-pid, sig)
	}
	<-a.exited
}

// killGroupLeftovers stops processes the agent forked into its group and
// left behind, and those that left the group but carry its marker.
func (a *Agent) killGroupLeftovers(grace time.Duration) {
	signal := func(sig syscall.Signal) bool {
		groups, err := a.tree.Groups()
		if err != nil {
			groups = []int{a.cmd.Process.Pid}
		}
		for _, g := range groups {
			_ = syscall.Kill(-g, sig)
		}
		return len(groups) > 0
	}
	if !signal(syscall.SIGTERM) {
		return
	}
	deadline := time.Now().Add(grace)
	for time.Now().Before(deadline) {
		if groups, err := a.tree.Groups(); err == nil && len(groups) == 0 {
			return
		}
		time.Sleep(20 * time.Millisecond) // polling: a group has no wait handle
	}
	signal(syscall.SIGKILL)
}

// exitError describes how the process ended.
func (a *Agent) exitError() *ExitError {
	e := &ExitError{Agent: a.cfg.Name, Stderr: a.tail.lines()}
	ps := a.cmd.ProcessState
	if ps == nil {
		return e
	}
	if ws, ok := ps.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		e.Signal = termhost.SignalName(ws.Signal())
		return e
	}
	code := ps.ExitCode()
	e.Code = &code
	return e
}
