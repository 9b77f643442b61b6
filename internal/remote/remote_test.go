package remote

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agentrun/agentrun.nvim/ahp"
	"github.com/agentrun/agentrun.nvim/ahp/server"
	"github.com/agentrun/agentrun.nvim/internal/display"
	"github.com/agentrun/agentrun.nvim/internal/display/displaytest"
	"github.com/agentrun/agentrun.nvim/internal/event"
	"github.com/agentrun/agentrun.nvim/internal/event/eventtest"
	"github.com/agentrun/agentrun.nvim/internal/rundir"
	"github.com/agentrun/agentrun.nvim/internal/wait"
	"github.com/agentrun/agentrun.nvim/termhost"
)

func TestRemoteName(t *testing.T) {
	cases := []struct {
		name   string
		where  string
		pid    int
		id     string
		errHas string
	}{
		{name: "123:term-4", pid: 123, id: "term-4"},
		{name: "ssh://devbox/123:term-4", where: "ssh://devbox", pid: 123, id: "term-4"},
		{name: "ssh://me@devbox:2222/123:term-4", where: "ssh://me@devbox:2222", pid: 123, id: "term-4"},
		{name: "term-4", errHas: "is not a remote terminal name"},
		{name: "x:term-4", errHas: "is not a remote terminal name"},
		{name: "123:", errHas: "is not a remote terminal name"},
		{name: "ssh://devbox", errHas: "names a machine, not a terminal: :AgentAttach ssh://devbox lists its terminals"},
		{name: "ssh://devbox/term-4", errHas: "names no terminal: after the machine comes PID:term-N"},
		{name: "ssh://devbox/123:term-4/x", errHas: "names no terminal"},
		{name: "ssh://devbox:0/123:term-4", errHas: "not a number from 1 to 65535"},
		{name: "ssh:///123:term-4", errHas: "names no host"},
	}
	for _, tc := range cases {
		key, id, err := remoteName(tc.name)
		if tc.errHas != "" {
			if err == nil || !strings.Contains(err.Error(), tc.errHas) {
				t.Errorf("remoteName(%q) = %v, %q, %v; want an error with %q", tc.name, key, id, err, tc.errHas)
			}
			continue
		}
		if err != nil || key != (hostKey{where: tc.where, pid: tc.pid}) || id != tc.id {
			t.Errorf("remoteName(%q) = %v, %q, %v; want %q %d, %q", tc.name, key, id, err, tc.where, tc.pid, tc.id)
		}
	}
}

// remoteRig is another host serving its terminals on a Unix socket, and
// this editor's remotes part reaching it as host 1.
type remoteRig struct {
	host   *termhost.Host
	dir    string
	ln     *countingListener // the connections the host accepted
	rs     *Terminals
	events *event.Queue
	out    *displaytest.Channels // what the displays sent, by Neovim channel
}

func newRemoteRig(t *testing.T) *remoteRig {
	t.Helper()
	dir, err := os.MkdirTemp("", "ar-remote")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	socket := filepath.Join(dir, "1.sock")
	r := &remoteRig{host: termhost.NewHost(termhost.Options{}), dir: dir, events: event.NewQueue(), out: &displaytest.Channels{}}
	t.Cleanup(r.host.Close)
	inner, err := server.Listen(socket)
	if err != nil {
		t.Fatal(err)
	}
	r.ln = &countingListener{Listener: inner}
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan struct{})
	go func() {
		defer close(served)
		_ = server.New(r.host, server.Options{Local: "other"}).Serve(ctx, r.ln)
	}()
	t.Cleanup(func() { cancel(); <-served })
	log := slog.New(slog.DiscardHandler)
	r.rs = New(ctx, log, r.events, display.ToChannels(ctx, log, r.out.Send), Options{
		User:         ahp.ClientClaim("me"),
		DisplayBytes: func() int { return 0 },
		Hosts:        func() ([]rundir.Host, error) { return []rundir.Host{{PID: 1, Socket: socket}}, nil },
		SocketOf: func(pid int) (string, error) {
			if pid != 1 {
				return "", fmt.Errorf("no host %d", pid)
			}
			return socket, nil
		},
	})
	return r
}

