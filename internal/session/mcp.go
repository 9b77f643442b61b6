package session

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"

	"github.com/agentrun/agentrun.nvim/acp"
	"github.com/agentrun/agentrun.nvim/acp/agentterm"
	"github.com/agentrun/agentrun.nvim/ahp"
	"github.com/agentrun/agentrun.nvim/internal/event"
	"github.com/agentrun/agentrun.nvim/internal/mcptool"
	acpsdk "github.com/coder/acp-go-sdk"
)

// Our ptys for agents that run commands themselves (Claude Code, Codex):
// session/new offers them an MCP server, `agentrun mcp` (package
// mcptool), whose tools run commands in our terminals. The agent starts
// it with the environment below; it reaches this backend on its socket
// and makes terminal/* requests through "agentrun/terminal", with the
// session's token. Those requests take the ACP path (acp.Agent.
// TerminalRequest): approval, sandbox, limits, audit, the split. An
// agent that refuses stdio MCP servers but takes HTTP ones (Copilot CLI)
// gets the same tools served from this process over HTTP on 127.0.0.1
// (mcptool.ServeHTTP), its requests made in-process (inProcess), until
// the session ends. What the agent did with the tools (listed, used, or
// not listed by the end of a turn) is the session's tool, in status().

// MCP server environment.
const (
	envMCPSocket = "AGENTRUN_MCP_SOCKET"
	envMCPToken  = "AGENTRUN_MCP_TOKEN"
)

// mcpServerName is the server's name: the agent names its tools
// mcp__agentrun__<tool>.
const mcpServerName = "agentrun"

// terminalsMode says where an agent's commands run: "agentrun" (our
// terminals, through the MCP tool) or "agent" (its own).
const (
	terminalsAgentrun = "agentrun"
	terminalsAgent    = "agent"
)

// agentName is the name the agent gave itself in initialize ("" when it
// gave none).
func agentName(info acpsdk.InitializeResponse) string {
	if info.AgentInfo == nil {
		return ""
	}
	return info.AgentInfo.Name
}

// terminalsFor says where an agent's commands run: the user's choice
// (mode, the agent's `terminals` option) when there is one, else by who
// the agent says it is (initialize's agentInfo.name, whatever command
// started it: npx, bunx, a wrapper script): its profile's (agentterm.Profile:
// ours for Claude Code, whose Bash tool session/new can switch off), its
// own for the others.
func terminalsFor(mode string, info acpsdk.InitializeResponse) string {
	switch {
	case mode != "":
		return mode
	case agentterm.ProfileOf(info).OurTerminals():
		return terminalsAgentrun
	}
	return terminalsAgent
}

// wantsHTTP reports whether our MCP tool goes to the agent over HTTP: it
// refuses stdio (its profile says so: Copilot CLI) and declares that it
// takes HTTP.
func wantsHTTP(info acpsdk.InitializeResponse) bool {
	return agentterm.ProfileOf(info).MCPHTTPOnly() && info.AgentCapabilities.McpCapabilities.Http
}

// mcpOffer is what session/new carries for an agent whose commands run
// in our terminals.
type mcpOffer struct {
	opts acp.SessionOptions
	// token is what the MCP server presents for the session ("" when
	// none is offered).
	token string
	// http serves the tool over HTTP (agents that refuse stdio); it
	// stops when the session ends.
	http *mcptool.HTTPServer
	// tool is what status() says of our tool before the agent lists it:
	// "offered over stdio", "offered over HTTP", or "" (none offered).
	tool string
}

// mcpOffer returns what session/new carries for an agent whose commands
// run in our terminals; empty when they run in the agent's own (or
// nothing can serve them).
func (ss *Sessions) mcpOffer(mode string, info acpsdk.InitializeResponse) mcpOffer {
	if mode != terminalsAgentrun {
		return mcpOffer{}
	}
	var raw [16]byte
	_, _ = rand.Read(raw[:])
	token := hex.EncodeToString(raw[:])
	if wantsHTTP(info) {
		h, err := mcptool.ServeHTTP(inProcess{ss}, token, ss.version)
		if err != nil {
			ss.log.Warn("no MCP terminal tool over HTTP", "err", err)
			return mcpOffer{}
		}
		srv := acpsdk.McpServer{Http: &acpsdk.McpServerHttpInline{Name: mcpServerName, Type: "http", Url: h.URL}}
		for name, value := range h.Headers() {
			srv.Http.Headers = append(srv.Http.Headers, acpsdk.HttpHeader{Name: name, Value: value})
		}
		return mcpOffer{opts: acp.SessionOptions{McpServers: []acpsdk.McpServer{srv}, Meta: agentMeta(info)}, token: token, http: h, tool: toolOfferedHTTP}
	}
	socket := ss.deps.SocketPath()
	if socket == "" {
		return mcpOffer{}
	}
	exe, err := os.Executable()
	if err != nil {
		ss.log.Warn("no MCP terminal tool: our binary's path is unknown", "err", err)
		return mcpOffer{}
	}
	opts := acp.SessionOptions{
		McpServers: []acpsdk.McpServer{{Stdio: &acpsdk.McpServerStdio{
			Name: mcpServerName, Command: exe, Args: []string{"mcp"},
			Env: []acpsdk.EnvVariable{{Name: envMCPSocket, Value: socket}, {Name: envMCPToken, Value: token}},
		}}},
		Meta: agentMeta(info),
	}
	return mcpOffer{opts: opts, token: token, tool: toolOfferedStdio}
}

