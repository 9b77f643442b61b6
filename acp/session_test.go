package acp

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agentrun/agentrun.nvim/termhost"
	acpsdk "github.com/coder/acp-go-sdk"
)

// The demo agent's normal turn: create → tool_call embedding the terminal →
// wait → output → tool_call_update → message → release, with the editor
// told of the terminal before the agent got its id.
func TestDemoPromptRunsTerminalLifecycle(t *testing.T) {
	r := newRecorder()
	var seen *termhost.Terminal
	var s *Session
	r.fakeEditor.terminalCreated = func(_ context.Context, sid, tid string) {
		seen, _ = s.Terminal(tid) // must already be reachable for the display
		r.created <- [2]string{sid, tid}
	}
	a, _ := start(t, selfAgent(t, "demo"), r, Options{})
	s = newSession(t, a)

	if stop := prompt(t, s, "printf 'hello\\n'; echo from demo"); stop != "end_turn" {
		t.Fatalf("stop reason %q, want end_turn", stop)
	}
	created := next(t, r.created, "TerminalCreated")
	released := next(t, r.released, "TerminalReleased")
	if created != released || created[0] != s.ID() {
		t.Fatalf("created %v, released %v, session %s", created, released, s.ID())
	}
	if seen == nil {
		t.Fatalf("terminal %s was not in the session when the editor heard of it", created[1])
	}
	if got := seen.Output().Text; got != "hello\nfrom demo\n" {
		t.Errorf("terminal output %q", got)
	}
	if _, ok := s.Terminal(created[1]); ok {
		t.Errorf("released terminal still listed by the session")
	}

	var toolCall *acpsdk.SessionUpdateToolCall
	var final *acpsdk.SessionToolCallUpdate
	for _, u := range r.sessionUpdates(s.ID()) {
		if u.ToolCall != nil {
			toolCall = u.ToolCall
		}
		if u.ToolCallUpdate != nil {
			final = u.ToolCallUpdate
		}
	}
	if toolCall == nil || toolCall.Kind != acpsdk.ToolKindExecute || toolCall.Status != acpsdk.ToolCallStatusInProgress ||
		len(toolCall.Content) != 1 || toolCall.Content[0].Terminal == nil || toolCall.Content[0].Terminal.TerminalId != created[1] {
		t.Fatalf("tool_call %+v does not embed terminal %s", toolCall, created[1])
	}
	if final == nil || final.Status == nil || *final.Status != acpsdk.ToolCallStatusCompleted {
		t.Fatalf("final tool_call_update %+v, want status completed", final)
	}
	text := r.text(s.ID())
	for _, want := range []string{"Running `printf 'hello\\n'; ec…`", "exited with code 0."} {
		if !strings.Contains(text, want) {
			t.Errorf("agent messages %q lack %q", text, want)
		}
	}
}

// A failing command ends the tool call "failed" and says the exit code.
func TestDemoFailingCommand(t *testing.T) {
	r := newRecorder()
	a, _ := start(t, selfAgent(t, "demo"), r, Options{})
	s := newSession(t, a)
	prompt(t, s, "echo oops >&2; exit 7")
	if text := r.text(s.ID()); !strings.Contains(text, "exited with code 7.") {
		t.Errorf("agent messages %q lack the exit code", text)
	}
	ups := r.sessionUpdates(s.ID())
	last := ups[len(ups)-2].ToolCallUpdate
	if last == nil || last.Status == nil || *last.Status != acpsdk.ToolCallStatusFailed {
		t.Errorf("tool_call_update before the last message: %+v, want failed", last)
	}
}

func TestNewSessionRejectsBadCwd(t *testing.T) {
	a, _ := start(t, selfAgent(t, "demo"), newRecorder(), Options{})
	file := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(file, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ cwd, want string }{
		{"", `cwd "" is not an absolute path`},
		{"relative/dir", `cwd "relative/dir" is not an absolute path`},
		{"/no/such/dir/agentrun", `cwd "/no/such/dir/agentrun"`},
		{file, "is not a directory"},
	} {
		t.Run(tc.cwd, func(t *testing.T) {
			_, err := a.NewSession(context.Background(), tc.cwd)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("NewSession(%q) = %v, want an error containing %q", tc.cwd, err, tc.want)
			}
		})
	}
}

