package guard

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/agentrun/agentrun.nvim/internal/procstat"
)

// killFor bounds how long the guard keeps rescanning for processes to
// kill after the backend died.
const killFor = 2 * time.Second

// rescanEvery spaces the rescans: a process may fork between the scan
// that found its parent and the parent's SIGKILL.
const rescanEvery = 20 * time.Millisecond

// session is a registered terminal session.
type session struct {
	start  uint64 // the leader's start time (clock ticks since boot)
	marker string // the environment entry its processes carry ("" if none)
	count  int    // registrations not yet unregistered
}

// Run reads the protocol (see the package doc) from r until EOF. After
// "bye" it returns nil without killing anything; without it, it kills
// every registered session's processes first. logf (nil: discard)
// receives what the guard did. When ctx ends first, Run returns its
// error at once and kills nothing.
func Run(ctx context.Context, r io.Reader, logf func(format string, args ...any)) error {
	if logf == nil {
		logf = func(string, ...any) {}
	}
	lines := make(chan string)
	readErr := make(chan error, 1)
	go func() {
		sc := bufio.NewScanner(r)
		for sc.Scan() {
			select {
			case lines <- sc.Text():
			case <-ctx.Done():
				return
			}
		}
		readErr <- sc.Err()
	}()

	sessions := map[int]*session{}
	bye := false
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case err := <-readErr:
			if err != nil {
				logf("guard: reading from the backend: %v", err)
			}
			if bye {
				return nil
			}
			logf("guard: the backend went away without cleaning up; killing the processes of %d terminal sessions", len(sessions))
			killed := kill(ctx, sessions, logf)
			logf("guard: sent SIGKILL to %d processes", killed)
			return nil
		case line := <-lines:
			if err := apply(sessions, line, &bye); err != nil {
				logf("guard: %v", err)
			}
		}
	}
}

// apply applies one protocol line to sessions.
func apply(sessions map[int]*session, line string, bye *bool) error {
	switch {
	case line == "bye":
		*bye = true
	case strings.HasPrefix(line, "+"):
		f := strings.Fields(line[1:])
		if len(f) < 2 || len(f) > 3 {
			return fmt.Errorf("bad registration %q", line)
		}
		sid, err1 := strconv.Atoi(f[0])
		start, err2 := strconv.ParseUint(f[1], 10, 64)
		if err1 != nil || err2 != nil || sid <= 1 {
			return fmt.Errorf("bad registration %q", line)
		}
		s := sessions[sid]
		if s == nil {
			s = &session{}
			sessions[sid] = s
		}
		s.start = start // a reused pid: the newest leader is the live one
		if len(f) == 3 {
			s.marker = f[2]
		}
		s.count++
	case strings.HasPrefix(line, "-"):
		sid, err := strconv.Atoi(line[1:])
		if err != nil {
			return fmt.Errorf("bad unregistration %q", line)
		}
		if s := sessions[sid]; s != nil {
			if s.count--; s.count <= 0 {
				delete(sessions, sid)
			}
		}
	default:
		return fmt.Errorf("unknown line %q", line)
	}
	return nil
}

// kill sends SIGKILL to every live process of sessions (skipping a
// session whose leader's pid was reused), rescanning until none is left
// or killFor has passed; it returns how many processes it signalled.
func kill(ctx context.Context, sessions map[int]*session, logf func(string, ...any)) int {
	var targets []procstat.Tree
	for sid, s := range sessions {
		st, ok := procstat.Read(strconv.Itoa(sid))
		if ok && st.Start != s.start {
			logf("guard: session %d: its leader's pid now belongs to another process; skipped", sid)
			continue
		}
		targets = append(targets, procstat.Tree{Leader: sid, Since: s.start, Marker: s.marker})
	}
	if len(targets) == 0 {
		return 0
	}
	self := os.Getpid()
	killed := 0
	deadline := time.Now().Add(killFor)
	for {
		found := 0
		for _, pid := range members(targets) {
			if pid == self {
				continue
			}
			found++
			if err := syscall.Kill(pid, syscall.SIGKILL); err == nil {
				killed++
			} else if !errors.Is(err, syscall.ESRCH) {
				logf("guard: kill %d: %v", pid, err)
			}
		}
		if found == 0 || time.Now().After(deadline) {
			if found > 0 {
				logf("guard: %d processes still alive after %v", found, killFor)
			}
			return killed
		}
		select {
		case <-time.After(rescanEvery):
		case <-ctx.Done():
			return killed
		}
	}
}

// members returns the live (not zombie) processes of the trees: in a
// registered session, or carrying its marker (they left the session).
func members(trees []procstat.Tree) []int {
	var out []int
	for _, tr := range trees {
		out = append(out, tr.Members()...)
	}
	return out
}

// startTime returns the process's start time (procstat.Stat.Start):
// with the pid it names one process.
func startTime(pid int) (uint64, error) {
	st, ok := procstat.Read(strconv.Itoa(pid))
	if !ok {
		return 0, fmt.Errorf("process %d: not in the process table (gone?)", pid)
	}
	return st.Start, nil
}
