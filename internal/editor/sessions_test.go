package editor

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/agentrun/agentrun.nvim/acp"
	"github.com/agentrun/agentrun.nvim/acp/agentterm"
	"github.com/agentrun/agentrun.nvim/ahp"
	"github.com/agentrun/agentrun.nvim/internal/demoagent/demotest"
	"github.com/agentrun/agentrun.nvim/internal/display"
	"github.com/agentrun/agentrun.nvim/internal/display/displaytest"
	"github.com/agentrun/agentrun.nvim/internal/event"
	"github.com/agentrun/agentrun.nvim/internal/event/eventtest"
	"github.com/agentrun/agentrun.nvim/internal/question"
	"github.com/agentrun/agentrun.nvim/internal/session"
	"github.com/agentrun/agentrun.nvim/internal/terminals"
	"github.com/agentrun/agentrun.nvim/internal/wait"
	"github.com/agentrun/agentrun.nvim/termhost"
	acpsdk "github.com/coder/acp-go-sdk"
)

// testAgentEnv makes this test binary the demo agent (TestMain), so the
// sessions tests start a real ACP peer.
const testAgentEnv = "AGENTRUN_EDITOR_TEST_AGENT"

func TestMain(m *testing.M) { demotest.Main(m, testAgentEnv) }

// testEditor routes the calls of session key's agent as the bridge's
// agentEditor does, to the parts under test.
type testEditor struct {
	key string
	ss  *session.Sessions
	ts  *terminals.Terminals
	h   *termhost.Host
}

func (e *testEditor) SessionUpdate(_ context.Context, n acpsdk.SessionNotification) {
	e.ss.Update(e.key, n)
}
func (e *testEditor) RequestPermission(context.Context, acpsdk.RequestPermissionRequest) (acpsdk.RequestPermissionResponse, error) {
	return acpsdk.RequestPermissionResponse{Outcome: acpsdk.NewRequestPermissionOutcomeCancelled()}, nil
}
func (e *testEditor) Elicit(context.Context, acp.Elicitation) (acp.ElicitationAnswer, error) {
	return acp.ElicitationAnswer{Action: "cancel"}, nil
}
func (e *testEditor) ElicitationComplete(context.Context, string) {}
func (e *testEditor) ReadTextFile(context.Context, acpsdk.ReadTextFileRequest) (acpsdk.ReadTextFileResponse, error) {
	return acpsdk.ReadTextFileResponse{}, errors.New("no files here")
}
func (e *testEditor) WriteTextFile(context.Context, acpsdk.WriteTextFileRequest) (acpsdk.WriteTextFileResponse, error) {
	return acpsdk.WriteTextFileResponse{}, errors.New("no files here")
}
func (e *testEditor) TerminalCreated(_ context.Context, sid, tid string) {
	if t, err := e.h.Get(tid); err == nil {
		e.ts.Add(t, e.key, sid, false)
	}
}
func (e *testEditor) TerminalReleased(_ context.Context, _, tid string) { e.ts.Released(tid) }
func (e *testEditor) AgentTerminal(_ context.Context, sid string, ev agentterm.Event) {
	e.ss.AgentTerminal(e.key, sid, ev)
}
func (e *testEditor) SessionEnded(_ context.Context, _ string, reason error) {
	e.ss.Ended(e.key, reason)
}

