package editor

import (
	"context"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/agentrun/agentrun.nvim/ahp/server"
	"github.com/agentrun/agentrun.nvim/internal/event"
	"github.com/agentrun/agentrun.nvim/internal/rundir"
	"github.com/agentrun/agentrun.nvim/internal/sshlink"
	"github.com/neovim/go-client/nvim"
)

// A backend on another machine (setup's Site) outlives a link that drops:
// its agents go on with their turns and their commands run on, while it
// waits (lingers) on a socket of its own in the user's socket directory,
// PID.backend (0600, in the 0700 directory; only the same user's
// processes are let in). `agentrun serve-backend --resume` there joins a
// new link to that socket (RelayTo), and the Neovim at its other end
// (the same one, or a new one) takes the sessions over with "resume": it
// is told which sessions run and gets every event of them again, in
// order, as the chat showed them (and the user's prompts), then what
// happens next. It lingers while a session runs; when the last one ends
// it ends as a dropped link did before: its running commands stay, as
// detached terminals, for :AgentAttach. It lingers at most lingerFor
// (remote.wait_hours): a machine never reached again does not keep its
// agents running for ever; then it ends the same way (its agents stop,
// the commands stay).

// lingerSuffix ends the socket a lingering backend waits on.
const lingerSuffix = ".backend"

// lingerCheck is how often a lingering backend looks whether any of its
// sessions still runs.
const lingerCheck = time.Second

// nvimLink returns the current Neovim's RPC client (another one after a
// resume).
func (b *Bridge) nvimLink() *nvim.Nvim {
	return b.v.Load() // no lock: every display send asks
}

// shouldLinger reports whether the end of Neovim's channel leaves this
// backend waiting for another: it runs on another machine than its
// Neovim, was not asked to shut down, and a session still runs.
func (b *Bridge) shouldLinger() bool {
	b.mu.Lock()
	remote, asked := b.site != "", b.shutdownAsked
	b.mu.Unlock()
	return remote && !asked && b.sessions.Running() > 0
}

// linger waits on the backend's socket for a link to take the sessions
// over and returns its connection; nil when no session runs any more or
// ctx ends first. Meanwhile nothing goes to any Neovim: events wait (and
// are kept) and the displays' pumps stop.
func (b *Bridge) linger(ctx context.Context) net.Conn {
	b.events.Pause()
	b.terminals.StopPumps() // other hosts' terminals' pumps end at their next send (errLinkGone)
	dir, err := rundir.Dir()
	if err != nil {
		b.log.Warn("cannot linger: no socket directory", "err", err)
		return nil
	}
	path := filepath.Join(dir, strconv.Itoa(os.Getpid())+lingerSuffix)
	ln, err := server.Listen(path)
	if err != nil {
		b.log.Warn("cannot linger", "socket", path, "err", err)
		return nil
	}
	defer os.Remove(path)
	defer ln.Close()
	b.log.Info("link dropped; lingering for a new one", "socket", path, "sessions", b.sessions.Running())
	conns := make(chan net.Conn)
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			if err := server.CheckPeer(c, os.Getuid()); err != nil {
				b.log.Warn("lingering: a connection refused", "err", err)
				c.Close()
				continue
			}
			select {
			case conns <- c:
			case <-ctx.Done():
				c.Close()
				return
			}
			return
		}
	}()
	tick := time.NewTicker(lingerCheck)
	defer tick.Stop()
	b.mu.Lock()
	limit := b.lingerFor
	b.mu.Unlock()
	var expired <-chan time.Time
	if limit > 0 {
		timer := time.NewTimer(limit)
		defer timer.Stop()
		expired = timer.C
	}
	for {
		select {
		case c := <-conns:
			b.log.Info("a new link takes the sessions over")
			return c
		case <-tick.C:
			if b.sessions.Running() == 0 {
				b.log.Info("no session runs any more; lingering ends")
				return nil
			}
		case <-expired:
			b.log.Info("no new link came; lingering ends, the agents stop", "waited", limit, "sessions", b.sessions.Running())
			return nil
		case <-ctx.Done():
			return nil
		}
	}
}

// serveLink starts serving Neovim's RPC on conn (stdio at first, a
// resumed link's socket later): the bridge calls that Neovim from now on.
// It returns the client and the channel its Serve's end is sent on.
func (b *Bridge) serveLink(in io.ReadCloser, out io.WriteCloser) (*nvim.Nvim, <-chan error, error) {
	v, err := nvim.New(in, out, out, func(format string, args ...any) {
		b.log.Debug("nvim rpc: " + fmt.Sprintf(format, args...))
	})
	if err != nil {
		return nil, nil, fmt.Errorf("connect to neovim: %w", err)
	}
	b.v.Store(v)
	if err := b.register(v); err != nil {
		return nil, nil, err
	}
	served := make(chan error, 1)
	go func() { served <- v.Serve() }()
	return v, served, nil
}

// resumeArgs is what a Neovim taking a lingering backend's sessions over
// says first, in place of setup.
type resumeArgs struct {
	PluginVersion string `msgpack:"plugin_version"`
}

