package session

import (
	"context"
	"errors"
	"log/slog"
	"os"
	"testing"
	"time"

	acpsdk "github.com/coder/acp-go-sdk"

	"github.com/agentrun/agentrun.nvim/acp"
	"github.com/agentrun/agentrun.nvim/acp/agentterm"
	"github.com/agentrun/agentrun.nvim/ahp"
	"github.com/agentrun/agentrun.nvim/internal/demoagent/demotest"
	"github.com/agentrun/agentrun.nvim/internal/event"
	"github.com/agentrun/agentrun.nvim/internal/event/eventtest"
	"github.com/agentrun/agentrun.nvim/internal/question"
	"github.com/agentrun/agentrun.nvim/internal/wait"
	"github.com/agentrun/agentrun.nvim/termhost"
)

// testAgentEnv makes this test binary the demo agent (TestMain), so the
// sessions tests start a real ACP peer.
const testAgentEnv = "AGENTRUN_SESSION_TEST_AGENT"

func TestMain(m *testing.M) { demotest.Main(m, testAgentEnv) }

// quietEditor is the acp.Editor of an agent whose terminals and
// questions are nobody's: the sessions part alone (the editor package
// tests it wired to the terminals part, as the bridge wires them).
type quietEditor struct{}

func (quietEditor) SessionUpdate(context.Context, acpsdk.SessionNotification) {}
func (quietEditor) RequestPermission(context.Context, acpsdk.RequestPermissionRequest) (acpsdk.RequestPermissionResponse, error) {
	return acpsdk.RequestPermissionResponse{Outcome: acpsdk.NewRequestPermissionOutcomeCancelled()}, nil
}
func (quietEditor) Elicit(context.Context, acp.Elicitation) (acp.ElicitationAnswer, error) {
	return acp.ElicitationAnswer{Action: "cancel"}, nil
}
func (quietEditor) ElicitationComplete(context.Context, string) {}
func (quietEditor) ReadTextFile(context.Context, acpsdk.ReadTextFileRequest) (acpsdk.ReadTextFileResponse, error) {
	return acpsdk.ReadTextFileResponse{}, errors.New("no files here")
}
func (quietEditor) WriteTextFile(context.Context, acpsdk.WriteTextFileRequest) (acpsdk.WriteTextFileResponse, error) {
	return acpsdk.WriteTextFileResponse{}, errors.New("no files here")
}
func (quietEditor) TerminalCreated(context.Context, string, string)        {}
func (quietEditor) TerminalReleased(context.Context, string, string)       {}
func (quietEditor) AgentTerminal(context.Context, string, agentterm.Event) {}
func (quietEditor) SessionEnded(context.Context, string, error)            {}

// newTestSessions returns a sessions part of its own and its event queue.
func newTestSessions(t *testing.T) (*Sessions, *event.Queue) {
	t.Helper()
	h := termhost.NewHost(termhost.Options{})
	t.Cleanup(h.Close)
	events := event.NewQueue()
	log := slog.New(slog.DiscardHandler)
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	ss := New(ctx, log, events, &question.IDs{}, "test", Deps{
		EditorFor:    func(string) acp.Editor { return quietEditor{} },
		Host:         func() *termhost.Host { return h },
		ByteLimit:    func() int { return termhost.DefaultByteLimit },
		User:         ahp.ClientClaim("me"),
		TerminalSize: func() (cols, rows uint16) { return 80, 24 },
		SocketPath:   func() string { return "" },
		Ask:          question.New(events, &question.IDs{}, log).Ask,
	})
	t.Cleanup(func() { ss.Shutdown() })
	return ss, events
}

// demoArgs starts this binary as the demo agent in dir.
func demoArgs(dir string) StartArgs {
	return StartArgs{Agent: "demo", Cmd: []string{os.Args[0]}, Env: []string{testAgentEnv + "=1"}, Cwd: dir}
}

