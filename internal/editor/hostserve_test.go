package editor

import (
	"context"
	"encoding/json"
	"log/slog"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/agentrun/agentrun.nvim/ahp"
	"github.com/agentrun/agentrun.nvim/ahp/client"
	"github.com/agentrun/agentrun.nvim/termhost"
)

// newTestSocketHost returns a socketHost whose socket is in a directory
// of the test's own.
func newTestSocketHost(t *testing.T, user ahp.Claim) *socketHost {
	t.Helper()
	dir, err := os.MkdirTemp("", "ar-sock")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	sh := newSocketHost(slog.New(slog.DiscardHandler), user)
	sh.socketPath = func() (string, error) { return filepath.Join(dir, "host.sock"), nil }
	return sh
}

// echoExtension is an agentrun/* method that answers with its params.
var echoExtension = map[string]func(context.Context, json.RawMessage) (any, error){
	"agentrun/echo": func(_ context.Context, p json.RawMessage) (any, error) { return p, nil },
}

// TestSocketHostClaimForUser: the user takes an agent's terminal, with or
// without the socket served (then termhost's claim, else the server's,
// which knows who is connected).
func TestSocketHostClaimForUser(t *testing.T) {
	for _, served := range []bool{false, true} {
		t.Run(map[bool]string{false: "not served", true: "served"}[served], func(t *testing.T) {
			user := ahp.ClientClaim("me")
			sh := newTestSocketHost(t, user)
			h := termhost.NewHost(termhost.Options{})
			t.Cleanup(h.Close)
			if served {
				sh.serve(h, echoExtension)
				t.Cleanup(sh.close)
			}
			term, err := h.Create(context.Background(), termhost.Spec{Command: "sleep 30", Shell: true, Dir: t.TempDir(), Claim: ahp.SessionClaim("s1", "")})
			if err != nil {
				t.Fatal(err)
			}
			if err := sh.claimForUser(term); err != nil {
				t.Fatalf("claimForUser: %v", err)
			}
			if c := term.Claims().Holder(); c != user {
				t.Errorf("claim %+v, want the user's", c)
			}
			if got := sh.socket() != ""; got != served {
				t.Errorf("socket() set: %v, want %v", got, served)
			}
		})
	}
}

// TestSocketHostDetachAndLinger: a detached terminal is served after the
// editor left, by clients that connect to the socket, until it ends and
// no client is connected; then the socket goes.
func TestSocketHostDetachAndLinger(t *testing.T) {
	user := ahp.ClientClaim("me")
	sh := newTestSocketHost(t, user)
	h := termhost.NewHost(termhost.Options{})
	t.Cleanup(h.Close)
	sh.serve(h, echoExtension)
	path := sh.socket()
	kept, err := h.Create(context.Background(), termhost.Spec{Command: "sleep 30", Shell: true, Dir: t.TempDir(), Claim: ahp.SessionClaim("s1", "")})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := h.Create(context.Background(), termhost.Spec{Command: "sleep 30", Shell: true, Dir: t.TempDir(), Claim: ahp.SessionClaim("s1", "")}); err != nil {
		t.Fatal(err)
	}
	got, err := sh.detach(kept)
	if err != nil || got["id"] != kept.ID() || got["served"] != true {
		t.Fatalf("detach = %v, %v", got, err)
	}
	keep := sh.detachedTerminals(h)
	if len(keep) != 1 || keep[0] != kept {
		t.Fatalf("detachedTerminals = %v, want only %s", keep, kept.ID())
	}

	// A client on the socket sees it, and calls our extensions.
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, err := client.Dial(ctx, path, "cli")
	if err != nil {
		t.Fatal(err)
	}
	res, err := c.Initialize(ctx, ahp.RootURI)
	if err != nil {
		t.Fatal(err)
	}
	root, err := client.RootState(res.Snapshots[0])
	if err != nil || len(root.Terminals) != 2 {
		t.Fatalf("root = %+v, %v; want both terminals", root, err)
	}
	var echoed map[string]int
	if err := c.Call(ctx, "agentrun/echo", map[string]int{"n": 1}, &echoed); err != nil || echoed["n"] != 1 {
		t.Errorf("agentrun/echo = %v, %v", echoed, err)
	}

	lingered := make(chan struct{})
	go func() {
		defer close(lingered)
		sh.linger(context.Background(), keep)
	}()
	if err := kept.Kill(); err != nil {
		t.Fatal(err)
	}
	select {
	case <-lingered:
		t.Fatal("linger returned while a client was connected")
	case <-time.After(500 * time.Millisecond):
	}
	if kept.Claims().Holder().ClientID != ahp.DetachedClient {
		t.Errorf("claim %+v after the editor left, want the detached client's", kept.Claims().Holder())
	}
	c.Close()
	select {
	case <-lingered:
	case <-time.After(10 * time.Second):
		t.Fatal("linger did not return once the terminal ended and the client left")
	}
	sh.close()
	if _, err := os.Stat(path); !os.IsNotExist(err) {
		t.Errorf("socket %s after close: %v, want it gone", path, err)
	}
}
