package server

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentrun/agentrun.nvim/ahp"
	"github.com/agentrun/agentrun.nvim/ahp/client"
	"github.com/agentrun/agentrun.nvim/internal/wait"
	"github.com/agentrun/agentrun.nvim/termhost"
)

const timeout = 15 * time.Second

// fixture is a host serving on a socket in a temporary directory.
type fixture struct {
	t    *testing.T
	host *termhost.Host
	srv  *Server
	path string
}

func serve(t *testing.T, opts Options) *fixture {
	t.Helper()
	h := termhost.NewHost(termhost.Options{KillGrace: 500 * time.Millisecond})
	t.Cleanup(h.Close)
	dir, err := os.MkdirTemp("", "ahp") // short: a socket path is at most 107 bytes
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	path := filepath.Join(dir, "h.sock")
	ln, err := Listen(path)
	if err != nil {
		t.Fatal(err)
	}
	opts.Logf = t.Logf
	srv := New(h, opts)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		if err := srv.Serve(ctx, ln); err != nil {
			t.Errorf("Serve: %v", err)
		}
	}()
	t.Cleanup(func() { cancel(); <-done })
	return &fixture{t: t, host: h, srv: srv, path: path}
}

// client dials and initializes as id.
func (f *fixture) client(id string, subs ...string) (*client.Client, ahp.InitializeResult) {
	f.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	c, err := client.Dial(ctx, f.path, id)
	if err != nil {
		f.t.Fatal(err)
	}
	f.t.Cleanup(func() { c.Close() })
	res, err := c.Initialize(ctx, subs...)
	if err != nil {
		f.t.Fatalf("initialize %s: %v", id, err)
	}
	return c, res
}

// start runs a shell line in a terminal held by a session.
func (f *fixture) start(line string) *termhost.Terminal {
	f.t.Helper()
	term, err := f.host.Create(context.Background(), termhost.Spec{Command: line, Shell: true, Dir: f.t.TempDir(), Claim: ahp.SessionClaim("s:/1", "tc1")})
	if err != nil {
		f.t.Fatal(err)
	}
	return term
}

// follower applies a client's envelopes for one terminal to its snapshot.
type follower struct {
	mu    sync.Mutex
	state ahp.TerminalState
	envs  []ahp.Envelope // every envelope received, rejected ones too
	done  chan struct{}  // closed once the connection's envelopes ended
}

func follow(t *testing.T, c *client.Client, uri string) *follower {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	snap, err := c.Subscribe(ctx, uri)
	if err != nil {
		t.Fatalf("subscribe %s: %v", uri, err)
	}
	st, err := client.TerminalState(snap)
	if err != nil {
		t.Fatal(err)
	}
	fl := &follower{state: st, done: make(chan struct{})}
	go func() {
		defer close(fl.done)
		for e := range c.Envelopes() {
			fl.mu.Lock()
			fl.envs = append(fl.envs, e)
			if e.RejectionReason == "" && e.ServerSeq > snap.FromSeq && ahp.ActionTerminal(e.Action) == uri {
				fl.state.Apply(e.Action)
			}
			fl.mu.Unlock()
		}
	}()
	return fl
}

// lastSeen is the newest serverSeq of the envelopes applied (what a
// client reconnects with).
func (fl *follower) lastSeen() uint64 {
	fl.mu.Lock()
	defer fl.mu.Unlock()
	var last uint64
	for _, e := range fl.envs {
		if e.RejectionReason == "" {
			last = max(last, e.ServerSeq)
		}
	}
	return last
}

func (fl *follower) text() string {
	fl.mu.Lock()
	defer fl.mu.Unlock()
	return fl.state.Text()
}

func (fl *follower) find(match func(ahp.Envelope) bool) (ahp.Envelope, bool) {
	fl.mu.Lock()
	defer fl.mu.Unlock()
	for _, e := range fl.envs {
		if match(e) {
			return e, true
		}
	}
	return ahp.Envelope{}, false
}

// TestTwoClientsSeeTheSameLiveOutput: two clients subscribed to a
// command's terminal follow it live and end with exactly its content.
func TestTwoClientsSeeTheSameLiveOutput(t *testing.T) {
	f := serve(t, Options{})
	term := f.start(`for i in $(seq 1 300); do echo "line $i"; done; sleep 0.3; for i in $(seq 301 600); do echo "line $i"; done`)
	a, _ := f.client("a")
	b, _ := f.client("b")
	fa, fb := follow(t, a, term.URI()), follow(t, b, term.URI())
	wait.For(t, "both clients to see the first half live", timeout, func() bool {
		return strings.Contains(fa.text(), "line 300\r\n") && strings.Contains(fb.text(), "line 300\r\n")
	})
	if _, done := term.Exited(); done {
		t.Fatal("the command ended before the clients saw its first half: not live")
	}
	if _, err := term.Wait(context.Background()); err != nil {
		t.Fatal(err)
	}
	want := term.State().Text()
	wait.Until(t, "both clients to hold the terminal's content", timeout, func() (bool, string) {
		return fa.text() == want && fb.text() == want, fmt.Sprintf("a %d bytes, b %d, want %d", len(fa.text()), len(fb.text()), len(want))
	})
}

