package remote

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/agentrun/agentrun.nvim/ahp"
	"github.com/agentrun/agentrun.nvim/ahp/client"
	"github.com/agentrun/agentrun.nvim/ahp/server"
	"github.com/agentrun/agentrun.nvim/internal/display"
	"github.com/agentrun/agentrun.nvim/internal/event"
	"github.com/agentrun/agentrun.nvim/internal/rawlog"
	"github.com/agentrun/agentrun.nvim/internal/rundir"
	"github.com/agentrun/agentrun.nvim/internal/sshlink"
	"github.com/agentrun/agentrun.nvim/internal/vtsafe"
	"github.com/agentrun/agentrun.nvim/termhost"
)

// Why this file is long: it is the whole of the terminals of other hosts
// as this Neovim sees them (listing, attaching, taking over, input,
// resizing, disposing), each a short method over the same remotes state;
// the links to those hosts and their lifetimes are in host.go.

// Terminals are the connections to other hosts and the terminals of
// theirs shown here; they own their state and lock, and know the bridge
// only through what newRemotes is given.
type Terminals struct {
	ctx    context.Context
	log    *slog.Logger
	events *event.Queue
	disp   *display.Displays
	// user is this editor's claim: input and resizes go to a remote
	// terminal only while it holds it.
	user ahp.Claim
	// displayBytes sizes a remote terminal's local display log.
	displayBytes func() int
	// hosts lists the hosts' sockets; socketOf finds host pid's.
	hosts    func() ([]rundir.Host, error)
	socketOf func(pid int) (string, error)
	// version is this agentrun's: a remote machine's must be the same.
	version string

	mu    sync.Mutex
	conns map[hostKey]*remoteHost
	// sites are the remote machines reached over SSH, by
	// "ssh://[user@]host[:port]": each link stays up (for the next list
	// or attach) until the backend ends, and starts again when used
	// after it dropped.
	sites map[string]*sshlink.Remote
	// ended records how the remote terminals shown here ended, by name,
	// so that a command on one after its end says so (its host may have
	// dropped it, or ended itself, by then).
	ended map[string]string // how: "exit 0", "signal SIGTERM", "the host 12 went away"
	// endedLast keeps the last lines of the ended terminals listed last
	// time, by host and resource: they no longer change, and a list
	// shown for a while asks every second.
	endedLast map[hostKey]map[string]string
}

// Options are what remotes need of the rest of the backend.
type Options struct {
	// User is this editor's claim: input and resizes go to a remote
	// terminal only while it holds it.
	User ahp.Claim
	// DisplayBytes sizes a remote terminal's local display log (0: the
	// host's default).
	DisplayBytes func() int
	// Version is this agentrun's: a remote machine's must be the same.
	Version string
	// Hosts and SocketOf default to the user's socket directory (rundir).
	Hosts    func() ([]rundir.Host, error)
	SocketOf func(pid int) (string, error)
}

// New returns the remote terminals part, its links ending with ctx.
func New(ctx context.Context, log *slog.Logger, events *event.Queue, disp *display.Displays, opts Options) *Terminals {
	if opts.Hosts == nil {
		opts.Hosts = rundir.Hosts
	}
	if opts.SocketOf == nil {
		opts.SocketOf = func(pid int) (string, error) {
			dir, err := rundir.Dir()
			if err != nil {
				return "", err
			}
			return rundir.Socket(dir, pid), nil
		}
	}
	rs := &Terminals{
		ctx: ctx, log: log, events: events, disp: disp, user: opts.User,
		displayBytes: opts.DisplayBytes, hosts: opts.Hosts, socketOf: opts.SocketOf, version: opts.Version,
		conns: map[hostKey]*remoteHost{}, sites: map[string]*sshlink.Remote{}, ended: map[string]string{},
	}
	go func() {
		<-ctx.Done()
		rs.mu.Lock()
		defer rs.mu.Unlock()
		for _, site := range rs.sites {
			site.Close()
		}
	}()
	return rs
}

// logBytes is the size of a remote terminal's display log: the host's
// for its own terminals (Options.DisplayBytes, its default when unset).
func (rs *Terminals) logBytes() int {
	if n := rs.displayBytes(); n > 0 {
		return n
	}
	return termhost.DefaultDisplayBytes
}

