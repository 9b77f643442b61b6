package procstat

import (
	"bytes"
	"strconv"
)

// Stat is what is read of one process.
type Stat struct {
	State         byte // R, S, D, Z, X, … (Linux's letters; macOS's states are mapped to them)
	Pgrp, Session int
	// Tpgid is the foreground process group of the process's controlling
	// terminal (0 or -1: it has none).
	Tpgid int
	// Start is when the process started, in the platform's unit (Linux:
	// clock ticks since boot; macOS: microseconds since the epoch): only
	// compared with other Starts of the same machine.
	Start uint64
}

// Zombie reports whether the process has exited and waits to be reaped
// (or is being reaped): it runs no more.
func (s Stat) Zombie() bool { return s.State == 'Z' || s.State == 'X' }

// Read reads the process pid (a decimal number) from the process table;
// ok is false when the process is gone or cannot be read.
func Read(pid string) (Stat, bool) {
	n, err := strconv.Atoi(pid)
	if err != nil || n <= 0 {
		return Stat{}, false
	}
	return processes.stat(n)
}

// Each calls fn for every process in the table whose state can be read,
// with its pid; it stops early when fn returns false.
func Each(fn func(pid int, st Stat) bool) error { return processes.each(fn) }

// EnvHas reports whether process pid started with the environment entry
// pair ("NAME=value") exactly. That is the environment the process was
// exec'd with (Linux: /proc/<pid>/environ; macOS: sysctl kern.procargs2):
// changing a variable later does not hide it, exec'ing with a clean
// environment does. Another user's process, or a gone one, reports false.
func EnvHas(pid int, pair string) bool { return processes.envHas(pid, pair) }

// RSS returns the resident memory of process pid in bytes (0 when it is
// gone or unreadable).
func RSS(pid int) int64 { return processes.rss(pid) }

// table is the platform's process table: /proc on Linux (table_linux.go),
// sysctl kern.proc and proc_info on macOS (table_darwin.go).
type table interface {
	stat(pid int) (Stat, bool)
	each(fn func(pid int, st Stat) bool) error
	envHas(pid int, pair string) bool
	rss(pid int) int64
	readsTerminal(pid int) bool // activity_*.go
	listening(pids []int) []int // activity_*.go
}

// envHas reports whether the NUL-separated environment block env holds
// pair exactly.
func envHas(env []byte, pair string) bool {
	return bytes.HasPrefix(env, []byte(pair+"\x00")) || bytes.Contains(env, []byte("\x00"+pair+"\x00"))
}

// Tree names what one terminal started: the processes of the session its
// leader leads (and of the leader's group), and those that left that
// session (setsid, daemons) but carry Marker ("NAME=value") in their
// environment and started no earlier than the leader.
type Tree struct {
	Leader int    // the session leader's pid: also its session and group id
	Since  uint64 // the leader's Start; 0: any
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
