package acp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"
	"unicode"

	"github.com/agentrun/agentrun.nvim/ahp"
	"github.com/agentrun/agentrun.nvim/termhost"
	acpsdk "github.com/coder/acp-go-sdk"
)

// maxOutputByteLimit is the largest outputByteLimit an agent may ask for.
const maxOutputByteLimit = 1 << 30

// agentEnvDefaults make commands behave when no one is at the keyboard:
// no pager waiting for a key, no git password prompt. They are laid over
// our environment; the agent's own entries win over them.
var agentEnvDefaults = []string{
	"TERM=xterm-256color",
	"PAGER=cat",
	"GIT_PAGER=cat",
	"GIT_TERMINAL_PROMPT=0",
}

// TitleMetaKey names the terminal in terminal/create's _meta: agentrun's
// MCP tool puts the description the model gave the command there (the
// title of its split and of its line in the terminal list).
const TitleMetaKey = "agentrun/title"

// ToolCallMetaKey names, in terminal/create's _meta, the tool call the
// command runs for (agentrun's MCP tool knows it): the approval question
// stands above that tool call in the chat.
const ToolCallMetaKey = "agentrun/toolCall"

// exitStatusJSON is the wire form of an exit status. Both fields are
// always present, one of them null: the SDK's type omits nulls.
type exitStatusJSON struct {
	ExitCode *int    `json:"exitCode"`
	Signal   *string `json:"signal"`
}

// terminalOutputResponse is terminal/output's result; exitStatus appears
// only after the command has exited.
type terminalOutputResponse struct {
	Output     jsonText        `json:"output"` // spliced when big (bigtext.go)
	Truncated  bool            `json:"truncated"`
	ExitStatus *exitStatusJSON `json:"exitStatus,omitempty"`
}

// createTerminalResponse is terminal/create's result.
type createTerminalResponse struct {
	TerminalID string `json:"terminalId"`
}

// emptyResult is the "{}" of terminal/kill and terminal/release.
type emptyResult struct{}

func toExitJSON(st termhost.ExitStatus) exitStatusJSON {
	var out exitStatusJSON
	if st.Code != nil {
		code := *st.Code
		out.ExitCode = &code
	}
	if st.Signal != "" {
		sig := st.Signal
		out.Signal = &sig
	}
	return out
}

// handleTerminalCreate starts a command in a new pty and returns its id at
// once. With args the command is exec'd as is; without, command is a shell
// line for bash --noprofile --norc -c (lineshell; agents send whole lines).
func (a *Agent) handleTerminalCreate(ctx context.Context, params json.RawMessage) (any, *acpsdk.RequestError) {
	const method = acpsdk.ClientMethodTerminalCreate
	var req acpsdk.CreateTerminalRequest
	if rerr := decodeParams(method, params, &req); rerr != nil {
		return nil, rerr
	}
	s, rerr := a.session(ctx, method, req.SessionId)
	if rerr != nil {
		return nil, rerr
	}
	// A NUL cannot be part of a command line, an argument or a path: the
	// exec would fail with a Go error; say what is wrong instead.
	if strings.ContainsRune(req.Command, 0) {
		return nil, invalidParams(method, "command %q contains a NUL byte, which no command line can hold", req.Command)
	}
	for i, arg := range req.Args {
		if strings.ContainsRune(arg, 0) {
			return nil, invalidParams(method, "args[%d] %q contains a NUL byte, which no argument can hold", i, arg)
		}
	}
	if req.Cwd != nil && strings.ContainsRune(*req.Cwd, 0) {
		return nil, invalidParams(method, "cwd %q contains a NUL byte", *req.Cwd)
	}
	cwd := s.cwd
	if req.Cwd != nil {
		if !isAbs(*req.Cwd) {
			return nil, invalidParams(method, "cwd %q is not an absolute path", *req.Cwd)
		}
		cwd = filepath.Clean(*req.Cwd)
	}
	if err := a.checkCwd(s, cwd); err != nil {
		return nil, invalidParams(method, "%v", err)
	}
	env, rerr := terminalEnv(method, req.Env)
	if rerr != nil {
		return nil, rerr
	}
	// The agent's outputByteLimit (0 keeps nothing), at most the user's
	// cap; none: the user's cap (nil: the host's, which is the same).
	var limit *int
	if req.OutputByteLimit != nil {
		n := *req.OutputByteLimit
		if n < 0 {
			return nil, invalidParams(method, "outputByteLimit must not be negative, not %d", n)
		}
		if n > maxOutputByteLimit {
			return nil, invalidParams(method, "outputByteLimit %d is more than the maximum of %d (1 GiB)", n, maxOutputByteLimit)
		}
		if a.opts.ByteLimit > 0 {
			n = min(n, a.opts.ByteLimit)
		}
		limit = &n
	} else if n := a.opts.ByteLimit; n > 0 {
		limit = &n
	}

	spec := termhost.Spec{
		Command:   req.Command,
		Args:      req.Args,
		Shell:     len(req.Args) == 0,
		Env:       env,
		Dir:       cwd,
		ByteLimit: limit,
		Claim:     ahp.SessionClaim(s.id, ""),
	}
	if title, ok := req.Meta[TitleMetaKey].(string); ok {
		spec.Title = strings.Join(strings.FieldsFunc(title, func(r rune) bool { return unicode.IsSpace(r) || unicode.IsControl(r) }), " ")
	}
	if a.opts.TerminalSize != nil {
		spec.Cols, spec.Rows = a.opts.TerminalSize()
	}
	cmd := commandOf(s.id, spec)
	cmd.ToolCall, _ = req.Meta[ToolCallMetaKey].(string)
	for _, v := range req.Env {
		cmd.Env = append(cmd.Env, v.Name+"="+v.Value)
	}
	if rerr := a.confine(ctx, s, &spec, &cmd); rerr != nil {
		return nil, rerr
	}
	if rerr := a.approve(ctx, s, cmd); rerr != nil {
		return nil, rerr
	}
	t, err := a.opts.Host.Create(ctx, spec)
	if err != nil {
		return nil, createError(method, err)
	}
	s.mu.Lock()
	if s.ended {
		s.mu.Unlock()
		t.Release()
		return nil, notFound(fmt.Errorf("session %q has ended", s.id))
	}
	s.terminals[t.ID()] = t
	cancelled := s.busy && s.cancelled
	if s.busy {
		s.turn = append(s.turn, t)
	}
	if s.created == nil {
		s.created = map[string]bool{}
	}
	s.created[t.ID()] = true
	s.mu.Unlock()
	if cancelled {
		// The turn was cancelled while the command was being started.
		defer s.stopTerminal(t)
	}

	// The editor attaches its display before the agent learns the id, so
	// nothing the agent does with the id can outrun it.
	a.ed.TerminalCreated(ctx, s.id, t.ID())
	a.auditStart(cmd, t.ID())
	go a.watchTerminal(cmd, t)
	return createTerminalResponse{TerminalID: t.ID()}, nil
}

