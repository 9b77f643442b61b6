package acp

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agentrun/agentrun.nvim/internal/procstat"
	"github.com/agentrun/agentrun.nvim/internal/wait"
	acpsdk "github.com/coder/acp-go-sdk"
)

// alive reports whether pid is a running (not zombie) process.
func alive(pid int) bool {
	st, ok := procstat.Read(strconv.Itoa(pid))
	return ok && !st.Zombie()
}

// waitGone waits until pid is no longer running.
func waitGone(t *testing.T, pid int, what string) {
	t.Helper()
	wait.For(t, fmt.Sprintf("%s (pid %d) to end", what, pid), waitTimeout, func() bool { return !alive(pid) })
}

// An agent crashing mid-turn: the prompt fails naming the exit code and
// stderr, the session ends with that reason, its terminals are released
// (their processes gone) and the agent reports why it ended.
func TestAgentCrashMidTurn(t *testing.T) {
	r := newRecorder()
	a, _ := start(t, selfAgent(t, "probe"), r, Options{})
	s := newSession(t, a)
	done := promptAsync(s, `[{"method":"terminal/create","params":{"sessionId":"$SESSION","command":"sleep 30"}},`+
		`{"exit":3,"stderr":"probe crashed on purpose"}]`)
	created := next(t, r.created, "TerminalCreated")
	term, ok := s.Terminal(created[1])
	if !ok {
		t.Fatal("terminal not in the session")
	}

	res := next(t, done, "prompt")
	want := `agent "probe" exited with code 3; last stderr: probe crashed on purpose`
	if res.err == nil || !strings.Contains(res.err.Error(), want) {
		t.Fatalf("prompt error %v, want it to contain %q", res.err, want)
	}
	var exitErr *ExitError
	if !errors.As(res.err, &exitErr) || exitErr.Code == nil || *exitErr.Code != 3 {
		t.Errorf("prompt error is not an ExitError with code 3: %#v", res.err)
	}
	if rel := next(t, r.released, "TerminalReleased"); rel != created {
		t.Errorf("released %v, want %v", rel, created)
	}
	ended := next(t, r.ended, "SessionEnded")
	if ended.session != s.ID() || ended.reason == nil || !strings.Contains(ended.reason.Error(), want) {
		t.Errorf("SessionEnded(%q, %v)", ended.session, ended.reason)
	}
	if !term.Released() {
		t.Errorf("terminal not released")
	}
	select {
	case <-term.Done():
	case <-time.After(waitTimeout):
		t.Errorf("terminal command still running")
	}
	select {
	case <-a.Done():
	case <-time.After(waitTimeout):
		t.Fatal("agent not done")
	}
	if a.Err() == nil || a.Err().Error() != want {
		t.Errorf("Err() = %v, want %q", a.Err(), want)
	}
	select {
	case <-s.Done():
	default:
		t.Errorf("session not done")
	}
	if _, err := a.NewSession(context.Background(), t.TempDir()); err == nil || !strings.Contains(err.Error(), "has ended") {
		t.Errorf("NewSession after the crash: %v", err)
	}
	if _, err := s.Prompt(context.Background(), "again"); err == nil || !strings.Contains(err.Error(), "has ended") {
		t.Errorf("Prompt after the crash: %v", err)
	}
}

func TestAgentKilledBySignal(t *testing.T) {
	r := newRecorder()
	a, _ := start(t, selfAgent(t, "probe"), r, Options{})
	s := newSession(t, a)
	_, err := s.Prompt(context.Background(), `[{"killSelf":true}]`)
	if want := `agent "probe" was killed by SIGKILL`; err == nil || !strings.Contains(err.Error(), want) {
		t.Fatalf("prompt error %v, want %q", err, want)
	}
	if ended := next(t, r.ended, "SessionEnded"); ended.reason == nil {
		t.Errorf("SessionEnded without a reason")
	}
}

