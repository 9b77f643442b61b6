package acp

import (
	"os"
	"path/filepath"
	"testing"
)

func TestRealPath(t *testing.T) {
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range []string{"proj/sub", "state/agentrun", "a/b"} {
		if err := os.MkdirAll(filepath.Join(dir, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	links := map[string]string{
		"proj/link":     filepath.Join(dir, "state", "agentrun"),
		"proj/up":       filepath.Join(dir, "a", "b"),
		"proj/dangling": filepath.Join(dir, "nowhere"),
	}
	for name, target := range links {
		if err := os.Symlink(target, filepath.Join(dir, name)); err != nil {
			t.Fatal(err)
		}
	}
	tests := []struct{ name, path, want string }{
		{"plain", "proj/file", "proj/file"},
		{"dots", "proj/sub/../../state/agentrun/x", "state/agentrun/x"},
		{"symlinked folder", "proj/link/allow/x", "state/agentrun/allow/x"},
		{"dots after a symlink go up from its target", "proj/up/../x", "a/x"},
		{"dots in what does not exist yet", "proj/new/../../state/agentrun/x", "state/agentrun/x"},
		{"a dangling final symlink is replaced, not followed", "proj/dangling", "proj/dangling"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got, want := RealPath(dir+"/"+tc.path), filepath.Join(dir, tc.want); got != want {
				t.Errorf("RealPath(%q) = %q, want %q", tc.path, got, want)
			}
		})
	}
}
