package proctest

import (
	"os"
	"os/exec"
	"strings"
	"testing"
)

// TestReadsThisProcessAndAGoneOne: this process reads as itself (parent,
// group, command line, cwd; in All; running), one that exited and was
// reaped reads as gone.
func TestReadsThisProcessAndAGoneOne(t *testing.T) {
	self, ok := Read(os.Getpid())
	if !ok {
		t.Fatal("cannot read this process")
	}
	if self.PPID != os.Getppid() || self.Pgrp <= 0 || self.Start == 0 || !strings.Contains(self.Cmdline, os.Args[0]) || !self.Running() {
		t.Errorf("this process reads as %+v", self)
	}
	wd, _ := os.Getwd()
	if cwd, err := Cwd(os.Getpid()); err != nil || cwd != wd {
		t.Errorf("Cwd = %q, %v; want %q", cwd, err, wd)
	}
	found := false
	for _, p := range All() {
		found = found || p.PID == os.Getpid()
	}
	if !found {
		t.Error("All does not list this process")
	}
	if n := OpenFiles(); n < 3 {
		t.Errorf("OpenFiles = %d, want at least stdin, stdout and stderr", n)
	}

	cmd := exec.Command("true")
	if err := cmd.Run(); err != nil {
		t.Fatal(err)
	}
	if p, ok := Read(cmd.Process.Pid); ok {
		t.Errorf("a reaped process reads as %+v", p)
	}
}
