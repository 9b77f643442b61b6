package terminals

import (
	"context"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/agentrun/agentrun.nvim/ahp"
	"github.com/agentrun/agentrun.nvim/internal/display"
	"github.com/agentrun/agentrun.nvim/internal/display/displaytest"
	"github.com/agentrun/agentrun.nvim/internal/event"
	"github.com/agentrun/agentrun.nvim/internal/event/eventtest"
	"github.com/agentrun/agentrun.nvim/internal/wait"
	"github.com/agentrun/agentrun.nvim/termhost"
)

// newTestTerminals returns a terminals part on a host of its own, as the
// bridge would make it, with the channels its buffers are fed into.
func newTestTerminals(t *testing.T) (*Terminals, *termhost.Host, *event.Queue, *displaytest.Channels) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	h := termhost.NewHost(termhost.Options{})
	t.Cleanup(func() { cancel(); h.Close() })
	log := slog.New(slog.DiscardHandler)
	events := event.NewQueue()
	out := &displaytest.Channels{}
	user := ahp.ClientClaim("me")
	ts := New(ctx, log, events, display.ToChannels(ctx, log, out.Send), user, Deps{
		Host:         func() *termhost.Host { return h },
		ClaimForUser: func(t *termhost.Terminal) error { return t.Claims().Set(user) },
		Closing:      func() bool { return false },
	})
	return ts, h, events, out
}

// TestTerminalsJourney: an agent's terminal from creation to disposal, as
// Lua sees it: created, shown, typed into, taken over, exited, released.
func TestTerminalsJourney(t *testing.T) {
	ts, h, events, out := newTestTerminals(t)
	term, err := h.Create(context.Background(), termhost.Spec{Command: "printf 'ready\\n'; exec cat", Shell: true, Dir: t.TempDir(), Claim: ahp.SessionClaim("s1", "")})
	if err != nil {
		t.Fatal(err)
	}
	ts.Add(term, "7", "s1", false)
	if c := eventtest.Named(events, event.NameTerminalCreated); len(c) != 1 || c[0]["session"] != "7" || c[0]["session_id"] != "s1" || c[0]["id"] != term.ID() {
		t.Fatalf("terminal_created %v", c)
	}
	if err := ts.Attach(term.ID(), 3, display.Buffer{Cols: 40, Rows: 5, Scrollback: 100}); err != nil {
		t.Fatal(err)
	}
	wait.For(t, "the output in the buffer", 10*time.Second, func() bool { return strings.Contains(out.Text(3), "ready") })
	if st := term.StateSummary(0); st.Cols != 40 || st.Rows != 5 {
		t.Errorf("size after attach %dx%d, want 40x5", st.Cols, st.Rows)
	}

	if err := ts.SendInput(term.ID(), []byte("x\r")); err == nil || !strings.Contains(err.Error(), "held by session") {
		t.Errorf("send_input into the agent's terminal: %v, want refused", err)
	}
	if err := ts.Input(term.ID(), []byte("keys\r")); err != nil {
		t.Errorf("input: %v", err)
	}
	wait.For(t, "the keys echoed", 10*time.Second, func() bool { return strings.Count(out.Text(3), "keys") >= 2 })
	if err := ts.Takeover(term.ID()); err != nil {
		t.Fatal(err)
	}
	if err := ts.SendInput(term.ID(), []byte("mine\r")); err != nil {
		t.Errorf("send_input once taken over: %v", err)
	}
	wait.For(t, "the API's input echoed", 10*time.Second, func() bool { return strings.Count(out.Text(3), "mine") >= 2 })

	if res, err := ts.Kill(term.ID(), true); err != nil || res["grace_ms"] != int64(0) {
		t.Fatalf("kill! answered %v, %v; want grace_ms 0 (SIGKILL at once)", res, err)
	}
	wait.For(t, "terminal_exit", 10*time.Second, func() bool { return len(eventtest.Named(events, event.NameTerminalExit)) == 1 })
	if err := ts.Interrupt(term.ID()); err == nil || !strings.Contains(err.Error(), "has already exited") {
		t.Errorf("interrupt after the exit: %v", err)
	}
	st := ts.Status()
	if len(st) != 1 || st[0].(map[string]any)["state"] != "exited" {
		t.Errorf("status %v, want one exited terminal", st)
	}

	term.Release()
	ts.Released(term.ID())
	if err := ts.Input(term.ID(), []byte("late")); err == nil || !strings.Contains(err.Error(), "was released") {
		t.Errorf("input after release: %v", err)
	}
	if err := ts.Dispose(term.ID()); err != nil {
		t.Fatal(err)
	}
	if len(ts.Status()) != 0 {
		t.Errorf("status after dispose: %v, want no terminal", ts.Status())
	}
}

// TestTerminalsRefuse: what each request answers for a terminal it cannot
// act on.
func TestTerminalsRefuse(t *testing.T) {
	ts, _, _, _ := newTestTerminals(t)
	cases := []struct {
		name string
		call func() error
		want string
	}{
		{"attach", func() error { return ts.Attach("term-9", 1, display.Buffer{}) }, `attach: unknown terminal "term-9"`},
		{"interrupt", func() error { return ts.Interrupt("term-9") }, `interrupt: unknown terminal "term-9"`},
		{"kill", func() error { _, err := ts.Kill("term-9", false); return err }, `kill: unknown terminal "term-9"`},
		{"input", func() error { return ts.Input("term-9", nil) }, `input: unknown terminal "term-9"`},
		{"send_input", func() error { return ts.SendInput("term-9", nil) }, `input: unknown terminal "term-9"`},
		{"takeover", func() error { return ts.Takeover("term-9") }, `take over: unknown terminal "term-9"`},
		{"dispose", func() error { return ts.Dispose("term-9") }, `dispose: unknown terminal "term-9"`},
		{"terminal_size", func() error { return ts.SetSize(0, 10) }, "terminal_size: bad size 0x10"},
		{"shell", func() error { _, err := ts.Shell(shellArgs{Cwd: "rel"}); return err }, `shell: cwd "rel" is not absolute`},
	}
	for _, tc := range cases {
		if err := tc.call(); err == nil || err.Error() != tc.want {
			t.Errorf("%s: %v, want %q", tc.name, err, tc.want)
		}
	}
	if err := ts.Resize("term-9", 10, 10); err != nil {
		t.Errorf("resize of an unknown terminal: %v, want it ignored (it races the exit)", err)
	}
}

// TestTerminalsShellSize: a user's shell starts at the size Lua last
// reported for new splits, held by the user.
func TestTerminalsShellSize(t *testing.T) {
	ts, _, events, _ := newTestTerminals(t)
	if err := ts.SetSize(33, 7); err != nil {
		t.Fatal(err)
	}
	got, err := ts.Shell(shellArgs{Cmd: "sleep 30", Cwd: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	id := got["id"].(string)
	tm, err := ts.lookup(id)
	if err != nil {
		t.Fatal(err)
	}
	st := tm.t.StateSummary(0)
	if st.Cols != 33 || st.Rows != 7 || st.Claim != ahp.ClientClaim("me") {
		t.Errorf("shell %dx%d held by %+v, want 33x7 held by the user", st.Cols, st.Rows, st.Claim)
	}
	if c := eventtest.Named(events, event.NameTerminalCreated); len(c) != 1 || c[0]["user"] != true {
		t.Errorf("terminal_created %v, want one of the user's", c)
	}
}
