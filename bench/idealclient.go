//go:build linux

package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/agentrun/agentrun.nvim/internal/demoagent"
	"github.com/agentrun/agentrun.nvim/termhost"
)

// The ideal client is the floor for terminal/output's latency: the same
// demo agent, spawned the same way, answered by a minimal ACP client on
// raw newline-delimited JSON-RPC whose terminal/output answer is built
// once in advance. What it measures is only reading the request and
// writing ~1 MB into the agent's pipe, i.e. the pipe and the agent
// draining it; whatever ours takes beyond that is our own code.

// idealPipeSize is what acp grows the agent's stdin pipe to (bigtext.go).
const idealPipeSize = 1 << 20

// prebuildOutput runs cmd through termhost with the demo agent's byte
// limit, as our client would, and returns terminal/output's result for
// it, encoded once, and the retained text's length.
func prebuildOutput(dir, cmd string) ([]byte, int, error) {
	host := termhost.NewHost(termhost.Options{})
	defer host.Close()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	t, err := host.Create(ctx, termhost.Spec{Command: cmd, Shell: true, Dir: dir, ByteLimit: new(int(demoagent.DefaultOutputByteLimit))})
	if err != nil {
		return nil, 0, err
	}
	defer t.Release()
	st, err := t.Wait(ctx)
	if err != nil {
		return nil, 0, err
	}
	if st.Code == nil || *st.Code != 0 {
		return nil, 0, fmt.Errorf("%q did not exit 0: %+v", cmd, st)
	}
	out := t.Output()
	b, err := json.Marshal(struct {
		Output     string         `json:"output"`
		Truncated  bool           `json:"truncated"`
		ExitStatus map[string]any `json:"exitStatus"`
	}{out.Text, out.Truncated, map[string]any{"exitCode": 0, "signal": nil}})
	return b, len(out.Text), err
}

// idealClient speaks ACP to one demo agent over its pipes, on one
// goroutine: a call writes its request, then reads and answers the
// agent until its response comes.
type idealClient struct {
	cmd    *exec.Cmd
	stdin  *os.File
	stdout *os.File
	in     *bufio.Reader
	stderr bytes.Buffer
	nextID int
	// answer is terminal/output's response up to its id; the id and "}\n"
	// are appended in its spare capacity, so every answer is one Write of
	// bytes already in memory.
	answer []byte
	text   strings.Builder // the agent's message chunks
	took   []time.Duration // request parsed → last byte written
	writes []time.Duration // of which inside Write
}

// measureIdealLatency runs "!outputlat n cmd" against the ideal client,
// answering terminal/output with result (from prebuildOutput).
func measureIdealLatency(dir string, n int, cmd string, result []byte) (res outputLatency, err error) {
	c := &idealClient{}
	c.answer = append([]byte(`{"jsonrpc":"2.0","result":`), result...)
	c.answer = append(c.answer, `,"id":`...)
	c.answer = append(make([]byte, 0, len(c.answer)+64), c.answer...)
	if err := c.start(filepath.Join(dir, "bin/agentrun"), "demo-agent"); err != nil {
		if c.stdin != nil { // started, but its pipe would not grow
			c.close()
		}
		return res, err
	}
	defer func() {
		c.close() // after which stderr is complete and ours to read
		if err != nil && c.stderr.Len() > 0 {
			err = fmt.Errorf("%w (agent's stderr: %q)", err, c.stderr.String())
		}
	}()
	deadline := time.Now().Add(2 * time.Minute)
	_ = c.stdin.SetWriteDeadline(deadline)
	_ = c.stdout.SetReadDeadline(deadline)

	if _, err := c.call("initialize", map[string]any{
		"protocolVersion":    1,
		"clientCapabilities": map[string]any{"fs": map[string]bool{"readTextFile": false, "writeTextFile": false}, "terminal": true},
		"clientInfo":         map[string]string{"name": "agentrun-bench-ideal", "version": "0"},
	}); err != nil {
		return res, err
	}
	r, err := c.call("session/new", map[string]any{"cwd": dir, "mcpServers": []any{}})
	if err != nil {
		return res, err
	}
	var s struct {
		SessionID string `json:"sessionId"`
	}
	if err := json.Unmarshal(r, &s); err != nil || s.SessionID == "" {
		return res, fmt.Errorf("session/new answered %s", r)
	}
	if _, err := c.call("session/prompt", map[string]any{
		"sessionId": s.SessionID,
		"prompt":    []any{map[string]string{"type": "text", "text": fmt.Sprintf("!outputlat %d %s", n, cmd)}},
	}); err != nil {
		return res, err
	}
	if res, err = parseOutputlat(c.text.String()); err != nil {
		return res, err
	}
	res.took, res.writing = c.took, c.writes
	if len(res.took) != res.calls {
		return res, fmt.Errorf("ideal client answered %d terminal/output for %d calls", len(res.took), res.calls)
	}
	return res, nil
}

// start spawns the agent as acp does (own process group, own pipes) and
// grows its stdin pipe to 1 MiB through SyscallConn: Fd would turn the
// file blocking and take its writes off Go's poller.
func (c *idealClient) start(argv ...string) error {
	c.cmd = exec.Command(argv[0], argv[1:]...)
	c.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	inR, inW, err := os.Pipe()
	if err != nil {
		return err
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		inR.Close()
		inW.Close()
		return err
	}
	c.cmd.Stdin, c.cmd.Stdout, c.cmd.Stderr = inR, outW, &c.stderr
	if err := c.cmd.Start(); err != nil {
		for _, f := range []*os.File{inR, inW, outR, outW} {
			f.Close()
		}
		return fmt.Errorf("start the demo agent: %w", err)
	}
	inR.Close()
	outW.Close()
	c.stdin, c.stdout, c.in = inW, outR, bufio.NewReaderSize(outR, 64<<10)
	rc, err := inW.SyscallConn()
	if err != nil {
		return err
	}
	var perr error
	if err := rc.Control(func(fd uintptr) {
		if _, _, e := syscall.Syscall(syscall.SYS_FCNTL, fd, syscall.F_SETPIPE_SZ, idealPipeSize); e != 0 {
			perr = e
		}
	}); err != nil {
		return err
	}
	if perr != nil {
		return fmt.Errorf("grow the agent's stdin pipe: %w", perr)
	}
	return nil
}

// close ends the agent: EOF on its stdin, then its whole group if it
// does not exit on its own.
func (c *idealClient) close() {
	c.stdin.Close()
	done := make(chan struct{})
	go func() { _ = c.cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		_ = syscall.Kill(-c.cmd.Process.Pid, syscall.SIGKILL)
		<-done
	}
	c.stdout.Close()
}
