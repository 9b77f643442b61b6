package termhost

import (
	"fmt"
	"os/exec"
	"strconv"
	"syscall"
	"time"

	"github.com/agentrun/agentrun.nvim/internal/procstat"
)

// limitPoll is how often the tree's memory and process count are
// measured when a limit asks for it.
const limitPoll = 50 * time.Millisecond

// Validate reports the first negative limit.
func (l Limits) Validate() error {
	switch {
	case l.Memory < 0:
		return fmt.Errorf("memory limit %d is negative", l.Memory)
	case l.Processes < 0:
		return fmt.Errorf("process limit %d is negative", l.Processes)
	case l.CPUTime < 0:
		return fmt.Errorf("cpu time limit %v is negative", l.CPUTime)
	case l.OpenFiles < 0:
		return fmt.Errorf("open files limit %d is negative", l.OpenFiles)
	case l.FileSize < 0:
		return fmt.Errorf("file size limit %d is negative", l.FileSize)
	}
	return nil
}

// rlimitPrefix returns the prlimit(1) argv that sets the per-process
// limits before the command runs (nil when there are none): limits set
// in the child before exec, so nothing the command starts escapes them.
func (l Limits) rlimitPrefix() ([]string, error) {
	var args []string
	set := func(name string, soft, hard int64) {
		args = append(args, fmt.Sprintf("--%s=%d:%d", name, soft, hard))
	}
	if l.CPUTime > 0 {
		// SIGXCPU at the soft limit, which names the cause; SIGKILL a
		// second later for a process that ignores it.
		secs := max(1, int64(l.CPUTime/time.Second))
		set("cpu", secs, secs+1)
	}
	if l.OpenFiles > 0 {
		set("nofile", int64(l.OpenFiles), int64(l.OpenFiles))
	}
	if l.FileSize > 0 {
		set("fsize", l.FileSize, l.FileSize)
	}
	if len(args) == 0 {
		return nil, nil
	}
	path, err := exec.LookPath("prlimit")
	if err != nil {
		return nil, fmt.Errorf("terminal limits need prlimit (util-linux), which is not installed: %w", err)
	}
	return append(append([]string{path}, args...), "--"), nil
}

// watchLimits measures the tree until the command is done and kills the
// whole tree at once (SIGKILL) when it goes over Memory or Processes.
func (t *Terminal) watchLimits() {
	l := t.spec.Limits
	tick := time.NewTicker(limitPoll)
	defer tick.Stop()
	for {
		select {
		case <-t.done:
			return
		case <-tick.C:
		}
		members := t.tree.Members()
		var why string
		if l.Processes > 0 && len(members) > l.Processes {
			why = fmt.Sprintf("it ran %d processes at once (limit %d)", len(members), l.Processes)
		}
		if why == "" && l.Memory > 0 {
			var rss int64
			for _, pid := range members {
				rss += procstat.RSS(pid)
			}
			if rss > l.Memory {
				why = fmt.Sprintf("its memory reached %s (limit %s)", bytesText(rss), bytesText(l.Memory))
			}
		}
		if why == "" {
			continue
		}
		t.mu.Lock()
		t.limitHit = why
		t.mu.Unlock()
		t.host.opts.Logf("termhost: %s: killed: %s", t.id, why)
		_ = syscall.Kill(-t.pid, syscall.SIGKILL)
		t.signalAll(syscall.SIGKILL)
		return
	}
}

// limitText says which limit ended the command, or "".
func (t *Terminal) limitText(st ExitStatus) string {
	t.mu.Lock()
	why := t.limitHit
	t.mu.Unlock()
	if why != "" {
		return why
	}
	l := t.spec.Limits
	switch {
	case st.Signal == "SIGXCPU" && l.CPUTime > 0:
		return fmt.Sprintf("it used up its CPU time (limit %v)", l.CPUTime)
	case st.Signal == "SIGXFSZ" && l.FileSize > 0:
		return fmt.Sprintf("it wrote a file up to the size limit (%s)", bytesText(l.FileSize))
	}
	return ""
}

// LimitHit says which limit stopped the command ("its memory reached 300
// MiB (limit 256 MiB)"), or "" when none did (or the command has not
// ended).
func (t *Terminal) LimitHit() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.limitReport
}

// bytesText is n in the largest binary unit that keeps it readable.
func bytesText(n int64) string {
	switch {
	case n >= 1<<30 && n%(1<<30) == 0:
		return strconv.FormatInt(n>>30, 10) + " GiB"
	case n >= 1<<20:
		return strconv.FormatInt(n>>20, 10) + " MiB"
	case n >= 1<<10:
		return strconv.FormatInt(n>>10, 10) + " KiB"
	}
	return strconv.FormatInt(n, 10) + " bytes"
}