// TestClaimRace: two clients take a session's terminal over at once:
// exactly one holds it, the other's claim comes back with the reason.
func TestClaimRace(t *testing.T) {
	for round := 0; round < 20; round++ {
		f := serve(t, Options{})
		term := f.start("sleep 30")
		a, _ := f.client("a")
		b, _ := f.client("b")
		fa, fb := follow(t, a, term.URI()), follow(t, b, term.URI())
		var wg sync.WaitGroup
		for _, c := range []*client.Client{a, b} {
			wg.Add(1)
			go func() {
				defer wg.Done()
				if _, err := c.Dispatch(context.Background(), ahp.ClaimedAction{Terminal: term.URI(), Claim: ahp.ClientClaim(c.ID())}); err != nil {
					t.Error(err)
				}
			}()
		}
		wg.Wait()
		winner := term.Claims().Holder().ClientID
		loser, fl := "b", fb
		if winner == "b" {
			loser, fl = "a", fa
		} else if winner != "a" {
			t.Fatalf("claim %+v after both claimed", term.Claims().Holder())
		}
		env, ok := func() (ahp.Envelope, bool) {
			var e ahp.Envelope
			var ok bool
			wait.For(t, "the loser's rejection", timeout, func() bool {
				e, ok = fl.find(func(e ahp.Envelope) bool { return e.RejectionReason != "" })
				return ok
			})
			return e, ok
		}()
		if !ok || env.Origin == nil || env.Origin.ClientID != loser || !strings.Contains(env.RejectionReason, fmt.Sprintf("held by client %q", winner)) {
			t.Fatalf("round %d: loser %s got %+v", round, loser, env)
		}
		term.Release()
	}
}

// TestInputNeedsTheClaim: input from a client that does not hold the
// terminal is refused with the holder named; once it holds it, its input
// reaches the program, and everyone sees the echo with its origin.
func TestInputNeedsTheClaim(t *testing.T) {
	f := serve(t, Options{})
	term := f.start(`read line; echo "got $line"`)
	a, _ := f.client("a")
	watcher, _ := f.client("w")
	fa, fw := follow(t, a, term.URI()), follow(t, watcher, term.URI())
	ctx := context.Background()
	seq, _ := a.Dispatch(ctx, ahp.InputAction{Terminal: term.URI(), Data: "early\r"})
	wait.For(t, "the refusal", timeout, func() bool {
		_, ok := fa.find(func(e ahp.Envelope) bool {
			return e.Origin != nil && e.Origin.ClientSeq == seq && strings.Contains(e.RejectionReason, `needs the terminal's claim, which session "s:/1" (tool call tc1) holds`)
		})
		return ok
	})
	if _, err := a.Dispatch(ctx, ahp.ClaimedAction{Terminal: term.URI(), Claim: ahp.ClientClaim("a")}); err != nil {
		t.Fatal(err)
	}
	seq, _ = a.Dispatch(ctx, ahp.InputAction{Terminal: term.URI(), Data: "hello\r"})
	wait.For(t, "the program's answer in both clients", timeout, func() bool {
		return strings.Contains(fa.text(), "got hello") && strings.Contains(fw.text(), "got hello")
	})
	if _, ok := fw.find(func(e ahp.Envelope) bool {
		_, claimed := e.Action.(ahp.ClaimedAction)
		return claimed && e.Origin != nil && e.Origin.ClientID == "a"
	}); !ok {
		t.Error("the watcher saw no claim with client a's origin")
	}
	// The echo is published once the input is written, so it may come
	// after the output the input caused.
	wait.For(t, "the watcher to see the echo of a's input", timeout, func() bool {
		_, ok := fw.find(func(e ahp.Envelope) bool {
			_, input := e.Action.(ahp.InputAction)
			return input && e.Origin != nil && e.Origin.ClientSeq == seq
		})
		return ok
	})
	if strings.Contains(fa.text(), "early") {
		t.Error("refused input reached the program")
	}
}

