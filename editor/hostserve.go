package editor

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"time"

	"github.com/agentrun/agentrun.nvim/ahpserver"
	"github.com/agentrun/agentrun.nvim/internal/rundir"
	"github.com/agentrun/agentrun.nvim/termhost"
	"github.com/agentrun/agentrun.nvim/termhost/ahp"
)

// The backend serves its terminals to other clients (a second Neovim,
// the agentrun CLI) on a socket of its own in the user's socket directory
// (package ahpserver, internal/rundir). Every backend is the host of the
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

// serveHost starts serving h on this backend's socket. A socket that
// cannot be made is logged, not fatal: the editor works without it.
func (b *Bridge) serveHost(h *termhost.Host) {
	dir, err := rundir.Dir()
	if err != nil {
		b.log.Warn("not serving terminals to other clients", "err", err)
		return
	}
	path := rundir.Socket(dir, os.Getpid())
	ln, err := ahpserver.Listen(path)
	if err != nil {
		b.log.Warn("not serving terminals to other clients", "err", err)
		return
	}
	srv := ahpserver.New(h, ahpserver.Options{
		Local: b.user.ClientID,
		Extensions: map[string]func(context.Context, json.RawMessage) (any, error){
			"agentrun/terminal":  b.handleMCPTerminal,
			"agentrun/terminals": b.handleMCPTerminals,
		},
		Logf: func(format string, args ...any) {
			b.log.Info(fmt.Sprintf(format, args...))
		},
	})
	ctx, stop := context.WithCancel(context.Background())
	done := make(chan struct{})
	b.mu.Lock()
	b.server, b.socket, b.stopServing, b.served = srv, path, stop, done
	b.mu.Unlock()
	go func() {
		defer close(done)
		if err := srv.Serve(ctx, ln); err != nil {
			b.log.Warn("terminal socket stopped", "err", err)
		}
		_ = os.Remove(path)
	}()
	b.log.Info("serving terminals", "socket", path, "client_id", b.user.ClientID)
}

// stopServe closes the socket and waits for its connections to end.
func (b *Bridge) stopServe() {
	b.mu.Lock()
	stop, done := b.stopServing, b.served
	b.mu.Unlock()
	if stop != nil {
		stop()
		<-done
	}
}

// claimForUser gives terminal t to this editor's user, unless another
// client that is there holds it.
func (b *Bridge) claimForUser(t *termhost.Terminal) error {
	b.mu.Lock()
	srv := b.server
	b.mu.Unlock()
	if srv == nil {
		return t.SetClaim(b.user)
	}
	return srv.Claim(t, b.user.ClientID)
}

// handleDetach keeps terminal id running after Neovim quits: the user
// takes it over (so the agent's release does not end it) and the backend
// stays to serve it until it ends.
func (b *Bridge) handleDetach(id string) (map[string]any, error) {
	t, err := b.running(id)
	if err != nil {
		return nil, fmt.Errorf("detach: %w", err)
	}
	if err := b.claimForUser(t); err != nil {
		return nil, fmt.Errorf("detach terminal %q: %w", id, err)
	}
	b.mu.Lock()
	b.detached[id] = true
	srv := b.server
	b.mu.Unlock()
	b.log.Info("terminal detached", "terminal", id)
	return map[string]any{"id": id, "host": os.Getpid(), "served": srv != nil}, nil
}

// detachedTerminals returns the live terminals the user detached.
func (b *Bridge) detachedTerminals(h *termhost.Host) []*termhost.Terminal {
	b.mu.Lock()
	defer b.mu.Unlock()
	var out []*termhost.Terminal
	for _, t := range h.Terminals() {
		if b.detached[t.ID()] && t.Claim() == b.user {
			out = append(out, t)
		}
	}
	return out
}

// linger serves the detached terminals after Neovim left, until none of
// them runs and no client is connected, or ctx ends (a signal).
func (b *Bridge) linger(ctx context.Context, keep []*termhost.Terminal) {
	b.mu.Lock()
	srv := b.server
	b.mu.Unlock()
	if srv == nil {
		return
	}
	srv.LocalGone()
	for _, t := range keep {
		// Its holder left: nobody holds it now (not the editor that quit).
		if _, err := t.CompareAndSwapClaim(b.user, ahp.Claim{Kind: ahp.ClaimClient, ClientID: ahp.DetachedClient}); err != nil {
			b.log.Debug("detached terminal keeps its claim", "terminal", t.ID(), "err", err)
		}
	}
	b.log.Info("editor gone; serving detached terminals", "terminals", len(keep))
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
			b.log.Info("no detached terminal runs and no client is connected; the host stops")
			return
		}
		select {
		case <-ctx.Done():
			b.log.Info("signalled while serving detached terminals", "err", ctx.Err())
			return
		case <-tick.C:
		}
	}
}
