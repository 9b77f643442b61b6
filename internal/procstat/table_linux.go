package procstat

import (
	"bytes"
	"os"
	"strconv"
	"strings"
)

// processes is Linux's process table: /proc.
var processes table = procfs{}

type procfs struct{}

// stat reads /proc/<pid>/stat: fields 3 (state), 5 and 6 (group and
// session), 8 (the terminal's foreground group) and 22 (start time in
// clock ticks since boot).
func (procfs) stat(pid int) (Stat, bool) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
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
	tpgid, err4 := strconv.Atoi(string(f[5]))
	if err1 != nil || err2 != nil || err3 != nil || err4 != nil {
		return Stat{}, false
	}
	return Stat{State: f[0][0], Pgrp: pgrp, Session: session, Tpgid: tpgid, Start: start}, true
}

func (p procfs) each(fn func(pid int, st Stat) bool) error {
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
		if st, ok := p.stat(pid); ok && !fn(pid, st) {
			return nil
		}
	}
	return nil
}

func (procfs) envHas(pid int, pair string) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/environ")
	return err == nil && envHas(b, pair)
}

// rss reads the resident pages of /proc/<pid>/statm.
func (procfs) rss(pid int) int64 {
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
