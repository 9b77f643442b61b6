package demoagent

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	acpsdk "github.com/coder/acp-go-sdk"
)

// bareClient is a client with no terminals and no files: it only records
// session updates.
type bareClient struct {
	mu      sync.Mutex
	updates []acpsdk.SessionUpdate
}

var errUnsupported = errors.New("bare client: unsupported")

func (c *bareClient) SessionUpdate(_ context.Context, n acpsdk.SessionNotification) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.updates = append(c.updates, n.Update)
	return nil
}

func (c *bareClient) text() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	var b strings.Builder
	for _, u := range c.updates {
		if u.AgentMessageChunk != nil && u.AgentMessageChunk.Content.Text != nil {
			b.WriteString(u.AgentMessageChunk.Content.Text.Text)
		}
	}
	return b.String()
}

func (c *bareClient) ReadTextFile(context.Context, acpsdk.ReadTextFileRequest) (acpsdk.ReadTextFileResponse, error) {
	return acpsdk.ReadTextFileResponse{}, errUnsupported
}
func (c *bareClient) WriteTextFile(context.Context, acpsdk.WriteTextFileRequest) (acpsdk.WriteTextFileResponse, error) {
	return acpsdk.WriteTextFileResponse{}, errUnsupported
}
func (c *bareClient) RequestPermission(context.Context, acpsdk.RequestPermissionRequest) (acpsdk.RequestPermissionResponse, error) {
	return acpsdk.RequestPermissionResponse{}, errUnsupported
}
func (c *bareClient) CreateTerminal(context.Context, acpsdk.CreateTerminalRequest) (acpsdk.CreateTerminalResponse, error) {
	return acpsdk.CreateTerminalResponse{}, errUnsupported
}
func (c *bareClient) KillTerminal(context.Context, acpsdk.KillTerminalRequest) (acpsdk.KillTerminalResponse, error) {
	return acpsdk.KillTerminalResponse{}, errUnsupported
}
func (c *bareClient) TerminalOutput(context.Context, acpsdk.TerminalOutputRequest) (acpsdk.TerminalOutputResponse, error) {
	return acpsdk.TerminalOutputResponse{}, errUnsupported
}
func (c *bareClient) ReleaseTerminal(context.Context, acpsdk.ReleaseTerminalRequest) (acpsdk.ReleaseTerminalResponse, error) {
	return acpsdk.ReleaseTerminalResponse{}, errUnsupported
}
func (c *bareClient) WaitForTerminalExit(context.Context, acpsdk.WaitForTerminalExitRequest) (acpsdk.WaitForTerminalExitResponse, error) {
	return acpsdk.WaitForTerminalExitResponse{}, errUnsupported
}

// connect runs the demo agent in-process on pipes and returns a client
// connection to it that advertised caps.
func connect(t *testing.T, client acpsdk.Client, caps acpsdk.ClientCapabilities) (*acpsdk.ClientSideConnection, acpsdk.SessionId) {
	t.Helper()
	toAgentR, toAgentW := io.Pipe()
	fromAgentR, fromAgentW := io.Pipe()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- Run(ctx, toAgentR, fromAgentW) }()
	t.Cleanup(func() {
		cancel()
		toAgentW.Close()
		fromAgentR.Close()
		select {
		case <-done:
		case <-time.After(5 * time.Second):
			t.Error("Run did not return")
		}
	})
	conn := acpsdk.NewClientSideConnection(client, toAgentW, fromAgentR)
	conn.SetLogger(slog.New(slog.DiscardHandler))
	ctx2, cancel2 := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel2()
	init, err := conn.Initialize(ctx2, acpsdk.InitializeRequest{ProtocolVersion: 1, ClientCapabilities: caps})
	if err != nil {
		t.Fatal(err)
	}
	if init.ProtocolVersion != 1 || init.AgentInfo == nil || init.AgentInfo.Name != Name {
		t.Fatalf("initialize answered %+v", init)
	}
	sess, err := conn.NewSession(ctx2, acpsdk.NewSessionRequest{Cwd: t.TempDir(), McpServers: []acpsdk.McpServer{}})
	if err != nil {
		t.Fatal(err)
	}
	return conn, sess.SessionId
}

