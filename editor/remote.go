package editor

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/agentrun/agentrun.nvim/ahpclient"
	"github.com/agentrun/agentrun.nvim/internal/rawlog"
	"github.com/agentrun/agentrun.nvim/internal/rundir"
	"github.com/agentrun/agentrun.nvim/internal/vtsafe"
	"github.com/agentrun/agentrun.nvim/termhost"
	"github.com/agentrun/agentrun.nvim/termhost/ahp"
)

// Terminals of other hosts (another Neovim's backend, or one that stayed
// for detached terminals), followed over their sockets as an AHP client:
// :AgentTerminals lists them, :AgentAttach (or <CR> in the list) shows
// one live in a split. A remote terminal is named "PID:term-N" (its
// host's process id). Its output goes through a local display log and the
// same pump as our own terminals, so the display filter and pacing are
// the same; input goes to the host only while we hold the terminal.

// remoteTerm is a remote terminal shown here.
type remoteTerm struct {
	name    string // "PID:term-N"
	uri     string
	host    *remoteHost
	log     *rawlog.Log
	fromSeq uint64
	done    chan struct{}
	once    sync.Once

	mu    sync.Mutex
	exit  *termhost.ExitStatus
	claim ahp.Claim
	pump  *pump
}

func (r *remoteTerm) ID() string            { return r.name }
func (r *remoteTerm) Display() *rawlog.Log  { return r.log }
func (r *remoteTerm) Done() <-chan struct{} { return r.done }
func (r *remoteTerm) Exited() (termhost.ExitStatus, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.exit == nil {
		return termhost.ExitStatus{}, false
	}
	return *r.exit, true
}

// end records how the terminal ended and ends its display (once).
func (r *remoteTerm) end(st termhost.ExitStatus, note string) {
	r.once.Do(func() {
		if note != "" {
			r.log.Append([]byte(vtsafe.Reset + "\r\n[agentrun: " + note + "]"))
		}
		r.mu.Lock()
		r.exit = &st
		r.mu.Unlock()
		r.log.Close()
		close(r.done)
	})
}

// endRemote ends remote terminal r's display and tells Lua how it ended
// (the terminal_exit a terminal of ours sends), so that nothing here
// takes it for running any more.
func (b *Bridge) endRemote(r *remoteTerm, st termhost.ExitStatus, note string) {
	r.end(st, note)
	p := map[string]any{"id": r.name}
	if st.Code != nil {
		p["exit_code"] = *st.Code
	} else {
		p["signal"] = st.Signal
	}
	b.events.push(evTerminalExit, p)
}

// remoteName splits "PID:term-N".
func remoteName(name string) (pid int, id string, err error) {
	p, id, ok := strings.Cut(name, ":")
	if pid, err = strconv.Atoi(p); !ok || err != nil || id == "" {
		return 0, "", fmt.Errorf("%q is not a remote terminal name (PID:term-N, as :AgentTerminals lists them)", name)
	}
	return pid, id, nil
}

// handleRemoteTerminals lists the terminals of every other host.
func (b *Bridge) handleRemoteTerminals() ([]map[string]any, error) {
	hosts, err := rundir.Hosts()
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(b.ctx, 2*time.Second)
	defer cancel()
	out := []map[string]any{}
	for _, host := range hosts {
		pid := host.PID
		if pid <= 0 || pid == os.Getpid() {
			continue
		}
		h, err := b.remoteHostOf(ctx, pid)
		if err != nil {
			b.log.Debug("remote host", "socket", host.Socket, "err", err)
			continue
		}
		h.mu.Lock()
		for _, ti := range h.root {
			id, err := ahp.TerminalID(ti.Resource)
			if err != nil {
				continue
			}
			state := "running"
			m := map[string]any{
				"id": fmt.Sprintf("%d:%s", pid, id), "host": pid, "title": ti.Title,
				"claim": claimStatus(ti.Claim), "mine": ti.Claim == b.user, "remote": true,
			}
			if ti.ExitCode != nil {
				state, m["exit_code"] = "exited", *ti.ExitCode
			} else if ti.ExitSignal != "" {
				state, m["signal"] = "exited", ti.ExitSignal
			}
			m["state"] = state
			if ti.CreatedAt > 0 {
				m["age_ms"] = time.Since(time.UnixMilli(ti.CreatedAt)).Milliseconds()
			}
			out = append(out, m)
		}
		h.mu.Unlock()
		b.doneWith(h)
	}
	return out, nil
}

