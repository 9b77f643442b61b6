package remote

import (
	"context"
	"fmt"
	"os"
	"slices"
	"sync"
	"time"

	"github.com/agentrun/agentrun.nvim/ahp"
	"github.com/agentrun/agentrun.nvim/ahp/client"
	"github.com/agentrun/agentrun.nvim/internal/event"
	"github.com/agentrun/agentrun.nvim/internal/sshlink"
	"github.com/agentrun/agentrun.nvim/internal/vtsafe"
	"github.com/agentrun/agentrun.nvim/termhost"
)

// Why this file is long: a remote host's whole life is here: dialling it,
// following its events, taking sessions up again after a link drop, and
// letting it go; the parts share the host's state and must be read in
// order.

// The connections to other hosts that remote.go shows terminals of: one
// per host, made on first use and dropped when nothing of it is shown.
// A host is on this machine (its socket) or on a remote one, reached
// over SSH (sshlink: `ssh host agentrun serve-stdio`); a connection over
// SSH whose link drops is resumed (sshlink.Remote.Resume: the link
// starts again and the host replays what we missed).

// hostKey names a host: where it is ("" this machine, else
// "ssh://[user@]host[:port]") and its process id there.
type hostKey struct {
	where string
	pid   int
}

// remoteHost is one connection to another host.
type remoteHost struct {
	key    hostKey
	pid    int
	socket string          // this machine's hosts
	site   *sshlink.Remote // a remote machine's (nil: this machine)

	mu      sync.Mutex
	c       *client.Client // replaced when a connection over SSH resumes
	root    []ahp.TerminalInfo
	terms   map[string]*remoteTerm       // attached, by URI
	waiters map[uint64]chan ahp.Envelope // dispatched, by clientSeq
	users   int                          // calls using the connection now
	gone    bool
	closing bool // we closed it (nothing of it is shown): not resumed
	// resuming says why the link is down while it is started again ("":
	// it is up).
	resuming string
}

// label names the host for a person: "host 4242", "host 4242 on
// ssh://devbox".
func (h *remoteHost) label() string {
	if h.key.where == "" {
		return fmt.Sprintf("host %d", h.pid)
	}
	return fmt.Sprintf("host %d on %s", h.pid, h.key.where)
}

// prefix is what comes before a terminal's PID:term-N in its name.
func (h *remoteHost) prefix() string {
	if h.key.where == "" {
		return ""
	}
	return h.key.where + "/"
}

// uriOf is the resource of h's terminal id: as its host names it
// ("term-3@devbox"), or in its short form ("term-3", ahp.ShortID) as a
// machine's terminals are named under its URL.
func (h *remoteHost) uriOf(id string) string {
	uri := ahp.TerminalURI(id)
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.terms[uri] != nil || slices.ContainsFunc(h.root, func(ti ahp.TerminalInfo) bool { return ti.Resource == uri }) {
		return uri
	}
	for _, ti := range h.root {
		if tid, err := ahp.TerminalID(ti.Resource); err == nil && ahp.ShortID(tid) == id {
			return ti.Resource
		}
	}
	for u, r := range h.terms {
		if tid, err := ahp.TerminalID(u); err == nil && ahp.ShortID(tid) == id && r != nil {
			return u
		}
	}
	return uri
}

// client is the connection now.
func (h *remoteHost) client() *client.Client {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.c
}

// usable says why nothing can be sent to h now (nil: it can).
func (h *remoteHost) usable() error {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.resuming != "" {
		return fmt.Errorf("the link to %s is down (%s); agentrun is reconnecting: try again once the split says it is back", h.key.where, h.resuming)
	}
	return nil
}

// siteOf returns the remote machine where ("ssh://…"), linked.
func (rs *Terminals) siteOf(ctx context.Context, where string) (*sshlink.Remote, error) {
	rs.mu.Lock()
	r := rs.sites[where]
	if r == nil {
		t, _, err := sshlink.Parse(where)
		if err != nil {
			rs.mu.Unlock()
			return nil, err
		}
		r = sshlink.NewBatchRemote(t, rs.version)
		rs.sites[where] = r
	}
	rs.mu.Unlock()
	if err := r.Ensure(ctx); err != nil {
		return nil, err
	}
	return r, nil
}

