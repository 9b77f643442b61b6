package sshlink

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/neovim/go-client/nvim"
)

// BackendServe is the remote subcommand that runs agentrun's Neovim
// backend on another machine (`agentrun serve-backend`): it writes the
// hello line, then serves Neovim's msgpack-RPC on its stdio, which ssh
// joins to the local Neovim through `agentrun ssh-backend`.
const BackendServe = "serve-backend"

// WriteBackendHello writes serve-backend's hello line to out: the one
// line before the backend's RPC stream. lingering is Hello.Lingering (0
// for a new backend); pid is the backend's process id (0: none).
func WriteBackendHello(out io.Writer, version string, lingering, pid int) error {
	b, _ := json.Marshal(Hello{Agentrun: BackendServe, Version: version, Protocol: Protocol, Lingering: lingering, PID: pid})
	_, err := out.Write(append(b, '\n'))
	return err
}

// Backend is a running `ssh host agentrun serve-backend` whose hello was
// read: what follows on its stdio is the remote backend's RPC stream.
type Backend struct {
	l *Link
	r *bufio.Reader
}

// ErrNothingLingers says that no backend of the user's lingers (waits
// for a link), or not the one asked for: DialBackend's error when resume
// found none on t, and editor.DialLingering's on this machine (which
// serve-backend --resume reports as Lingering -1).
var ErrNothingLingers = errors.New("nothing lingers")

// DialBackend starts agentrun's backend on t over SSH (batch: ssh never
// asks for anything) and checks that it is version. mode "resume" joins
// the backend there whose link dropped instead (pid 0: the newest), or
// fails with ErrNothingLingers; "resume-or-new" joins it if there is one,
// else starts a new one (Lingering says which). Its errors are sentences
// for the user, as dial's.
func DialBackend(ctx context.Context, t Target, version, mode string, pid int) (*Backend, error) {
	var args []string
	if mode != "" {
		args = append(args, "--"+mode, strconv.Itoa(pid))
	}
	l, r, err := handshake(ctx, t, version, true, BackendServe, args...)
	if err != nil {
		return nil, err
	}
	if mode == "resume" && l.lingering <= 0 {
		l.Close()
		return nil, fmt.Errorf("no agent session of yours waits on %s: %w", t, ErrNothingLingers)
	}
	return &Backend{l: l, r: r}, nil
}

// Relay joins the remote backend's RPC stream to in and out (Neovim's
// channel) until ssh ends, or ctx ends (then the remote backend's input
// is closed, as a dropped link's, and ssh is given a second to end before
// it is killed: Neovim kills its jobs soon after it asks them to end). When in ends first (Neovim closed the channel, or
// died), ssh is given relayGrace to end and then killed: a backend there
// left waiting for a new link keeps ssh's session open. The error says
// how the link ended, for a person; nil when in ended first.
func (b *Backend) Relay(ctx context.Context, in io.Reader, out io.Writer) error {
	bc := newBeatConn(b.r, b.l.stdin)
	inDone := make(chan struct{})
	go func() {
		_, _ = io.Copy(bc, in)
		bc.CloseWrite()
		close(inDone)
	}()
	outDone := make(chan error, 1)
	go func() {
		_, err := io.Copy(out, bc)
		outDone <- err
	}()
	select {
	case <-outDone:
	case <-inDone:
		// Neovim is gone (it quit, or was killed): a backend it shut
		// down ends and ssh with it; one left waiting for a new link
		// (its sessions go on) keeps ssh's session open, which is ours
		// to end.
		select {
		case <-outDone:
		case <-time.After(relayGrace):
		}
	case <-ctx.Done():
		// We are asked to end (Neovim, quitting or dying, ends its
		// jobs, and kills what is left soon after): the backend there
		// is told by the end of its input, and ssh goes at once if it
		// does not end by itself (a backend left waiting for a new link
		// keeps ssh's session open).
		bc.CloseWrite()
		select {
		case <-outDone:
		case <-time.After(time.Second):
		}
		_ = b.l.cmd.Process.Kill()
	}
	if errors.Is(bc.Err(), ErrSilent) {
		// Nothing came for beatSilence (the network went away without
		// a word): ssh may wait much longer to notice.
		_ = b.l.cmd.Process.Kill()
	}
	waitErr := b.l.wait(relayGrace)
	select {
	case <-inDone:
		return nil // Neovim went first: nobody is left to tell
	default:
	}
	if ctx.Err() != nil {
		return nil
	}
	why := lastLine(b.l.stderr.String())
	if why == "" {
		why = exitOf(waitErr)
	}
	if bc.Err() == nil && b.l.backend > 0 && b.gone(ctx) {
		return fmt.Errorf("the agentrun backend on %s is gone (killed, or it failed: its log there is ~/.local/state/agentrun/remote-backend.log)", b.l.target)
	}
	if err := bc.Err(); errors.Is(err, ErrSilent) && !strings.Contains(why, "not responding") {
		// ssh's own words when it gave up first ("Timeout, server …
		// not responding."), else ours
		why = fmt.Sprintf("nothing came from there for %d s", int(beatSilence/time.Second))
	} else if waitErr == nil {
		why = "the backend there ended"
	}
	return fmt.Errorf("the link to %s ended (%s)", b.l.target, why)
}