// newTestSessions returns a sessions part wired to a terminals part as
// newBridge wires them, and its event queue.
func newTestSessions(t *testing.T) (*session.Sessions, *event.Queue) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	h := termhost.NewHost(termhost.Options{})
	t.Cleanup(func() { cancel(); h.Close() })
	log := slog.New(slog.DiscardHandler)
	events := event.NewQueue()
	user := ahp.ClientClaim("me")
	out := &displaytest.Channels{}
	ts := terminals.New(ctx, log, events, display.ToChannels(ctx, log, out.Send), user, terminals.Deps{
		Host:         func() *termhost.Host { return h },
		ClaimForUser: func(t *termhost.Terminal) error { return t.Claims().Set(user) },
	})
	var ss *session.Sessions
	ss = session.New(ctx, log, events, &question.IDs{}, "test", session.Deps{
		EditorFor:    func(key string) acp.Editor { return &testEditor{key: key, ss: ss, ts: ts, h: h} },
		Host:         func() *termhost.Host { return h },
		ByteLimit:    func() int { return termhost.DefaultByteLimit },
		User:         ahp.ClientClaim("me"),
		TerminalSize: ts.Size,
		UserTerminal: ts.UserTerminal,
		SocketPath:   func() string { return "" },
		Ask:          question.New(events, &question.IDs{}, log).Ask,
	})
	ts.SetClosing(ss.IsClosing)
	t.Cleanup(func() { ss.Shutdown() })
	return ss, events
}

// demoArgs starts this binary as the demo agent in dir.
func demoArgs(dir string) session.StartArgs {
	return session.StartArgs{Agent: "demo", Cmd: []string{os.Args[0]}, Env: []string{testAgentEnv + "=1"}, Cwd: dir}
}

// TestSessionsJourney: a session from start to stop with a real agent, as
// Lua sees it: started, a prompt's command in a terminal named by the
// session's key, the turn's end, busy while it runs, ended once stopped.
func TestSessionsJourney(t *testing.T) {
	ss, events := newTestSessions(t)
	key, err := ss.Start(demoArgs(t.TempDir()))
	if err != nil {
		t.Fatal(err)
	}
	wait.For(t, "session_started", 30*time.Second, func() bool { return len(eventtest.Named(events, event.NameSessionStarted)) == 1 })
	if st := eventtest.Named(events, event.NameSessionStarted)[0]; st["key"] != key || st["agent"] != "demo" {
		t.Errorf("session_started %v", st)
	}
	if err := ss.Prompt(key, "echo from-the-agent", nil); err != nil {
		t.Fatal(err)
	}
	wait.For(t, "turn_end", 30*time.Second, func() bool { return len(eventtest.Named(events, event.NameTurnEnd)) == 1 })
	if te := eventtest.Named(events, event.NameTurnEnd)[0]; te["key"] != key || fmt.Sprint(te["stop_reason"]) != "end_turn" || te["error"] != "" {
		t.Errorf("turn_end %v", te)
	}
	if c := eventtest.Named(events, event.NameTerminalCreated); len(c) != 1 || c[0]["session"] != key || c[0]["command"] != "echo from-the-agent" {
		t.Errorf("terminal_created %v, want the command in a terminal of session %s", c, key)
	}
	updates := 0
	for _, u := range eventtest.Named(events, event.NameSessionUpdate) {
		if u["key"] != key {
			t.Errorf("session_update without the session's key: %v", u)
		}
		updates++
	}
	if updates == 0 {
		t.Error("no session_update reached Lua")
	}
	if st := ss.Status(); len(st) != 1 || st[0].(map[string]any)["busy"] != false {
		t.Errorf("status %v, want one idle session", st)
	}
	if err := ss.Stop(key); err != nil {
		t.Fatal(err)
	}
	wait.For(t, "session_ended", 30*time.Second, func() bool { return len(eventtest.Named(events, event.NameSessionEnded)) == 1 })
	if err := ss.Prompt(key, "echo late", nil); err == nil || !strings.Contains(err.Error(), "has ended") {
		t.Errorf("prompt after stop: %v", err)
	}
}