// remoteTerm is a remote terminal shown here.
type remoteTerm struct {
	name string // "PID:term-N"
	uri  string
	host *remoteHost
	log  *rawlog.Log
	done chan struct{}
	once sync.Once

	// routing orders what the host says of it (route) after its
	// snapshot: until attach has the snapshot (subscribed), what comes
	// is held, then what is newer than the snapshot (fromSeq) applied.
	routing    sync.Mutex
	subscribed bool
	held       []ahp.Envelope
	fromSeq    uint64

	mu    sync.Mutex
	exit  *termhost.ExitStatus
	claim ahp.Claim
	pump  *display.Pump
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
func (rs *Terminals) endRemote(r *remoteTerm, st termhost.ExitStatus, note string) {
	r.end(st, note)
	how := note
	if how == "" {
		how = st.String()
	}
	rs.mu.Lock()
	rs.ended[r.name] = how
	rs.mu.Unlock()
	rs.events.Push(event.Exit(r.name, st, ""))
}

// endedErr is the answer to a command on remote terminal name after it
// ended (ok false: it did not end here, as far as we saw).
func (rs *Terminals) endedErr(name string) (err error, ok bool) {
	rs.mu.Lock()
	how, ok := rs.ended[name]
	rs.mu.Unlock()
	if !ok {
		return nil, false
	}
	return fmt.Errorf("%s ended (%s)", name, how), true
}

// remoteName splits "PID:term-N" (a host of this machine's) or
// "ssh://[user@]host[:port]/PID:term-N" (a remote machine's; key.where
// is then its URL as sshlink writes it).
func remoteName(name string) (key hostKey, id string, err error) {
	rest := name
	if sshlink.IsURL(name) {
		t, r, err := sshlink.Parse(name)
		if err != nil {
			return hostKey{}, "", err
		}
		if r == "" {
			return hostKey{}, "", fmt.Errorf("%q names a machine, not a terminal: :AgentAttach %s lists its terminals, %s/PID:term-N names one", name, t, t)
		}
		key.where, rest = t.String(), r
	}
	p, id, ok := strings.Cut(rest, ":")
	if key.pid, err = strconv.Atoi(p); !ok || err != nil || id == "" || strings.Contains(id, "/") {
		if key.where != "" {
			return hostKey{}, "", fmt.Errorf("%q names no terminal: after the machine comes PID:term-N, as :AgentAttach %s lists them", name, key.where)
		}
		return hostKey{}, "", fmt.Errorf("%q is not a remote terminal name (PID:term-N, as :AgentTerminals lists them)", name)
	}
	return key, id, nil
}

// IsName reports whether name is a remote terminal's: "PID:term-N", or
// "ssh://…/PID:term-N" (another machine's).
func IsName(name string) bool {
	_, _, err := remoteName(name)
	return err == nil
}

// List lists the terminals of every other host ("remote_terminals").
func (rs *Terminals) List() ([]map[string]any, error) {
	hosts, err := rs.hosts()
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(rs.ctx, 2*time.Second)
	defer cancel()
	out := []map[string]any{}
	for _, host := range hosts {
		pid := host.PID
		if pid <= 0 || pid == os.Getpid() {
			continue
		}
		h, err := rs.hostOf(ctx, hostKey{pid: pid})
		if err != nil {
			rs.log.Debug("remote host", "socket", host.Socket, "err", err)
			continue
		}
		out = append(out, rs.listOf(ctx, h)...)
		rs.doneWith(h)
	}
	return out, nil
}

// listOf lists the terminals of host h, as list does.
func (rs *Terminals) listOf(ctx context.Context, h *remoteHost) []map[string]any {
	h.mu.Lock()
	root := append([]ahp.TerminalInfo(nil), h.root...)
	h.mu.Unlock()
	last := rs.lastLines(ctx, h.key, root)
	var out []map[string]any
	for _, ti := range root {
		id, err := ahp.TerminalID(ti.Resource)
		if err != nil {
			continue
		}
		state := "running"
		if h.key.where != "" {
			id = ahp.ShortID(id) // the URL says the machine
		}
		m := map[string]any{
			"id": fmt.Sprintf("%s%d:%s", h.prefix(), h.pid, id), "host": h.pid, "title": ti.Title,
			"claim": event.Claim(ti.Claim), "mine": ti.Claim == rs.user, "remote": true, "holder_gone": ti.HolderGone,
		}
		if h.key.where != "" {
			m["where"] = h.key.where
		}
		if ti.ExitCode != nil {
			state, m["exit_code"] = "exited", *ti.ExitCode
		} else if ti.ExitSignal != "" {
			state, m["signal"] = "exited", ti.ExitSignal
		}
		m["state"] = state
		if ti.Command != "" {
			m["command"] = ti.Command // the command line, not the agent's description
		}
		if state == "running" && len(ti.Ports) > 0 {
			m["ports"] = append([]int(nil), ti.Ports...)
		}
		if ti.CreatedAt > 0 {
			m["age_ms"] = time.Since(time.UnixMilli(ti.CreatedAt)).Milliseconds()
		}
		m["last_line"] = last[ti.Resource]
		out = append(out, m)
	}
	return out
}

// Connect starts the link to the remote machine that name names,
// "ssh://[user@]host[:port]" or a terminal of it (".../PID:term-N"), in
// the background, and tells Lua when it is up or why it is not (event
// ssh_connected, with token), so Neovim does not wait while ssh connects
// ("ssh_connect"). A malformed name is refused at once.
func (rs *Terminals) Connect(name string, token int) error {
	t, rest, err := sshlink.Parse(name)
	if err != nil {
		return err
	}
	if rest != "" {
		if _, _, err := remoteName(name); err != nil {
			return err
		}
	}
	where := t.String()
	go func() {
		ctx, cancel := context.WithTimeout(rs.ctx, 30*time.Second)
		defer cancel()
		p := event.SSHConnected{Name: name, Token: token}
		if _, err := rs.siteOf(ctx, where); err != nil {
			p.Error = err.Error()
		}
		rs.events.Push(p)
	}()
	return nil
}

// ListAt lists the terminals of every host of the user on remote machine
// url, "ssh://[user@]host[:port]", reached over SSH ("ssh_terminals"):
// named url/PID:term-N.
func (rs *Terminals) ListAt(url string) ([]map[string]any, error) {
	t, rest, err := sshlink.Parse(url)
	if err != nil {
		return nil, err
	}
	if rest != "" {
		return nil, fmt.Errorf("%q names a terminal, not a machine: :AgentAttach %s lists the terminals there", url, t)
	}
	where := t.String()
	// ssh's own ConnectTimeout (15 s) bounds the link's start.
	ctx, cancel := context.WithTimeout(rs.ctx, 30*time.Second)
	defer cancel()
	site, err := rs.siteOf(ctx, where)
	if err != nil {
		return nil, err
	}
	pids, err := site.Current().Hosts(ctx)
	if err != nil {
		return nil, err
	}
	out := []map[string]any{}
	live := 0
	for _, pid := range pids {
		h, err := rs.hostOf(ctx, hostKey{where: where, pid: pid})
		if err != nil {
			rs.log.Debug("remote host", "where", where, "pid", pid, "err", err)
			continue
		}
		live++
		out = append(out, rs.listOf(ctx, h)...)
		rs.doneWith(h)
	}
	if live == 0 {
		return nil, fmt.Errorf("no agentrun host is running on %s: terminals are served by the backend of a Neovim that runs the plugin there (or one that left detached terminals)", where)
	}
	return out, nil
}

// lastLines reads the last line of each of terminals from host key, as
// `agentrun ls` does: on a connection of its own, closed once it has
// their snapshots (subscribed on the one we follow terminals on, each
// would stream its output to us from then on). An ended terminal's line
// is read once and kept while it is listed; with nothing else to read,
// no connection is made. A host that does not answer gives none.
func (rs *Terminals) lastLines(ctx context.Context, key hostKey, terminals []ahp.TerminalInfo) map[string]string {
	out := map[string]string{}
	rs.mu.Lock()
	kept := rs.endedLast[key]
	rs.mu.Unlock()
	ended := map[string]bool{}
	var uris []string
	for _, ti := range terminals {
		done := ti.ExitCode != nil || ti.ExitSignal != ""
		ended[ti.Resource] = done
		if line, ok := kept[ti.Resource]; ok && done {
			out[ti.Resource] = line
			continue
		}
		uris = append(uris, ti.Resource)
	}
	if len(uris) > 0 {
		rs.readLastLines(ctx, key, uris, out)
	}
	now := map[string]string{}
	for uri, done := range ended {
		if line, ok := out[uri]; ok && done {
			now[uri] = line
		}
	}
	rs.mu.Lock()
	if rs.endedLast == nil {
		rs.endedLast = map[hostKey]map[string]string{}
	}
	rs.endedLast[key] = now
	rs.mu.Unlock()
	return out
}

// readLastLines adds the last lines of the terminals uris of host key to
// out.
func (rs *Terminals) readLastLines(ctx context.Context, key hostKey, uris []string, out map[string]string) {
	c, _, _, err := rs.dialHost(ctx, key, rs.user.ClientID+"-list")
	if err != nil {
		return
	}
	defer c.Close()
	res, err := c.Initialize(ctx, uris...)
	if err != nil {
		rs.log.Debug("remote last lines", "host", key, "err", err)
		return
	}
	for _, snap := range res.Snapshots {
		if st, err := client.TerminalState(snap); err == nil {
			out[snap.Resource] = client.LastLine(st)
		}
	}
}

// Attach shows remote terminal name in Neovim channel ch: its
// scrollback, then live ("remote_attach").
func (rs *Terminals) Attach(name string, ch int, args display.Buffer) (map[string]any, error) {
	key, id, err := remoteName(name)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(rs.ctx, rs.timeout(key))
	defer cancel()
	h, err := rs.hostOf(ctx, key)
	if err != nil {
		return nil, err
	}
	defer rs.doneWith(h)
	if err := h.usable(); err != nil {
		return nil, err
	}
	uri := h.uriOf(id)
	h.mu.Lock()
	old := h.terms[uri]
	known := slices.ContainsFunc(h.root, func(ti ahp.TerminalInfo) bool { return ti.Resource == uri })
	h.mu.Unlock()
	if key.where != "" && !known {
		return nil, fmt.Errorf("no terminal %s on host %d on %s (it ended and its host let it go, or it never was); :AgentAttach %s lists them", id, key.pid, key.where, key.where)
	}
	if old != nil {
		old.mu.Lock()
		p := old.pump
		old.mu.Unlock()
		if p != nil {
			p.Stop()
		}
	}
	// Registered before subscribing: what the host sends after its
	// snapshot may come before Subscribe returns, and is held for it (a
	// line printed then was lost).
	r := &remoteTerm{name: name, uri: uri, host: h, log: rawlog.New(rs.logBytes()), done: make(chan struct{})}
	h.mu.Lock()
	h.terms[uri] = r
	h.mu.Unlock()
	unregister := func() {
		h.mu.Lock()
		if h.terms[uri] == r {
			delete(h.terms, uri)
		}
		h.mu.Unlock()
	}
	snap, err := h.client().Subscribe(ctx, uri)
	if err != nil {
		unregister()
		return nil, fmt.Errorf("attach %s: %w", name, err)
	}
	st, err := client.TerminalState(snap)
	if err != nil {
		unregister()
		return nil, err
	}
	rs.mu.Lock()
	delete(rs.ended, name) // shown again: how it stands now is what counts
	rs.mu.Unlock()
	r.mu.Lock()
	r.claim = st.Claim
	r.mu.Unlock()
	r.routing.Lock()
	r.fromSeq, r.subscribed = snap.FromSeq, true
	r.log.Append([]byte(st.Text()))
	held := r.held
	r.held = nil
	for _, e := range held {
		if e.ServerSeq > r.fromSeq {
			rs.apply(h, r, e)
		}
	}
	r.routing.Unlock()
	if st.Exited() {
		rs.endRemote(r, termhost.ExitStatus{Code: st.ExitCode, Signal: st.ExitSignal}, "")
	}
	p := rs.disp.Show(r, nil, ch, args.Scrollback, func(lines []string) {
		rs.events.Push(event.DisplayEnded{ID: r.name, Lines: lines})
	})
	r.mu.Lock()
	r.pump = p
	r.mu.Unlock()
	rs.log.Info("attached to a remote terminal", "terminal", name)
	return map[string]any{"title": st.Title, "claim": event.Claim(st.Claim), "mine": st.Claim == rs.user, "seq": snap.FromSeq}, nil
}

// termOf returns attached remote terminal name.
func (rs *Terminals) termOf(name string) (*remoteTerm, error) {
	key, id, err := remoteName(name)
	if err != nil {
		return nil, err
	}
	rs.mu.Lock()
	h := rs.conns[key]
	rs.mu.Unlock()
	var r *remoteTerm
	if h != nil {
		uri := h.uriOf(id)
		h.mu.Lock()
		r = h.terms[uri]
		h.mu.Unlock()
	}
	if r != nil {
		return r, nil
	}
	if err, ok := rs.endedErr(name); ok {
		return nil, err
	}
	return nil, fmt.Errorf("%s is not shown here; :AgentAttach %s shows it", name, name)
}

// dispatchWait sends act to h and waits for its envelope: the serverSeq
// the host applied it at, or the host's reason when it refused.
func (rs *Terminals) dispatchWait(h *remoteHost, act ahp.Action) (uint64, error) {
	if err := h.usable(); err != nil {
		return 0, err
	}
	ctx, cancel := context.WithTimeout(rs.ctx, 5*time.Second)
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
		return 0, err
	}
	select {
	case e, ok := <-ch:
		if !ok {
			if h.key.where != "" {
				return 0, fmt.Errorf("the link to %s dropped before %s answered; try again once the split says it is back", h.key.where, h.label())
			}
			return 0, fmt.Errorf("%s went away", h.label())
		}
		if e.RejectionReason != "" {
			return 0, &refusal{label: h.label(), reason: e.RejectionReason}
		}
		return e.ServerSeq, nil
	case <-ctx.Done():
		return 0, fmt.Errorf("%s did not answer in 5 s", h.label())
	}
}