// Without the capabilities, the demo says what is missing and never calls
// the methods.
func TestDemoWithoutCapabilities(t *testing.T) {
	for _, tc := range []struct{ prompt, want string }{
		{"echo hi", "The client lacks terminals (clientCapabilities.terminal is not true), so I cannot run `echo hi`."},
		{"!read /etc/hostname", "The client cannot read files"},
		{"!write /tmp/x y", "The client cannot write files"},
		{"!meta echo hi", "did not advertise clientCapabilities._meta.terminal_output"},
		{"", "Send me a shell command line"},
		{"!help", "`!permission CMD` asks first"},
		{"!flood 3", "flood 1\nflood 2\nflood 3\nSent 3 messages."},
		{"!flood lots", "Usage: `!flood N`"},
		{"!permission", "Usage: `!permission CMD`"},
	} {
		t.Run(tc.prompt, func(t *testing.T) {
			client := &bareClient{}
			conn, sid := connect(t, client, acpsdk.ClientCapabilities{})
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			resp, err := conn.Prompt(ctx, acpsdk.PromptRequest{SessionId: sid, Prompt: []acpsdk.ContentBlock{acpsdk.TextBlock(tc.prompt)}})
			if err != nil {
				t.Fatal(err)
			}
			if resp.StopReason != acpsdk.StopReasonEndTurn {
				t.Errorf("stop reason %q", resp.StopReason)
			}
			if got := client.text(); !strings.Contains(got, tc.want) {
				t.Errorf("messages %q lack %q", got, tc.want)
			}
		})
	}
}

// "!updates" sends every stable kind of update.
func TestDemoAllUpdates(t *testing.T) {
	client := &bareClient{}
	conn, sid := connect(t, client, acpsdk.ClientCapabilities{})
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if _, err := conn.Prompt(ctx, acpsdk.PromptRequest{SessionId: sid, Prompt: []acpsdk.ContentBlock{acpsdk.TextBlock("!updates")}}); err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	client.mu.Lock()
	for _, u := range client.updates {
		switch {
		case u.UserMessageChunk != nil:
			seen["user_message_chunk"] = true
		case u.AgentMessageChunk != nil:
			seen["agent_message_chunk"] = true
		case u.AgentThoughtChunk != nil:
			seen["agent_thought_chunk"] = true
		case u.Plan != nil:
			seen["plan"] = true
		case u.ToolCall != nil:
			seen["tool_call"] = true
		case u.ToolCallUpdate != nil:
			seen["tool_call_update"] = true
		case u.AvailableCommandsUpdate != nil:
			seen["available_commands_update"] = true
		case u.CurrentModeUpdate != nil:
			seen["current_mode_update"] = true
		case u.SessionInfoUpdate != nil:
			seen["session_info_update"] = true
		}
	}
	client.mu.Unlock()
	if len(seen) != 9 {
		t.Errorf("update kinds seen: %v, want 9", seen)
	}
}

// TestOpenRecording: !replay finds a recording by its path from the
// session's directory, by its path in the plugin's directory (as the
// README writes it) and by its name alone.
func TestOpenRecording(t *testing.T) {
	root := t.TempDir()
	rec := filepath.Join(root, "tests", "testdata", "agentterm")
	if err := os.MkdirAll(rec, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(rec, "claude-success.jsonl"), []byte("{}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	old := executable
	executable = func() (string, error) { return filepath.Join(root, "bin", "agentrun"), nil }
	t.Cleanup(func() { executable = old })
	t.Chdir(t.TempDir()) // a project elsewhere
	for _, path := range []string{"tests/testdata/agentterm/claude-success.jsonl", "claude-success", "claude-success.jsonl", filepath.Join(rec, "claude-success.jsonl")} {
		f, err := openRecording(path)
		if err != nil {
			t.Errorf("openRecording(%q): %v", path, err)
			continue
		}
		f.Close()
	}
	if _, err := openRecording("no-such-recording"); err == nil {
		t.Error("a recording that is not there was opened")
	}
	if got := recordings(); len(got) != 1 || got[0] != "claude-success" {
		t.Errorf("recordings() = %v", got)
	}
	if got := namesOf(", or one of: %s"); got != ", or one of: claude-success" {
		t.Errorf("namesOf = %q: the answers to a wrong !replay do not name the recordings", got)
	}
}

// TestCodeSpan: a command line is fenced by one backtick more than its
// longest run of them, and spaced from a fence it would touch.
func TestCodeSpan(t *testing.T) {
	for in, want := range map[string]string{
		"ls -la":                "`ls -la`",
		"git status `rm -rf x`": "`` git status `rm -rf x` ``",
		"a ``b`` c":             "```a ``b`` c```",
	} {
		if got := codeSpan(in); got != want {
			t.Errorf("codeSpan(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestShortCommand: the messages around a tool call name a long command
// line by its start (its tool call shows it whole), a short one whole.
func TestShortCommand(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"ls -la", "ls -la"},
		{"echo queued-behind-sleep", "echo queued-behind-sleep"}, // 24: whole
		{"sh -c 'echo building the whole thing now; exit 0'", "sh -c 'echo building…"},
		{"echo first line\necho second", "echo first line…"},
		{"for i in 1 2 3 4 5 6 7 8 9", "for i in 1 2 3 4 5 6…"},
		{"ééééééééééééééééééééééééé", "éééééééééééééééééééé…"},
	} {
		if got := shortCommand(c.in); got != c.want {
			t.Errorf("shortCommand(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}
