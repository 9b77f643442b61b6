package tests

import (
	"bytes"
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"
)

// proc is one process as /proc shows it.
type proc struct {
	pid, ppid, pgrp int
	state           byte
	start           uint64 // start time in clock ticks: tells a reused pid apart
	cmdline         string
}

func (p proc) String() string {
	return fmt.Sprintf("%d(pgrp %d, %c) %q", p.pid, p.pgrp, p.state, p.cmdline)
}

// readProc reads /proc/<pid>; ok is false when it is gone.
func readProc(pid int) (proc, bool) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return proc{}, false
	}
	// "pid (comm) S ppid pgrp ...": the name may hold anything, so the
	// fields resume after the last ')'.
	i := bytes.LastIndexByte(b, ')')
	if i < 0 || i+2 >= len(b) {
		return proc{}, false
	}
	f := strings.Fields(string(b[i+2:]))
	if len(f) < 20 {
		return proc{}, false
	}
	p := proc{pid: pid, state: f[0][0]}
	p.ppid, _ = strconv.Atoi(f[1])
	p.pgrp, _ = strconv.Atoi(f[2])
	p.start, _ = strconv.ParseUint(f[19], 10, 64)
	cmd, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
	p.cmdline = strings.TrimRight(strings.ReplaceAll(string(cmd), "\x00", " "), " ")
	return p, true
}

// allProcs returns every process.
func allProcs() []proc {
	entries, _ := os.ReadDir("/proc")
	var out []proc
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if p, ok := readProc(pid); ok {
			out = append(out, p)
		}
	}
	return out
}

// descendants returns the living processes below pid (not pid itself).
func descendants(pid int) []proc {
	children := map[int][]proc{}
	for _, p := range allProcs() {
		children[p.ppid] = append(children[p.ppid], p)
	}
	var out []proc
	queue := []int{pid}
	for len(queue) > 0 {
		next := queue[0]
		queue = queue[1:]
		for _, c := range children[next] {
			if c.state != 'Z' && c.state != 'X' {
				out = append(out, c)
			}
			queue = append(queue, c.pid)
		}
	}
	return out
}

// running reports whether p (the same process, not a reused pid) still
// runs; a zombie does not count.
func (p proc) running() bool {
	now, ok := readProc(p.pid)
	return ok && now.start == p.start && now.state != 'Z' && now.state != 'X'
}

// groupMembers returns the living processes of process group pgrp.
func groupMembers(pgrp int) []proc {
	var out []proc
	for _, p := range allProcs() {
		if p.pgrp == pgrp && p.state != 'Z' && p.state != 'X' {
			out = append(out, p)
		}
	}
	return out
}

// leftovers returns what of procs still runs, and every living member of
// their process groups (a terminal's group holds what its command forked).
func leftovers(procs []proc) []proc {
	var out []proc
	groups := map[int]bool{}
	for _, p := range procs {
		if p.running() {
			out = append(out, p)
		}
		groups[p.pgrp] = true
	}
	for g := range groups {
		for _, m := range groupMembers(g) {
			dup := false
			for _, o := range out {
				dup = dup || o.pid == m.pid
			}
			if !dup {
				out = append(out, m)
			}
		}
	}
	return out
}

// waitNoLeftovers waits until nothing of procs runs.
func waitNoLeftovers(t *testing.T, what string, procs []proc, timeout time.Duration) {
	t.Helper()
	if len(procs) == 0 {
		t.Fatalf("%s: no processes to check", what)
	}
	eventually(t, what+": nothing left running", timeout, func() (bool, string) {
		left := leftovers(procs)
		return len(left) == 0, fmt.Sprintf("still running: %v", left)
	})
}

// nvimPid and backendPid return the editor's and its backend's pids.
func (e *editor) nvimPid() int { return e.pid }

func (e *editor) backendPid() int {
	e.t.Helper()
	var pid int
	e.lua(`local c = require("agentrun.rpc").channel(); return c and vim.fn.jobpid(c) or 0`, &pid)
	if pid <= 0 {
		e.t.Fatal("the backend is not running")
	}
	return pid
}

// isGuard reports whether p is the backend's guard (`agentrun guard`),
// which runs as long as the backend and is checked on its own.
func isGuard(p proc) bool { return strings.HasSuffix(p.cmdline, " guard") }

// withoutGuard returns procs without the guard.
func withoutGuard(procs []proc) []proc {
	var out []proc
	for _, p := range procs {
		if !isGuard(p) {
			out = append(out, p)
		}
	}
	return out
}

// guardProc returns the backend's guard, failing the test when there is
// not exactly one.
func (e *editor) guardProc() proc {
	e.t.Helper()
	var guards []proc
	for _, p := range descendants(e.backendPid()) {
		if isGuard(p) {
			guards = append(guards, p)
		}
	}
	if len(guards) != 1 {
		e.t.Fatalf("guards under the backend: %v, want one", guards)
	}
	return guards[0]
}

// underBackend waits until the backend runs a process whose command line
// contains each of want, and returns everything below the backend then
// (agents, terminal commands and what they forked), except the guard.
func (e *editor) underBackend(want ...string) []proc {
	e.t.Helper()
	backend := e.backendPid()
	var procs []proc
	e.waitFor(fmt.Sprintf("processes %q under the backend", want), 10*time.Second, func() (bool, string) {
		procs = withoutGuard(descendants(backend))
		for _, w := range want {
			found := false
			for _, p := range procs {
				found = found || strings.Contains(p.cmdline, w)
			}
			if !found {
				return false, fmt.Sprint(procs)
			}
		}
		return true, ""
	})
	return procs
}
