package sandbox

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentrun/agentrun.nvim/internal/testdeps"
)

// run runs a shell line confined by p in dir and returns its combined
// output and whether it succeeded.
func run(t *testing.T, p Profile, dir, line string) (string, bool) {
	t.Helper()
	argv, err := p.Command([]string{"/bin/sh", "-c", line}, dir)
	if err != nil {
		t.Fatalf("Command: %v", err)
	}
	out, err := exec.Command(argv[0], argv[1:]...).CombinedOutput()
	return string(out), err == nil
}

func needBwrap(t *testing.T) {
	t.Helper()
	testdeps.LinuxOnly(t, "the sandbox (bubblewrap)")
	_, err := Available()
	testdeps.Need(t, err == nil, "bubblewrap (bwrap)", "apt-get install bubblewrap")
}

// TestWritesOnlyInTheRoots: inside the sandbox a command writes in its
// roots and its private /tmp, and nowhere else (another directory, the
// real /tmp, $HOME).
func TestWritesOnlyInTheRoots(t *testing.T) {
	needBwrap(t)
	root := t.TempDir()
	// Not under /tmp, which the sandbox replaces with its own.
	outside, err := os.MkdirTemp(".", "outside-")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(outside)
	outside, _ = filepath.Abs(outside)
	p, _ := Builtin("project")
	p.Writable = []string{root}
	if out, ok := run(t, p, root, "echo in > inside && echo tmp > /tmp/private && cat /tmp/private"); !ok || out != "tmp\n" {
		t.Fatalf("writing in the root and /tmp: ok=%v %q", ok, out)
	}
	if b, err := os.ReadFile(filepath.Join(root, "inside")); err != nil || string(b) != "in\n" {
		t.Fatalf("the file written in the root: %q %v", b, err)
	}
	for _, target := range []string{filepath.Join(outside, "x"), "/usr/agentrun-sandbox-test", filepath.Join(os.Getenv("HOME"), "agentrun-sandbox-test")} {
		// Read-only, or not there at all (under /tmp, which the sandbox
		// replaces with its own).
		out, ok := run(t, p, root, "echo no > "+target)
		if ok || !strings.Contains(out, "Read-only file system") && !strings.Contains(out, "Directory nonexistent") {
			t.Errorf("writing %s: ok=%v %q; want it refused", target, ok, out)
		}
		if _, err := os.Stat(target); err == nil {
			os.Remove(target)
			t.Errorf("%s exists after the sandboxed write", target)
		}
	}
	if _, err := os.Stat("/tmp/private"); err == nil {
		t.Error("the sandbox's /tmp is the real one")
	}
}

// TestNetworkOffUnlessAllowed: a listener on loopback outside the sandbox
// cannot be reached from "project", and can from "project-net".
func TestNetworkOffUnlessAllowed(t *testing.T) {
	needBwrap(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			c.Write([]byte("hello\n"))
			c.Close()
		}
	}()
	// bash's /dev/tcp needs no client program in the sandbox.
	line := fmt.Sprintf("exec 3<>/dev/tcp/127.0.0.1/%d && head -1 <&3", ln.Addr().(*net.TCPAddr).Port)
	dir := t.TempDir()
	for _, c := range []struct {
		profile string
		reach   bool
	}{{"project", false}, {"project-net", true}} {
		p, _ := Builtin(c.profile)
		argv, err := p.Command([]string{"bash", "-c", line}, dir)
		if err != nil {
			t.Fatal(err)
		}
		out, err := exec.Command(argv[0], argv[1:]...).CombinedOutput()
		if got := err == nil && string(out) == "hello\n"; got != c.reach {
			t.Errorf("%s: reached the listener %v (output %q, err %v), want %v", c.profile, got, out, err, c.reach)
		}
	}
}

// TestHomeHidden: "strict" shows an empty $HOME; "project" shows it.
func TestHomeHidden(t *testing.T) {
	needBwrap(t)
	home, err := os.UserHomeDir()
	if err != nil {
		t.Skip("no home directory")
	}
	mark := filepath.Join(home, ".agentrun-sandbox-mark")
	if err := os.WriteFile(mark, []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	defer os.Remove(mark)
	dir := t.TempDir()
	for name, want := range map[string]bool{"project": true, "strict": false} {
		p, _ := Builtin(name)
		_, ok := run(t, p, dir, "test -e "+mark)
		if ok != want {
			t.Errorf("%s: %s visible %v, want %v", name, mark, ok, want)
		}
	}
}

// TestBadProfiles: what is wrong is said, and no argv is made.
func TestBadProfiles(t *testing.T) {
	if _, err := Builtin("projekt"); err == nil || !strings.Contains(err.Error(), `unknown sandbox profile "projekt" (known: project, project-net, strict)`) {
		t.Errorf("Builtin: %v", err)
	}
	for _, c := range []struct {
		p    Profile
		want string
	}{
		{Profile{Name: "x", Home: "gone"}, `home "gone" is neither`},
		{Profile{Name: "x", Writable: []string{"rel"}}, `writable directory "rel" is not an absolute path`},
		{Profile{}, "sandbox profile has no name"},
	} {
		if _, err := c.p.Command([]string{"true"}, "/"); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: %v, want %q", c.p, err, c.want)
		}
	}
}