// gone reports whether the backend this link reached is known to be
// gone from its machine: a new link there (a few seconds at most) finds
// no host of its process id. A machine that cannot be reached now says
// nothing (false).
func (b *Backend) gone(ctx context.Context) bool {
	ctx, cancel := context.WithTimeout(ctx, 8*time.Second)
	defer cancel()
	l, err := dial(ctx, b.l.target, b.l.version, true)
	if err != nil {
		return false
	}
	defer l.Close()
	pids, err := l.Hosts(ctx)
	return err == nil && !slices.Contains(pids, b.l.backend)
}

// relayGrace is how long ssh may take to end once Neovim has: the
// backend there shuts down at once when asked to (Neovim asks before it
// quits), so this is only waited when the backend stays (then ssh is
// killed).
const relayGrace = 3 * time.Second

// RunBackend is `agentrun ssh-backend URL`, what Neovim starts for a
// remote backend: it reaches URL's machine and relays Neovim's stdio to
// the backend there until either side ends. An error is said on stderr
// (Neovim shows it) and makes the exit status 1.
func RunBackend(ctx context.Context, url, version, mode string, pid int) error {
	t, _, err := Parse(url) // a directory after the host is Lua's (the sessions' cwd)
	if err != nil {
		return err
	}
	if mode == "end" {
		return endBackend(ctx, t, version, pid)
	}
	if mode == "resume-or-new" {
		// what a Neovim that quit left to end there goes first: no new
		// link takes it up
		err := endPending(t, func(p int) error {
			ended, err := endBackendOf(ctx, t, version, p)
			if ended {
				// said by Neovim (rpc.lua: a note, not an error)
				fmt.Fprintf(os.Stderr, "agentrun: note: ended the agent sessions on %s that a Neovim left running there when it quit while the link was down\n", t)
			}
			return err
		})
		if err != nil {
			return err
		}
	}
	b, err := DialBackend(ctx, t, version, mode, pid)
	if err != nil {
		return err
	}
	err = b.Relay(ctx, os.Stdin, os.Stdout)
	if errors.Is(err, context.Canceled) {
		return nil
	}
	return err
}

// endBackend joins the backend on t whose link dropped and asks it to shut
// down, as Neovim does when it quits: `ssh-backend URL --end PID`, which a
// Neovim quitting while its link is down leaves running. When t cannot be
// reached, the end is kept (keepPending) for the next link there to do;
// when nothing of pid waits there any more, there is nothing to end.
func endBackend(ctx context.Context, t Target, version string, pid int) error {
	_, err := endBackendOf(ctx, t, version, pid)
	return err
}

// endBackendOf is endBackend, and says whether a backend was there to
// shut down.
func endBackendOf(ctx context.Context, t Target, version string, pid int) (bool, error) {
	b, err := DialBackend(ctx, t, version, "resume", pid)
	if errors.Is(err, ErrNothingLingers) {
		_ = dropPending(t, pid)
		return false, nil
	}
	if err != nil {
		if kerr := keepPending(t, pid); kerr != nil {
			return false, fmt.Errorf("%w; and its end could not be kept for later: %w", err, kerr)
		}
		return false, err
	}
	defer b.l.wait(10 * time.Second)
	bc := newBeatConn(b.r, b.l.stdin)
	v, err := nvim.New(bc, bc, bc, func(string, ...any) {})
	if err != nil {
		b.l.Close()
		_ = keepPending(t, pid)
		return false, fmt.Errorf("the backend on %s could not be asked to shut down: %w", t, err)
	}
	go func() { _ = v.Serve() }()
	err = v.Request("shutdown", nil)
	v.Close() // closes ssh's stdin: the backend, asked, ends
	if err != nil {
		_ = keepPending(t, pid)
		return false, fmt.Errorf("the backend on %s did not shut down: %w", t, err)
	}
	_ = dropPending(t, pid)
	return true, nil
}
