package guard

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/agentrun/agentrun.nvim/internal/procstat"
	"github.com/agentrun/agentrun.nvim/internal/wait"
)

// TestMain lets the test binary play the guard for TestClient.
func TestMain(m *testing.M) {
	if os.Getenv("GUARD_TEST_CHILD") == "1" {
		if err := Run(context.Background(), os.Stdin, nil); err != nil {
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// stubborn starts a shell in a session of its own (as termhost does)
// that ignores SIGHUP and SIGTERM and runs a child; its pid is its
// session id. Cleanup kills the session if the test left it.
func stubborn(t *testing.T) *exec.Cmd {
	t.Helper()
	cmd := exec.Command("sh", "-c", "trap '' HUP TERM; sleep 1000; :")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{})
	go func() {
		_ = cmd.Wait()
		close(exited)
	}()
	sid := cmd.Process.Pid
	t.Cleanup(func() {
		for _, pid := range members([]procstat.Tree{{Leader: sid}}) {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
		<-exited
	})
	// The sleep child shows the session has more than its leader.
	waitFor(t, "the shell's sleep to start", func() bool { return len(members([]procstat.Tree{{Leader: sid}})) == 2 })
	return cmd
}

// registration is the +SID STARTTIME line for cmd's session.
func registration(t *testing.T, cmd *exec.Cmd) string {
	t.Helper()
	start, err := startTime(cmd.Process.Pid)
	if err != nil {
		t.Fatal(err)
	}
	return fmt.Sprintf("+%d %d\n", cmd.Process.Pid, start)
}

// alive is the number of live processes of cmd's session.
func alive(cmd *exec.Cmd) int {
	return len(members([]procstat.Tree{{Leader: cmd.Process.Pid}}))
}

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	wait.For(t, what, 10*time.Second, cond)
}

// runGuard runs Run over a pipe, writes input, closes the pipe and
// returns once Run did.
func runGuard(t *testing.T, input string) {
	t.Helper()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	done := make(chan error, 1)
	go func() { done <- Run(context.Background(), r, t.Logf) }()
	if _, err := w.WriteString(input); err != nil {
		t.Fatal(err)
	}
	w.Close()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Run did not return at EOF")
	}
}

// TestEOFWithoutByeKills: the backend died (EOF, no bye): a registered
// session that ignores SIGHUP and SIGTERM is killed, leader and child;
// an unregistered one, an unregistered-again one and one whose leader's
// pid was reused are not touched.
func TestEOFWithoutByeKills(t *testing.T) {
	registered, unregistered, again, reused := stubborn(t), stubborn(t), stubborn(t), stubborn(t)
	input := registration(t, registered) + registration(t, again) +
		fmt.Sprintf("-%d\n", again.Process.Pid) +
		// A start time that is not the leader's: as if the terminal's
		// leader had died and its pid gone to this unrelated process.
		fmt.Sprintf("+%d %d\n", reused.Process.Pid, 1)
	runGuard(t, input)
	if n := alive(registered); n != 0 {
		t.Errorf("the registered session still has %d processes", n)
	}
	for name, cmd := range map[string]*exec.Cmd{"unregistered": unregistered, "unregistered again": again, "reused pid": reused} {
		if n := alive(cmd); n != 2 {
			t.Errorf("the %s session has %d live processes, want its 2", name, n)
		}
	}
}

// TestByeKillsNothing: the backend cleaned up itself; the guard leaves
// even a registered session alone.
func TestByeKillsNothing(t *testing.T) {
	cmd := stubborn(t)
	runGuard(t, registration(t, cmd)+"bye\n")
	if n := alive(cmd); n != 2 {
		t.Errorf("the session has %d live processes after bye, want its 2", n)
	}
}

// TestRegistrationsCount: a pid registered twice (reused by a new
// terminal before the old one's -SID arrived) stays registered after one
// -SID.
func TestRegistrationsCount(t *testing.T) {
	cmd := stubborn(t)
	reg := registration(t, cmd)
	runGuard(t, reg+reg+"-"+strconv.Itoa(cmd.Process.Pid)+"\n")
	if n := alive(cmd); n != 0 {
		t.Errorf("the session still has %d processes", n)
	}
}

// TestClient: the client against a real guard process (this test
// binary): a registered session dies when the client's pipe closes
// without bye (the backend died), and Close's bye ends the guard without
// killing.
func TestClient(t *testing.T) {
	start := func() *Client {
		cmd := exec.Command(os.Args[0])
		cmd.Env = append(os.Environ(), "GUARD_TEST_CHILD=1")
		c, err := Start(cmd, t.Logf)
		if err != nil {
			t.Fatal(err)
		}
		return c
	}

	t.Run("backend dies", func(t *testing.T) {
		c := start()
		victim := stubborn(t)
		if err := c.Register(victim.Process.Pid, ""); err != nil {
			t.Fatal(err)
		}
		waitFor(t, "the registration to be written", func() bool {
			c.mu.Lock()
			defer c.mu.Unlock()
			return c.sent > 0 // taken from pending is not yet written
		})
		// What the backend's death does to the guard: its stdin closes.
		// Close the pipe under the writer, which then has nothing more to
		// write.
		_ = c.w.Close()
		waitFor(t, "the registered session to be killed", func() bool { return alive(victim) == 0 })
		select {
		case <-c.exited:
		case <-time.After(10 * time.Second):
			t.Fatal("the guard did not exit")
		}
		if st := c.cmd.ProcessState; !st.Success() {
			t.Errorf("guard exit %v", st)
		}
	})

	t.Run("bye", func(t *testing.T) {
		c := start()
		keep, gone := stubborn(t), stubborn(t)
		for _, cmd := range []*exec.Cmd{keep, gone} {
			if err := c.Register(cmd.Process.Pid, ""); err != nil {
				t.Fatal(err)
			}
		}
		c.Unregister(gone.Process.Pid)
		if err := c.Close(10 * time.Second); err != nil {
			t.Fatal(err)
		}
		if n := alive(keep); n != 2 {
			t.Errorf("the session has %d live processes after bye, want its 2", n)
		}
		c.Unregister(keep.Process.Pid) // after Close: ignored, no panic
		if err := c.Close(time.Second); err != nil {
			t.Errorf("second Close: %v", err)
		}
	})

	t.Run("register a gone process", func(t *testing.T) {
		c := start()
		defer c.Close(10 * time.Second)
		cmd := exec.Command("true")
		if err := cmd.Run(); err != nil {
			t.Fatal(err)
		}
		if err := c.Register(cmd.Process.Pid, ""); err == nil {
			t.Error("registering a reaped process succeeded")
		}
	})
}