// What status() says of our MCP terminal tool in a session (its
// our_tool): offered (how), then what the agent did with it.
const (
	toolOfferedStdio = "offered over stdio"
	toolOfferedHTTP  = "offered over HTTP"
	toolListed       = "listed"
	toolUsed         = "used"
	toolNotListed    = "not listed"
)

// inProcess makes the MCP tool's backend requests in this process, for
// the tool served over HTTP from here.
type inProcess struct{ ss *Sessions }

// Call routes method as the socket host routes it for `agentrun mcp`.
func (b inProcess) Call(ctx context.Context, method string, params, result any) error {
	raw, err := json.Marshal(params)
	if err != nil {
		return fmt.Errorf("%s: %w", method, err)
	}
	var res any
	switch method {
	case "agentrun/terminal":
		res, err = b.ss.mcpTerminal(ctx, raw)
	case "agentrun/terminals":
		res, err = b.ss.mcpTerminals(ctx, raw)
	case mcptool.SeenMethod:
		res, err = b.ss.mcpSeen(ctx, raw)
	default:
		return fmt.Errorf("unknown backend request %q from the MCP terminal tool", method)
	}
	if err != nil || result == nil {
		return err
	}
	data, err := json.Marshal(res)
	if err != nil {
		return fmt.Errorf("%s: %w", method, err)
	}
	return json.Unmarshal(data, result)
}

// mcpSeen records that the agent listed our tools (tools/list) or called
// one (tools/call): status() reports it as our_tool, and the chat says it
// once.
func (ss *Sessions) mcpSeen(_ context.Context, raw json.RawMessage) (any, error) {
	var call struct {
		Token  string `json:"token"`
		Method string `json:"method"`
	}
	if err := json.Unmarshal(raw, &call); err != nil {
		return nil, fmt.Errorf("%s: %w", mcptool.SeenMethod, err)
	}
	ss.mu.Lock()
	s := ss.mcpTokens[call.Token]
	if s == nil {
		ss.mu.Unlock()
		return nil, fmt.Errorf("%s: unknown token: this MCP server's session has ended or never started", mcptool.SeenMethod)
	}
	was, how := s.tool, s.toolHow
	switch {
	case call.Method == "tools/call":
		s.tool = toolUsed
	case call.Method == "tools/list" && s.tool != toolUsed:
		s.tool = toolListed
	}
	now, key := s.tool, s.key
	ss.mu.Unlock()
	if now == was {
		return map[string]any{}, nil
	}
	ev := event.OurTool{Key: key, OurTool: now}
	if was != toolListed {
		// the first word of it: the chat says it once
		ev.Note = fmt.Sprintf("the agent took agentrun's terminal tool (%s): the commands it runs with it run in agentrun's terminals", how)
	}
	ss.events.Push(ev)
	return map[string]any{}, nil
}

// toolNotTaken is called when a turn ended: a session whose agent was
// offered our tool and has not listed it by then is told so, once (the
// agent refused the server, or does not use MCP tools).
func (ss *Sessions) toolNotTaken(s *session) {
	ss.mu.Lock()
	if s.tool != toolOfferedStdio && s.tool != toolOfferedHTTP {
		ss.mu.Unlock()
		return
	}
	how := s.toolHow
	s.tool = toolNotListed
	key, name := s.key, s.name
	var info acpsdk.InitializeResponse
	if s.agent != nil {
		info = s.agent.Info()
	}
	ss.mu.Unlock()
	note := fmt.Sprintf("%s did not take agentrun's terminal tool (%s): it never listed it, so its commands run its own way (shown in display-only splits)", name, how)
	note += agentterm.ProfileOf(info).ToolNotTaken(name)
	ss.events.Push(event.OurTool{Key: key, OurTool: toolNotListed, Note: note})
}

// agentMeta is what a known agent needs in session/new's _meta to prefer
// our tool to its own shell (its profile's: Claude Code drops its Bash
// tool and lets our tools run without asking, since agentrun asks).
func agentMeta(info acpsdk.InitializeResponse) map[string]any {
	var ours []string
	for _, tool := range mcptool.Names {
		ours = append(ours, "mcp__"+mcpServerName+"__"+tool)
	}
	return agentterm.ProfileOf(info).SessionMeta(ours)
}