// Cancel answers a pending permission request "cancelled" at once, even
// though the editor's prompt is still open.
func TestCancelAnswersPendingPermission(t *testing.T) {
	r := newRecorder()
	asked := make(chan acpsdk.RequestPermissionRequest, 1)
	never := make(chan struct{})
	defer close(never)
	r.fakeEditor.requestPermission = func(_ context.Context, req acpsdk.RequestPermissionRequest) (acpsdk.RequestPermissionResponse, error) {
		asked <- req
		<-never // a user who never answers, and an editor that ignores ctx
		return acpsdk.RequestPermissionResponse{}, nil
	}
	a, _ := start(t, selfAgent(t, "demo"), r, Options{})
	s := newSession(t, a)

	done := promptAsync(s, "!permission echo should-not-run")
	req := next(t, asked, "permission request")
	if req.ToolCall.Title == nil || *req.ToolCall.Title != "echo should-not-run" {
		t.Errorf("permission request tool call %+v", req.ToolCall)
	}
	// The tool call reached the editor before the question about it.
	ups := r.sessionUpdates(s.ID())
	if len(ups) == 0 || ups[len(ups)-1].ToolCall == nil {
		t.Errorf("tool_call not delivered before the permission request: %+v", ups)
	}
	began := time.Now()
	if err := s.Cancel(context.Background()); err != nil {
		t.Fatal(err)
	}
	res := next(t, done, "prompt after cancel")
	if res.err != nil || res.stop != "cancelled" {
		t.Fatalf("prompt = %q, %v; want cancelled", res.stop, res.err)
	}
	if took := time.Since(began); took > 5*time.Second {
		t.Errorf("cancel took %v", took)
	}
	if text := r.text(s.ID()); !strings.Contains(text, "Permission request cancelled.") || strings.Contains(text, "Running") {
		t.Errorf("agent messages %q", text)
	}
}

func TestPermissionOutcomes(t *testing.T) {
	for _, tc := range []struct {
		option   string
		wantText string
		ran      bool
	}{
		{"allow", "`echo allowed` exited with code 0.", true},
		{"reject", "Permission denied: not running `echo allowed`.", false},
	} {
		t.Run(tc.option, func(t *testing.T) {
			r := newRecorder()
			r.fakeEditor.requestPermission = func(_ context.Context, req acpsdk.RequestPermissionRequest) (acpsdk.RequestPermissionResponse, error) {
				return acpsdk.RequestPermissionResponse{Outcome: acpsdk.NewRequestPermissionOutcomeSelected(acpsdk.PermissionOptionId(tc.option))}, nil
			}
			a, _ := start(t, selfAgent(t, "demo"), r, Options{})
			s := newSession(t, a)
			prompt(t, s, "!permission echo allowed")
			if text := r.text(s.ID()); !strings.Contains(text, tc.wantText) {
				t.Errorf("agent messages %q lack %q", text, tc.wantText)
			}
			select {
			case <-r.created:
				if !tc.ran {
					t.Errorf("a terminal was created although the user rejected")
				}
			default:
				if tc.ran {
					t.Errorf("no terminal was created although the user allowed")
				}
			}
		})
	}
}

// An editor answering with an option the agent did not offer is an error
// to the agent, not a silent allow.
func TestPermissionUnknownOptionIsError(t *testing.T) {
	r := newRecorder()
	r.fakeEditor.requestPermission = func(context.Context, acpsdk.RequestPermissionRequest) (acpsdk.RequestPermissionResponse, error) {
		return acpsdk.RequestPermissionResponse{Outcome: acpsdk.NewRequestPermissionOutcomeSelected("bogus")}, nil
	}
	a, _ := start(t, selfAgent(t, "demo"), r, Options{})
	s := newSession(t, a)
	prompt(t, s, "!permission echo x")
	if text := r.text(s.ID()); !strings.Contains(text, `editor chose option "bogus", which the agent did not offer`) {
		t.Errorf("agent messages %q", text)
	}
}

