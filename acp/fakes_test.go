package acp

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentrun/agentrun.nvim/acp/agentterm"
	"github.com/agentrun/agentrun.nvim/internal/demoagent"
	"github.com/agentrun/agentrun.nvim/internal/syncbuf"
	"github.com/agentrun/agentrun.nvim/termhost"
	acpsdk "github.com/coder/acp-go-sdk"
)

// The test binary doubles as the agents the tests talk to: started with
// AGENTRUN_TEST_AGENT set, it serves that agent on stdio instead of
// running tests. That keeps them real processes without a slow go build.
func TestMain(m *testing.M) {
	switch os.Getenv("AGENTRUN_TEST_AGENT") {
	case "":
		os.Exit(m.Run())
	case "demo":
		if err := demoagent.Run(context.Background(), os.Stdin, os.Stdout); err != nil {
			fmt.Fprintln(os.Stderr, "demo agent:", err)
			os.Exit(1)
		}
		os.Exit(0)
	case "probe":
		runProbe()
		os.Exit(0)
	default:
		fmt.Fprintln(os.Stderr, "unknown AGENTRUN_TEST_AGENT", os.Getenv("AGENTRUN_TEST_AGENT"))
		os.Exit(2)
	}
}

// waitTimeout bounds every wait in these tests.
const waitTimeout = 15 * time.Second

// fakeEditor implements Editor with function fields; nil fields fall back
// to doing nothing (or refusing, for requests).
type fakeEditor struct {
	sessionUpdate     func(ctx context.Context, n acpsdk.SessionNotification)
	requestPermission func(ctx context.Context, req acpsdk.RequestPermissionRequest) (acpsdk.RequestPermissionResponse, error)
	readTextFile      func(ctx context.Context, req acpsdk.ReadTextFileRequest) (acpsdk.ReadTextFileResponse, error)
	writeTextFile     func(ctx context.Context, req acpsdk.WriteTextFileRequest) (acpsdk.WriteTextFileResponse, error)
	terminalCreated   func(ctx context.Context, sessionID, terminalID string)
	terminalReleased  func(ctx context.Context, sessionID, terminalID string)
	sessionEnded      func(ctx context.Context, sessionID string, reason error)
	agentTerminal     func(ctx context.Context, sessionID string, ev agentterm.Event)
	elicit            func(ctx context.Context, e Elicitation) (ElicitationAnswer, error)
	elicitationDone   func(ctx context.Context, id string)
}

func (f *fakeEditor) Elicit(ctx context.Context, e Elicitation) (ElicitationAnswer, error) {
	if f.elicit != nil {
		return f.elicit(ctx, e)
	}
	return ElicitationAnswer{}, errors.New("fake editor: no elicitation handler")
}

func (f *fakeEditor) ElicitationComplete(ctx context.Context, id string) {
	if f.elicitationDone != nil {
		f.elicitationDone(ctx, id)
	}
}

func (f *fakeEditor) AgentTerminal(ctx context.Context, sessionID string, ev agentterm.Event) {
	if f.agentTerminal != nil {
		f.agentTerminal(ctx, sessionID, ev)
	}
}

func (f *fakeEditor) SessionUpdate(ctx context.Context, n acpsdk.SessionNotification) {
	if f.sessionUpdate != nil {
		f.sessionUpdate(ctx, n)
	}
}

func (f *fakeEditor) RequestPermission(ctx context.Context, req acpsdk.RequestPermissionRequest) (acpsdk.RequestPermissionResponse, error) {
	if f.requestPermission != nil {
		return f.requestPermission(ctx, req)
	}
	return acpsdk.RequestPermissionResponse{}, errors.New("fake editor: no permission handler")
}

func (f *fakeEditor) ReadTextFile(ctx context.Context, req acpsdk.ReadTextFileRequest) (acpsdk.ReadTextFileResponse, error) {
	if f.readTextFile != nil {
		return f.readTextFile(ctx, req)
	}
	return acpsdk.ReadTextFileResponse{}, errors.New("fake editor: no file reader")
}

func (f *fakeEditor) WriteTextFile(ctx context.Context, req acpsdk.WriteTextFileRequest) (acpsdk.WriteTextFileResponse, error) {
	if f.writeTextFile != nil {
		return f.writeTextFile(ctx, req)
	}
	return acpsdk.WriteTextFileResponse{}, errors.New("fake editor: no file writer")
}

func (f *fakeEditor) TerminalCreated(ctx context.Context, sessionID, terminalID string) {
	if f.terminalCreated != nil {
		f.terminalCreated(ctx, sessionID, terminalID)
	}
}

func (f *fakeEditor) TerminalReleased(ctx context.Context, sessionID, terminalID string) {
	if f.terminalReleased != nil {
		f.terminalReleased(ctx, sessionID, terminalID)
	}
}

func (f *fakeEditor) SessionEnded(ctx context.Context, sessionID string, reason error) {
	if f.sessionEnded != nil {
		f.sessionEnded(ctx, sessionID, reason)
	}
}