// handleResume ("resume") hands the sessions of a lingering backend to
// the Neovim of the new link: their keys (in the order they started),
// agents and whether a turn runs, then every kept event of them in order
// (run by Lua after it has read this answer). A backend never set up
// answers {fresh = true}: Lua's first call on any link to another
// machine is resume, as the link may have reached a new backend.
func (b *Bridge) handleResume(args resumeArgs) (map[string]any, error) {
	if err := checkVersion(b.version, args.PluginVersion); err != nil {
		return nil, err
	}
	b.mu.Lock()
	site := b.site
	b.mu.Unlock()
	if site == "" {
		// a new backend (nothing waited for a link there): the caller
		// sets it up
		return map[string]any{"fresh": true, "version": b.version}, nil
	}
	list := b.sessions.RunningList()
	live := map[string]bool{}
	for _, s := range list {
		live[s["key"].(string)] = true
	}
	dropped := b.events.Replay(func(log []event.Event) []event.Event {
		return replayOf(log, live, b.questions.IsOpen)
	})
	return map[string]any{"version": b.version, "pid": os.Getpid(), "site": site, "sessions": list, "dropped_events": dropped}, nil
}

// keepNoteArgs is a chat's record of a question (ask.lua's note).
type keepNoteArgs struct {
	Text     string `msgpack:"text"`
	ToolCall string `msgpack:"tool_call"`
}

// handleKeepNote ("keep_note", a notification) keeps a line session key's
// chat shows about a question for a replay (only a backend on another
// machine replays); the same line again (written again by a replay) is
// kept once.
func (b *Bridge) handleKeepNote(key string, args keepNoteArgs) {
	b.mu.Lock()
	remote := b.site != ""
	id := key + "\x00" + args.ToolCall + "\x00" + args.Text
	seen := b.keptNotes[id]
	if remote && !seen {
		if b.keptNotes == nil {
			b.keptNotes = map[string]bool{}
		}
		b.keptNotes[id] = true
	}
	b.mu.Unlock()
	if remote && !seen {
		b.events.PushReplayOnly(event.ChatNote{Key: key, Text: args.Text, ToolCall: args.ToolCall})
	}
}

// replayOf picks from the kept events those a Neovim taking sessions live
// over must have, in order: everything of those sessions (their
// terminals' too) but questions already answered or withdrawn. Events
// about nothing of theirs (messages of no session, other hosts' claims)
// are not repeated.
func replayOf(log []event.Event, live map[string]bool, open func(token string) bool) []event.Event {
	var out []event.Event
	terms := map[string]bool{}
	for _, e := range log {
		key, id := event.Field(e.Payload, "key"), event.Field(e.Payload, "id")
		switch e.Name {
		case event.NameTerminalCreated:
			if !live[event.Field(e.Payload, "session")] {
				continue
			}
			terms[id] = true
		case event.NameTerminalExit, event.NameTerminalReleased, event.NameTerminalActivity, event.NameDisplayEnded:
			// (by the terminal's id: the ports it listens on, its end)
			if !terms[id] {
				continue
			}
		case event.NamePermission, event.NameApprove:
			if !live[key] || !open(event.Field(e.Payload, "token")) {
				continue
			}
		case event.NamePermissionCancelled, event.NameApproveCancelled, event.NameRemoteClaimed, event.NameSSHConnected, event.NameSessionList:
			continue
		default:
			if !live[key] {
				continue
			}
		}
		e.ReplayOnly = false
		out = append(out, e)
	}
	return out
}

// Lingering lists the process ids of this user's lingering backends,
// newest first.
func Lingering() ([]int, error) {
	dir, err := rundir.Dir()
	if err != nil {
		return nil, err
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var pids []int
	for _, e := range entries {
		if pid, err := strconv.Atoi(strings.TrimSuffix(e.Name(), lingerSuffix)); err == nil && strings.HasSuffix(e.Name(), lingerSuffix) {
			pids = append(pids, pid)
		}
	}
	slices.Sort(pids)
	slices.Reverse(pids)
	return pids, nil
}

// DialLingering connects to the lingering backend pid (0: the newest
// that answers); sshlink.ErrNothingLingers when no backend of this user
// waits for a link (or not the one asked for).
func DialLingering(pid int) (net.Conn, int, error) {
	pids, err := Lingering()
	if err != nil {
		return nil, 0, err
	}
	if pid != 0 {
		pids = slices.DeleteFunc(pids, func(p int) bool { return p != pid })
	}
	dir, _ := rundir.Dir()
	for _, p := range pids {
		path := filepath.Join(dir, strconv.Itoa(p)+lingerSuffix)
		c, err := net.Dial("unix", path)
		if err != nil {
			_ = os.Remove(path) // a backend that died lingering
			continue
		}
		return c, p, nil
	}
	return nil, 0, sshlink.ErrNothingLingers
}

// RelayTo joins in and out (a new link) to c, a lingering backend's
// socket (DialLingering), until either side ends: the end of in (the
// link dropped again, or its Neovim closed it) leaves the backend
// lingering again.
func RelayTo(ctx context.Context, c net.Conn, in io.Reader, out io.Writer) {
	defer c.Close()
	done := make(chan struct{}, 2)
	go func() {
		_, _ = io.Copy(c, in)
		if uc, ok := c.(*net.UnixConn); ok {
			_ = uc.CloseWrite()
		}
		done <- struct{}{}
	}()
	go func() {
		_, _ = io.Copy(out, c)
		done <- struct{}{}
	}()
	select {
	case <-done:
	case <-ctx.Done():
	}
}
