package mcptool

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestRunArgsWaitSeconds(t *testing.T) {
	for _, tc := range []struct {
		name string
		in   runArgs
		want int
	}{
		{"none: the default", runArgs{}, 0},
		{"timeout_seconds", runArgs{TimeoutSeconds: 7}, 7},
		{"Bash's timeout in ms, rounded up", runArgs{Timeout: 1500}, 2},
		{"timeout_seconds wins", runArgs{TimeoutSeconds: 3, Timeout: 60000}, 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.in.waitSeconds(); got != tc.want {
				t.Errorf("waitSeconds() = %d, want %d", got, tc.want)
			}
		})
	}
}

// TestSchemaAcceptsUnknownArguments: the schemas models read do not
// forbid properties they do not name, and name Claude Code's Bash ones.
func TestSchemaAcceptsUnknownArguments(t *testing.T) {
	raw, err := json.Marshal(openSchema[runArgs]())
	if err != nil {
		t.Fatal(err)
	}
	s := string(raw)
	if strings.Contains(s, "additionalProperties") {
		t.Errorf("run_command's schema forbids unknown arguments: %s", s)
	}
	for _, name := range []string{`"description"`, `"timeout"`, `"run_in_background"`} {
		if !strings.Contains(s, name) {
			t.Errorf("run_command's schema lacks %s: %s", name, s)
		}
	}
	resolved, err := openSchema[runArgs]().Resolve(nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := resolved.Validate(map[string]any{"command": "ls", "description": "list", "dangerouslyDisableSandbox": true}); err != nil {
		t.Errorf("Bash-shaped arguments rejected: %v", err)
	}
}