// TestReconnectReplaysExactlyWhatWasMissed: a client drops, the terminal
// goes on; reconnecting with its last serverSeq returns the envelopes it
// missed, in order, the same an observer that stayed received.
func TestReconnectReplaysExactlyWhatWasMissed(t *testing.T) {
	f := serve(t, Options{})
	term := f.start(`for i in $(seq 1 50); do echo "tick $i"; sleep 0.02; done`)
	observer, _ := f.client("observer")
	fo := follow(t, observer, term.URI())
	c, _ := f.client("c")
	fc := follow(t, c, term.URI())
	wait.For(t, "a few ticks", timeout, func() bool { return strings.Contains(fc.text(), "tick 5\r\n") })
	c.Close()
	<-fc.done
	last := fc.lastSeen()
	wait.For(t, "more ticks while c is away", timeout, func() bool { return strings.Contains(fo.text(), "tick 25\r\n") })

	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	c2, err := client.Dial(ctx, f.path, "c")
	if err != nil {
		t.Fatal(err)
	}
	defer c2.Close()
	// What the observer had after last, taken before reconnecting: the
	// replay holds at least these, in this order, and then some.
	var want []uint64
	fo.mu.Lock()
	for _, e := range fo.envs {
		if e.ServerSeq > last && e.RejectionReason == "" {
			want = append(want, e.ServerSeq)
		}
	}
	fo.mu.Unlock()
	var res ahp.ReconnectResult
	err = c2.Call(ctx, ahp.MethodReconnect, ahp.ReconnectParams{ClientID: "c", LastSeenServerSeq: last, Subscriptions: []string{term.URI()}}, &res)
	if err != nil {
		t.Fatal(err)
	}
	if res.Type != ahp.ReconnectReplay || len(res.Missing) != 0 {
		t.Fatalf("reconnect %s, missing %v", res.Type, res.Missing)
	}
	var got []uint64
	for _, e := range res.Actions {
		got = append(got, e.ServerSeq)
	}
	if len(got) < len(want) || fmt.Sprint(got[:len(want)]) != fmt.Sprint(want) {
		t.Fatalf("replayed %v\nwant the observer's %v first", got, want)
	}
	for i := 1; i < len(got); i++ {
		if got[i] <= got[i-1] {
			t.Fatalf("replay out of order: %v", got)
		}
	}
	// Replaying onto what c had gives what the observer has.
	fc.mu.Lock()
	st := fc.state.Clone()
	fc.mu.Unlock()
	for _, e := range res.Actions {
		st.Apply(e.Action)
	}
	if !strings.HasPrefix(fo.text(), st.Text()) || !strings.Contains(st.Text(), "tick 25\r\n") {
		t.Fatalf("c after replay:\n%q\nobserver:\n%q", st.Text(), fo.text())
	}
}

// TestOtherUsersAreRefused: a server for another uid refuses us, saying why.
func TestOtherUsersAreRefused(t *testing.T) {
	f := serve(t, Options{UID: os.Getuid() + 4242})
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	c, err := client.Dial(ctx, f.path, "intruder")
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	_, err = c.Initialize(ctx)
	if err == nil || !strings.Contains(err.Error(), fmt.Sprintf("of uid %d is not the host's user (uid %d)", os.Getuid(), os.Getuid()+4242)) {
		t.Fatalf("initialize as another user: %v", err)
	}
	if f.srv.Clients() != 0 {
		t.Fatal("the refused client counts as connected")
	}
}

// TestCreateListDispose: a client creates a shell, sees it in the root
// listing, disposes of it; unknown terminals are errors naming them.
func TestCreateListDispose(t *testing.T) {
	f := serve(t, Options{Shell: "/bin/sh"})
	c, res := f.client("c", ahp.RootURI)
	if len(res.Snapshots) != 1 || res.Snapshots[0].Resource != ahp.RootURI {
		t.Fatalf("initialize snapshots %+v", res.Snapshots)
	}
	ctx := context.Background()
	uri := ahp.TerminalURI("mine")
	if err := c.CreateTerminal(ctx, ahp.CreateTerminalParams{Terminal: uri, Claim: ahp.ClientClaim("c"), Name: "my shell", Cwd: ahp.FileURI(t.TempDir())}); err != nil {
		t.Fatal(err)
	}
	listed := func(want bool) {
		t.Helper()
		wait.For(t, fmt.Sprintf("the listing to have %s: %v", uri, want), timeout, func() bool {
			for _, ti := range f.srv.listing() {
				if ti.Resource == uri {
					return want && ti.Title == "my shell"
				}
			}
			return !want
		})
	}
	listed(true)
	if err := c.CreateTerminal(ctx, ahp.CreateTerminalParams{Terminal: uri, Claim: ahp.ClientClaim("c")}); err == nil || !strings.Contains(err.Error(), `terminal id "mine" is taken`) {
		t.Fatalf("second create at the same URI: %v", err)
	}
	if err := c.DisposeTerminal(ctx, uri); err != nil {
		t.Fatal(err)
	}
	listed(false)
	if err := c.DisposeTerminal(ctx, ahp.TerminalURI("nope")); err == nil || !strings.Contains(err.Error(), `no terminal "nope" here`) {
		t.Fatalf("dispose unknown: %v", err)
	}
	if _, err := c.Subscribe(ctx, ahp.TerminalURI("nope")); err == nil || !strings.Contains(err.Error(), `no resource "agenthost:/terminal/nope" here`) {
		t.Fatalf("subscribe unknown: %v", err)
	}
}