// dialHost opens an AHP connection to host key (not initialized).
func (rs *Terminals) dialHost(ctx context.Context, key hostKey, clientID string) (*client.Client, *sshlink.Remote, string, error) {
	if key.where == "" {
		socket, err := rs.socketOf(key.pid)
		if err != nil {
			return nil, nil, "", err
		}
		c, err := client.Dial(ctx, socket, clientID)
		if err != nil {
			rs.log.Debug("dialing a host", "pid", key.pid, "err", err)
			return nil, nil, "", fmt.Errorf("no agentrun host %d is running; see :AgentTerminals", key.pid)
		}
		return c, nil, socket, nil
	}
	site, err := rs.siteOf(ctx, key.where)
	if err != nil {
		return nil, nil, "", err
	}
	pids, err := site.Current().Hosts(ctx)
	if err != nil {
		return nil, nil, "", err
	}
	if !slices.Contains(pids, key.pid) {
		return nil, nil, "", fmt.Errorf("no agentrun host %d is running on %s; :AgentAttach %s lists what runs there", key.pid, key.where, key.where)
	}
	nc, err := site.Current().Open(key.pid)
	if err != nil {
		return nil, nil, "", err
	}
	return client.New(nc, clientID), site, "", nil
}

// hostOf returns the connection to host key, connecting on first use;
// the caller calls doneWith when done with it.
func (rs *Terminals) hostOf(ctx context.Context, key hostKey) (*remoteHost, error) {
	if key.where == "" && key.pid == os.Getpid() {
		return nil, fmt.Errorf("host %d is this Neovim's own: its terminals are in the list already", key.pid)
	}
	rs.mu.Lock()
	if h := rs.conns[key]; h != nil && !h.isGone() {
		h.mu.Lock()
		h.users++
		h.mu.Unlock()
		rs.mu.Unlock()
		return h, nil
	}
	rs.mu.Unlock()
	c, site, socket, err := rs.dialHost(ctx, key, rs.user.ClientID)
	if err != nil {
		return nil, err
	}
	h := &remoteHost{key: key, pid: key.pid, socket: socket, site: site, c: c, terms: map[string]*remoteTerm{}, waiters: map[uint64]chan ahp.Envelope{}, users: 1}
	res, err := c.Initialize(ctx, ahp.RootURI)
	if err != nil {
		c.Close()
		if site != nil {
			return nil, fmt.Errorf("%s did not answer: it ended, or the link dropped; :AgentAttach %s lists the terminals there", h.label(), key.where)
		}
		return nil, fmt.Errorf("host %d: %w", key.pid, err)
	}
	root, err := client.RootState(res.Snapshots[0])
	if err != nil {
		c.Close()
		return nil, err
	}
	h.root = root.Terminals
	go rs.followHost(h)
	rs.mu.Lock()
	rs.conns[key] = h
	rs.mu.Unlock()
	return h, nil
}

func (h *remoteHost) isGone() bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.gone
}

// followHost routes a host's envelopes to the terminals shown here; a
// connection over SSH that ends is resumed.
func (rs *Terminals) followHost(h *remoteHost) {
	why := fmt.Sprintf("the host %d went away", h.pid)
	for {
		c := h.client()
		for e := range c.Envelopes() {
			rs.route(h, e)
		}
		h.mu.Lock()
		closing := h.closing
		h.mu.Unlock()
		if h.site == nil || closing || rs.ctx.Err() != nil {
			break
		}
		if err := rs.resume(h, c); err != nil {
			why = err.Error()
			break
		}
		rs.dropIdle(h) // every terminal shown ended while the link was down
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
		rs.endRemote(r, termhost.ExitStatus{Signal: "unknown"}, why)
	}
}

