package sshlink

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/agentrun/agentrun.nvim/ahp"
	"github.com/agentrun/agentrun.nvim/ahp/client"
)

// Remote is a remote machine reached over a link that is started again
// when it drops: what `agentrun attach ssh://…` and Neovim's
// :AgentAttach ssh://… share, down to how an AHP connection over it
// resumes (Resume).
type Remote struct {
	target  Target
	version string // the local agentrun's: the remote's must match
	batch   bool   // ssh may not ask anything (NewBatchRemote)

	linkMu sync.Mutex // one (re)link at a time

	mu     sync.Mutex
	link   *Link
	closed bool
}

// NewRemote returns the remote t, not linked yet (Relink links it).
// version is this agentrun's version.
func NewRemote(t Target, version string) *Remote {
	return &Remote{target: t, version: version}
}

// NewBatchRemote is NewRemote for a program with no terminal for ssh to
// ask on (Neovim's backend): ssh fails rather than asks for a password
// or to accept a new host key, and the error says how to set that up.
func NewBatchRemote(t Target, version string) *Remote {
	return &Remote{target: t, version: version, batch: true}
}

// Ensure links the remote unless it is linked now.
func (r *Remote) Ensure(ctx context.Context) error {
	r.linkMu.Lock()
	defer r.linkMu.Unlock()
	if r.Linked() {
		return nil
	}
	return r.Relink(ctx)
}

// Target is the machine.
func (r *Remote) Target() Target { return r.target }

// Relink starts the link to the remote (again, after it dropped).
func (r *Remote) Relink(ctx context.Context) error {
	if old := r.Current(); old != nil {
		old.Close()
	}
	l, err := dial(ctx, r.target, r.version, r.batch)
	if err != nil {
		return err
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed { // closed meanwhile
		l.Close()
		return context.Canceled
	}
	r.link = l
	return nil
}

// Current is the link now (nil before the first Relink).
func (r *Remote) Current() *Link {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.link
}

// Linked reports whether the link is up (started and not dropped).
func (r *Remote) Linked() bool {
	l := r.Current()
	if l == nil {
		return false
	}
	select {
	case <-l.Done():
		return false
	default:
		return true
	}
}

// Close ends the link for good.
func (r *Remote) Close() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.closed = true
	if r.link != nil {
		r.link.Close()
	}
}

// Resume reconnects the AHP connection of client clientID to the host
// with process id pid after it ended (the link dropped, or the host let
// go of a client that fell behind): it starts the link again when it
// dropped and resumes after lastSeen with AHP's reconnect (the host
// replays what it sent since, or gives fresh snapshots of subs). It
// tries until it succeeds, ctx ends, or the failure is not the
// network's (no agentrun there any more, the host gone); progress hears
// each failed attempt. name names what is resumed in its sentences
// ("ssh://devbox/4242:term-1").
func (r *Remote) Resume(ctx context.Context, pid int, clientID, name string, lastSeen uint64, subs []string, progress func(string)) (*client.Client, ahp.ReconnectResult, error) {
	backoff := 250 * time.Millisecond
	while := ""
	var tried *Link // the link the last attempt failed on
	for attempt := 1; ; attempt++ {
		var err error
		// Several connections over one link may resume at once: the
		// first relinks, the others take its link.
		r.linkMu.Lock()
		if !r.Linked() {
			err = r.Relink(ctx)
			while = " while the link was down"
		} else if attempt > 1 && r.Current() == tried {
			err = r.Relink(ctx)
		}
		// Else only the host connection ended: the link is still good.
		l := r.Current()
		r.linkMu.Unlock()
		tried = l
		if err == nil {
			nc, oerr := l.Open(pid)
			err = oerr
			if oerr == nil {
				c := client.New(nc, clientID)
				res, rerr := c.Reconnect(ctx, lastSeen, subs)
				if rerr == nil {
					return c, res, nil
				}
				c.Close()
				var aerr *client.Error
				if errors.As(rerr, &aerr) {
					return nil, res, fmt.Errorf("the host of %s refused to resume: %w", name, rerr)
				}
				err = rerr
				if pids, herr := l.Hosts(ctx); herr == nil && !slices.Contains(pids, pid) {
					return nil, res, fmt.Errorf("the host of %s went away%s", name, while)
				}
			}
		} else if !Transient(err) {
			return nil, ahp.ReconnectResult{}, err
		}
		if ctx.Err() != nil {
			return nil, ahp.ReconnectResult{}, ctx.Err()
		}
		progress(fmt.Sprintf("reconnecting to %s, attempt %d: %v; again in %v", r.target, attempt, err, backoff))
		select {
		case <-ctx.Done():
			return nil, ahp.ReconnectResult{}, ctx.Err()
		case <-time.After(backoff):
		}
		backoff = min(2*backoff, 5*time.Second)
	}
}
