package demoagent

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"
	"sync"
	"sync/atomic"

	acpsdk "github.com/coder/acp-go-sdk"
)

// Name is the agentInfo name the demo agent reports.
const Name = "agentrun-demo"

// DefaultOutputByteLimit is the outputByteLimit of the demo's terminals.
const DefaultOutputByteLimit = 1 << 20

// Run serves the demo agent over the given stdio streams until the client
// disconnects or ctx ends.
func Run(ctx context.Context, in io.Reader, out io.Writer) error {
	d := newDemo(ctx, out)
	d.conn = acpsdk.NewAgentSideConnection(d, d.out, d.wire.reader(in))
	d.conn.SetLogger(d.log)
	close(d.ready)
	select {
	case <-d.conn.Done():
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// demo is the agent: its sessions and what the client can do.
type demo struct {
	conn *acpsdk.AgentSideConnection
	out  *lockedWriter
	log  *slog.Logger
	// ready is closed once conn is set: the connection may hand us a
	// request before NewAgentSideConnection has returned.
	ready chan struct{}
	// ctx outlives single prompts: requests to the client use it, so that a
	// cancelled turn can still kill and release its terminal.
	ctx context.Context

	// wire keeps the order of prompts and cancels as they came (cancel.go).
	wire *wireOrder

	mu       sync.Mutex
	caps     acpsdk.ClientCapabilities
	sessions map[string]*session
	nextID   int
}

// session is one demo session.
type session struct {
	id      string
	cwd     string
	replays atomic.Int32 // how many !replay turns it had (replay.go)
}

func newDemo(ctx context.Context, out io.Writer) *demo {
	return &demo{
		out:      &lockedWriter{w: out},
		log:      slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn})),
		ctx:      ctx,
		ready:    make(chan struct{}),
		sessions: make(map[string]*session),
		wire:     newWireOrder(),
	}
}

// lockedWriter lets the "!garbage" prompt write a line of its own between
// the connection's messages without splitting one.
type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

// id returns a fresh id with the given prefix.
func (d *demo) id(prefix string) string {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.nextID++
	return fmt.Sprintf("%s-%d", prefix, d.nextID)
}

// Initialize records the client's capabilities.
func (d *demo) Initialize(_ context.Context, req acpsdk.InitializeRequest) (acpsdk.InitializeResponse, error) {
	d.mu.Lock()
	d.caps = req.ClientCapabilities
	d.mu.Unlock()
	return acpsdk.InitializeResponse{
		ProtocolVersion: acpsdk.ProtocolVersion(1),
		AgentInfo:       &acpsdk.Implementation{Name: Name, Version: "1"},
		AuthMethods:     []acpsdk.AuthMethod{},
	}, nil
}

// Authenticate accepts anything: the demo needs no login.
func (d *demo) Authenticate(context.Context, acpsdk.AuthenticateRequest) (acpsdk.AuthenticateResponse, error) {
	return acpsdk.AuthenticateResponse{}, nil
}

// Logout is not supported.
func (d *demo) Logout(context.Context, acpsdk.LogoutRequest) (acpsdk.LogoutResponse, error) {
	return acpsdk.LogoutResponse{}, acpsdk.NewMethodNotFound(acpsdk.AgentMethodLogout)
}

// NewSession starts a session in an absolute cwd.
func (d *demo) NewSession(_ context.Context, req acpsdk.NewSessionRequest) (acpsdk.NewSessionResponse, error) {
	if !strings.HasPrefix(req.Cwd, "/") {
		return acpsdk.NewSessionResponse{}, acpsdk.NewInvalidParams(map[string]any{"error": fmt.Sprintf("cwd %q is not absolute", req.Cwd)})
	}
	s := &session{id: d.id("demo-session"), cwd: req.Cwd}
	d.mu.Lock()
	d.sessions[s.id] = s
	d.mu.Unlock()
	return acpsdk.NewSessionResponse{SessionId: acpsdk.SessionId(s.id)}, nil
}