// recorder is a fakeEditor that records what the client told it.
type recorder struct {
	fakeEditor
	mu       sync.Mutex
	updates  []acpsdk.SessionNotification
	created  chan [2]string // {session, terminal}
	released chan [2]string
	ended    chan endedEvent
}

type endedEvent struct {
	session string
	reason  error
}

func newRecorder() *recorder {
	r := &recorder{
		created:  make(chan [2]string, 100),
		released: make(chan [2]string, 100),
		ended:    make(chan endedEvent, 100),
	}
	r.fakeEditor.sessionUpdate = func(_ context.Context, n acpsdk.SessionNotification) {
		r.mu.Lock()
		r.updates = append(r.updates, n)
		r.mu.Unlock()
	}
	r.fakeEditor.terminalCreated = func(_ context.Context, s, t string) { r.created <- [2]string{s, t} }
	r.fakeEditor.terminalReleased = func(_ context.Context, s, t string) { r.released <- [2]string{s, t} }
	r.fakeEditor.sessionEnded = func(_ context.Context, s string, reason error) { r.ended <- endedEvent{s, reason} }
	return r
}

// sessionUpdates returns the updates of one session so far.
func (r *recorder) sessionUpdates(session string) []acpsdk.SessionUpdate {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []acpsdk.SessionUpdate
	for _, n := range r.updates {
		if string(n.SessionId) == session {
			out = append(out, n.Update)
		}
	}
	return out
}

// messages returns the session's agent_message_chunk texts.
func (r *recorder) messages(session string) []string {
	var out []string
	for _, u := range r.sessionUpdates(session) {
		if u.AgentMessageChunk != nil && u.AgentMessageChunk.Content.Text != nil {
			out = append(out, u.AgentMessageChunk.Content.Text.Text)
		}
	}
	return out
}

// text joins the session's agent messages.
func (r *recorder) text(session string) string { return strings.Join(r.messages(session), "") }

// next waits for one event on ch.
func next[T any](t *testing.T, ch <-chan T, what string) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(waitTimeout):
		t.Fatalf("timed out waiting for %s", what)
		var zero T
		return zero
	}
}

// testLogger logs into a buffer that is printed if the test fails.
func testLogger(t *testing.T) (*slog.Logger, *syncbuf.Buffer) {
	t.Helper()
	buf := &syncbuf.Buffer{}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("client log:\n%s", buf.String())
		}
	})
	return slog.New(slog.NewTextHandler(buf, &slog.HandlerOptions{Level: slog.LevelDebug})), buf
}

// newHost returns a terminal host closed when the test ends.
func newHost(t *testing.T) *termhost.Host {
	t.Helper()
	h := termhost.NewHost(termhost.Options{KillGrace: 500 * time.Millisecond})
	t.Cleanup(h.Close)
	return h
}

// selfAgent is the AgentConfig that runs this test binary as agent kind.
func selfAgent(t *testing.T, kind string) AgentConfig {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	// GORACE: a -race binary otherwise sleeps a second before exiting.
	return AgentConfig{Name: kind, Command: []string{exe}, Env: []string{"AGENTRUN_TEST_AGENT=" + kind, "GORACE=atexit_sleep_ms=0"}}
}

// start starts an agent, closing it when the test ends. opts.Host and
// opts.Logger default to a fresh host and the test log.
func start(t *testing.T, cfg AgentConfig, ed Editor, opts Options) (*Agent, *syncbuf.Buffer) {
	t.Helper()
	var logs *syncbuf.Buffer
	if opts.Host == nil {
		opts.Host = newHost(t)
	}
	if opts.Logger == nil {
		opts.Logger, logs = testLogger(t)
	}
	if opts.StopGrace == 0 {
		opts.StopGrace = time.Second
	}
	ctx, cancel := context.WithTimeout(context.Background(), waitTimeout)
	defer cancel()
	a, err := Start(ctx, cfg, ed, opts)
	if err != nil {
		t.Fatalf("start %s: %v", cfg.Name, err)
	}
	t.Cleanup(func() { _ = a.Close() })
	return a, logs
}

// newSession starts a session in a fresh temporary directory.
func newSession(t *testing.T, a *Agent) *Session {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), waitTimeout)
	defer cancel()
	s, err := a.NewSession(ctx, t.TempDir())
	if err != nil {
		t.Fatalf("new session: %v", err)
	}
	return s
}

// prompt runs one turn and fails the test on error.
func prompt(t *testing.T, s *Session, text string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), waitTimeout)
	defer cancel()
	stop, err := s.Prompt(ctx, text)
	if err != nil {
		t.Fatalf("prompt %q: %v", text, err)
	}
	return stop
}

// promptAsync runs a turn in the background.
func promptAsync(s *Session, text string) <-chan promptResult {
	ch := make(chan promptResult, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 2*waitTimeout)
		defer cancel()
		stop, err := s.Prompt(ctx, text)
		ch <- promptResult{stop, err}
	}()
	return ch
}

type promptResult struct {
	stop string
	err  error
}