// handleRemoteAttach shows remote terminal name in Neovim channel ch: its
// scrollback, then live.
func (b *Bridge) handleRemoteAttach(name string, ch int, args attachArgs) (map[string]any, error) {
	pid, id, err := remoteName(name)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(b.ctx, 5*time.Second)
	defer cancel()
	h, err := b.remoteHostOf(ctx, pid)
	if err != nil {
		return nil, err
	}
	defer b.doneWith(h)
	uri := ahp.TerminalURI(id)
	h.mu.Lock()
	old := h.terms[uri]
	h.mu.Unlock()
	if old != nil {
		old.mu.Lock()
		p := old.pump
		old.mu.Unlock()
		if p != nil {
			p.stop()
		}
	}
	snap, err := h.c.Subscribe(ctx, uri)
	if err != nil {
		return nil, fmt.Errorf("attach %s: %w", name, err)
	}
	st, err := ahpclient.TerminalState(snap)
	if err != nil {
		return nil, err
	}
	r := &remoteTerm{name: name, uri: uri, host: h, log: rawlog.New(b.hostOpts.DisplayBytes), fromSeq: snap.FromSeq, done: make(chan struct{}), claim: st.Claim}
	r.log.Append([]byte(st.Text()))
	h.mu.Lock()
	h.terms[uri] = r
	h.mu.Unlock()
	if st.Exited() {
		b.endRemote(r, termhost.ExitStatus{Code: st.ExitCode, Signal: st.ExitSignal}, "")
	}
	send := func(p []byte) error { return b.v.Request("nvim_chan_send", nil, ch, p) }
	p := startPump(b.ctx, r, nil, send, pumpOptions{MaxLines: args.Scrollback, Pacer: b.pacer}, b.log.With("terminal", name))
	r.mu.Lock()
	r.pump = p
	r.mu.Unlock()
	b.log.Info("attached to a remote terminal", "terminal", name)
	return map[string]any{"title": st.Title, "claim": claimStatus(st.Claim), "mine": st.Claim == b.user}, nil
}

// remoteTermOf returns attached remote terminal name.
func (b *Bridge) remoteTermOf(name string) (*remoteTerm, error) {
	pid, id, err := remoteName(name)
	if err != nil {
		return nil, err
	}
	b.mu.Lock()
	h := b.remotes[pid]
	b.mu.Unlock()
	if h == nil {
		return nil, fmt.Errorf("%s is not attached here", name)
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	r := h.terms[ahp.TerminalURI(id)]
	if r == nil {
		return nil, fmt.Errorf("%s is not attached here", name)
	}
	return r, nil
}

// dispatchWait sends act to h and waits for its envelope: nil when the
// host applied it, the host's reason when it refused.
func (b *Bridge) dispatchWait(h *remoteHost, act ahp.Action) error {
	ctx, cancel := context.WithTimeout(b.ctx, 5*time.Second)
	defer cancel()
	ch := make(chan ahp.Envelope, 1)
	// The waiter is registered under the lock the router takes, before
	// the envelope can arrive.
	h.mu.Lock()
	seq, err := h.c.Dispatch(ctx, act)
	if err == nil {
		h.waiters[seq] = ch
	}
	h.mu.Unlock()
	if err != nil {
		return err
	}
	select {
	case e, ok := <-ch:
		if !ok {
			return fmt.Errorf("host %d went away", h.pid)
		}
		if e.RejectionReason != "" {
			return fmt.Errorf("host %d refused: %s", h.pid, e.RejectionReason)
		}
		return nil
	case <-ctx.Done():
		return fmt.Errorf("host %d did not answer in 5 s", h.pid)
	}
}

// handleRemoteTake claims remote terminal name for this editor's user.
func (b *Bridge) handleRemoteTake(name string) error {
	r, err := b.remoteTermOf(name)
	if err != nil {
		return err
	}
	return b.dispatchWait(r.host, ahp.ClaimedAction{Terminal: r.uri, Claim: b.user})
}

// handleRemoteInput types data into remote terminal name (refused by its
// host unless we hold it; the refusal comes back as a message).
func (b *Bridge) handleRemoteInput(name string, data []byte) {
	r, err := b.remoteTermOf(name)
	if err != nil {
		b.notice("(agentrun) " + err.Error())
		return
	}
	r.mu.Lock()
	mine := r.claim == b.user
	holder := r.claim
	r.mu.Unlock()
	if !mine {
		b.notice(fmt.Sprintf("(agentrun) %s is held by %s; take it over (T) to type into it", name, holderText(holder)))
		return
	}
	if _, err := r.host.c.Dispatch(b.ctx, ahp.InputAction{Terminal: r.uri, Data: string(data)}); err != nil {
		b.notice(fmt.Sprintf("(agentrun) input to %s: %v", name, err))
	}
}

// resizeRemote sizes remote terminal name's pty to its split here, while
// we hold it (its host refuses a resize from anyone else; whoever holds a
// terminal sizes it).
func (b *Bridge) resizeRemote(name string, cols, rows int) error {
	r, err := b.remoteTermOf(name)
	if err != nil {
		return nil // detached meanwhile: nothing to size
	}
	r.mu.Lock()
	mine := r.claim == b.user
	r.mu.Unlock()
	if !mine {
		return nil
	}
	if _, err := r.host.c.Dispatch(b.ctx, ahp.ResizedAction{Terminal: r.uri, Cols: cols, Rows: rows}); err != nil {
		return fmt.Errorf("resize %s: %w", name, err)
	}
	return nil
}

// handleRemoteDispose kills remote terminal name (its host's
// disposeTerminal).
func (b *Bridge) handleRemoteDispose(name string) error {
	pid, id, err := remoteName(name)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(b.ctx, 5*time.Second)
	defer cancel()
	h, err := b.remoteHostOf(ctx, pid)
	if err != nil {
		return err
	}
	defer b.doneWith(h)
	return h.c.DisposeTerminal(ctx, ahp.TerminalURI(id))
}

// holderText names a claim's holder for a person.
func holderText(c ahp.Claim) string {
	if c.Kind == ahp.ClaimClient {
		return "client " + c.ClientID
	}
	return "the agent"
}