// refusal is a host's refusal of an action: its reason, as it gave it.
type refusal struct{ label, reason string }

func (e *refusal) Error() string { return e.label + " refused: " + e.reason }

// claimAt is the answer to a take or a let go: who holds the terminal
// once the host applied it, and the serverSeq it did so at (seq), which
// orders it with the remote_claimed events (Lua keeps whichever is
// newer: an event queued before the answer may come after it).
func (rs *Terminals) claimAt(c ahp.Claim, seq uint64) map[string]any {
	return map[string]any{"claim": event.Claim(c), "mine": c == rs.user, "seq": seq}
}

// Take claims remote terminal name for this editor's user ("remote_take").
func (rs *Terminals) Take(name string) (map[string]any, error) {
	r, err := rs.termOf(name)
	if err != nil {
		return nil, err
	}
	seq, err := rs.dispatchWait(r.host, ahp.ClaimedAction{Terminal: r.uri, Claim: rs.user})
	var no *refusal
	if errors.As(err, &no) && strings.HasPrefix(no.reason, "held by ") {
		// the same sentence as a takeover refused here: who holds it, and
		// what makes it let go
		return nil, fmt.Errorf("%s is %s", name, no.reason)
	}
	if err != nil {
		return nil, err
	}
	return rs.claimAt(rs.user, seq), nil
}