// run starts line in a shell on the rig's host, held by an agent's session.
func (r *remoteRig) run(t *testing.T, line string) *termhost.Terminal {
	t.Helper()
	term, err := r.host.Create(context.Background(), termhost.Spec{Command: line, Shell: true, Dir: r.dir, Claim: ahp.SessionClaim("s1", "")})
	if err != nil {
		t.Fatal(err)
	}
	return term
}

// TestRemotesJourney: another host's terminal, as this editor's user
// follows it: listed, shown, typed into only once taken, disposed of.
func TestRemotesJourney(t *testing.T) {
	rig := newRemoteRig(t)
	term := rig.run(t, "printf 'ready\\n'; exec cat")
	rs, events, out := rig.rs, rig.events, rig.out
	name := "1:" + term.ID()

	list, err := rs.List()
	if err != nil || len(list) != 1 || list[0]["id"] != name || list[0]["mine"] != false || list[0]["state"] != "running" {
		t.Fatalf("list = %v, %v; want %s running, not mine", list, err, name)
	}
	if _, err := rs.Attach("1:", 7, display.Buffer{}); err == nil {
		t.Error("attach of a bad name did not fail")
	}
	shown, err := rs.Attach(name, 7, display.Buffer{Scrollback: 100})
	if err != nil || shown["mine"] != false {
		t.Fatalf("attach = %v, %v", shown, err)
	}
	wait.Until(t, "the remote terminal output in its buffer", 10*time.Second, func() (bool, string) {
		return strings.Contains(out.Text(7), "ready"), fmt.Sprintf("%q; term %q", out.Text(7), term.LastLine())
	})

	rs.Input(name, []byte("early\r"))
	if n := eventtest.Named(events, event.NameMessage); len(n) != 1 || !strings.HasPrefix(n[0]["text"].(string), name+" is held by the agent; take it over (T)") {
		t.Errorf("input into a terminal the agent holds: messages %v, want one saying who holds it (Lua adds the prefix)", n)
	}
	if err := rs.Resize(name, 50, 10); err != nil {
		t.Errorf("resize of a terminal the agent holds: %v, want it skipped", err)
	}

	took, err := rs.Take(name)
	if err != nil || took["mine"] != true || took["seq"] == nil {
		t.Fatalf("take: %v, %v", took, err)
	}
	wait.For(t, "remote_claimed saying it is mine", 10*time.Second, func() bool {
		c := eventtest.Named(events, event.NameRemoteClaimed)
		return len(c) > 0 && c[len(c)-1]["mine"] == true
	})
	// the event and the answer carry the same serverSeq: Lua orders them
	if c := eventtest.Named(events, event.NameRemoteClaimed); fmt.Sprint(c[len(c)-1]["seq"]) != fmt.Sprint(took["seq"]) {
		t.Errorf("remote_claimed %v, the take answered %v: want the same seq", c[len(c)-1], took)
	}
	rs.Input(name, []byte("typed\r"))
	wait.For(t, "the typed line echoed back", 10*time.Second, func() bool {
		return strings.Count(out.Text(7), "typed") >= 2 // the pty's echo and cat's
	})
	if err := rs.Resize(name, 50, 10); err != nil {
		t.Errorf("resize: %v", err)
	}
	wait.For(t, "the resize applied", 10*time.Second, func() bool {
		st := term.StateSummary(0)
		return st.Cols == 50 && st.Rows == 10
	})

	wait.For(t, "the list to show its last line", 10*time.Second, func() bool {
		list, err := rs.List()
		return err == nil && len(list) == 1 && list[0]["last_line"] == "typed"
	})

	if err := rs.Dispose(name); err != nil {
		t.Fatalf("dispose: %v", err)
	}
	// At once (its host may have dropped it, or gone): what follows says
	// it ended, and how.
	ended := name + " ended (signal SIGTERM)"
	_, takeErr := rs.Take(name)
	for what, err := range map[string]error{"take": takeErr, "dispose": rs.Dispose(name)} {
		if err == nil || err.Error() != ended {
			t.Errorf("%s after the end: %v, want %q", what, err, ended)
		}
	}
	wait.For(t, "the connection dropped once nothing of the host is shown", 10*time.Second, func() bool {
		rs.mu.Lock()
		defer rs.mu.Unlock()
		return len(rs.conns) == 0
	})
	if _, err := rs.termOf(name); err == nil {
		t.Error("a disposed remote terminal is still attached")
	}
}

