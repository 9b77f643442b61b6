// Package procstat reads the few fields of /proc/<pid>/stat that
// termhost (which process groups a terminal's session still has) and the
// guard (which processes to kill after the backend died) need.
package procstat

import (
	"bytes"
	"os"
	"strconv"
)

// Stat is what is read of /proc/<pid>/stat.
type Stat struct {
	State         byte   // field 3: R, S, D, Z, X, …
	Pgrp, Session int    // fields 5 and 6
	Start         uint64 // field 22: start time in clock ticks since boot
}

// Zombie reports whether the process has exited and waits to be reaped
// (or is being reaped): it runs no more.
func (s Stat) Zombie() bool { return s.State == 'Z' || s.State == 'X' }

// Read reads /proc/<pid>/stat (pid as the directory name under /proc);
// ok is false when the process is gone or the file is not as expected.
func Read(pid string) (Stat, bool) {
	b, err := os.ReadFile("/proc/" + pid + "/stat")
	if err != nil {
		return Stat{}, false
	}
	// The command name may contain anything, spaces and parentheses
	// included: the fields resume after the last ')'. f[0] is field 3.
	i := bytes.LastIndexByte(b, ')')
	if i < 0 || i+2 >= len(b) {
		return Stat{}, false
	}
	f := bytes.Fields(b[i+2:])
	if len(f) < 20 || len(f[0]) == 0 {
		return Stat{}, false
	}
	pgrp, err1 := strconv.Atoi(string(f[2]))
	session, err2 := strconv.Atoi(string(f[3]))
	start, err3 := strconv.ParseUint(string(f[19]), 10, 64)
	if err1 != nil || err2 != nil || err3 != nil {
		return Stat{}, false
	}
	return Stat{State: f[0][0], Pgrp: pgrp, Session: session, Start: start}, true
}
