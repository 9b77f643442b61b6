package editor

import (
	"encoding/json"
	"testing"
)

// TestAgentMeta: claude-agent-acp gets its Bash tool removed for the
// session; other agents get no _meta.
func TestAgentMeta(t *testing.T) {
	cases := []struct {
		cmd  []string
		want string
	}{
		{[]string{"/usr/local/bin/claude-agent-acp"}, `{"claudeCode":{"options":{"disallowedTools":["Bash"]}}}`},
		{[]string{"claude-agent-acp", "--flag"}, `{"claudeCode":{"options":{"disallowedTools":["Bash"]}}}`},
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