// route passes one envelope of h's to the terminal shown here it is for.
func (rs *Terminals) route(h *remoteHost, e ahp.Envelope) {
	h.mu.Lock()
	if e.Origin != nil && e.Origin.ClientID == h.c.ID() {
		if ch := h.waiters[e.Origin.ClientSeq]; ch != nil {
			delete(h.waiters, e.Origin.ClientSeq)
			// Its dispatcher hears of it once it is applied here: what
			// comes next (typing once a claim is ours) sees it.
			defer func() { ch <- e }()
		} else if e.RejectionReason != "" && e.Action.ActionType() != ahp.ActionResized {
			// (a resize racing a claim that moved on, as when you let go
			// and the split closes, is not worth a word: the holder
			// sizes it)
			rs.notice(fmt.Sprintf("%s refused %s: %s", h.label(), e.Action.ActionType(), e.RejectionReason))
		}
	}
	if e.RejectionReason != "" {
		h.mu.Unlock()
		return
	}
	if a, ok := e.Action.(ahp.RootTerminalsChangedAction); ok {
		h.root = a.Terminals
		h.mu.Unlock()
		return
	}
	r := h.terms[ahp.ActionTerminal(e.Action)]
	h.mu.Unlock()
	if r == nil {
		return
	}
	r.routing.Lock()
	defer r.routing.Unlock()
	switch {
	case !r.subscribed:
		r.held = append(r.held, e) // Attach applies it after the snapshot
	case e.ServerSeq > r.fromSeq:
		rs.apply(h, r, e)
	}
}

// apply applies what the host says of remote terminal r (r.routing held).
func (rs *Terminals) apply(h *remoteHost, r *remoteTerm, e ahp.Envelope) {
	switch a := e.Action.(type) {
	case ahp.DataAction:
		r.log.Append([]byte(a.Data))
	case ahp.ClaimedAction:
		rs.claimed(r, a.Claim, e.ServerSeq)
	case ahp.ExitedAction:
		rs.endRemote(r, termhost.ExitStatus{Code: a.ExitCode, Signal: a.ExitSignal}, "")
		h.mu.Lock()
		delete(h.terms, r.uri)
		h.mu.Unlock()
		rs.dropIdle(h)
	}
}

// claimed records who holds remote terminal r now, as of the host's
// serverSeq seq, and tells Lua (with seq: the answer to a take or a let
// go may reach Lua before an event queued earlier, which must not undo
// it).
func (rs *Terminals) claimed(r *remoteTerm, c ahp.Claim, seq uint64) {
	r.mu.Lock()
	r.claim = c
	r.mu.Unlock()
	rs.events.Push(event.RemoteClaimed{ID: r.name, Claim: event.Claim(c), Mine: c == rs.user, Seq: seq})
}

// say writes a line of ours into the splits of the terminals shown.
func say(terms []*remoteTerm, text string) {
	for _, r := range terms {
		r.log.Append([]byte(vtsafe.Reset + "\r\n[agentrun: " + text + "]\r\n"))
	}
}

