package editor

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"sync"
	"time"

	"github.com/agentrun/agentrun.nvim/ahp"
	"github.com/agentrun/agentrun.nvim/ahp/server"
	"github.com/agentrun/agentrun.nvim/internal/rundir"
	"github.com/agentrun/agentrun.nvim/termhost"
)

// The backend serves its terminals to other clients (a second Neovim,
// the agentrun CLI) on a socket of its own in the user's socket directory
// (package ahp/server, internal/rundir). Every backend is the host of the
// terminals it started: the pty stays with the process that reads it, so
// an agent's terminal/output and the display never cross a socket, and
// clients see all hosts by listing the directory.
//
// Lifetimes: when Neovim leaves, the backend ends its sessions and kills
// their terminals, as before, except the terminals the user detached
// (:AgentDetach, or taken over / :AgentShell with terminal.persist): for
// them it stays, serving the socket, until none of them runs and no
// client is connected. The guard still kills everything if the backend
// itself is killed.

// socketHost serves this backend's terminal host on its socket and keeps
// the terminals the user detached; it owns its state and lock.
type socketHost struct {
	log  *slog.Logger
	user ahp.Claim
	// socketPath names the socket (default: this process's in the user's
	// socket directory, internal/rundir).
	socketPath func() (string, error)

	mu       sync.Mutex
	server   *server.Server
	path     string
	stop     context.CancelFunc
	served   chan struct{}
	detached map[string]bool // terminal ids that outlive the editor
}

func newSocketHost(log *slog.Logger, user ahp.Claim) *socketHost {
	return &socketHost{
		log: log, user: user,
		socketPath: func() (string, error) {
			dir, err := rundir.Dir()
			if err != nil {
				return "", err
			}
			return rundir.Socket(dir, os.Getpid()), nil
		},
		detached: map[string]bool{},
	}
}

// serve starts serving h on the socket, and extensions: the agentrun/*
// methods it serves besides AHP (the MCP terminal tool's, internal/session/mcp.go). A
// socket that cannot be made is logged, not fatal: the editor works
// without it.
func (sh *socketHost) serve(h *termhost.Host, extensions map[string]func(context.Context, json.RawMessage) (any, error)) {
	path, err := sh.socketPath()
	if err != nil {
		sh.log.Warn("not serving terminals to other clients", "err", err)
		return
	}
	ln, err := server.Listen(path)
	if err != nil {
		sh.log.Warn("not serving terminals to other clients", "err", err)
		return
	}
	srv := server.New(h, server.Options{
		Local:      sh.user.ClientID,
		Extensions: extensions,
		Logf: func(format string, args ...any) {
			sh.log.Info(fmt.Sprintf(format, args...))
		},
	})
	ctx, stop := context.WithCancel(context.Background())
	done := make(chan struct{})
	sh.mu.Lock()
	sh.server, sh.path, sh.stop, sh.served = srv, path, stop, done
	sh.mu.Unlock()
	go func() {
		defer close(done)
		if err := srv.Serve(ctx, ln); err != nil {
			sh.log.Warn("terminal socket stopped", "err", err)
		}
		_ = os.Remove(path)
	}()
	sh.log.Info("serving terminals", "socket", path, "client_id", sh.user.ClientID)
}

// socket is the socket's path ("" when not serving).
func (sh *socketHost) socket() string {
	sh.mu.Lock()
	defer sh.mu.Unlock()
	return sh.path
}

// close closes the socket and waits for its connections to end.
func (sh *socketHost) close() {
	sh.mu.Lock()
	stop, done := sh.stop, sh.served
	sh.mu.Unlock()
	if stop != nil {
		stop()
		<-done
	}
}

// claimForUser gives terminal t to this editor's user, unless another
// client that is there holds it.
func (sh *socketHost) claimForUser(t *termhost.Terminal) error {
	sh.mu.Lock()
	srv := sh.server
	sh.mu.Unlock()
	if srv == nil {
		return t.Claims().Set(sh.user)
	}
	return srv.Claim(t, sh.user.ClientID)
}

// detach keeps terminal t running after Neovim quits ("detach"): the
// user takes it over (so the agent's release does not end it) and the
// backend stays to serve it until it ends.
func (sh *socketHost) detach(t *termhost.Terminal) (map[string]any, error) {
	if err := sh.claimForUser(t); err != nil {
		return nil, fmt.Errorf("detach terminal %q: %w", t.ID(), err)
	}
	sh.mu.Lock()
	sh.detached[t.ID()] = true
	srv := sh.server
	sh.mu.Unlock()
	sh.log.Info("terminal detached", "terminal", t.ID())
	return map[string]any{"id": t.ID(), "host": os.Getpid(), "served": srv != nil}, nil
}

// detachedTerminals returns h's live terminals the user detached.
func (sh *socketHost) detachedTerminals(h *termhost.Host) []*termhost.Terminal {
	sh.mu.Lock()
	defer sh.mu.Unlock()
	var out []*termhost.Terminal
	for _, t := range h.Terminals() {
		if sh.detached[t.ID()] && t.Claims().Holder() == sh.user {
			out = append(out, t)
		}
	}
	return out
}

// linger serves the detached terminals after Neovim left, until none of
// them runs and no client is connected, or ctx ends (a signal).
func (sh *socketHost) linger(ctx context.Context, keep []*termhost.Terminal) {
	sh.mu.Lock()
	srv := sh.server
	sh.mu.Unlock()
	if srv == nil {
		return
	}
	srv.LocalGone()
	for _, t := range keep {
		// Its holder left: nobody holds it now (not the editor that quit).
		if _, err := t.Claims().CompareAndSwap(sh.user, ahp.Claim{Kind: ahp.ClaimClient, ClientID: ahp.DetachedClient}); err != nil {
			sh.log.Debug("detached terminal keeps its claim", "terminal", t.ID(), "err", err)
		}
	}
	sh.log.Info("editor gone; serving detached terminals", "terminals", len(keep))
	tick := time.NewTicker(200 * time.Millisecond)
	defer tick.Stop()
	for {
		running := 0
		for _, t := range keep {
			if _, done := t.Exited(); !done && !t.Released() {
				running++
			}
		}
		if running == 0 && srv.Clients() == 0 {
			sh.log.Info("no detached terminal runs and no client is connected; the host stops")
			return
		}
		select {
		case <-ctx.Done():
			sh.log.Info("signalled while serving detached terminals", "err", ctx.Err())
			return
		case <-tick.C:
		}
	}
}
