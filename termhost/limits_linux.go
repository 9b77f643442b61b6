package termhost

import (
	"fmt"
	"os/exec"
)

// setRlimits is prlimit(1) on Linux.
var setRlimits rlimiter = prlimitPrefix

// prlimitPrefix returns the prlimit(1) argv that sets r, ending in "--".
func prlimitPrefix(r rlimits) ([]string, error) {
	var args []string
	set := func(name string, soft, hard int64) {
		args = append(args, fmt.Sprintf("--%s=%d:%d", name, soft, hard))
	}
	if r.cpuSecs > 0 {
		// SIGXCPU at the soft limit, which names the cause; SIGKILL a
		// second later for a process that ignores it.
		set("cpu", r.cpuSecs, r.cpuSecs+1)
	}
	if r.openFiles > 0 {
		set("nofile", r.openFiles, r.openFiles)
	}
	if r.fileSize > 0 {
		set("fsize", r.fileSize, r.fileSize)
	}
	path, err := exec.LookPath("prlimit")
	if err != nil {
		return nil, fmt.Errorf("terminal limits need prlimit (util-linux), which is not installed: %w", err)
	}
	return append(append([]string{path}, args...), "--"), nil
}