// Cancel needs nothing more: the SDK cancels the running prompt's context,
// and wireOrder (cancel.go) one whose handler had not started yet.
func (d *demo) Cancel(context.Context, acpsdk.CancelNotification) error { return nil }

// CloseSession forgets a session.
func (d *demo) CloseSession(_ context.Context, req acpsdk.CloseSessionRequest) (acpsdk.CloseSessionResponse, error) {
	d.mu.Lock()
	delete(d.sessions, string(req.SessionId))
	d.mu.Unlock()
	return acpsdk.CloseSessionResponse{}, nil
}

// ListSessions is not supported.
func (d *demo) ListSessions(context.Context, acpsdk.ListSessionsRequest) (acpsdk.ListSessionsResponse, error) {
	return acpsdk.ListSessionsResponse{}, acpsdk.NewMethodNotFound(acpsdk.AgentMethodSessionList)
}

// ResumeSession is not supported.
func (d *demo) ResumeSession(context.Context, acpsdk.ResumeSessionRequest) (acpsdk.ResumeSessionResponse, error) {
	return acpsdk.ResumeSessionResponse{}, acpsdk.NewMethodNotFound(acpsdk.AgentMethodSessionResume)
}

// SetSessionConfigOption is not supported.
func (d *demo) SetSessionConfigOption(context.Context, acpsdk.SetSessionConfigOptionRequest) (acpsdk.SetSessionConfigOptionResponse, error) {
	return acpsdk.SetSessionConfigOptionResponse{}, acpsdk.NewMethodNotFound(acpsdk.AgentMethodSessionSetConfigOption)
}

// SetSessionMode is not supported.
func (d *demo) SetSessionMode(context.Context, acpsdk.SetSessionModeRequest) (acpsdk.SetSessionModeResponse, error) {
	return acpsdk.SetSessionModeResponse{}, acpsdk.NewMethodNotFound(acpsdk.AgentMethodSessionSetMode)
}

// Prompt runs one turn; see doc.go for the prompt forms.
func (d *demo) Prompt(ctx context.Context, req acpsdk.PromptRequest) (acpsdk.PromptResponse, error) {
	<-d.ready
	d.mu.Lock()
	s := d.sessions[string(req.SessionId)]
	d.mu.Unlock()
	if s == nil {
		return acpsdk.PromptResponse{}, acpsdk.NewInvalidParams(map[string]any{"error": fmt.Sprintf("unknown session %q", req.SessionId)})
	}
	var text strings.Builder
	for _, b := range req.Prompt {
		if b.Text != nil {
			text.WriteString(b.Text.Text)
		}
	}
	ctx, done := d.wire.turn(ctx, s.id)
	defer done()
	reason, err := d.turn(ctx, s, strings.TrimSpace(text.String()))
	if err != nil {
		return acpsdk.PromptResponse{}, err
	}
	if ctx.Err() != nil {
		// a cancelled turn ends "cancelled", whatever it got to do (ACP:
		// the agent answers a cancel so): its command refused, or done
		reason = acpsdk.StopReasonCancelled
	}
	return acpsdk.PromptResponse{StopReason: reason}, nil
}