// TestSessionsRefuse: what each request answers when it cannot be done.
func TestSessionsRefuse(t *testing.T) {
	ss, _ := newTestSessions(t)
	cases := []struct {
		name string
		call func() error
		want string
	}{
		{"start: empty cmd", func() error { _, err := ss.Start(StartArgs{Agent: "x", Cwd: "/"}); return err }, `start: agent "x" has an empty cmd`},
		{"start: relative cwd", func() error {
			_, err := ss.Start(StartArgs{Agent: "x", Cmd: []string{"x"}, Cwd: "rel"})
			return err
		}, `start: cwd "rel" is not absolute`},
		{"list: relative cwd", func() error { _, err := ss.List(ListArgs{Agent: "x", Cmd: []string{"x"}, Cwd: "rel"}); return err }, `sessions: cwd "rel" is not absolute`},
		{"prompt", func() error { return ss.Prompt("9", "hi", nil) }, `prompt: unknown session "9"`},
		{"cancel", func() error { return ss.Cancel("9") }, `cancel: unknown session "9"`},
		{"stop", func() error { return ss.Stop("9") }, `stop: unknown session "9"`},
		{"mode", func() error { return ss.SetMode("9", "m") }, `mode: unknown session "9"`},
		{"login", func() error { _, err := ss.Login("9", "m"); return err }, `sign in: unknown session "9"`},
	}
	for _, tc := range cases {
		if err := tc.call(); err == nil || err.Error() != tc.want {
			t.Errorf("%s: %v, want %q", tc.name, err, tc.want)
		}
	}
	if _, first := ss.Shutdown(); !first {
		t.Error("the first shutdown says it was not the first")
	}
	if _, first := ss.Shutdown(); first {
		t.Error("a second shutdown did it again")
	}
	if _, err := ss.Start(demoArgs(t.TempDir())); err == nil || err.Error() != "start: shutting down" {
		t.Errorf("start after shutdown: %v", err)
	}
}

// TestSessionsStopWhileStarting: :AgentStop of a session whose agent has
// not finished starting (one that never answers initialize, one that
// answers it but never session/new, and one stopped the moment it was
// started, whatever phase its start is in) ends it once, as stopped by
// the user, never as failed to start.
func TestSessionsStopWhileStarting(t *testing.T) {
	// answers initialize (whatever its id), then nothing more
	const initOnly = `read l; id=$(printf '%s' "$l" | sed 's/.*"id":\([0-9]*\).*/\1/'); ` +
		`printf '{"jsonrpc":"2.0","id":%s,"result":{"protocolVersion":1,"agentCapabilities":{}}}\n' "$id"; exec sleep 1000`
	cases := []struct {
		name      string
		args      func(dir string) StartArgs
		initAnswd bool // stop once initialize is answered
	}{
		{"never answers", func(dir string) StartArgs {
			return StartArgs{Agent: "silent", Cmd: []string{"sleep", "1000"}, Cwd: dir}
		}, false},
		{"never opens the session", func(dir string) StartArgs {
			return StartArgs{Agent: "initonly", Cmd: []string{"sh", "-c", initOnly}, Cwd: dir}
		}, true},
		{"stopped at once", demoArgs, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ss, events := newTestSessions(t)
			key, err := ss.Start(tc.args(t.TempDir()))
			if err != nil {
				t.Fatal(err)
			}
			if tc.initAnswd {
				wait.For(t, "initialize answered", 10*time.Second, func() bool {
					ss.mu.Lock()
					defer ss.mu.Unlock()
					return ss.byKey[key].agent != nil
				})
			}
			if err := ss.Stop(key); err != nil {
				t.Fatalf("stop: %v", err)
			}
			wait.For(t, "session_ended", 10*time.Second, func() bool { return len(eventtest.Named(events, event.NameSessionEnded)) == 1 })
			if e := eventtest.Named(events, event.NameSessionEnded)[0]; e["key"] != key || e["reason"] != "" || e["stopped"] != true {
				t.Errorf("session_ended %v, want stopped by the user", e)
			}
			ss.starting.Wait() // the start has given up
			if f := eventtest.Named(events, event.NameSessionFailed); len(f) != 0 {
				t.Errorf("also session_failed: %v", f)
			}
			if n := len(eventtest.Named(events, event.NameSessionEnded)); n != 1 {
				t.Errorf("session_ended %d times", n)
			}
		})
	}
}