// Cancelling a running command kills it; the turn ends "cancelled".
func TestCancelKillsRunningCommand(t *testing.T) {
	r := newRecorder()
	a, _ := start(t, selfAgent(t, "demo"), r, Options{})
	s := newSession(t, a)
	done := promptAsync(s, "sleep 30")
	created := next(t, r.created, "TerminalCreated")
	term, ok := s.Terminal(created[1])
	if !ok {
		t.Fatalf("terminal %s not in the session", created[1])
	}
	if err := s.Cancel(context.Background()); err != nil {
		t.Fatal(err)
	}
	res := next(t, done, "prompt after cancel")
	if res.err != nil || res.stop != "cancelled" {
		t.Fatalf("prompt = %q, %v; want cancelled", res.stop, res.err)
	}
	select {
	case <-term.Done():
	default:
		t.Errorf("command still running after the cancelled turn")
	}
	// Both stop it: our cancel of the turn's commands (SIGINT) and the demo
	// agent's own kill on session/cancel (SIGTERM); whichever lands first.
	if text := r.text(s.ID()); !strings.Contains(text, "`sleep 30` was killed by SIGTERM.") && !strings.Contains(text, "`sleep 30` was killed by SIGINT.") {
		t.Errorf("agent messages %q", text)
	}
}

func TestPromptWhileBusy(t *testing.T) {
	r := newRecorder()
	a, _ := start(t, selfAgent(t, "demo"), r, Options{})
	s := newSession(t, a)
	done := promptAsync(s, "sleep 30")
	next(t, r.created, "TerminalCreated")
	_, err := s.Prompt(context.Background(), "echo second")
	if err == nil || !strings.Contains(err.Error(), "still answering the previous prompt") {
		t.Errorf("second prompt: %v", err)
	}
	_ = s.Cancel(context.Background())
	next(t, done, "first prompt")
}

func TestFileSystemThroughEditor(t *testing.T) {
	r := newRecorder()
	dir := t.TempDir()
	var wrote acpsdk.WriteTextFileRequest
	r.fakeEditor.readTextFile = func(_ context.Context, req acpsdk.ReadTextFileRequest) (acpsdk.ReadTextFileResponse, error) {
		if req.Path != filepath.Join(dir, "in.txt") {
			return acpsdk.ReadTextFileResponse{}, os.ErrNotExist
		}
		return acpsdk.ReadTextFileResponse{Content: "buffer text\n"}, nil
	}
	r.fakeEditor.writeTextFile = func(_ context.Context, req acpsdk.WriteTextFileRequest) (acpsdk.WriteTextFileResponse, error) {
		wrote = req
		return acpsdk.WriteTextFileResponse{}, nil
	}
	a, _ := start(t, selfAgent(t, "demo"), r, Options{})
	s := newSession(t, a)

	prompt(t, s, "!read "+filepath.Join(dir, "in.txt"))
	if msgs := r.messages(s.ID()); len(msgs) < 2 || msgs[len(msgs)-1] != "buffer text\n" {
		t.Errorf("read messages %q", msgs)
	}
	prompt(t, s, "!read relative.txt")
	if text := r.text(s.ID()); !strings.Contains(text, `path "relative.txt" is not absolute`) {
		t.Errorf("relative read: %q", text)
	}
	prompt(t, s, "!write "+filepath.Join(dir, "out.txt")+` two\nlines`)
	if wrote.Path != filepath.Join(dir, "out.txt") || wrote.Content != "two\nlines" || string(wrote.SessionId) != s.ID() {
		t.Errorf("write request %+v", wrote)
	}
}
