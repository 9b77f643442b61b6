package tests

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/neovim/go-client/nvim"
)

// TestBackendOutlivesABrokenPipe: when Neovim is gone, the backend may
// still try to answer it before it reads the end of its stdin. That write
// must not kill it (SIGPIPE) before it has killed its terminals: it exits
// on stdin EOF, and a command ignoring SIGHUP (which a dying backend's pty
// would send) is gone too. Here the test plays Neovim over the backend's
// stdio, so it can close the pipes in that order.
func TestBackendOutlivesABrokenPipe(t *testing.T) {
	dir := t.TempDir()
	cmd := exec.Command(binary)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "AGENTRUN_LOG="+filepath.Join(dir, "agentrun.log"))
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		for _, pid := range findProcesses("sleep 3141") { // orphans of a failed run
			if n, err := strconv.Atoi(pid); err == nil {
				_ = syscall.Kill(n, syscall.SIGKILL)
			}
		}
		if t.Failed() {
			log, _ := os.ReadFile(filepath.Join(dir, "agentrun.log"))
			t.Logf("agentrun.log:\n%s", log)
		}
	})
	// The backend calls nvim_exec_lua on us to deliver events; unanswered
	// (unknown method) they are only logged.
	v, err := nvim.New(stdout, stdin, nopCloser{}, t.Logf)
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = v.Serve() }()

	var key string
	if err := v.Request("start", &key, map[string]any{"agent": "demo", "cmd": []string{binary, "demo-agent"}, "cwd": dir}); err != nil {
		t.Fatalf("start: %v", err)
	}
	type status struct {
		Sessions []struct {
			ID string `msgpack:"id"`
		} `msgpack:"sessions"`
		Terminals []struct {
			State string `msgpack:"state"`
		} `msgpack:"terminals"`
	}
	poll := func(what string, ok func(status) bool) {
		t.Helper()
		eventually(t, what, 10*time.Second, func() (bool, string) {
			var st status
			if err := v.Request("status", &st); err != nil {
				t.Fatalf("status: %v", err)
			}
			return ok(st), fmt.Sprintf("%+v", st)
		})
	}
	poll("the session", func(st status) bool { return len(st.Sessions) == 1 && st.Sessions[0].ID != "" })
	if err := v.Request("prompt", nil, key, "trap '' HUP; sleep 3141"); err != nil {
		t.Fatalf("prompt: %v", err)
	}
	poll("the terminal", func(st status) bool { return len(st.Terminals) == 1 && st.Terminals[0].State == "running" })
	waitFor(t, "sleep 3141 to run", func() bool { return len(findProcesses("sleep 3141")) == 1 })

	// Neovim dies: its end of the backend's stdout closes first; a request
	// it had sent still gets answered into the broken pipe; then stdin ends.
	_ = stdout.Close()
	// msgpack-rpc [0, 99, "status", []]: a request the backend answers.
	if _, err := stdin.Write([]byte("\x94\x00\x63\xa6status\x90")); err != nil {
		t.Fatal(err)
	}
	time.Sleep(300 * time.Millisecond) // the answer goes into the broken pipe
	_ = stdin.Close()

	select {
	case err := <-exited:
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
				t.Errorf("the backend was killed by %v", ws.Signal())
			}
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the backend did not exit after its stdin closed")
	}
	waitFor(t, "sleep 3141 to be gone", func() bool { return len(findProcesses("sleep 3141")) == 0 })
}

// waitFor waits up to 10s for cond.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	eventually(t, what, 10*time.Second, func() (bool, string) { return cond(), "" })
}

// nopCloser keeps the test's nvim client from closing the backend's
// stdin when its reading side ends.
type nopCloser struct{}

func (nopCloser) Close() error { return nil }

// TestCommandsGetDefaultSIGPIPE: the backend catches SIGPIPE for itself;
// the commands it starts still die of it as usual (`yes | head` ends
// quietly), because nothing they inherit ignores it.
func TestCommandsGetDefaultSIGPIPE(t *testing.T) {
	e := startEditor(t, "")
	e.startSession()
	line := "grep SigIgn /proc/self/status; yes | head -n 1"
	e.cmd("AgentPrompt " + line)
	term := e.waitTerminal(line, 10*time.Second)
	text := e.waitBuf(term.Bufnr, 10*time.Second, exitMarker(0))
	m := regexp.MustCompile(`SigIgn:\s+([0-9a-f]+)`).FindStringSubmatch(text)
	if m == nil {
		t.Fatalf("no SigIgn line in:\n%s", text)
	}
	if mask, _ := strconv.ParseUint(m[1], 16, 64); mask&(1<<(syscall.SIGPIPE-1)) != 0 {
		t.Errorf("the command ignores SIGPIPE (SigIgn %s)", m[1])
	}
	if !strings.Contains(text, "\ny\n") || strings.Contains(text, "Broken pipe") {
		t.Errorf("yes | head -n 1 printed:\n%s", text)
	}
}