// countingListener counts the connections a host accepted.
type countingListener struct {
	net.Listener
	n atomic.Int64
}

func (l *countingListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err == nil {
		l.n.Add(1)
	}
	return c, err
}

// TestRemoteListKeepsEndedLastLines: the terminal list asks every second
// while it is shown; an ended terminal's last line no longer changes, so
// once read it is kept, and listing it again opens no second connection
// for it — the line stays the same.
func TestRemoteListKeepsEndedLastLines(t *testing.T) {
	rig := newRemoteRig(t)
	<-rig.run(t, "printf 'all done\\n'").Done()
	rs, ln := rig.rs, rig.ln
	var per []int64
	for range 3 {
		before := ln.n.Load()
		list, err := rs.List()
		if err != nil || len(list) != 1 || list[0]["state"] != "exited" || list[0]["last_line"] != "all done" {
			t.Fatalf("list = %v, %v; want the ended terminal with its last line", list, err)
		}
		per = append(per, ln.n.Load()-before)
	}
	if per[1] >= per[0] || per[2] != per[1] {
		t.Errorf("connections per listing %v: the ended terminal's last line was read again", per)
	}
}

// TestHeldBy: who holds a terminal, as a sentence says it.
func TestHeldBy(t *testing.T) {
	for _, tc := range []struct {
		claim ahp.Claim
		want  string
	}{
		{ahp.SessionClaim("s1", ""), "held by the agent"},
		{ahp.ClientClaim("nvim-12"), "held by Neovim 12"},
		{ahp.ClientClaim(ahp.DetachedClient), "detached: nobody holds it"},
	} {
		if got := heldBy(tc.claim); got != tc.want {
			t.Errorf("heldBy(%+v) = %q, want %q", tc.claim, got, tc.want)
		}
	}
}

// TestRemoteAttachLosesNothing: a split attached to another host's
// terminal while it prints shows every line, in order: what the host
// sends between its snapshot and the attach's registration is held, not
// dropped (a line went missing under load). Eight terminals, each
// attached once while it prints.
func TestRemoteAttachLosesNothing(t *testing.T) {
	rig := newRemoteRig(t)
	const n = 3000
	var names []string
	for range 8 {
		term := rig.run(t, fmt.Sprintf("for i in $(seq 1 %d); do echo n$i; done; sleep 1", n))
		names = append(names, "1:"+term.ID())
	}
	for ch, name := range names {
		time.Sleep(time.Duration(ch) * time.Millisecond)
		if _, err := rig.rs.Attach(name, ch, display.Buffer{Scrollback: 2 * n}); err != nil {
			t.Fatalf("attach %s: %v", name, err)
		}
	}
	last := regexp.MustCompile(`n(\d+)\r\n`)
	for ch, name := range names {
		wait.Until(t, fmt.Sprintf("%s to show its last line", name), 10*time.Second, func() (bool, string) {
			return strings.Contains(rig.out.Text(ch), fmt.Sprintf("n%d\r\n", n)), ""
		})
		shown := regexp.MustCompile(`\x1b\[[?0-9;]*[a-zA-Z]`).ReplaceAllString(rig.out.Text(ch), "") // the guards before each write
		lines := last.FindAllStringSubmatch(shown, -1)
		for i := 1; i < len(lines); i++ {
			prev, _ := strconv.Atoi(lines[i-1][1])
			cur, _ := strconv.Atoi(lines[i][1])
			if cur != prev+1 {
				t.Fatalf("%s: n%d follows n%d", name, cur, prev)
			}
		}
	}
}
