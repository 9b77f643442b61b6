package sshlink

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"time"
)

// BackendServe is the remote subcommand that runs agentrun's Neovim
// backend on another machine (`agentrun serve-backend`): it writes the
// hello line, then serves Neovim's msgpack-RPC on its stdio, which ssh
// joins to the local Neovim through `agentrun ssh-backend`.
const BackendServe = "serve-backend"

// WriteBackendHello writes serve-backend's hello line to out: the one
// line before the backend's RPC stream. lingering is Hello.Lingering (0
// for a new backend).
func WriteBackendHello(out io.Writer, version string, lingering int) error {
	b, _ := json.Marshal(Hello{Agentrun: BackendServe, Version: version, Protocol: Protocol, Lingering: lingering})
	_, err := out.Write(append(b, '\n'))
	return err
}

// Backend is a running `ssh host agentrun serve-backend` whose hello was
// read: what follows on its stdio is the remote backend's RPC stream.
type Backend struct {
	l *Link
	r *bufio.Reader
}

// ErrNothingLingers is DialBackend's error when resume found no backend
// of the user's lingering on t (RunBackend exits with ExitNothingLingers).
var ErrNothingLingers = errors.New("nothing lingers")

// ExitNothingLingers is `agentrun ssh-backend --resume`'s exit status when
// no backend lingers there: Neovim then starts a new one.
const ExitNothingLingers = 3

// DialBackend starts agentrun's backend on t over SSH (batch: ssh never
// asks for anything) and checks that it is version. With resume it joins
// the backend there whose link dropped instead (pid 0: the newest),
// or fails with ErrNothingLingers. Its errors are sentences for the user,
// as Dial's.
func DialBackend(ctx context.Context, t Target, version string, resume bool, pid int) (*Backend, error) {
	var args []string
	if resume {
		args = append(args, "--resume", strconv.Itoa(pid))
	}
	l, r, err := handshake(ctx, t, version, true, BackendServe, args...)
	if err != nil {
		return nil, err
	}
	if resume && l.lingering <= 0 {
		l.Close()
		return nil, fmt.Errorf("no agent session of yours lingers on %s: %w", t, ErrNothingLingers)
	}
	return &Backend{l: l, r: r}, nil
}

// Relay joins the remote backend's RPC stream to in and out (Neovim's
// channel) until ssh ends, or ctx ends (then the remote backend's input
// is closed, so it stops its agents and terminals, and ssh is given a
// few seconds to end). The error says how the link ended, for a person;
// nil when in ended first (Neovim closed the channel) and ssh then
// exited cleanly.
func (b *Backend) Relay(ctx context.Context, in io.Reader, out io.Writer) error {
	inDone := make(chan struct{})
	go func() {
		_, _ = io.Copy(b.l.stdin, in)
		b.l.stdin.Close()
		close(inDone)
	}()
	outDone := make(chan error, 1)
	go func() {
		_, err := io.Copy(out, b.r)
		outDone <- err
	}()
	select {
	case <-outDone:
	case <-ctx.Done():
		b.l.stdin.Close()
		select {
		case <-outDone:
		case <-time.After(10 * time.Second):
		}
	}
	waitErr := b.l.wait(10 * time.Second)
	select {
	case <-inDone:
		if waitErr == nil {
			return nil
		}
	default:
	}
	if ctx.Err() != nil {
		return nil
	}
	why := lastLine(b.l.stderr.String())
	if why == "" {
		why = exitOf(waitErr)
	}
	if waitErr == nil {
		why = "the backend there ended"
	}
	return fmt.Errorf("the link to %s ended (%s)", b.l.target, why)
}

// RunBackend is `agentrun ssh-backend URL`, what Neovim starts for a
// remote backend: it reaches URL's machine and relays Neovim's stdio to
// the backend there until either side ends. An error is said on stderr
// (Neovim shows it) and makes the exit status 1.
func RunBackend(ctx context.Context, url, version string, resume bool, pid int) error {
	t, _, err := Parse(url) // a directory after the host is Lua's (the sessions' cwd)
	if err != nil {
		return err
	}
	b, err := DialBackend(ctx, t, version, resume, pid)
	if err != nil {
		return err
	}
	err = b.Relay(ctx, os.Stdin, os.Stdout)
	if errors.Is(err, context.Canceled) {
		return nil
	}
	return err
}
