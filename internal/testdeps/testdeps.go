package testdeps

import (
	"os"
	"os/exec"
	"runtime"
	"testing"
)

// Env is the environment variable make test sets once make deps has
// run: with it, a missing dependency fails the test instead of skipping.
const Env = "AGENTRUN_DEPS"

// Need goes on when have is true; otherwise it skips t saying what is
// missing and how to install it, or fails t when make deps ran (Env set).
func Need(t testing.TB, have bool, what, install string) {
	t.Helper()
	if have {
		return
	}
	if os.Getenv(Env) != "" {
		t.Fatalf("%s is missing, though make deps ran (%s=1): %s", what, Env, install)
	}
	t.Skipf("needs %s: %s (make test runs it after make deps)", what, install)
}

// Program is Need for a program on $PATH, returning its path; install
// says how to get it ("apt-get install bubblewrap").
func Program(t testing.TB, name, install string) string {
	t.Helper()
	path, err := exec.LookPath(name)
	Need(t, err == nil, name, install)
	return path
}

// File is Need for a file (or directory) that make deps puts in place.
func File(t testing.TB, path, what string) {
	t.Helper()
	_, err := os.Stat(path)
	Need(t, err == nil, what+" ("+path+")", "run make deps")
}

// LinuxOnly skips t outside Linux, where what (bubblewrap, /proc) does
// not exist at all: nothing to install there.
func LinuxOnly(t testing.TB, what string) {
	t.Helper()
	if runtime.GOOS != "linux" {
		t.Skipf("%s is Linux only", what)
	}
}
