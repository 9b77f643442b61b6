package cmdrule

import (
	"errors"
	"flag"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"testing"

	"github.com/agentrun/agentrun.nvim/internal/testdeps"
)

// The property tests run generated attack lines, as whoever runs the
// tests (often root), with real programs among them: command -p finds
// the real rm and touch on the default PATH, env -C .. leaves the work
// directory, find, script and flock are the real ones. inLineSandbox
// runs such a test again, in this test binary, inside a bubblewrap
// sandbox where nothing but the sandbox's own /tmp (the test's temporary
// directories) can be written: the root is bound read-only, /dev is the
// sandbox's own (a redirection to /dev/null reaches only its devices),
// there is no network and no capability, and every process of a line
// dies with the sandbox. One sandbox per test, not per line: starting
// bwrap takes a tenth of a second, and the tests run hundreds of lines.

// sandboxEnv marks the run inside the sandbox.
const sandboxEnv = "AGENTRUN_IN_LINE_SANDBOX"

// bwrapArgs are the sandbox's options before the program; binDir (the
// test binary's directory, often under /tmp) is bound back read-only.
func bwrapArgs(binDir string) []string {
	return []string{
		"--ro-bind", "/", "/",
		"--tmpfs", "/tmp",
		"--ro-bind", binDir, binDir,
		"--dev", "/dev",
		"--proc", "/proc",
		"--unshare-net", "--unshare-pid", "--unshare-ipc",
		"--die-with-parent",
		"--cap-drop", "ALL",
		"--chdir", "/tmp",
		"--"}
}

// usableBwrap returns bwrap's path when it can start a sandbox here (a
// container may forbid the namespaces it needs).
func usableBwrap() (string, error) {
	p, err := exec.LookPath("bwrap")
	if err != nil {
		return "", err
	}
	args := append(bwrapArgs("/usr"), "/bin/sh", "-c", "touch /tmp/ok && test -f /tmp/ok && ! touch /etc/agentrun-sandbox-probe 2>/dev/null")
	if out, err := exec.Command(p, args...).CombinedOutput(); err != nil {
		return "", errors.New("bwrap cannot start a read-only sandbox here: " + err.Error() + ": " + string(out))
	}
	return p, nil
}

// inLineSandbox runs t's test again inside the sandbox and reports its
// outcome; it returns true when it did (the caller returns at once) and
// false inside the sandbox, or where bwrap is missing: then the lines run
// unsandboxed, which make test (testdeps.Env set after make deps has
// installed bubblewrap) does not allow.
func inLineSandbox(t *testing.T) bool {
	t.Helper()
	if os.Getenv(sandboxEnv) == "1" {
		return false
	}
	bwrap, err := usableBwrap()
	if err != nil {
		if os.Getenv(testdeps.Env) != "" && runtime.GOOS == "linux" { // bubblewrap is Linux only
			t.Fatalf("the generated lines run in a bubblewrap sandbox, which is missing or fails though make deps ran (%s=1): apt-get install bubblewrap (%v)", testdeps.Env, err)
		}
		t.Logf("bwrap is missing or fails (%v): the generated lines run unsandboxed as uid %d; install bubblewrap to confine them", err, os.Getuid())
		return false
	}
	self, err := os.Executable()
	if err != nil {
		t.Fatalf("cannot find the test binary to run %s in the sandbox: %v", t.Name(), err)
	}
	args := append(bwrapArgs(filepath.Dir(self)), self, "-test.run=^"+regexp.QuoteMeta(t.Name())+"$", "-test.count=1", "-test.v")
	if testing.Short() {
		args = append(args, "-test.short")
	}
	if f := flag.Lookup("test.timeout"); f != nil {
		args = append(args, "-test.timeout="+f.Value.String())
	}
	cmd := exec.Command(bwrap, args...)
	cmd.Env = append(os.Environ(), sandboxEnv+"=1", "TMPDIR=/tmp")
	out, err := cmd.CombinedOutput()
	t.Logf("%s ran in a bubblewrap sandbox (read-only root, its own /tmp and /dev, no network):\n%s", t.Name(), out)
	if err != nil {
		t.Fatalf("%s failed in the sandbox: %v", t.Name(), err)
	}
	return true
}

// TestLineSandboxConfines: inside the sandbox a line writes the test's
// temporary directory and nothing else, even with the real rm and touch.
func TestLineSandboxConfines(t *testing.T) {
	outside := os.Getenv("AGENTRUN_SANDBOX_OUTSIDE")
	if os.Getenv(sandboxEnv) != "1" {
		if runtime.GOOS != "linux" {
			t.Skip("bubblewrap is Linux only")
		}
		if _, err := usableBwrap(); err != nil {
			testdeps.Need(t, false, "a working bubblewrap", "apt-get install bubblewrap ("+err.Error()+")")
		}
		// the victim lives outside /tmp (the sandbox has its own): in the
		// package directory, removed after the test
		dir, err := os.MkdirTemp(".", ".sandbox-victim-")
		if err != nil {
			t.Skipf("no directory outside /tmp to put a victim in (%v)", err)
		}
		defer os.RemoveAll(dir)
		abs, _ := filepath.Abs(dir)
		victim := filepath.Join(abs, "victim")
		if err := os.WriteFile(victim, []byte("keep\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		t.Setenv("AGENTRUN_SANDBOX_OUTSIDE", abs)
		if !inLineSandbox(t) {
			t.Fatal("the test did not run in the sandbox")
		}
		if b, err := os.ReadFile(victim); err != nil || string(b) != "keep\n" {
			t.Errorf("the sandboxed line removed %s outside its directory (%v)", victim, err)
		}
		if _, err := os.Stat(filepath.Join(abs, "made")); err == nil {
			t.Errorf("the sandboxed line made %s/made outside its directory", abs)
		}
		return
	}
	work := t.TempDir()
	line := "touch inside; command -p rm -f " + outside + "/victim; command -p touch " + outside + "/made; echo x >/dev/null"
	out, _ := exec.Command("/bin/sh", "-c", line).CombinedOutput()
	cmd := exec.Command("/bin/sh", "-c", "touch inside")
	cmd.Dir = work
	if err := cmd.Run(); err != nil {
		t.Errorf("a line cannot write its own temporary directory in the sandbox: %v", err)
	}
	t.Logf("the line %q said: %s", line, out)
}
