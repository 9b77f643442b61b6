package tests

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"strings"
	"sync"
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
	mu   sync.Mutex
	cmd  *exec.Cmd
	in   io.WriteCloser
	out  *bufio.Reader
	dead error // set once the client failed or ended: reads go back to a tmux process each
}

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
	c := &tmuxCtl{cmd: cmd, in: in, out: bufio.NewReaderSize(out, 1<<16)}
	go func() { _ = cmd.Wait() }()
	const sync = "agentrun-tests-ctl-ready"
	if _, err := c.run("refresh-client -f no-output"); err != nil {
		c.close()
		return nil, err
	}
	got, err := c.run("display-message -p " + sync)
	for err == nil && strings.TrimSpace(got) != sync {
		// the replies so far were to the attach (read as the first command's)
		got, err = c.read()
	}
	if err != nil {
		c.close()
		return nil, err
	}
	return c, nil
}

// run sends one tmux command line and returns its output.
func (c *tmuxCtl) run(line string) (string, error) {
	if _, err := io.WriteString(c.in, line+"\n"); err != nil {
		return "", err
	}
	return c.read()
}

// read returns the output of the next reply block (%begin … %end),
// skipping the notifications between blocks.
func (c *tmuxCtl) read() (string, error) {
	var begin []string
	var b strings.Builder
	for {
		line, err := c.out.ReadString('\n')
		if err != nil {
			return "", fmt.Errorf("the tmux control client ended: %w", err)
		}
		line = strings.TrimSuffix(line, "\n")
		if begin == nil {
			if strings.HasPrefix(line, "%begin ") {
				begin = strings.Fields(line)
			} else if line == "%exit" || strings.HasPrefix(line, "%exit ") {
				return "", errors.New("the tmux control client exited")
			}
			continue
		}
		// the block ends with %end or %error and the same time, number
		// and flags as its %begin (a line of the pane reading "%end"
		// does not)
		if f := strings.Fields(line); len(f) == 4 && (f[0] == "%end" || f[0] == "%error") && strings.Join(f[1:], " ") == strings.Join(begin[1:], " ") {
			if f[0] == "%error" {
				return "", fmt.Errorf("tmux: %s", strings.TrimSpace(b.String()))
			}
			return b.String(), nil
		}
		b.WriteString(line)
		b.WriteByte('\n')
	}
}

// capture returns what the pane shows, as capture-pane -p prints it; an
// error when the client is gone (the caller reads another way).
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
}
