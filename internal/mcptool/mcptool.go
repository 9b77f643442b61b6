package mcptool

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/agentrun/agentrun.nvim/acp"
	"github.com/agentrun/agentrun.nvim/acp/agentterm"
	"github.com/agentrun/agentrun.nvim/ahp/client"
	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Names lists the tools, in the order they are offered.
var Names = []string{"run_command", "read_output", "wait_for_exit", "kill_command", "list_commands"}

// Caller makes the backend requests the tools need ("agentrun/terminal",
// "agentrun/terminals", "agentrun/tool_seen"), each with the session's
// token: the socket client of `agentrun mcp`, or the backend itself when
// it serves the tools over HTTP (http.go).
type Caller interface {
	Call(ctx context.Context, method string, params, result any) error
}

// SeenMethod is the backend request that tells it the agent listed the
// tools (tools/list) or called one (tools/call): what status() and the
// chat report, not the wish that it would.
const SeenMethod = "agentrun/tool_seen"

// backend makes terminal requests for the session.
type backend struct {
	c     Caller
	token string
}

// seen tells the backend the agent made an MCP request the user hears of
// (tools/list, tools/call); a failure only goes unreported.
func (b *backend) seen(ctx context.Context, method string) {
	_ = b.c.Call(ctx, SeenMethod, map[string]any{"token": b.token, "method": method}, nil)
}

func (b *backend) terminal(ctx context.Context, toolCall, method string, params, result any) error {
	raw, err := json.Marshal(params)
	if err != nil {
		return err
	}
	return b.c.Call(ctx, "agentrun/terminal", map[string]any{"token": b.token, "toolCallId": toolCall, "method": method, "params": json.RawMessage(raw)}, result)
}

// Run serves the tools on stdin/stdout until the agent closes them.
func Run(ctx context.Context, version string) error {
	socket, token := os.Getenv("AGENTRUN_MCP_SOCKET"), os.Getenv("AGENTRUN_MCP_TOKEN")
	if socket == "" || token == "" {
		return errors.New("agentrun mcp is started by an agent from the mcpServers entry agentrun gives it ($AGENTRUN_MCP_SOCKET and $AGENTRUN_MCP_TOKEN are not set)")
	}
	c, err := client.Dial(ctx, socket, fmt.Sprintf("mcp-%d", os.Getpid()))
	if err != nil {
		return fmt.Errorf("the editor that started this session is gone: %w", err)
	}
	defer c.Close()
	if _, err := c.Initialize(ctx); err != nil {
		return err
	}
	s := NewServer(&backend{c: c, token: token}, version)
	return s.Run(ctx, &mcp.StdioTransport{})
}

// NewServer returns the MCP server with agentrun's terminal tools.
func NewServer(b *backend, version string) *mcp.Server {
	s := newServer(b, version)
	var listed, called sync.Once
	s.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			switch method {
			case "tools/list":
				listed.Do(func() { b.seen(ctx, method) })
			case "tools/call":
				called.Do(func() { b.seen(ctx, method) })
			}
			return next(ctx, method, req)
		}
	})
	return s
}

// newServer is the server with the tools, without the reports of what the
// agent did with them.
func newServer(b *backend, version string) *mcp.Server {
	s := mcp.NewServer(&mcp.Implementation{Name: "agentrun", Version: version}, &mcp.ServerOptions{
		Instructions: "Run shell commands with run_command: each runs in a real terminal that the user watches live in their editor and may stop. " +
			"Start servers, watchers and other long-running commands with background: true, then read them with read_output and stop them with kill_command.",
	})
	t := &tools{b: b}
	mcp.AddTool(s, &mcp.Tool{Name: "run_command", Meta: alwaysLoad(), Description: runDescription, InputSchema: openSchema[runArgs]()}, t.run)
	mcp.AddTool(s, &mcp.Tool{Name: "read_output", Meta: alwaysLoad(), Description: "Read the output of a command started with run_command (the newest part, within its byte limit) and whether and how it ended. It does not wait.", InputSchema: openSchema[terminalArgs]()}, t.read)
	mcp.AddTool(s, &mcp.Tool{Name: "wait_for_exit", Meta: alwaysLoad(), Description: "Wait until a command started with run_command ends (at most timeout_seconds, default 120), then return its output and exit status.", InputSchema: openSchema[terminalArgs]()}, t.wait)
	mcp.AddTool(s, &mcp.Tool{Name: "kill_command", Meta: alwaysLoad(), Description: "Stop a command started with run_command (its whole process group: SIGTERM, then SIGKILL) and return its output so far and how it ended.", InputSchema: openSchema[terminalArgs]()}, t.kill)
	mcp.AddTool(s, &mcp.Tool{Name: "list_commands", Meta: alwaysLoad(), Description: "List the commands this session started (terminal ids, command lines, running or how they ended).", InputSchema: openSchema[struct{}]()}, t.list)
	return s
}