// resume resumes h's connection over SSH after c ended: the splits say
// that the link is down and that it reconnects, then show what they
// missed (replayed by the host), or the terminal again from its start
// when more happened than the host keeps. An error says why it could
// not (the host went away, agentrun there is gone, ...).
func (rs *Terminals) resume(h *remoteHost, c *client.Client) error {
	lastSeen := c.LastSeen()
	c.Close()
	why := fmt.Sprintf("the connection to %s ended", h.label())
	if l := h.site.Current(); l != nil {
		select {
		case <-l.Done():
			why = l.Err().Error()
		case <-time.After(100 * time.Millisecond):
		}
	}
	h.mu.Lock()
	h.resuming = why
	for _, ch := range h.waiters {
		close(ch)
	}
	h.waiters = map[uint64]chan ahp.Envelope{}
	var terms []*remoteTerm
	subs := []string{ahp.RootURI}
	for uri, r := range h.terms {
		terms = append(terms, r)
		subs = append(subs, uri)
	}
	h.mu.Unlock()
	defer func() {
		h.mu.Lock()
		h.resuming = ""
		h.mu.Unlock()
	}()
	say(terms, why+"; reconnecting")
	rs.log.Info("reconnecting to a remote host", "host", h.label(), "why", why)
	name := h.label()
	if len(terms) == 1 {
		name = terms[0].name
	}
	nc, res, err := h.site.Resume(rs.ctx, h.pid, rs.user.ClientID, name, lastSeen, subs, func(m string) {
		say(terms, m)
	})
	if err != nil {
		return err
	}
	h.mu.Lock()
	h.c = nc
	h.mu.Unlock()
	for _, uri := range res.Missing {
		rs.lost(h, uri, "it ended, or was killed, while the link was down")
	}
	if res.Type == ahp.ReconnectSnapshot {
		// Too much happened for the host to replay: its copy of each
		// screen, shown again.
		seen := map[string]bool{}
		for _, sn := range res.Snapshots {
			seen[sn.Resource] = true
			if sn.Resource == ahp.RootURI {
				if root, err := client.RootState(sn); err == nil {
					h.mu.Lock()
					h.root = root.Terminals
					h.mu.Unlock()
				}
				continue
			}
			h.mu.Lock()
			r := h.terms[sn.Resource]
			h.mu.Unlock()
			st, err := client.TerminalState(sn)
			if r == nil || err != nil {
				continue
			}
			say([]*remoteTerm{r}, fmt.Sprintf("reconnected to %s; more happened meanwhile than the host keeps to replay: the terminal again from its start", h.key.where))
			rs.log.Info("reconnected to a remote host; its terminal again from its start", "host", h.label(), "terminal", r.name)
			r.log.Append([]byte(st.Text()))
			r.routing.Lock()
			r.fromSeq = sn.FromSeq
			r.routing.Unlock()
			rs.claimed(r, st.Claim, sn.FromSeq)
			if st.Exited() {
				rs.lost(h, sn.Resource, "")
				rs.endRemote(r, termhost.ExitStatus{Code: st.ExitCode, Signal: st.ExitSignal}, "")
			}
		}
		for _, r := range terms {
			if !seen[r.uri] {
				rs.lost(h, r.uri, "it ended, or was killed, while the link was down")
			}
		}
		return nil
	}
	h.mu.Lock()
	var still []*remoteTerm
	for _, r := range h.terms {
		still = append(still, r)
	}
	h.mu.Unlock()
	say(still, fmt.Sprintf("reconnected to %s; what was missed follows", h.key.where))
	rs.log.Info("reconnected to a remote host", "host", h.label(), "replayed", len(res.Actions))
	for _, e := range res.Actions {
		rs.route(h, e)
	}
	return nil
}

// lost drops terminal uri of h from those shown here; note (when not
// "") says how it went, in its split.
func (rs *Terminals) lost(h *remoteHost, uri, note string) {
	h.mu.Lock()
	r := h.terms[uri]
	delete(h.terms, uri)
	h.mu.Unlock()
	if r != nil && note != "" {
		rs.endRemote(r, termhost.ExitStatus{Signal: "unknown"}, r.name+" is gone from its host: "+note)
	}
}

// doneWith ends a use of h (remoteHostOf) and closes the connection when
// nothing uses it and no terminal of it is shown here: a host that stayed
// for detached terminals may then end; a list refresh connects again.
func (rs *Terminals) doneWith(h *remoteHost) {
	h.mu.Lock()
	h.users--
	h.mu.Unlock()
	rs.dropIdle(h)
}

// dropIdle closes the connection to h if it is idle.
func (rs *Terminals) dropIdle(h *remoteHost) {
	h.mu.Lock()
	idle := len(h.terms) == 0 && len(h.waiters) == 0 && h.users <= 0 && h.resuming == ""
	if idle {
		h.closing = true
	}
	c := h.c
	h.mu.Unlock()
	if !idle {
		return
	}
	rs.mu.Lock()
	if rs.conns[h.key] == h {
		delete(rs.conns, h.key)
	}
	rs.mu.Unlock()
	c.Close()
}

// notice tells the user something as a warning.
func (rs *Terminals) notice(text string) {
	rs.events.Push(event.Message{Level: "warn", Text: text})
}
