package editor

import (
	"context"
	"fmt"
	"os"
	"sync"

	"github.com/agentrun/agentrun.nvim/ahp"
	"github.com/agentrun/agentrun.nvim/ahp/client"
	"github.com/agentrun/agentrun.nvim/termhost"
)

// The connections to other hosts that remote.go shows terminals of: one
// per host, made on first use and dropped when nothing of it is shown.

// remoteHost is one connection to another host.
type remoteHost struct {
	pid    int
	socket string
	c      *client.Client

	mu      sync.Mutex
	root    []ahp.TerminalInfo
	terms   map[string]*remoteTerm       // attached, by URI
	waiters map[uint64]chan ahp.Envelope // dispatched, by clientSeq
	users   int                          // calls using the connection now
	gone    bool
}

// hostOf returns the connection to the host with process id pid,
// connecting on first use; the caller calls doneWith when done with it.
func (rs *remotes) hostOf(ctx context.Context, pid int) (*remoteHost, error) {
	if pid == os.Getpid() {
		return nil, fmt.Errorf("host %d is this Neovim's own: its terminals are in the list already", pid)
	}
	rs.mu.Lock()
	if h := rs.conns[pid]; h != nil && !h.isGone() {
		h.mu.Lock()
		h.users++
		h.mu.Unlock()
		rs.mu.Unlock()
		return h, nil
	}
	rs.mu.Unlock()
	socket, err := rs.socketOf(pid)
	if err != nil {
		return nil, err
	}
	c, err := client.Dial(ctx, socket, rs.user.ClientID)
	if err != nil {
		rs.log.Debug("dialing a host", "pid", pid, "err", err)
		return nil, fmt.Errorf("no agentrun host %d is running (its Neovim quit, and with it what it had not detached); :AgentTerminals lists the terminals you can reach", pid)
	}
	res, err := c.Initialize(ctx, ahp.RootURI)
	if err != nil {
		c.Close()
		return nil, fmt.Errorf("host %d: %w", pid, err)
	}
	root, err := client.RootState(res.Snapshots[0])
	if err != nil {
		c.Close()
		return nil, err
	}
	h := &remoteHost{pid: pid, socket: socket, c: c, root: root.Terminals, terms: map[string]*remoteTerm{}, waiters: map[uint64]chan ahp.Envelope{}, users: 1}
	go rs.followHost(h)
	rs.mu.Lock()
	rs.conns[pid] = h
	rs.mu.Unlock()
	return h, nil
}

func (h *remoteHost) isGone() bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.gone
}

// followHost routes a host's envelopes to the terminals shown here.
func (rs *remotes) followHost(h *remoteHost) {
	for e := range h.c.Envelopes() {
		h.mu.Lock()
		if e.Origin != nil && e.Origin.ClientID == h.c.ID() {
			if ch := h.waiters[e.Origin.ClientSeq]; ch != nil {
				delete(h.waiters, e.Origin.ClientSeq)
				ch <- e
			} else if e.RejectionReason != "" {
				rs.notice(fmt.Sprintf("(agentrun) host %d refused %s: %s", h.pid, e.Action.ActionType(), e.RejectionReason))
			}
		}
		if e.RejectionReason != "" {
			h.mu.Unlock()
			continue
		}
		if a, ok := e.Action.(ahp.RootTerminalsChangedAction); ok {
			h.root = a.Terminals
			h.mu.Unlock()
			continue
		}
		r := h.terms[ahp.ActionTerminal(e.Action)]
		h.mu.Unlock()
		if r == nil || e.ServerSeq <= r.fromSeq {
			continue
		}
		switch a := e.Action.(type) {
		case ahp.DataAction:
			r.log.Append([]byte(a.Data))
		case ahp.ClaimedAction:
			r.mu.Lock()
			r.claim = a.Claim
			r.mu.Unlock()
			rs.events.push(evRemoteClaimed, map[string]any{"id": r.name, "claim": claimStatus(a.Claim), "mine": a.Claim == rs.user})
		case ahp.ExitedAction:
			rs.endRemote(r, termhost.ExitStatus{Code: a.ExitCode, Signal: a.ExitSignal}, "")
			h.mu.Lock()
			delete(h.terms, r.uri)
			h.mu.Unlock()
			rs.dropIdle(h)
		}
	}
	h.mu.Lock()
	h.gone = true
	terms := h.terms
	h.terms = map[string]*remoteTerm{}
	for _, ch := range h.waiters {
		close(ch)
	}
	h.waiters = map[uint64]chan ahp.Envelope{}
	h.mu.Unlock()
	for _, r := range terms {
		rs.endRemote(r, termhost.ExitStatus{Signal: "unknown"}, fmt.Sprintf("the host %d went away", h.pid))
	}
}

// doneWith ends a use of h (remoteHostOf) and closes the connection when
// nothing uses it and no terminal of it is shown here: a host that stayed
// for detached terminals may then end; a list refresh connects again.
func (rs *remotes) doneWith(h *remoteHost) {
	h.mu.Lock()
	h.users--
	h.mu.Unlock()
	rs.dropIdle(h)
}

// dropIdle closes the connection to h if it is idle.
func (rs *remotes) dropIdle(h *remoteHost) {
	h.mu.Lock()
	idle := len(h.terms) == 0 && len(h.waiters) == 0 && h.users <= 0
	h.mu.Unlock()
	if !idle {
		return
	}
	rs.mu.Lock()
	if rs.conns[h.pid] == h {
		delete(rs.conns, h.pid)
	}
	rs.mu.Unlock()
	h.c.Close()
}

// notice tells the user something as a warning.
func (rs *remotes) notice(text string) {
	rs.events.push(evMessage, map[string]any{"level": "warn", "text": text})
}