// alwaysLoad is each tool's _meta: Claude Code (2.1, claude-agent-acp
// 0.101) defers MCP tools behind its ToolSearch tool, so the model would
// have to search for ours before its first command (a round trip, and
// only if it thinks of it). "anthropic/alwaysLoad" presents a tool at
// once, for our tools only (the other way, ENABLE_TOOL_SEARCH=false in
// its environment, would present every MCP server's). Other agents
// ignore it.
func alwaysLoad() mcp.Meta { return mcp.Meta{"anthropic/alwaysLoad": true} }

// openSchema is T's input schema without "additionalProperties": false.
// Models send arguments of the tools they were trained on (Claude Code's
// Bash: description, timeout, run_in_background, sometimes more): the
// ones we know are mapped, the others are ignored instead of failing the
// call.
func openSchema[T any]() *jsonschema.Schema {
	s, err := jsonschema.For[T](nil)
	if err != nil {
		panic(fmt.Sprintf("mcptool: the schema of %T: %v", *new(T), err))
	}
	s.AdditionalProperties = nil
	return s
}

const runDescription = `Run a shell command (a bash command line, run by bash --noprofile --norc -c) in a real terminal in the user's editor. ` +
	`The user sees its output live, may have to approve it first, and may stop it; commands may run in a sandbox with limits the user chose. ` +
	`By default this waits for the command to end (at most timeout_seconds, default 120) and returns its output (the newest part when it is long) and exit status. ` +
	`For servers, watchers and anything that does not end by itself, set background: true: it returns the terminal id at once, and the command keeps running; ` +
	`read it later with read_output, wait with wait_for_exit, stop it with kill_command. A command stopped by the user comes back with the signal and its partial output.`

// runArgs are run_command's arguments. Description, Timeout and
// RunInBackground are Claude Code's Bash arguments, which models trained
// on it send: the description titles the split, the timeout is in
// milliseconds, run_in_background is background.
type runArgs struct {
	Command         string `json:"command" jsonschema:"the shell command line to run"`
	Description     string `json:"description,omitempty" jsonschema:"a few words saying what the command does (the title of its terminal)"`
	Cwd             string `json:"cwd,omitempty" jsonschema:"absolute working directory (default: the session's)"`
	Background      bool   `json:"background,omitempty" jsonschema:"start it and return at once (servers, watchers)"`
	RunInBackground bool   `json:"run_in_background,omitempty" jsonschema:"the same as background"`
	TimeoutSeconds  int    `json:"timeout_seconds,omitempty" jsonschema:"how long to wait for the end (default 120); the command keeps running after that"`
	Timeout         int    `json:"timeout,omitempty" jsonschema:"the same as timeout_seconds, in milliseconds"`
	OutputByteLimit int    `json:"output_byte_limit,omitempty" jsonschema:"how many bytes of output to keep (the newest)"`
}

// waitSeconds is how long run_command waits: timeout_seconds, else
// timeout (milliseconds, rounded up), else 0 (the default).
func (in runArgs) waitSeconds() int {
	switch {
	case in.TimeoutSeconds > 0:
		return in.TimeoutSeconds
	case in.Timeout > 0:
		return (in.Timeout + 999) / 1000
	}
	return 0
}

