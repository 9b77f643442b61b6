package sshlink

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"strconv"
	"sync"
	"time"
)

// Ports of commands on another machine are reached from here by
// `agentrun ssh-forward URL PORT` (RunForward), a process of its own that
// Neovim starts per forwarded port: it listens on 127.0.0.1 here (PORT
// itself when it is free, else a port the system picks), says the port
// on its first line of output, and relays each connection made to it
// through an ssh of its own running `agentrun serve-port PORT` there
// (ServePort), which connects to the port on that machine's loopback.
// Nothing of the relay runs in Neovim (whose loop a hit-enter prompt
// stops) or in the link to the backend (which a forward neither slows
// nor outlives): ssh's own flow control paces both directions. It ends
// when its input does (Neovim stops the forward, or is gone).

// ForwardServe is the far end's subcommand of a forward's connection.
const ForwardServe = "serve-port"

// RunForward is `agentrun ssh-forward URL PORT`. Its output is lines:
// "listening LOCALPORT" first, then "error SENTENCE" for a connection
// that could not be relayed (Neovim says it).
func RunForward(ctx context.Context, in io.Reader, out io.Writer, url string, port int) error {
	t, _, err := Parse(url)
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(port)))
	if err != nil {
		ln, err = net.Listen("tcp", "127.0.0.1:0") // port is taken here
		if err != nil {
			return fmt.Errorf("port %d on %s cannot be forwarded: no port to listen on here (%w)", port, t, err)
		}
	}
	defer ln.Close()
	var mu sync.Mutex // out
	say := func(format string, a ...any) {
		mu.Lock()
		defer mu.Unlock()
		fmt.Fprintf(out, format+"\n", a...)
	}
	say("listening %d", ln.Addr().(*net.TCPAddr).Port)
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	go func() {
		_, _ = io.Copy(io.Discard, in) // the end of our input ends the forward
		cancel()
	}()
	go func() {
		<-ctx.Done() // input ended, or a signal
		ln.Close()
	}()
	var wg sync.WaitGroup
	defer wg.Wait()
	for {
		c, err := ln.Accept()
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			return fmt.Errorf("forwarding port %d of %s stopped: %w", port, t, err)
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			if why := relayPort(ctx, t, port, c); why != "" {
				say("error %s", why)
			}
		}()
	}
}

// relayPort relays connection c to port on t through an ssh running
// serve-port there; it returns why it failed, "" when it did not.
func relayPort(ctx context.Context, t Target, port int, c net.Conn) string {
	defer c.Close()
	cmd := exec.CommandContext(ctx, "ssh", sshArgs(t, true, RemoteCommand+ForwardServe+" "+strconv.Itoa(port))...)
	cmd.SysProcAttr = sshAttr(true)
	stderr := &tailBuffer{}
	cmd.Stderr = stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return fmt.Sprintf("port %d on %s cannot be forwarded: %v", port, t, err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return fmt.Sprintf("port %d on %s cannot be forwarded: %v", port, t, err)
	}
	if err = cmd.Start(); err == nil {
		go func() {
			_, _ = io.Copy(stdin, c) // the browser's bytes, for the server
			stdin.Close()
		}()
		if _, cerr := io.Copy(c, stdout); cerr != nil {
			_ = cmd.Process.Kill() // the browser is gone
		}
		if tc, ok := c.(*net.TCPConn); ok {
			_ = tc.CloseWrite()
		}
		err = cmd.Wait()
	}
	if err == nil || ctx.Err() != nil {
		return ""
	}
	if errors.Is(err, exec.ErrNotFound) {
		return fmt.Sprintf("ssh is not installed here, and agentrun reaches %s with it: install OpenSSH's client (ssh)", t)
	}
	if line := lastLine(stderr.String()); line != "" {
		return fmt.Sprintf("port %d on %s: %s", port, t, line)
	}
	return fmt.Sprintf("port %d on %s could not be reached (%s)", port, t, exitOf(err))
}

// ServePort is `agentrun serve-port PORT`, a forward's far end: it
// connects to port on this machine's loopback and relays it to in and
// out until either side ends.
func ServePort(ctx context.Context, in io.Reader, out io.Writer, port int) error {
	d := net.Dialer{Timeout: 10 * time.Second}
	c, err := d.DialContext(ctx, "tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(port)))
	if err != nil {
		c6, err6 := d.DialContext(ctx, "tcp", net.JoinHostPort("::1", strconv.Itoa(port)))
		if err6 != nil {
			host, _ := os.Hostname()
			return fmt.Errorf("nothing accepts connections on port %d on %s now", port, host)
		}
		c = c6
	}
	defer c.Close()
	go func() {
		_, _ = io.Copy(c, in)
		if tc, ok := c.(*net.TCPConn); ok {
			_ = tc.CloseWrite()
		}
	}()
	_, _ = io.Copy(out, bufio.NewReader(c))
	return nil
}
