package procstat

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
)

// TestReadSelfAndChild: our own stat names our group and session; a
// child started in a new session leads it; a gone pid is not ok.
func TestReadSelfAndChild(t *testing.T) {
	me, ok := Read(strconv.Itoa(os.Getpid()))
	if !ok || me.Pgrp != syscall.Getpgrp() || me.Start == 0 || me.Zombie() {
		t.Fatalf("own stat %+v ok=%v, want pgrp %d", me, ok, syscall.Getpgrp())
	}
	// A command name (comm, from the executable's file name) with spaces
	// and parentheses must not shift the fields.
	sleep, err := exec.LookPath("sleep")
	if err != nil {
		t.Skip("no sleep")
	}
	odd := filepath.Join(t.TempDir(), "a) b (c")
	if err := os.Symlink(sleep, odd); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(odd, "30")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()
	pid := cmd.Process.Pid
	st, ok := Read(strconv.Itoa(pid))
	if !ok || st.Session != pid || st.Pgrp != pid || st.Start < me.Start {
		t.Fatalf("child stat %+v ok=%v, want session and group %d", st, ok, pid)
	}
	if _, ok := Read("0"); ok {
		t.Error("pid 0 read as a process")
	}
}