// terminalArgs name a command run_command started.
type terminalArgs struct {
	TerminalID     string `json:"terminal_id" jsonschema:"the id run_command returned"`
	TimeoutSeconds int    `json:"timeout_seconds,omitempty" jsonschema:"wait_for_exit: how long to wait (default 120)"`
}

type tools struct{ b *backend }

type output struct {
	Output    string `json:"output"`
	Truncated bool   `json:"truncated"`
	Exit      *struct {
		ExitCode *int    `json:"exitCode"`
		Signal   *string `json:"signal"`
	} `json:"exitStatus"`
}

// toolCall is the ACP tool call that made req, when the agent says so in
// its _meta (its profile's key for it: Claude Code's claudecode/toolUseId).
func toolCall(req *mcp.CallToolRequest) string {
	if req == nil || req.Params == nil {
		return ""
	}
	return agentterm.ToolCallOfMCPCall(req.Params.GetMeta())
}

func text(format string, args ...any) *mcp.CallToolResult {
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: fmt.Sprintf(format, args...)}}}
}

func failed(err error) (*mcp.CallToolResult, any, error) {
	r := text("%v", err)
	r.IsError = true
	return r, nil, nil
}

func (t *tools) run(ctx context.Context, req *mcp.CallToolRequest, in runArgs) (*mcp.CallToolResult, any, error) {
	if strings.TrimSpace(in.Command) == "" {
		return failed(errors.New("command is empty: give the shell command line to run"))
	}
	params := map[string]any{"command": in.Command}
	if in.Cwd != "" {
		params["cwd"] = in.Cwd
	}
	if in.OutputByteLimit > 0 {
		params["outputByteLimit"] = in.OutputByteLimit
	}
	if d := strings.TrimSpace(in.Description); d != "" {
		params["_meta"] = map[string]any{acp.TitleMetaKey: d}
	}
	var created struct {
		TerminalID string `json:"terminalId"`
	}
	if err := t.b.terminal(ctx, toolCall(req), "terminal/create", params, &created); err != nil {
		return failed(fmt.Errorf("the command was not run: %v", err))
	}
	if in.Background || in.RunInBackground {
		return text("Started in terminal %s, running in the background (the user sees it live). Read it with read_output, wait with wait_for_exit, stop it with kill_command.", created.TerminalID), nil, nil
	}
	return t.waitAndReport(ctx, created.TerminalID, in.waitSeconds(), true)
}

// waitAndReport waits up to timeout for the command's end and reports its
// output; a finished command's terminal is released when release is set.
func (t *tools) waitAndReport(ctx context.Context, id string, timeout int, release bool) (*mcp.CallToolResult, any, error) {
	if timeout <= 0 {
		timeout = 120
	}
	start := time.Now()
	wctx, cancel := context.WithTimeout(ctx, time.Duration(timeout)*time.Second)
	err := t.b.terminal(wctx, "", "terminal/wait_for_exit", map[string]any{"terminalId": id}, nil)
	timedOut := errors.Is(wctx.Err(), context.DeadlineExceeded) && ctx.Err() == nil
	cancel()
	ended := err == nil
	if err != nil && ctx.Err() != nil && release {
		// The agent cancelled the tool call (notifications/cancelled: the
		// user cancelled the turn): the command it started stops too.
		t.stopCancelled(context.WithoutCancel(ctx), id)
		return failed(fmt.Errorf("the tool call was cancelled; the command in terminal %s was stopped", id))
	}
	// what the model is told besides the output, with the real time
	after := time.Since(start).Round(time.Second)
	var say string
	switch {
	case ended:
	case err != nil && strings.Contains(err.Error(), "taken over by the user"):
		// taken over, or detached: the user's now (acp/claims.go)
		say = fmt.Sprintf("After %s the user took the command in terminal %s over (or detached it to keep it): it is the user's now (to keep running, stop or run again) and no longer yours to wait for or kill; read_output still reads it.", after, id)
	case timedOut:
		say = fmt.Sprintf("Still running after %s in terminal %s (it goes on; use wait_for_exit, read_output or kill_command).", after, id)
	default:
		return failed(fmt.Errorf("waiting for terminal %s: %v", id, err))
	}
	res, _, rerr := t.report(ctx, id)
	if rerr != nil || !ended {
		if res != nil && len(res.Content) > 0 {
			if tc, ok := res.Content[0].(*mcp.TextContent); ok {
				tc.Text = say + "\n" + tc.Text // one text: two parts read glued together
			}
		}
		return res, nil, rerr
	}
	if release {
		_ = t.b.terminal(ctx, "", "terminal/release", map[string]any{"terminalId": id}, nil)
	}
	return res, nil, nil
}