// createError maps a termhost.Create failure to a JSON-RPC error.
func createError(method string, err error) *acpsdk.RequestError {
	switch {
	case errors.Is(err, termhost.ErrCommandNotFound):
		return notFound(err)
	case errors.Is(err, termhost.ErrInvalidDir):
		return invalidParams(method, "cwd: %v", err)
	}
	return internalError(err)
}

// terminalEnv is our environment, then the agent-friendly defaults, then
// the agent's entries; later entries replace earlier ones of that name.
func terminalEnv(method string, vars []acpsdk.EnvVariable) ([]string, *acpsdk.RequestError) {
	env := append(os.Environ(), agentEnvDefaults...)
	for i, v := range vars {
		switch {
		case v.Name == "":
			return nil, invalidParams(method, "env[%d].name is empty", i)
		case strings.ContainsAny(v.Name, "=\x00"):
			return nil, invalidParams(method, "env[%d].name %q contains '=' or NUL", i, v.Name)
		case strings.ContainsRune(v.Value, 0):
			return nil, invalidParams(method, "env[%d].value of %q contains NUL", i, v.Name)
		}
		env = append(env, v.Name+"="+v.Value)
	}
	return dedupEnv(env), nil
}

// dedupEnv keeps the last entry of every name, in first-seen order.
func dedupEnv(env []string) []string {
	index := make(map[string]int, len(env))
	out := make([]string, 0, len(env))
	for _, kv := range env {
		name, _, _ := strings.Cut(kv, "=")
		if i, ok := index[name]; ok {
			out[i] = kv
			continue
		}
		index[name] = len(out)
		out = append(out, kv)
	}
	return out
}

// terminal finds a live terminal of the session named in a request. A
// session only sees its own terminals; others' ids are unknown to it.
func (a *Agent) terminal(ctx context.Context, method string, sid acpsdk.SessionId, tid string) (*Session, *termhost.Terminal, *acpsdk.RequestError) {
	s, rerr := a.session(ctx, method, sid)
	if rerr != nil {
		return nil, nil, rerr
	}
	t, ok := s.Terminal(tid)
	if !ok {
		return nil, nil, notFound(fmt.Errorf("unknown terminal %q", tid))
	}
	return s, t, nil
}

// outputBufs recycles terminal/output's text buffers: a MiB of text per
// call would otherwise be a MiB of garbage per call.
var outputBufs = sync.Pool{New: func() any { return new([]byte) }}

// handleTerminalOutput returns the rendered output so far, and the exit
// status once the command has exited and its output is read to the end.
func (a *Agent) handleTerminalOutput(ctx context.Context, params json.RawMessage) (any, *acpsdk.RequestError) {
	const method = acpsdk.ClientMethodTerminalOutput
	began := time.Now()
	var req acpsdk.TerminalOutputRequest
	if rerr := decodeParams(method, params, &req); rerr != nil {
		return nil, rerr
	}
	_, t, rerr := a.terminal(ctx, method, req.SessionId, req.TerminalId)
	if rerr != nil {
		return nil, rerr
	}
	buf := outputBufs.Get().(*[]byte)
	text, out := t.AppendOutputJSON((*buf)[:0])
	*buf = text
	resp := terminalOutputResponse{Output: a.splice.encodedText(text, began, func() { outputBufs.Put(buf) }), Truncated: out.Truncated}
	if out.Exit != nil {
		st := toExitJSON(*out.Exit)
		resp.ExitStatus = &st
	}
	return resp, nil
}

