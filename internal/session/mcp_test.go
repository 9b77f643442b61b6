package session

import (
	"encoding/json"
	"testing"

	acpsdk "github.com/coder/acp-go-sdk"
)

func infoNamed(name string) acpsdk.InitializeResponse {
	if name == "" {
		return acpsdk.InitializeResponse{}
	}
	return acpsdk.InitializeResponse{AgentInfo: &acpsdk.Implementation{Name: name, Version: "1"}}
}

// TestAgentMeta: Claude Code, known by the name it gives itself in
// initialize, gets its Bash tool removed for the session; other agents
// get no _meta.
func TestAgentMeta(t *testing.T) {
	const claude = `{"claudeCode":{"options":{"allowedTools":["mcp__agentrun__run_command","mcp__agentrun__read_output","mcp__agentrun__wait_for_exit","mcp__agentrun__kill_command","mcp__agentrun__list_commands"],"disallowedTools":["Bash"]}}}`
	cases := []struct {
		name string
		want string
	}{
		{"@agentclientprotocol/claude-agent-acp", claude},
		{"@zed-industries/claude-agent-acp", claude},
		{"claude-agent-acp", claude},
		{"@zed-industries/claude-code-acp", `null`},
		{"@agentclientprotocol/codex-acp", `null`},
		{"", `null`},
	}
	for _, c := range cases {
		b, _ := json.Marshal(agentMeta(infoNamed(c.name)))
		if string(b) != c.want {
			t.Errorf("agentMeta(%q) = %s, want %s", c.name, b, c.want)
		}
	}
}

// TestTerminalsFor: the user's choice wins; without one, Claude Code's
// agents (by name, whatever command started them) use our terminals and
// the others their own.
func TestTerminalsFor(t *testing.T) {
	cases := []struct {
		mode, name, want string
	}{
		{"", "@agentclientprotocol/claude-agent-acp", "agentrun"},
		{"", "@zed-industries/claude-agent-acp", "agentrun"},
		{"agent", "@agentclientprotocol/claude-agent-acp", "agent"},
		{"", "@agentclientprotocol/codex-acp", "agent"},
		{"agentrun", "@agentclientprotocol/codex-acp", "agentrun"},
		{"", "@zed-industries/claude-code-acp", "agent"},
		{"", "", "agent"},
	}
	for _, c := range cases {
		if got := terminalsFor(c.mode, infoNamed(c.name)); got != c.want {
			t.Errorf("terminalsFor(%q, %q) = %q, want %q", c.mode, c.name, got, c.want)
		}
	}
}