// terminalCall is "agentrun/terminal"'s params: a terminal/* request of
// the session the token belongs to, for the tool call that made it.
type terminalCall struct {
	Token      string          `json:"token"`
	ToolCallID string          `json:"toolCallId,omitempty"`
	Method     string          `json:"method"`
	Params     json.RawMessage `json:"params"`
}

// mcpTerminal runs one terminal/* request for an MCP tool.
func (ss *Sessions) mcpTerminal(ctx context.Context, raw json.RawMessage) (any, error) {
	var call terminalCall
	if err := json.Unmarshal(raw, &call); err != nil {
		return nil, fmt.Errorf("agentrun/terminal: %w", err)
	}
	ss.mu.Lock()
	s := ss.mcpTokens[call.Token]
	ss.mu.Unlock()
	if s == nil || s.s == nil || s.agent == nil {
		return nil, errors.New("agentrun/terminal: unknown token: this MCP server's session has ended or never started")
	}
	// The request's sessionId is the token's session, whatever it said.
	var params map[string]any
	if len(call.Params) > 0 {
		if err := json.Unmarshal(call.Params, &params); err != nil {
			return nil, fmt.Errorf("agentrun/terminal: params: %w", err)
		}
	}
	if params == nil {
		params = map[string]any{}
	}
	params["sessionId"] = s.s.ID()
	if call.Method == acpsdk.ClientMethodTerminalCreate && call.ToolCallID == "" {
		// the agent did not say which tool call this is (Copilot CLI): the
		// one that runs this command line, which then shows our split
		if line, _ := params["command"].(string); line != "" {
			call.ToolCallID = s.agent.ClaimCommand(s.s.ID(), line)
		}
	}
	if call.Method == acpsdk.ClientMethodTerminalCreate && call.ToolCallID != "" {
		meta, _ := params["_meta"].(map[string]any)
		if meta == nil {
			meta = map[string]any{}
		}
		meta[acp.ToolCallMetaKey] = call.ToolCallID // its approval stands above it
		params["_meta"] = meta
	}
	if call.Method == mcptool.StopMethod {
		id, _ := params["terminalId"].(string)
		if err := s.s.StopTerminal(id); err != nil {
			return nil, fmt.Errorf("agentrun/terminal: %w", err)
		}
		return map[string]any{}, nil
	}
	body, _ := json.Marshal(params)
	res, rerr := s.agent.TerminalRequest(ctx, call.Method, body)
	if rerr != nil {
		ss.mu.Lock()
		stopped := s.stopped
		ss.mu.Unlock()
		if stopped {
			// What the model reads: why, not an internal state.
			return nil, errors.New("the user stopped this session (:AgentStop); its commands were killed")
		}
		return nil, errors.New(rerr.Message)
	}
	if call.Method == acpsdk.ClientMethodTerminalCreate && call.ToolCallID != "" {
		ss.tieToToolCall(s, res, call.ToolCallID)
	}
	return res, nil
}

// mcpTerminals lists the token's session's terminals for the
// tool's list_commands.
func (ss *Sessions) mcpTerminals(_ context.Context, raw json.RawMessage) (any, error) {
	var call terminalCall
	if err := json.Unmarshal(raw, &call); err != nil {
		return nil, fmt.Errorf("agentrun/terminals: %w", err)
	}
	ss.mu.Lock()
	s := ss.mcpTokens[call.Token]
	ss.mu.Unlock()
	if s == nil || s.s == nil {
		return nil, errors.New("agentrun/terminals: unknown token: this MCP server's session has ended or never started")
	}
	out := []map[string]any{}
	for _, t := range s.s.Terminals() {
		m := map[string]any{"terminalId": t.ID(), "command": t.CommandLine(), "state": "running"}
		if st, done := t.Exited(); done {
			m["state"] = "exited (" + st.String() + ")"
		}
		out = append(out, m)
	}
	return out, nil
}

// tieToToolCall gives a terminal the MCP tool created to its tool call:
// the claim names it, and the chat shows the split in its place.
func (ss *Sessions) tieToToolCall(s *session, res any, toolCall string) {
	data, _ := json.Marshal(res)
	var created struct {
		TerminalID string `json:"terminalId"`
	}
	if json.Unmarshal(data, &created) != nil || created.TerminalID == "" {
		return
	}
	if t, err := ss.deps.Host().Get(created.TerminalID); err == nil {
		_, _ = t.Claims().CompareAndSwap(ahp.SessionClaim(s.s.ID(), ""), ahp.SessionClaim(s.s.ID(), toolCall))
	}
	ss.events.Push(event.ToolTerminal{Key: s.key, ToolCall: toolCall, ID: created.TerminalID})
}
