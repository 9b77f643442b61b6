package tests

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/agentrun/agentrun.nvim/internal/proctest"
)

// proc is one process as /proc shows it (internal/proctest reads it).
type proc = proctest.Proc

// readProc reads /proc/<pid>; ok is false when it is gone.
func readProc(pid int) (proc, bool) { return proctest.Read(pid) }

// allProcs returns every process.
func allProcs() []proc { return proctest.All() }

// descendants returns the living processes below pid (not pid itself).
func descendants(pid int) []proc {
	children := map[int][]proc{}
	for _, p := range allProcs() {
		children[p.PPID] = append(children[p.PPID], p)
	}
	var out []proc
	queue := []int{pid}
	for len(queue) > 0 {
		next := queue[0]
		queue = queue[1:]
		for _, c := range children[next] {
			if !c.Zombie() {
				out = append(out, c)
			}
			queue = append(queue, c.PID)
		}
	}
	return out
}

// groupMembers returns the living processes of process group pgrp.
func groupMembers(pgrp int) []proc {
	var out []proc
	for _, p := range allProcs() {
		if p.Pgrp == pgrp && !p.Zombie() {
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
		if p.Running() {
			out = append(out, p)
		}
		groups[p.Pgrp] = true
	}
	for g := range groups {
		for _, m := range groupMembers(g) {
			dup := false
			for _, o := range out {
				dup = dup || o.PID == m.PID
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
func isGuard(p proc) bool { return strings.HasSuffix(p.Cmdline, " guard") }

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
				found = found || strings.Contains(p.Cmdline, w)
			}
			if !found {
				return false, fmt.Sprint(procs)
			}
		}
		return true, ""
	})
	return procs
}
