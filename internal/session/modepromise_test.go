package session

import (
	"encoding/json"
	"testing"

	acpsdk "github.com/coder/acp-go-sdk"
)

func TestAsksFirst(t *testing.T) {
	claude := "@agentclientprotocol/claude-agent-acp"
	cases := []struct {
		agent string
		mode  modeInfo
		want  bool
	}{
		{claude, modeInfo{ID: "default", Name: "Manual", Description: "Always ask before making changes"}, true},
		{claude, modeInfo{ID: "plan", Name: "Plan"}, true},
		{claude, modeInfo{ID: "auto", Name: "Auto", Description: "Claude handles permission decisions"}, false},
		{claude, modeInfo{ID: "acceptEdits", Name: "Accept edits"}, false},
		{claude, modeInfo{ID: "bypassPermissions", Name: "Bypass permissions"}, false},
		{"@zed-industries/claude-agent-acp", modeInfo{ID: "default", Name: "Default"}, true},
		{"codex-acp", modeInfo{ID: "read-only", Name: "Read-only"}, true},
		{"codex-acp", modeInfo{ID: "workspace-write", Name: "Workspace access", Description: "Edit workspace files; ask before writing outside the workspace"}, false},
		{"other", modeInfo{ID: "careful", Name: "Careful", Description: "Ask before edits"}, true},
		{"other", modeInfo{ID: "ro", Name: "Read only"}, true},
		{"other", modeInfo{ID: "yolo", Name: "YOLO", Description: "Run everything without asking"}, false},
		// Gemini CLI 0.61's modes, as it describes them
		{"gemini-cli", modeInfo{ID: "default", Name: "Default", Description: "Prompts for approval"}, true},
		{"gemini-cli", modeInfo{ID: "autoEdit", Name: "Auto Edit", Description: "Auto-approves edit tools"}, false},
		{"gemini-cli", modeInfo{ID: "yolo", Name: "YOLO", Description: "Auto-approves all tools"}, false},
		{"gemini-cli", modeInfo{ID: "plan", Name: "Plan", Description: "Read-only mode"}, true},
		{"other", modeInfo{ID: "code", Name: "Code", Description: "Write code"}, false},
	}
	for _, c := range cases {
		if got := asksFirst(c.agent, c.mode); got != c.want {
			t.Errorf("asksFirst(%q, %+v) = %v, want %v", c.agent, c.mode, got, c.want)
		}
	}
}

func TestCurrentMode(t *testing.T) {
	desc := "Always ask before making changes"
	modes := &acpsdk.SessionModeState{CurrentModeId: "default", AvailableModes: []acpsdk.SessionMode{{Id: "default", Name: "Manual", Description: &desc}}}
	if m, ok := currentMode(modes, nil); !ok || m.Name != "Manual" || m.Description != desc {
		t.Errorf("from modes: %+v %v", m, ok)
	}
	if _, ok := currentMode(nil, nil); ok {
		t.Errorf("no modes and no options gave a mode")
	}
}

// TestCurrentModeFromConfigOptions: a mode offered only as a config
// option of category "mode" (opencode; codex-acp's grouped options).
func TestCurrentModeFromConfigOptions(t *testing.T) {
	for _, raw := range []string{
		`[{"type":"select","id":"mode","name":"Mode","category":"mode","currentValue":"plan","options":[{"value":"build","name":"Build"},{"value":"plan","name":"Plan","description":"Ask before edits"}]}]`,
		`[{"type":"select","id":"mode","name":"Mode","category":"mode","currentValue":"plan","options":[{"group":"g","name":"G","options":[{"value":"build","name":"Build"},{"value":"plan","name":"Plan","description":"Ask before edits"}]}]}]`,
	} {
		var opts []acpsdk.SessionConfigOption
		if err := json.Unmarshal([]byte(raw), &opts); err != nil {
			t.Fatal(err)
		}
		m, ok := currentMode(nil, opts)
		if !ok || m.ID != "plan" || m.Name != "Plan" || !asksFirst("opencode", m) {
			t.Errorf("%s: %+v %v", raw, m, ok)
		}
	}
}
