package editor

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"

	"github.com/agentrun/agentrun.nvim/acp"
	"github.com/agentrun/agentrun.nvim/ahp"
	"github.com/agentrun/agentrun.nvim/mcptool"
	acpsdk "github.com/coder/acp-go-sdk"
)

// Our ptys for agents that run commands themselves (Claude Code, Codex):
// session/new offers them an MCP server, `agentrun mcp` (package
// mcptool), whose tools run commands in our terminals. The agent starts
// it with the environment below; it reaches this backend on its socket
// and makes terminal/* requests through "agentrun/terminal", with the
// session's token. Those requests take the ACP path (acp.Agent.
// TerminalRequest): approval, sandbox, limits, audit, the split.

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

// claudeAgentNames are the agentInfo.name values (initialize) of Claude
// Code's ACP agents that run Bash themselves (claude-agent-acp ≥ 0.18,
// under either scope). claude-code-acp ≤ 0.17 ran it through our
// terminal/create and is not one of them.
var claudeAgentNames = map[string]bool{
	"@zed-industries/claude-agent-acp":      true,
	"@agentclientprotocol/claude-agent-acp": true,
	"claude-agent-acp":                      true,
}

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
// started it: npx, bunx, a wrapper script): ours for Claude Code, whose
// Bash tool session/new can switch off, its own for the others.
func terminalsFor(mode string, info acpsdk.InitializeResponse) string {
	switch {
	case mode != "":
		return mode
	case claudeAgentNames[agentName(info)]:
		return terminalsAgentrun
	}
	return terminalsAgent
}

// mcpOffer returns what session/new carries for an agent whose commands
// run in our terminals, and the token its MCP server will present; empty
// when they run in the agent's own (or no socket serves them).
func (ss *sessions) mcpOffer(mode string, info acpsdk.InitializeResponse) (acp.SessionOptions, string) {
	socket := ss.socketPath()
	if mode != terminalsAgentrun || socket == "" {
		return acp.SessionOptions{}, ""
	}
	exe, err := os.Executable()
	if err != nil {
		ss.log.Warn("no MCP terminal tool: our binary's path is unknown", "err", err)
		return acp.SessionOptions{}, ""
	}
	var raw [16]byte
	_, _ = rand.Read(raw[:])
	token := hex.EncodeToString(raw[:])
	opts := acp.SessionOptions{
		McpServers: []acpsdk.McpServer{{Stdio: &acpsdk.McpServerStdio{
			Name: mcpServerName, Command: exe, Args: []string{"mcp"},
			Env: []acpsdk.EnvVariable{{Name: envMCPSocket, Value: socket}, {Name: envMCPToken, Value: token}},
		}}},
		Meta: agentMeta(info),
	}
	return opts, token
}

// agentMeta is what a known agent needs in session/new's _meta to prefer
// our tool to its own shell: Claude Code drops its Bash tool, and lets our
// tools run without asking, since agentrun asks (terminal.approve): one
// question per command, not one from each side.
func agentMeta(info acpsdk.InitializeResponse) map[string]any {
	if !claudeAgentNames[agentName(info)] {
		return nil
	}
	var ours []string
	for _, tool := range mcptool.Names {
		ours = append(ours, "mcp__"+mcpServerName+"__"+tool)
	}
	return map[string]any{"claudeCode": map[string]any{"options": map[string]any{
		"disallowedTools": []string{"Bash"},
		"allowedTools":    ours,
	}}}
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
func (ss *sessions) mcpTerminal(ctx context.Context, raw json.RawMessage) (any, error) {
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
func (ss *sessions) mcpTerminals(_ context.Context, raw json.RawMessage) (any, error) {
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
func (ss *sessions) tieToToolCall(s *session, res any, toolCall string) {
	data, _ := json.Marshal(res)
	var created struct {
		TerminalID string `json:"terminalId"`
	}
	if json.Unmarshal(data, &created) != nil || created.TerminalID == "" {
		return
	}
	if t, err := ss.host().Get(created.TerminalID); err == nil {
		_, _ = t.Claims().CompareAndSwap(ahp.SessionClaim(s.s.ID(), ""), ahp.SessionClaim(s.s.ID(), toolCall))
	}
	ss.events.push(toolTerminalEvent{Key: s.key, ToolCall: toolCall, ID: created.TerminalID})
}