// StopMethod is the backend request (over "agentrun/terminal") that stops
// a command as a cancelled turn does: SIGINT, then the kill after the
// grace period.
const StopMethod = "agentrun/stop"

// stopCancelled stops the command of a cancelled run_command, waits for
// its end and releases its terminal (the split keeps the output).
func (t *tools) stopCancelled(ctx context.Context, id string) {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	if err := t.b.terminal(ctx, "", StopMethod, map[string]any{"terminalId": id}, nil); err != nil {
		return // released meanwhile, or the editor is gone
	}
	_ = t.b.terminal(ctx, "", "terminal/wait_for_exit", map[string]any{"terminalId": id}, nil)
	_ = t.b.terminal(ctx, "", "terminal/release", map[string]any{"terminalId": id}, nil)
}

// report is the command's output and status as the model reads them.
func (t *tools) report(ctx context.Context, id string) (*mcp.CallToolResult, any, error) {
	var out output
	if err := t.b.terminal(ctx, "", "terminal/output", map[string]any{"terminalId": id}, &out); err != nil {
		return failed(fmt.Errorf("reading terminal %s: %v", id, err))
	}
	status := "still running"
	if e := out.Exit; e != nil {
		switch {
		case e.ExitCode != nil:
			status = fmt.Sprintf("exited with code %d", *e.ExitCode)
		case e.Signal != nil && (*e.Signal == "SIGINT" || *e.Signal == "SIGTERM" || *e.Signal == "SIGKILL"):
			status = fmt.Sprintf("stopped by %s (the user may have stopped it; the output is what it printed until then)", *e.Signal)
		case e.Signal != nil:
			status = "killed by " + *e.Signal
		}
	}
	head := fmt.Sprintf("Terminal %s: %s.", id, status)
	if out.Truncated {
		head += " The output was long: this is its newest part."
	}
	r := text("%s\n%s", head, out.Output)
	return r, nil, nil
}

func (t *tools) read(ctx context.Context, _ *mcp.CallToolRequest, in terminalArgs) (*mcp.CallToolResult, any, error) {
	return t.report(ctx, in.TerminalID)
}

func (t *tools) wait(ctx context.Context, _ *mcp.CallToolRequest, in terminalArgs) (*mcp.CallToolResult, any, error) {
	return t.waitAndReport(ctx, in.TerminalID, in.TimeoutSeconds, false)
}

func (t *tools) kill(ctx context.Context, _ *mcp.CallToolRequest, in terminalArgs) (*mcp.CallToolResult, any, error) {
	if err := t.b.terminal(ctx, "", "terminal/kill", map[string]any{"terminalId": in.TerminalID}, nil); err != nil {
		return failed(fmt.Errorf("stopping terminal %s: %v", in.TerminalID, err))
	}
	return t.waitAndReport(ctx, in.TerminalID, 10, true)
}

func (t *tools) list(ctx context.Context, _ *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, any, error) {
	var list []map[string]any
	if err := t.b.c.Call(ctx, "agentrun/terminals", map[string]any{"token": t.b.token}, &list); err != nil {
		return failed(err)
	}
	if len(list) == 0 {
		return text("No commands in this session."), nil, nil
	}
	var b strings.Builder
	for _, m := range list {
		fmt.Fprintf(&b, "%v  %v  (%v)\n", m["terminalId"], m["command"], m["state"])
	}
	return text("%s", b.String()), nil, nil
}