// handleTerminalWaitForExit waits for the command to exit and returns the
// flat {exitCode, signal}. Any number may wait; each ends with its request.
func (a *Agent) handleTerminalWaitForExit(ctx context.Context, params json.RawMessage) (any, *acpsdk.RequestError) {
	const method = acpsdk.ClientMethodTerminalWaitForExit
	var req acpsdk.WaitForTerminalExitRequest
	if rerr := decodeParams(method, params, &req); rerr != nil {
		return nil, rerr
	}
	s, t, rerr := a.terminal(ctx, method, req.SessionId, req.TerminalId)
	if rerr != nil {
		return nil, rerr
	}
	if s.theUsers(t) {
		return nil, takenOverError(t, req.TerminalId, "wait for")
	}
	st, err := waitUnlessTakenOver(ctx, t) // claims.go
	if err != nil {
		if errors.Is(err, errTakenOver) {
			s.toldTakenOver(t)
			return nil, takenOverError(t, req.TerminalId, "wait for")
		}
		if ctx.Err() != nil {
			return nil, acpsdk.NewRequestCancelled(map[string]any{"error": err.Error()})
		}
		return nil, internalError(fmt.Errorf("wait for terminal %q: %w", req.TerminalId, err))
	}
	return toExitJSON(st), nil
}

// handleTerminalKill stops the command (SIGTERM to its process group,
// SIGKILL after the grace period); the terminal stays valid.
func (a *Agent) handleTerminalKill(ctx context.Context, params json.RawMessage) (any, *acpsdk.RequestError) {
	const method = acpsdk.ClientMethodTerminalKill
	var req acpsdk.KillTerminalRequest
	if rerr := decodeParams(method, params, &req); rerr != nil {
		return nil, rerr
	}
	s, t, rerr := a.terminal(ctx, method, req.SessionId, req.TerminalId)
	if rerr != nil {
		return nil, rerr
	}
	if takenOver(t) || s.theUsers(t) {
		s.toldTakenOver(t)
		return nil, takenOverError(t, req.TerminalId, "kill")
	}
	if err := t.Kill(); err != nil {
		return nil, internalError(fmt.Errorf("kill terminal %q: %w", req.TerminalId, err))
	}
	return emptyResult{}, nil
}

// handleTerminalRelease kills the command if it still runs and frees the
// terminal; the id is unknown afterwards. The editor keeps its display.
// A terminal the user took over is only forgotten (claims.go).
func (a *Agent) handleTerminalRelease(ctx context.Context, params json.RawMessage) (any, *acpsdk.RequestError) {
	const method = acpsdk.ClientMethodTerminalRelease
	var req acpsdk.ReleaseTerminalRequest
	if rerr := decodeParams(method, params, &req); rerr != nil {
		return nil, rerr
	}
	s, t, rerr := a.terminal(ctx, method, req.SessionId, req.TerminalId)
	if rerr != nil {
		return nil, rerr
	}
	s.mu.Lock()
	_, still := s.terminals[t.ID()]
	delete(s.terminals, t.ID())
	s.mu.Unlock()
	if !still {
		// A concurrent release won.
		return nil, notFound(fmt.Errorf("unknown terminal %q", req.TerminalId))
	}
	if s.theUsers(t) || !t.Claims().ReleaseUnlessClientHeld() {
		// The user took it over: the agent lets go, the process runs on.
		a.log.Info("terminal released by the agent keeps running under the user", "session", s.id, "terminal", t.ID())
		return emptyResult{}, nil
	}
	a.ed.TerminalReleased(ctx, s.id, t.ID())
	return emptyResult{}, nil
}

// watchTerminal writes the audit line when the command ends and enforces
// the maximum run time.
func (a *Agent) watchTerminal(cmd Command, t *termhost.Terminal) {
	var deadline <-chan time.Time
	if a.opts.MaxRunTime > 0 {
		timer := time.NewTimer(a.opts.MaxRunTime)
		defer timer.Stop()
		deadline = timer.C
	}
	for {
		select {
		case <-t.Done():
			// Exited, not Wait: Wait fails once the terminal was released,
			// and a release usually comes right before the exit it causes.
			st, _ := t.Exited()
			a.auditExit(cmd, t.ID(), st, t.LimitHit())
			return
		case <-deadline:
			deadline = nil
			if takenOver(t) {
				continue // the user's now; only the user ends it
			}
			a.log.Warn("terminal ran longer than the maximum run time; killing it",
				"session", cmd.Session, "terminal", t.ID(), "max_run_time", a.opts.MaxRunTime, "argv", cmd.Argv)
			_ = t.Kill()
		}
	}
}