// LetGo gives back remote terminal name, which this editor's user holds
// ("remote_let_go"): to the Neovim that runs it, or to nobody once that
// one quit. Holding nothing of it, there is nothing to do.
// The answer is as take's (without seq when there was nothing to do).
func (rs *Terminals) LetGo(name string) (map[string]any, error) {
	r, err := rs.termOf(name)
	if err != nil {
		return nil, err
	}
	r.mu.Lock()
	holder := r.claim
	r.mu.Unlock()
	if holder != rs.user {
		return map[string]any{"claim": event.Claim(holder), "mine": false}, nil
	}
	nobody := ahp.ClientClaim(ahp.DetachedClient)
	seq, err := rs.dispatchWait(r.host, ahp.ClaimedAction{Terminal: r.uri, Claim: nobody})
	if err != nil {
		return nil, err
	}
	return rs.claimAt(nobody, seq), nil
}

// Input types data into remote terminal name (refused by its host unless
// we hold it; the refusal comes back as a message) ("remote_input").
func (rs *Terminals) Input(name string, data []byte) {
	r, err := rs.termOf(name)
	if err != nil {
		rs.notice(err.Error())
		return
	}
	r.mu.Lock()
	mine := r.claim == rs.user
	holder := r.claim
	r.mu.Unlock()
	if !mine {
		if holder.Kind == ahp.ClaimClient && holder.ClientID != ahp.DetachedClient {
			// a client holds it: named, with what frees it, as a refused
			// Take over says it (T would be refused too)
			held := &server.HeldError{ClientID: holder.ClientID, Local: holder.ClientID == fmt.Sprintf("nvim-%d", r.host.key.pid)}
			rs.notice(fmt.Sprintf("%s is %s", name, held))
			return
		}
		rs.notice(fmt.Sprintf("%s is %s; take it over (T) to type into it", name, heldBy(holder)))
		return
	}
	if err := r.host.usable(); err != nil {
		rs.notice(fmt.Sprintf("not typed into %s: %v", name, err))
		return
	}
	if _, err := r.host.client().Dispatch(rs.ctx, ahp.InputAction{Terminal: r.uri, Data: string(data)}); err != nil {
		rs.notice(fmt.Sprintf("input to %s: %v", name, err))
	}
}

