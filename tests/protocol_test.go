package tests

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// sessionUpdates are the session/update kinds of the ACP v1 schema
// (SessionUpdate's sessionUpdate values).
var sessionUpdates = []string{"user_message_chunk", "agent_message_chunk", "agent_thought_chunk", "tool_call", "tool_call_update",
	"plan", "available_commands_update", "current_mode_update", "config_option_update", "session_info_update", "usage_update"}

// TestProtocolCoverage: the README's protocol table has a row for every
// method of the ACP v1 schema (acp/testdata/acp-v1-meta.json) and every
// session update, and each row's test exists.
func TestProtocolCoverage(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join(root, "acp", "testdata", "acp-v1-meta.json"))
	if err != nil {
		t.Fatal(err)
	}
	var meta map[string]any
	if err := json.Unmarshal(raw, &meta); err != nil {
		t.Fatal(err)
	}
	want := append([]string(nil), sessionUpdates...)
	for _, group := range []string{"agentMethods", "clientMethods", "protocolMethods"} {
		m, _ := meta[group].(map[string]any)
		if len(m) == 0 {
			t.Fatalf("the schema's meta has no %s", group)
		}
		for _, v := range m {
			want = append(want, v.(string))
		}
	}
	readme, err := os.ReadFile(filepath.Join(root, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	rows := map[string]string{} // method -> its "shown by" cell
	for _, m := range regexp.MustCompile("(?m)^\\| `([^`]+)` \\|[^|]*\\| ([^|]*) \\|$").FindAllStringSubmatch(string(readme), -1) {
		rows[m[1]] = m[2]
	}
	// every test named, among the tests of the tree
	var src strings.Builder
	for _, dir := range []string{"tests", "acp"} {
		files, _ := filepath.Glob(filepath.Join(root, dir, "*_test.go"))
		for _, f := range files {
			b, _ := os.ReadFile(f)
			src.Write(b)
		}
	}
	for _, m := range want {
		cell, ok := rows[m]
		if !ok {
			t.Errorf("the README's protocol table has no row for %s", m)
			continue
		}
		for _, name := range regexp.MustCompile("`(Test\\w+)`").FindAllStringSubmatch(cell, -1) {
			if !strings.Contains(src.String(), "func "+name[1]+"(") {
				t.Errorf("the row of %s names %s, which is no test here", m, name[1])
			}
		}
	}
}
