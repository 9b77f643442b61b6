// Package proctest is how tests read the process table (Linux's /proc):
// a process's parent, group, state, start time and command line, every
// process, a process's working directory, and how many files this one
// has open. The code's own reads are internal/procstat's (portable, and
// only what the code needs); tests need more, and read it here, in one
// place.
package proctest

import (
	"bytes"
	"fmt"
	"os"
	"strconv"
	"strings"
)

// Proc is one process as /proc shows it.
type Proc struct {
	PID, PPID, Pgrp int
	State           byte   // R, S, D, Z, X, …
	Start           uint64 // start time in clock ticks: tells a reused pid apart
	Cmdline         string // the arguments joined by spaces
}

// String names the process for a test failure: pid, group, state, command.
func (p Proc) String() string {
	return fmt.Sprintf("%d(pgrp %d, %c) %q", p.PID, p.Pgrp, p.State, p.Cmdline)
}

// Zombie reports whether the process has exited and waits to be reaped.
func (p Proc) Zombie() bool { return p.State == 'Z' || p.State == 'X' }

// Running reports whether p (the same process, not a reused pid) still
// runs; a zombie does not count.
func (p Proc) Running() bool {
	now, ok := Read(p.PID)
	return ok && now.Start == p.Start && !now.Zombie()
}

// Read reads process pid; ok is false when it is gone.
func Read(pid int) (Proc, bool) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return Proc{}, false
	}
	// "pid (comm) S ppid pgrp ...": the name may hold anything, so the
	// fields resume after the last ')'.
	i := bytes.LastIndexByte(b, ')')
	if i < 0 || i+2 >= len(b) {
		return Proc{}, false
	}
	f := strings.Fields(string(b[i+2:]))
	if len(f) < 20 || f[0] == "" {
		return Proc{}, false
	}
	p := Proc{PID: pid, State: f[0][0]}
	p.PPID, _ = strconv.Atoi(f[1])
	p.Pgrp, _ = strconv.Atoi(f[2])
	p.Start, _ = strconv.ParseUint(f[19], 10, 64)
	cmd, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
	p.Cmdline = strings.TrimRight(strings.ReplaceAll(string(cmd), "\x00", " "), " ")
	return p, true
}

// All returns every process that can be read.
func All() []Proc {
	entries, _ := os.ReadDir("/proc")
	var out []Proc
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if p, ok := Read(pid); ok {
			out = append(out, p)
		}
	}
	return out
}

// Cwd returns process pid's working directory.
func Cwd(pid int) (string, error) {
	return os.Readlink(fmt.Sprintf("/proc/%d/cwd", pid))
}

// OpenFiles returns how many file descriptors this process has open (-1
// when it cannot tell).
func OpenFiles() int {
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		return -1
	}
	return len(ents)
}
