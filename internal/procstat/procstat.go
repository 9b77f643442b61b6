// Package procstat reads the few fields of /proc/<pid>/stat that
// termhost (which process groups a terminal's session still has) and the
// guard (which processes to kill after the backend died) need.
package procstat

import (
	"bytes"
	"os"
	"strconv"
	"strings"
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

// Each calls fn for every process in /proc whose stat can be read, with
// its pid; it stops early when fn returns false.
func Each(fn func(pid int, st Stat) bool) error {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return err
	}
	for _, e := range entries {
		name := e.Name()
		if name[0] < '0' || name[0] > '9' {
			continue
		}
		pid, err := strconv.Atoi(name)
		if err != nil {
			continue
		}
		if st, ok := Read(name); ok && !fn(pid, st) {
			return nil
		}
	}
	return nil
}

// EnvHas reports whether process pid started with the environment entry
// pair ("NAME=value") exactly. /proc/<pid>/environ is the environment the
// process was exec'd with: changing a variable later does not hide it,
// exec'ing with a clean environment does. Another user's process, or a
// gone one, reports false.
func EnvHas(pid int, pair string) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/environ")
	if err != nil {
		return false
	}
	return bytes.HasPrefix(b, []byte(pair+"\x00")) || bytes.Contains(b, []byte("\x00"+pair+"\x00"))
}

// Tree names what one terminal started: the processes of the session its
// leader leads (and of the leader's group), and those that left that
// session (setsid, daemons) but carry Marker ("NAME=value") in their
// environment and started no earlier than the leader.
type Tree struct {
	Leader int    // the session leader's pid: also its session and group id
	Since  uint64 // the leader's start time (clock ticks since boot); 0: any
	Marker string // the environment entry every process of the tree inherits; "": none
}

// Groups returns the process groups that have a live (not zombie) member
// of the tree.
func (tr Tree) Groups() ([]int, error) {
	var groups []int
	err := Each(func(pid int, st Stat) bool {
		if st.Zombie() || !tr.has(pid, st) {
			return true
		}
		for _, g := range groups {
			if g == st.Pgrp {
				return true
			}
		}
		groups = append(groups, st.Pgrp)
		return true
	})
	return groups, err
}

// Members returns the live (not zombie) processes of the tree.
func (tr Tree) Members() []int {
	var pids []int
	_ = Each(func(pid int, st Stat) bool {
		if !st.Zombie() && tr.has(pid, st) {
			pids = append(pids, pid)
		}
		return true
	})
	return pids
}

func (tr Tree) has(pid int, st Stat) bool {
	if tr.Leader <= 0 {
		return false
	}
	if st.Pgrp == tr.Leader || st.Session == tr.Leader {
		return true
	}
	return tr.Marker != "" && st.Start >= tr.Since && EnvHas(pid, tr.Marker)
}

// RSS returns the resident memory of process pid in bytes (0 when it is
// gone or unreadable).
func RSS(pid int) int64 {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/statm")
	if err != nil {
		return 0
	}
	f := strings.Fields(string(b))
	if len(f) < 2 {
		return 0
	}
	pages, err := strconv.ParseInt(f[1], 10, 64)
	if err != nil {
		return 0
	}
	return pages * int64(os.Getpagesize())
}
