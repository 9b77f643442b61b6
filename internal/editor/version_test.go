package editor

import (
	"strings"
	"testing"
)

// TestCheckVersion: the backend serves a plugin of its own version (or
// one that does not say) and refuses another, saying how to fix it.
func TestCheckVersion(t *testing.T) {
	tests := []struct {
		backend, plugin string
		refused         bool
	}{
		{"0.1.0", "0.1.0", false},
		{"0.1.0", "", false},
		{"0.1.0", "0.2.0", true},
		{"dev", "0.2.0", true},
	}
	for _, tc := range tests {
		err := checkVersion(tc.backend, tc.plugin)
		if (err != nil) != tc.refused {
			t.Errorf("checkVersion(%q, %q) = %v, refused want %v", tc.backend, tc.plugin, err, tc.refused)
			continue
		}
		if err != nil && (!strings.Contains(err.Error(), "version "+tc.backend+" but the plugin is version "+tc.plugin) || !strings.Contains(err.Error(), ":AgentBuild")) {
			t.Errorf("checkVersion(%q, %q) = %q: does not name both versions and the fix", tc.backend, tc.plugin, err)
		}
	}
}