// turn dispatches a prompt by its form.
func (d *demo) turn(ctx context.Context, s *session, text string) (acpsdk.StopReason, error) {
	cmd, arg, _ := strings.Cut(text, " ")
	arg = strings.TrimSpace(arg)
	switch cmd {
	case "":
		return d.say(s, "Send me a shell command line and I will run it in a terminal. `!help` lists the special prompts.")
	case "!help":
		return d.say(s, helpText)
	case "!permission":
		return d.runWithPermission(ctx, s, arg)
	case "!read":
		return d.readFile(s, arg)
	case "!write":
		return d.writeFile(s, arg)
	case "!exit":
		return d.exit(arg)
	case "!hang":
		<-d.ctx.Done()
		return acpsdk.StopReasonCancelled, nil
	case "!flood":
		return d.flood(s, arg)
	case "!garbage":
		_, _ = d.out.Write([]byte("this line is not JSON-RPC\n"))
		return d.say(s, "I wrote a line that is not JSON to stdout.")
	case "!updates":
		return d.allUpdates(s)
	case "!meta":
		return d.runDisplayOnly(ctx, s, arg)
	case "!parallel":
		return d.runParallel(ctx, s, arg)
	case "!outputlat":
		return d.outputLatency(ctx, s, arg)
	case "!replay":
		return d.replay(ctx, s, arg)
	case "!env":
		// !env NAME=VALUE[,NAME=VALUE…] CMD: CMD with that env
		vars, line, _ := strings.Cut(arg, " ")
		var env []acpsdk.EnvVariable
		for _, kv := range strings.Split(vars, ",") {
			name, value, _ := strings.Cut(kv, "=")
			env = append(env, acpsdk.EnvVariable{Name: name, Value: value})
		}
		return d.runEnv(ctx, s, strings.TrimSpace(line), "", env)
	}
	return d.run(ctx, s, text, "")
}

// update sends one session/update.
func (d *demo) update(s *session, u acpsdk.SessionUpdate) error {
	return d.conn.SessionUpdate(d.ctx, acpsdk.SessionNotification{SessionId: acpsdk.SessionId(s.id), Update: u})
}

// say sends one agent message and ends the turn.
func (d *demo) say(s *session, text string) (acpsdk.StopReason, error) {
	if err := d.update(s, acpsdk.UpdateAgentMessageText(text)); err != nil {
		return "", err
	}
	return acpsdk.StopReasonEndTurn, nil
}

// capabilities returns what the client advertised.
func (d *demo) capabilities() acpsdk.ClientCapabilities {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.caps
}

const helpText = "Prompts: a shell command line runs in a client terminal. " +
	"`!permission CMD` asks first. `!env NAME=V[,NAME=V] CMD` runs CMD with that env. `!read PATH` / `!write PATH TEXT` use the client's files. " +
	"`!meta CMD` runs CMD myself and streams it as a display-only terminal. " +
	"`!updates` sends every kind of session update. `!flood N` sends N messages. " +
	"`!garbage` writes a non-JSON line. `!hang` never answers. `!exit N [TEXT]` exits with code N. " +
	"`!parallel N CMD` runs CMD in N terminals at once ({i} in it: each one's number); `!outputlat N CMD` times N terminal/output calls (benchmarks). " +
	"`!replay NAME` sends the session updates recorded in the plugin's tests/testdata/agentterm/NAME.jsonl (Claude Code's, codex's and ACP v2's agent-owned terminals: claude-success, codex-optin, v2, …), or in a file of yours (`!replay path/to/FILE.jsonl`)."

// shortCommand is how the demo's messages name command line once its
// tool call shows it whole: the line itself when it is short, else its
// first shortCommandRunes characters and "…" ("sh -c 'echo building…"),
// so that the prompt, the tool call and the messages around it do not
// each fill a small chat with the whole line.
func shortCommand(line string) string {
	first, _, multi := strings.Cut(line, "\n")
	r := []rune(first)
	if len(r) <= shortCommandRunes+4 && !multi {
		return line
	}
	if len(r) > shortCommandRunes {
		r = r[:shortCommandRunes]
	}
	return strings.TrimRight(string(r), " ") + "…"
}

// shortCommandRunes is how much of a long command line the messages keep.
const shortCommandRunes = 20

// codeSpan is s as a markdown code span: fenced by one backtick more than its
// longest run of them, so a command line with backticks shows whole.
func codeSpan(s string) string {
	longest, run := 0, 0
	for _, r := range s {
		if r == '`' {
			run++
			longest = max(longest, run)
		} else {
			run = 0
		}
	}
	fence := strings.Repeat("`", longest+1)
	if strings.HasPrefix(s, "`") || strings.HasSuffix(s, "`") {
		return fence + " " + s + " " + fence
	}
	return fence + s + fence
}