// Agents that fail before answering initialize.
func TestAgentFailsAtStartup(t *testing.T) {
	for _, tc := range []struct {
		name    string
		command []string
		want    []string
	}{
		{"exits", []string{"sh", "-c", "read line; echo 'not json'; echo 'cannot log in' >&2; exit 4"},
			[]string{`agent "bad" exited with code 4`, "cannot log in"}},
		{"not found", []string{"agentrun-no-such-agent"}, []string{`start agent "bad"`, "agentrun-no-such-agent", "not found"}},
		{"empty command", nil, []string{`agent "bad": command is empty`}},
		{"wrong protocol", []string{"sh", "-c", `read line; echo '{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":2,"authMethods":[]}}'; sleep 10`},
			[]string{`agent "bad" speaks ACP protocol version 2, want 1`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			logger, _ := testLogger(t)
			ctx, cancel := context.WithTimeout(context.Background(), waitTimeout)
			defer cancel()
			a, err := Start(ctx, AgentConfig{Name: "bad", Command: tc.command}, newRecorder(), Options{Host: newHost(t), Logger: logger, StopGrace: 300 * time.Millisecond})
			if err == nil {
				_ = a.Close()
				t.Fatal("Start succeeded")
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("Start error %q lacks %q", err, w)
				}
			}
		})
	}
}

// Lines on stdout that are not JSON are logged and skipped.
func TestAgentNonJSONStdout(t *testing.T) {
	r := newRecorder()
	a, logs := start(t, selfAgent(t, "demo"), r, Options{})
	s := newSession(t, a)
	prompt(t, s, "!garbage")
	if stop := prompt(t, s, "echo still here"); stop != "end_turn" {
		t.Errorf("stop reason %q", stop)
	}
	if text := r.text(s.ID()); !strings.Contains(text, "`echo still here` exited with code 0.") {
		t.Errorf("agent messages %q", text)
	}
	if l := logs.String(); !strings.Contains(l, "this line is not JSON-RPC") {
		t.Errorf("the non-JSON line is not in the log:\n%s", l)
	}
}

// An agent's extension notification we do not handle (Qwen Code's
// qwen/notify/session/mode-update) is ignored with a debug line, not
// logged as an error, and the session goes on.
func TestAgentExtensionNotificationIgnored(t *testing.T) {
	r := newRecorder()
	a, logs := start(t, selfAgent(t, "demo"), r, Options{})
	s := newSession(t, a)
	rec := filepath.Join(t.TempDir(), "ext.jsonl")
	lines := `{"notify": {"method": "qwen/notify/session/mode-update", "params": {"modeId": "plan"}}}
{"update": {"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": "after the notification"}}}
`
	if err := os.WriteFile(rec, []byte(lines), 0o644); err != nil {
		t.Fatal(err)
	}
	if stop := prompt(t, s, "!replay "+rec); stop != "end_turn" {
		t.Errorf("stop reason %q", stop)
	}
	if text := r.text(s.ID()); !strings.Contains(text, "after the notification") {
		t.Errorf("agent messages %q", text)
	}
	l := logs.String()
	if strings.Contains(l, "level=ERROR") || !strings.Contains(l, `level=DEBUG msg="agent notification not handled; ignored"`) || !strings.Contains(l, "method=qwen/notify/session/mode-update") {
		t.Errorf("the log of the extension notification:\n%s", l)
	}
}

