package procstat

import (
	"bytes"
	"os/exec"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// readsTerminal reads the process's wait channel (kinfo_proc's e_wmesg):
// "ttyin" while it sleeps reading a terminal.
func (kernProc) readsTerminal(pid int) bool {
	kp, err := unix.SysctlKinfoProc("kern.proc.pid", pid)
	if err != nil || int(kp.Proc.P_pid) != pid {
		return false
	}
	w := kp.Eproc.Wmesg[:]
	if i := bytes.IndexByte(w, 0); i >= 0 {
		w = w[:i]
	}
	return string(w) == "ttyin"
}

// listening asks lsof (shipped with macOS) for the processes' listening
// TCP sockets: "-F n" prints each as a line "n*:8000", "n127.0.0.1:8000"
// or "n[::1]:8000".
func (kernProc) listening(pids []int) []int {
	list := make([]string, len(pids))
	for i, p := range pids {
		list[i] = strconv.Itoa(p)
	}
	out, err := exec.Command("lsof", "-nP", "-a", "-p", strings.Join(list, ","), "-iTCP", "-sTCP:LISTEN", "-Fn").Output()
	if len(out) == 0 && err != nil {
		return nil
	}
	var ports []int
	for _, line := range strings.Split(string(out), "\n") {
		if !strings.HasPrefix(line, "n") {
			continue
		}
		i := strings.LastIndexByte(line, ':')
		if p, err := strconv.Atoi(line[i+1:]); i > 0 && err == nil {
			ports = append(ports, p)
		}
	}
	return ports
}
