package checkpoint

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestSweepStores: stores unused for two weeks go; then, over the
// budget, the least recently used first, the folder's own last.
func TestSweepStores(t *testing.T) {
	tests := []struct {
		name    string
		stores  map[string]time.Duration // store -> how long ago it was used
		budget  int64
		want    []string
		ownGone bool
	}{
		{"within the budget", map[string]time.Duration{"a.git": time.Hour, "own.git": 0}, 1 << 20, []string{"a.git", "own.git"}, false},
		{"old ones go", map[string]time.Duration{"a.git": 15 * 24 * time.Hour, "own.git": 0}, 1 << 20, []string{"own.git"}, false},
		{"over: least recently used first", map[string]time.Duration{"a.git": 2 * time.Hour, "b.git": time.Hour, "own.git": 3 * time.Hour}, 2500, []string{"b.git", "own.git"}, false},
		{"own alone over", map[string]time.Duration{"own.git": 0}, 500, nil, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			base := t.TempDir()
			for name, ago := range tt.stores {
				p := filepath.Join(base, name)
				if err := os.MkdirAll(p, 0o700); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(filepath.Join(p, "objects"), make([]byte, 1000), 0o600); err != nil {
					t.Fatal(err)
				}
				when := time.Now().Add(-ago)
				if err := os.Chtimes(p, when, when); err != nil {
					t.Fatal(err)
				}
			}
			gone := sweepStores(base, filepath.Join(base, "own.git"), tt.budget)
			var got []string
			entries, _ := os.ReadDir(base)
			for _, e := range entries {
				got = append(got, e.Name())
			}
			if strings.Join(got, ",") != strings.Join(tt.want, ",") || gone != tt.ownGone {
				t.Errorf("left %v (own removed: %v), want %v (%v)", got, gone, tt.want, tt.ownGone)
			}
		})
	}
}

// TestCheckpointPlainFolder: outside git a folder whose files are over
// the budget, and the home folder, are not copied, with a sentence; one
// within it is, and a change shows between two checkpoints.
func TestCheckpointPlainFolder(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	base := filepath.Join(t.TempDir(), "state", "agentrun", "checkpoint")
	dir := filepath.Join(home, "proj")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "a.txt"), make([]byte, 5000), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	got, _ := takeCheckpoint(ctx, Args{Dir: dir, Base: base, Budget: 4000})
	if w, _ := got["why"].(string); !strings.Contains(w, "more than the") {
		t.Errorf("over the budget: %v, want why it was not copied", got)
	}
	got, _ = takeCheckpoint(ctx, Args{Dir: home, Base: base})
	if w, _ := got["why"].(string); !strings.Contains(w, "is the home folder, outside git") {
		t.Errorf("the home folder: %v, want why it was not copied", got)
	}
	first, _ := takeCheckpoint(ctx, Args{Dir: dir, Base: base})
	if first["tree"] == nil || first["store"] == nil {
		t.Fatalf("within the budget: %v, want a tree in a store", first)
	}
	if err := os.WriteFile(filepath.Join(dir, "b.txt"), []byte("b\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	second, _ := takeCheckpoint(ctx, Args{Dir: dir, Base: base})
	ch, _ := Do("1", Args{Op: "changed", Top: dir, Store: first["store"].(string), A: first["tree"].(string), B: second["tree"].(string)})
	files, _ := ch["files"].([]map[string]string)
	if len(files) != 1 || files[0]["path"] != "b.txt" || files[0]["status"] != "A" {
		t.Errorf("changed: %v, want b.txt added", ch)
	}
}