// Resize sizes remote terminal name's pty to its split here, while
// we hold it (its host refuses a resize from anyone else; whoever holds a
// terminal sizes it).
func (rs *Terminals) Resize(name string, cols, rows int) error {
	r, err := rs.termOf(name)
	if err != nil {
		return nil // detached meanwhile: nothing to size
	}
	r.mu.Lock()
	mine := r.claim == rs.user
	r.mu.Unlock()
	if !mine || r.host.usable() != nil {
		return nil
	}
	if _, err := r.host.client().Dispatch(rs.ctx, ahp.ResizedAction{Terminal: r.uri, Cols: cols, Rows: rows}); err != nil {
		return fmt.Errorf("resize %s: %w", name, err)
	}
	return nil
}

// Dispose kills remote terminal name (its host's disposeTerminal)
// ("remote_dispose").
func (rs *Terminals) Dispose(name string) error {
	key, id, err := remoteName(name)
	if err != nil {
		return err
	}
	if err, ok := rs.endedErr(name); ok {
		return err
	}
	ctx, cancel := context.WithTimeout(rs.ctx, rs.timeout(key))
	defer cancel()
	h, err := rs.hostOf(ctx, key)
	if err != nil {
		return err
	}
	defer rs.doneWith(h)
	if err := h.usable(); err != nil {
		return err
	}
	uri := h.uriOf(id)
	h.mu.Lock()
	r := h.terms[uri]
	known := slices.ContainsFunc(h.root, func(ti ahp.TerminalInfo) bool { return ti.Resource == uri })
	h.mu.Unlock()
	if key.where != "" && !known {
		return fmt.Errorf("no terminal %s on host %d on %s; :AgentAttach %s lists them", id, key.pid, key.where, key.where)
	}
	if err := h.client().DisposeTerminal(ctx, uri); err != nil {
		return fmt.Errorf("kill %s: %w", name, err)
	}
	if r != nil {
		// Shown here: its end (the host's exited envelope) is recorded
		// before the answer, so what comes next knows it ended.
		select {
		case <-r.done:
		case <-ctx.Done():
		}
	}
	return nil
}

// timeout bounds a call that may connect to host key: a remote machine's
// link may take ssh's ConnectTimeout (15 s) to start.
func (rs *Terminals) timeout(key hostKey) time.Duration {
	if key.where != "" {
		return 30 * time.Second
	}
	return 5 * time.Second
}

// holderText names a claim's holder for a person.
func holderText(c ahp.Claim) string {
	switch {
	case c.Kind == ahp.ClaimClient && c.ClientID == ahp.DetachedClient:
		return "nobody (detached)"
	case c.Kind == ahp.ClaimClient:
		return ahp.ClientName(c.ClientID)
	}
	return "the agent"
}

// heldBy says who holds a terminal, after "is": "held by the agent",
// "detached: nobody holds it".
func heldBy(c ahp.Claim) string {
	if c.Kind == ahp.ClaimClient && c.ClientID == ahp.DetachedClient {
		return "detached: nobody holds it"
	}
	return "held by " + holderText(c)
}
