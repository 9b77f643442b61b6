package tests

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"strings"
	"sync"
	"time"
)

// tmuxCtl is one control-mode client (tmux -C) of a screen's tmux server,
// through which the screen is read while a test waits for it. A wait
// reads the screen every 10 ms: with a tmux process a read
// (fork, exec, connect) each read cost about 20 ms of CPU, so a waiting
// screen test kept a core busy and make test's parts starved each other;
// over the control client a read is a line written and a block read back.
// It asks tmux to send no pane output (refresh-client -f no-output) and
// does not change the window's size (a control client has none).
type tmuxCtl struct {
	mu      sync.Mutex
	cmd     *exec.Cmd
	in      io.WriteCloser
	replies chan ctlReply // the reply blocks, in order, as the reader goroutine parses them
	dead    error         // set once the client failed, ended or went silent: reads go back to a tmux process each
}

// ctlReply is one reply block's output, or why the client ended.
type ctlReply struct {
	out string
	err error
}

// ctlPatience is how long a reply may take: a client that does not
// answer within it is given up (reads go back to a tmux process each),
// never waited for (once, its first reply never came).
const ctlPatience = 5 * time.Second

// startTmuxCtl attaches a control client to the server at sock and syncs
// with it (the attach's own block and notifications are read past).
func startTmuxCtl(sock string) (*tmuxCtl, error) {
	cmd := exec.Command("tmux", "-S", sock, "-C", "attach-session")
	in, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	c := &tmuxCtl{cmd: cmd, in: in, replies: make(chan ctlReply, 64)}
	go c.readAll(bufio.NewReaderSize(out, 1<<16))
	const ready = "agentrun-tests-ctl-ready"
	if _, err := io.WriteString(in, "refresh-client -f no-output\ndisplay-message -p "+ready+"\n"); err != nil {
		c.close()
		return nil, err
	}
	// the replies before ours are the attach's
	deadline := time.After(ctlPatience)
	for {
		select {
		case r := <-c.replies:
			if r.err != nil {
				c.close()
				return nil, r.err
			}
			if strings.TrimSpace(r.out) == ready {
				return c, nil
			}
		case <-deadline:
			c.close()
			return nil, errors.New("the tmux control client did not answer")
		}
	}
}

// run sends one tmux command line and returns its output.
func (c *tmuxCtl) run(line string) (string, error) {
	if _, err := io.WriteString(c.in, line+"\n"); err != nil {
		return "", err
	}
	select {
	case r := <-c.replies:
		return r.out, r.err
	case <-time.After(ctlPatience):
		return "", fmt.Errorf("the tmux control client did not answer %q within %v", line, ctlPatience)
	}
}

// readAll parses the client's output into reply blocks (%begin … %end),
// skipping the notifications between them, until it ends.
func (c *tmuxCtl) readAll(out *bufio.Reader) {
	var begin []string
	var b strings.Builder
	for {
		line, err := out.ReadString('\n')
		if err != nil {
			c.give(ctlReply{err: fmt.Errorf("the tmux control client ended: %w", err)})
			return
		}
		line = strings.TrimSuffix(line, "\n")
		if begin == nil {
			if strings.HasPrefix(line, "%begin ") {
				begin = strings.Fields(line)
				b.Reset()
			} else if line == "%exit" || strings.HasPrefix(line, "%exit ") {
				c.give(ctlReply{err: errors.New("the tmux control client exited")})
				return
			}
			continue
		}
		// the block ends with %end or %error and the same time, number
		// and flags as its %begin (a line of the pane reading "%end"
		// does not)
		if f := strings.Fields(line); len(f) == 4 && (f[0] == "%end" || f[0] == "%error") && strings.Join(f[1:], " ") == strings.Join(begin[1:], " ") {
			r := ctlReply{out: b.String()}
			if f[0] == "%error" {
				r = ctlReply{err: fmt.Errorf("tmux: %s", strings.TrimSpace(b.String()))}
			}
			begin = nil
			c.give(r)
			continue
		}
		b.WriteString(line)
		b.WriteByte('\n')
	}
}

// give hands reply r to run, or drops it when nobody reads any more
// (the client was given up).
func (c *tmuxCtl) give(r ctlReply) {
	select {
	case c.replies <- r:
	default:
	}
}

// capture returns what the pane shows, as capture-pane -p prints it; an
// error when the client is gone or silent (the caller reads another way).
func (c *tmuxCtl) capture() (string, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.dead != nil {
		return "", c.dead
	}
	out, err := c.run("capture-pane -p -t 0")
	if err != nil {
		c.dead = err
		c.in.Close()
	}
	return out, err
}

// close ends the client.
func (c *tmuxCtl) close() {
	c.in.Close()
	if c.cmd.Process != nil {
		_ = c.cmd.Process.Kill()
	}
	_ = c.cmd.Wait()
}
