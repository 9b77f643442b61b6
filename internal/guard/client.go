package guard

import (
	"fmt"
	"io"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// Client is the backend's end of a running guard: Register and
// Unregister queue lines and return at once (a goroutine writes them),
// so a terminal's start or cleanup never waits on the pipe.
type Client struct {
	cmd  *exec.Cmd
	w    io.WriteCloser
	logf func(format string, args ...any)

	mu      sync.Mutex
	pending []string
	sent    int // lines the guard has been written (tests wait on it)
	closing bool
	wake    chan struct{} // capacity 1: the writer has lines to send
	written chan struct{} // closed when the writer has ended
	exited  chan struct{} // closed when the guard process was reaped
}

// Start starts cmd (the guard: `agentrun guard`) with its stdin a pipe
// that only the returned Client holds, in a process group of its own so
// that a signal to the backend's group does not reach it. The caller
// sets cmd's path, arguments and where its output goes. logf (nil:
// discard) receives write failures.
func Start(cmd *exec.Cmd, logf func(format string, args ...any)) (*Client, error) {
	if logf == nil {
		logf = func(string, ...any) {}
	}
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Setpgid = true
	w, err := cmd.StdinPipe()
	if err != nil {
		return nil, fmt.Errorf("guard: %w", err)
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start guard: %w", err)
	}
	c := &Client{
		cmd:     cmd,
		w:       w,
		logf:    logf,
		wake:    make(chan struct{}, 1),
		written: make(chan struct{}),
		exited:  make(chan struct{}),
	}
	go c.writeLoop()
	go func() {
		_ = cmd.Wait()
		close(c.exited)
	}()
	return c, nil
}

// Pid returns the guard's process id.
func (c *Client) Pid() int { return c.cmd.Process.Pid }

// Register tells the guard that a terminal's session, led by pid, has
// started, and the environment entry marker ("NAME=value", "" for none)
// its processes carry, also those that leave the session. Call it before
// the leader can be reaped: its start time, which tells a reused pid
// apart, is read from /proc now.
func (c *Client) Register(pid int, marker string) error {
	if strings.ContainsAny(marker, " \n") {
		return fmt.Errorf("guard: register session %d: marker %q has a space or newline", pid, marker)
	}
	start, err := startTime(pid)
	if err != nil {
		return fmt.Errorf("guard: register session %d: %w", pid, err)
	}
	line := "+" + strconv.Itoa(pid) + " " + strconv.FormatUint(start, 10)
	if marker != "" {
		line += " " + marker
	}
	c.send(line)
	return nil
}

// Unregister tells the guard that session pid has no process left.
func (c *Client) Unregister(pid int) {
	c.send("-" + strconv.Itoa(pid))
}

// send queues a line for the writer; after Close it does nothing.
func (c *Client) send(line string) {
	c.mu.Lock()
	if c.closing {
		c.mu.Unlock()
		return
	}
	c.pending = append(c.pending, line)
	c.mu.Unlock()
	select {
	case c.wake <- struct{}{}:
	default:
	}
}

// writeLoop writes the queued lines in order until Close; after Close
// it writes "bye" and closes the pipe. A failed write (the guard died)
// is logged once and the lines are dropped from then on.
func (c *Client) writeLoop() {
	defer close(c.written)
	failed := false
	for {
		<-c.wake
		c.mu.Lock()
		lines, closing := c.pending, c.closing
		c.pending = nil
		c.mu.Unlock()
		if closing {
			lines = append(lines, "bye")
		}
		if !failed && len(lines) > 0 {
			buf := make([]byte, 0, 32*len(lines))
			for _, l := range lines {
				buf = append(append(buf, l...), '\n')
			}
			if _, err := c.w.Write(buf); err != nil {
				failed = true
				c.logf("guard: writing to the guard (pid %d) failed; terminals are no longer registered: %v", c.Pid(), err)
			} else {
				c.mu.Lock()
				c.sent += len(lines)
				c.mu.Unlock()
			}
		}
		if closing {
			_ = c.w.Close()
			return
		}
	}
}

// Close tells the guard the backend cleaned up itself ("bye"), closes the
// pipe, and waits up to timeout for the guard to exit. Call it once
// every terminal is gone.
func (c *Client) Close(timeout time.Duration) error {
	c.mu.Lock()
	already := c.closing
	c.closing = true
	c.mu.Unlock()
	if !already {
		select {
		case c.wake <- struct{}{}:
		default:
		}
	}
	timer := time.NewTimer(timeout)
	defer timer.Stop()
	select {
	case <-c.written:
	case <-timer.C:
		return fmt.Errorf("guard: the pipe to the guard (pid %d) is still not written after %v", c.Pid(), timeout)
	}
	select {
	case <-c.exited:
	case <-timer.C:
		return fmt.Errorf("guard: the guard (pid %d) has not exited %v after bye", c.Pid(), timeout)
	}
	if st := c.cmd.ProcessState; st != nil && !st.Success() {
		return fmt.Errorf("guard: the guard (pid %d) ended: %v", c.Pid(), st)
	}
	return nil
}
