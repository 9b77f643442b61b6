package termhost

import (
	"slices"
	"strconv"

	"github.com/agentrun/agentrun.nvim/internal/procstat"
)

// ReadsInput reports whether the command waits for someone to type: a
// process of the terminal's foreground process group is blocked reading
// the terminal (Linux and macOS; see procstat.ReadsTerminal). An
// interactive shell at its prompt reads too; the caller knows which
// terminals those are.
func (t *Terminal) ReadsInput() bool {
	if t.leaderExited.Load() {
		return false
	}
	st, ok := procstat.Read(strconv.Itoa(t.pid))
	if !ok || st.Tpgid <= 0 {
		return false
	}
	// The group's leader is its first process, and usually the reader.
	if procstat.ReadsTerminal(st.Tpgid) {
		return true
	}
	for _, pid := range t.tree.Members() {
		if pid == st.Tpgid {
			continue
		}
		if m, ok := procstat.Read(strconv.Itoa(pid)); ok && m.Pgrp == st.Tpgid && procstat.ReadsTerminal(pid) {
			return true
		}
	}
	return false
}

// Ports returns the TCP ports the command's processes listen on (a dev
// server's), sorted; none once it exited. What it found is also what the
// host's listing (the AHP root: agentrun ls) shows from then on.
func (t *Terminal) Ports() []int {
	var ports []int
	if !t.leaderExited.Load() {
		ports = procstat.ListeningPorts(t.tree.Members())
	}
	t.portsMu.Lock()
	changed := !slices.Equal(t.ports, ports)
	t.ports = ports
	t.portsMu.Unlock()
	if changed {
		t.host.listingChanged()
	}
	return ports
}

// listedPorts is what Ports found last.
func (t *Terminal) listedPorts() []int {
	t.portsMu.Lock()
	defer t.portsMu.Unlock()
	return append([]int(nil), t.ports...)
}