// TestExtensionsDoNotWaitForEachOther: a request to an extension that
// waits (an MCP tool waiting for a command's end) does not hold up the
// same connection's next request (that tool stopping the command).
func TestExtensionsDoNotWaitForEachOther(t *testing.T) {
	release, entered := make(chan struct{}), make(chan struct{})
	f := serve(t, Options{Extensions: map[string]func(context.Context, json.RawMessage) (any, error){
		"agentrun/wait": func(ctx context.Context, _ json.RawMessage) (any, error) {
			close(entered)
			select {
			case <-release:
				return "waited", nil
			case <-ctx.Done():
				return nil, ctx.Err()
			}
		},
		"agentrun/stop": func(context.Context, json.RawMessage) (any, error) {
			close(release)
			return "stopped", nil
		},
	}})
	c, _ := f.client("mcp-1")
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	waited := make(chan string, 1)
	go func() {
		var res string
		if err := c.Call(ctx, "agentrun/wait", map[string]any{}, &res); err != nil {
			res = err.Error()
		}
		waited <- res
	}()
	<-entered // the first request is being served
	var res string
	if err := c.Call(ctx, "agentrun/stop", map[string]any{}, &res); err != nil || res != "stopped" {
		t.Fatalf("the second request: %q, %v (held up behind the first?)", res, err)
	}
	if got := <-waited; got != "waited" {
		t.Errorf("the waiting request answered %q", got)
	}
}

// TestOpeningTwiceOrWithoutID: initialize and reconnect open a
// connection once, for a client with an id; each refusal names the
// method that was refused and why.
func TestOpeningTwiceOrWithoutID(t *testing.T) {
	f := serve(t, Options{})
	cases := []struct {
		name  string
		id    string
		first string // a method that opened the connection first ("" none)
		then  string
		want  string
	}{
		{"initialize without id", "", "", ahp.MethodInitialize, "initialize: clientId is empty"},
		{"reconnect without id", "", "", ahp.MethodReconnect, "reconnect: clientId is empty"},
		{"initialize twice", "a", ahp.MethodInitialize, ahp.MethodInitialize, `initialize: this connection is already initialized (as "a")`},
		{"reconnect after initialize", "a", ahp.MethodInitialize, ahp.MethodReconnect, `reconnect: this connection is already initialized (as "a")`},
		{"initialize after reconnect", "a", ahp.MethodReconnect, ahp.MethodInitialize, `initialize: this connection is already initialized (as "a")`},
	}
	open := func(ctx context.Context, c *client.Client, method, id string) error {
		if method == ahp.MethodReconnect {
			var res ahp.ReconnectResult
			return c.Call(ctx, method, ahp.ReconnectParams{ClientID: id}, &res)
		}
		var res ahp.InitializeResult
		return c.Call(ctx, method, ahp.InitializeParams{ProtocolVersions: []string{ahp.ProtocolVersion}, ClientID: id}, &res)
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), timeout)
			defer cancel()
			c, err := client.Dial(ctx, f.path, tc.id)
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			if tc.first != "" {
				if err := open(ctx, c, tc.first, tc.id); err != nil {
					t.Fatalf("%s: %v", tc.first, err)
				}
			}
			if err := open(ctx, c, tc.then, tc.id); err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("%s: %v, want %q", tc.then, err, tc.want)
			}
		})
	}
}

// TestListingSaysWhenTheHolderLeft: a terminal held by a client that
// disconnected is listed with holderGone (anyone may take it), and no
// longer so once that client is back.
func TestListingSaysWhenTheHolderLeft(t *testing.T) {
	f := serve(t, Options{})
	term := f.start("exec sleep 30")
	gone := func() bool {
		for _, ti := range f.srv.listing() {
			if ti.Resource == term.URI() {
				return ti.HolderGone
			}
		}
		t.Fatalf("%s is not listed", term.URI())
		return false
	}
	c, _ := f.client("cli-1")
	if err := f.srv.Claim(term, "cli-1"); err != nil {
		t.Fatal(err)
	}
	if gone() {
		t.Error("listed as let go while its holder is connected")
	}
	c.Close()
	wait.For(t, "the listing to say the holder left", timeout, gone)
	f.client("cli-1")
	wait.For(t, "the listing to say it is held again", timeout, func() bool { return !gone() })
}
