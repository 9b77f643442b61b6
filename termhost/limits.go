package termhost

import (
	"fmt"
	"strconv"
	"strings"
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

// rlimits are the per-process limits set in the child before the
// command is exec'd, so nothing the command starts escapes them; 0 is
// no limit.
type rlimits struct {
	cpuSecs   int64 // SIGXCPU at cpuSecs, SIGKILL a second later
	openFiles int64
	fileSize  int64 // bytes
}

// rlimiter returns the argv that sets r and then runs the command put
// after it (prlimit(1) on Linux, the shell's ulimit elsewhere).
type rlimiter func(r rlimits) ([]string, error)

// rlimitPrefix returns the argv that sets the per-process limits before
// the command runs (nil when there are none).
func (l Limits) rlimitPrefix() ([]string, error) {
	var r rlimits
	if l.CPUTime > 0 {
		r.cpuSecs = max(1, int64(l.CPUTime/time.Second))
	}
	r.openFiles = int64(l.OpenFiles)
	r.fileSize = l.FileSize
	if r == (rlimits{}) {
		return nil, nil
	}
	return setRlimits(r)
}

// ulimitPrefix sets r with the POSIX shell's ulimit and execs the
// command ("$@"): what platforms without prlimit(1) use. ulimit -f
// counts 512-byte blocks, so a file size limit is rounded up to one.
func ulimitPrefix(r rlimits) ([]string, error) {
	var script []string
	if r.cpuSecs > 0 {
		// Both limits at the hard one (a hard limit under the soft one
		// is refused), then the soft one down.
		script = append(script, fmt.Sprintf("ulimit -t %d", r.cpuSecs+1), fmt.Sprintf("ulimit -S -t %d", r.cpuSecs))
	}
	if r.openFiles > 0 {
		script = append(script, fmt.Sprintf("ulimit -n %d", r.openFiles))
	}
	if r.fileSize > 0 {
		script = append(script, fmt.Sprintf("ulimit -f %d", (r.fileSize+511)/512))
	}
	script = append(script, `exec "$@"`)
	return []string{"/bin/sh", "-c", strings.Join(script, " && "), "agentrun-limits"}, nil
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
		t.signalAll(syscall.SIGKILL, 0)
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