// An agent flooding updates faster than the editor takes them loses
// nothing and keeps its connection; the prompt returns after the last.
func TestAgentFloodWithSlowEditor(t *testing.T) {
	const n = 3000 // well over the SDK's 1024-notification queue
	r := newRecorder()
	record := r.fakeEditor.sessionUpdate
	var agent atomic.Pointer[Agent]
	var gated atomic.Bool
	r.fakeEditor.sessionUpdate = func(ctx context.Context, u acpsdk.SessionNotification) {
		// The editor is stuck on the first update until the agent has sent
		// everything.
		if !gated.Swap(true) {
			deadline := time.Now().Add(waitTimeout)
			for agent.Load().updates.pending() < n && time.Now().Before(deadline) {
				time.Sleep(5 * time.Millisecond)
			}
		}
		record(ctx, u)
	}
	a, _ := start(t, selfAgent(t, "demo"), r, Options{})
	agent.Store(a)
	s := newSession(t, a)
	if stop := prompt(t, s, "!flood "+strconv.Itoa(n)); stop != "end_turn" {
		t.Fatalf("stop reason %q", stop)
	}
	msgs := r.messages(s.ID())
	if len(msgs) != n+1 {
		t.Fatalf("got %d messages, want %d", len(msgs), n+1)
	}
	for i := 0; i < n; i++ {
		if want := fmt.Sprintf("flood %d\n", i+1); msgs[i] != want {
			t.Fatalf("message %d = %q, want %q", i, msgs[i], want)
		}
	}
	if msgs[n] != fmt.Sprintf("Sent %d messages.", n) {
		t.Errorf("last message %q", msgs[n])
	}
}

// Close during a turn: the prompt fails with ErrStopped, the session ends
// without a reason, its terminal is released and the agent is gone.
func TestCloseStopsEverything(t *testing.T) {
	r := newRecorder()
	a, _ := start(t, selfAgent(t, "demo"), r, Options{})
	s := newSession(t, a)
	done := promptAsync(s, "sleep 30")
	created := next(t, r.created, "TerminalCreated")
	term, _ := s.Terminal(created[1])
	pid := a.cmd.Process.Pid

	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	res := next(t, done, "prompt")
	if !errors.Is(res.err, ErrStopped) {
		t.Errorf("prompt error %v, want ErrStopped", res.err)
	}
	if ended := next(t, r.ended, "SessionEnded"); ended.reason != nil {
		t.Errorf("SessionEnded reason %v, want nil", ended.reason)
	}
	if rel := next(t, r.released, "TerminalReleased"); rel != created {
		t.Errorf("released %v", rel)
	}
	if !term.Released() {
		t.Errorf("terminal not released")
	}
	if a.Err() != nil {
		t.Errorf("Err() = %v after Close", a.Err())
	}
	waitGone(t, pid, "agent")
}

// A hung agent (no answer, ignores cancel) can still be stopped.
func TestCloseHungAgent(t *testing.T) {
	r := newRecorder()
	a, _ := start(t, selfAgent(t, "demo"), r, Options{StopGrace: 300 * time.Millisecond})
	s := newSession(t, a)
	done := promptAsync(s, "!hang")
	if err := s.Cancel(context.Background()); err != nil {
		t.Fatal(err)
	}
	select {
	case res := <-done:
		t.Fatalf("hung prompt returned %v %v", res.stop, res.err)
	case <-time.After(300 * time.Millisecond):
	}
	began := time.Now()
	_ = a.Close()
	if took := time.Since(began); took > 5*time.Second {
		t.Errorf("Close took %v", took)
	}
	if res := next(t, done, "prompt"); res.err == nil {
		t.Errorf("hung prompt returned no error")
	}
}

// An agent that ignores stdin EOF and SIGTERM is killed, and so are the
// processes it left in its group.
func TestCloseStubbornAgent(t *testing.T) {
	pidFile := filepath.Join(t.TempDir(), "child.pid")
	script := `read line
echo '{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":1,"authMethods":[]}}'
sleep 1000 & echo $! > ` + pidFile + `
trap '' TERM
while :; do sleep 0.1; done`
	a, _ := start(t, AgentConfig{Name: "stubborn", Command: []string{"sh", "-c", script}}, newRecorder(), Options{StopGrace: 200 * time.Millisecond})
	pid := a.cmd.Process.Pid
	var child int
	wait.For(t, "the agent to start its child", waitTimeout, func() bool {
		b, _ := os.ReadFile(pidFile)
		child, _ = strconv.Atoi(strings.TrimSpace(string(b)))
		return child != 0
	})
	_ = a.Close()
	waitGone(t, pid, "agent")
	waitGone(t, child, "agent's child")
}
