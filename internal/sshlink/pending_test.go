package sshlink

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// TestPendingEnds: the ends kept for later are kept once each, listed by
// machine and forgotten one by one, in a 0600 file beside the log.
func TestPendingEnds(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("AGENTRUN_LOG", filepath.Join(dir, "agentrun.log"))
	a, b := Target{Host: "devbox"}, Target{User: "me", Host: "other", Port: 2222}
	for _, e := range []struct {
		t   Target
		pid int
	}{{a, 10}, {b, 20}, {a, 11}, {a, 10}} {
		if err := keepPending(e.t, e.pid); err != nil {
			t.Fatal(err)
		}
	}
	if got := pendingOn(a); !slices.Equal(got, []int{10, 11}) {
		t.Errorf("pending on %s: %v, want [10 11]", a, got)
	}
	if got := pendingOn(b); !slices.Equal(got, []int{20}) {
		t.Errorf("pending on %s: %v, want [20]", b, got)
	}
	if err := dropPending(a, 10); err != nil {
		t.Fatal(err)
	}
	if got := pendingOn(a); !slices.Equal(got, []int{11}) {
		t.Errorf("pending on %s after one was ended: %v, want [11]", a, got)
	}
	var ended []int
	if err := endPending(a, func(pid int) error { ended = append(ended, pid); return dropPending(a, pid) }); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(ended, []int{11}) || len(pendingOn(a)) != 0 || len(pendingOn(b)) != 1 {
		t.Errorf("endPending ended %v; left on %s: %v, on %s: %v", ended, a, pendingOn(a), b, pendingOn(b))
	}
	fi, err := os.Stat(filepath.Join(dir, pendingName))
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("the file of pending ends: %v %v, want 0600", fi, err)
	}
}