// TestSessionsSharedSessionID: two agents whose sessions have the same ACP
// id (the demo agent always says demo-session-1; real agents may repeat
// one, e.g. a resumed session) stay two sessions: each one's updates,
// terminals and turns reach Lua with its own key, and stopping one, with
// a command running, ends that one only and says it was stopped.
func TestSessionsSharedSessionID(t *testing.T) {
	ss, events := newTestSessions(t)
	dir := t.TempDir()
	one, err := ss.Start(demoArgs(dir))
	if err != nil {
		t.Fatal(err)
	}
	wait.For(t, "the first session_started", 30*time.Second, func() bool { return len(eventtest.Named(events, event.NameSessionStarted)) == 1 })
	two, err := ss.Start(demoArgs(dir))
	if err != nil {
		t.Fatal(err)
	}
	wait.For(t, "the second session_started", 30*time.Second, func() bool { return len(eventtest.Named(events, event.NameSessionStarted)) == 2 })
	started := eventtest.Named(events, event.NameSessionStarted)
	if started[0]["session_id"] != started[1]["session_id"] {
		t.Fatalf("the agents' session ids differ (%v, %v): this test needs them equal", started[0]["session_id"], started[1]["session_id"])
	}
	// Session two runs a command and is stopped under it.
	if err := ss.Prompt(two, "sleep 100", nil); err != nil {
		t.Fatal(err)
	}
	wait.For(t, "session two's terminal", 30*time.Second, func() bool { return len(eventtest.Named(events, event.NameTerminalCreated)) == 1 })
	if err := ss.Stop(two); err != nil {
		t.Fatal(err)
	}
	wait.For(t, "session two's turn_end and session_ended", 30*time.Second, func() bool {
		return len(eventtest.Named(events, event.NameTurnEnd)) == 1 && len(eventtest.Named(events, event.NameSessionEnded)) == 1
	})
	// Session one, with the same ACP id, still works, and alone.
	if err := ss.Prompt(one, "echo to-demo-one", nil); err != nil {
		t.Fatalf("prompt to session one after stopping two: %v", err)
	}
	wait.For(t, "session one's turn_end", 30*time.Second, func() bool { return len(eventtest.Named(events, event.NameTurnEnd)) == 2 })

	ends := eventtest.Named(events, event.NameTurnEnd)
	cases := []struct {
		name string
		ev   map[string]any
		want map[string]any
	}{
		{"session two's turn (stopped)", ends[0], map[string]any{"key": two, "error": "", "stopped": true}},
		{"session one's turn", ends[1], map[string]any{"key": one, "error": ""}},
		{"the session that ended", eventtest.Named(events, event.NameSessionEnded)[0], map[string]any{"key": two, "reason": "", "stopped": true}},
	}
	for _, tc := range cases {
		for k, v := range tc.want {
			if fmt.Sprint(tc.ev[k]) != fmt.Sprint(v) {
				t.Errorf("%s: %s = %v, want %v (%v)", tc.name, k, tc.ev[k], v, tc.ev)
			}
		}
	}
	created := eventtest.Named(events, event.NameTerminalCreated)
	if len(created) != 2 || created[0]["session"] != two || created[0]["command"] != "sleep 100" || created[1]["session"] != one || created[1]["command"] != "echo to-demo-one" {
		t.Errorf("terminal_created %v, want sleep 100 in session %s, then echo in session %s", created, two, one)
	}
	// Every update is its own session's: what session one's agent said of
	// its echo reached session one only.
	for _, u := range eventtest.Named(events, event.NameSessionUpdate) {
		text := fmt.Sprint(u["update"])
		if strings.Contains(text, "to-demo-one") && u["key"] != one {
			t.Errorf("session one's update reached session %v: %v", u["key"], u)
		}
		if strings.Contains(text, "sleep 100") && u["key"] != two {
			t.Errorf("session two's update reached session %v: %v", u["key"], u)
		}
	}
	status := map[string]bool{}
	for _, st := range ss.Status() {
		m := st.(map[string]any)
		status[m["key"].(string)] = m["ended"].(bool)
	}
	if status[one] || !status[two] {
		t.Errorf("ended by key %v, want %s running and %s ended", status, one, two)
	}
}
