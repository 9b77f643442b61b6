package editor

import (
	"encoding/json"
	"testing"
)

// TestAgentMeta: claude-agent-acp gets its Bash tool removed for the
// session; other agents get no _meta.
func TestAgentMeta(t *testing.T) {
	const claude = `{"claudeCode":{"options":{"allowedTools":["mcp__agentrun__run_command","mcp__agentrun__read_output","mcp__agentrun__wait_for_exit","mcp__agentrun__kill_command","mcp__agentrun__list_commands"],"disallowedTools":["Bash"]}}}`
	cases := []struct {
		cmd  []string
		want string
	}{
		{[]string{"/usr/local/bin/claude-agent-acp"}, claude},
		{[]string{"claude-agent-acp", "--flag"}, claude},
		{[]string{"codex-acp"}, `null`},
		{nil, `null`},
	}
	for _, c := range cases {
		b, _ := json.Marshal(agentMeta(c.cmd))
		if string(b) != c.want {
			t.Errorf("agentMeta(%q) = %s, want %s", c.cmd, b, c.want)
		}
	}
}
