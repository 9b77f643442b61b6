package procstat

import (
	"unsafe"

	"golang.org/x/sys/unix"
)

// processes is macOS's process table: sysctl kern.proc (state, group,
// start), getsid(2), kern.procargs2 (the exec'd environment) and
// proc_info (resident memory).
var processes table = kernProc{}

type kernProc struct{}

// The p_stat values of <sys/proc.h>.
const (
	sIdl   = 1
	sRun   = 2
	sSleep = 3
	sStop  = 4
	sZomb  = 5
)

func statOf(kp *unix.KinfoProc) (Stat, bool) {
	pid := int(kp.Proc.P_pid)
	// kinfo_proc has no session id; getsid(2) has. Should it be refused
	// (a process gone meanwhile), the session stays 0, which is no
	// tree's leader: the process is then found by group or marker only.
	sid, err := unix.Getsid(pid)
	if err != nil {
		sid = 0
	}
	var state byte
	switch kp.Proc.P_stat {
	case sIdl, sRun:
		state = 'R'
	case sSleep:
		state = 'S'
	case sStop:
		state = 'T'
	case sZomb:
		state = 'Z'
	default:
		state = '?'
	}
	tv := kp.Proc.P_starttime
	start := uint64(tv.Sec)*1e6 + uint64(tv.Usec)
	return Stat{State: state, Pgrp: int(kp.Eproc.Pgid), Session: sid, Tpgid: int(kp.Eproc.Tpgid), Start: start}, true
}

func (kernProc) stat(pid int) (Stat, bool) {
	kp, err := unix.SysctlKinfoProc("kern.proc.pid", pid)
	if err != nil || int(kp.Proc.P_pid) != pid {
		return Stat{}, false
	}
	return statOf(kp)
}

func (kernProc) each(fn func(pid int, st Stat) bool) error {
	all, err := unix.SysctlKinfoProcSlice("kern.proc.all")
	if err != nil {
		return err
	}
	for i := range all {
		pid := int(all[i].Proc.P_pid)
		if pid <= 0 {
			continue
		}
		if st, ok := statOf(&all[i]); ok && !fn(pid, st) {
			return nil
		}
	}
	return nil
}

// envHas reads kern.procargs2 (procargs2Env says what it holds).
func (kernProc) envHas(pid int, pair string) bool {
	b, err := unix.SysctlRaw("kern.procargs2", pid)
	if err != nil {
		return false
	}
	env, ok := procargs2Env(b)
	return ok && envHas(env, pair)
}

// procTaskInfo is struct proc_taskinfo of <sys/proc_info.h>.
type procTaskInfo struct {
	VirtualSize, ResidentSize                                        uint64
	TotalUser, TotalSystem, ThreadsUser, ThreadsSystem               uint64
	Policy, Faults, Pageins, CowFaults, MessagesSent, MessagesRecvd  int32
	SyscallsMach, SyscallsUnix, Csw, Threadnum, Numrunning, Priority int32
}

// rss asks proc_info (what libproc's proc_pidinfo(PROC_PIDTASKINFO)
// calls) for the resident size.
func (kernProc) rss(pid int) int64 {
	const procInfoCallPidinfo, procPidTaskInfo = 2, 4
	var ti procTaskInfo
	size := unsafe.Sizeof(ti)
	n, _, errno := unix.Syscall6(unix.SYS_PROC_INFO, procInfoCallPidinfo, uintptr(pid), procPidTaskInfo, 0,
		uintptr(unsafe.Pointer(&ti)), size)
	if errno != 0 || n != size {
		return 0
	}
	return int64(ti.ResidentSize)
}
