package sshlink

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
)

// A Neovim that quits while the link to a machine is down asks the
// backend waiting there to end (`ssh-backend URL --end PID`). When the
// machine cannot be reached then, the end is kept here, in a file beside
// agentrun's log (Neovim's state directory: the same for every Neovim of
// the user), and the next link to that machine does it first: a session
// whose Neovim quit is never taken up by another, and never left running
// for good because the machine was away at the time.

// pendingName is the file of the ends not done yet: one "URL PID" a line.
const pendingName = "agentrun-ends"

// pendingPath is the file of the ends not done yet; "" when AGENTRUN_LOG
// is unset (Neovim always sets it for ssh-backend).
func pendingPath() string {
	log := os.Getenv("AGENTRUN_LOG")
	if log == "" {
		return ""
	}
	return filepath.Join(filepath.Dir(log), pendingName)
}

// pendingEnd is a backend (PID) on a machine (URL) to end.
type pendingEnd struct {
	url string
	pid int
}

// updatePending rewrites the file of ends not done yet with what fn makes
// of its entries, under an exclusive lock (several ssh-backends may run).
func updatePending(fn func([]pendingEnd) []pendingEnd) error {
	path := pendingPath()
	if path == "" {
		return nil
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return fmt.Errorf("the directory of %s: %w", path, err)
	}
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return fmt.Errorf("open %s: %w", path, err)
	}
	defer f.Close()
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
		return fmt.Errorf("lock %s: %w", path, err)
	}
	var ends []pendingEnd
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		url, p, ok := strings.Cut(strings.TrimSpace(sc.Text()), " ")
		pid, err := strconv.Atoi(p)
		if ok && err == nil && pid > 0 && IsURL(url) {
			ends = append(ends, pendingEnd{url: url, pid: pid})
		}
	}
	ends = fn(ends)
	var b strings.Builder
	for _, e := range ends {
		fmt.Fprintf(&b, "%s %d\n", e.url, e.pid)
	}
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return fmt.Errorf("rewrite %s: %w", path, err)
	}
	if err := f.Truncate(0); err != nil {
		return fmt.Errorf("rewrite %s: %w", path, err)
	}
	if _, err := f.WriteString(b.String()); err != nil {
		return fmt.Errorf("rewrite %s: %w", path, err)
	}
	return nil
}

// keepPending records that backend pid on t is to be ended (once).
func keepPending(t Target, pid int) error {
	return updatePending(func(ends []pendingEnd) []pendingEnd {
		e := pendingEnd{url: t.String(), pid: pid}
		if slices.Contains(ends, e) {
			return ends
		}
		return append(ends, e)
	})
}

// dropPending forgets the end of backend pid on t (done, or nothing of it
// waits there any more).
func dropPending(t Target, pid int) error {
	return updatePending(func(ends []pendingEnd) []pendingEnd {
		return slices.DeleteFunc(ends, func(e pendingEnd) bool { return e == pendingEnd{url: t.String(), pid: pid} })
	})
}

// pendingOn lists the backends on t still to be ended.
func pendingOn(t Target) []int {
	var pids []int
	_ = updatePending(func(ends []pendingEnd) []pendingEnd {
		for _, e := range ends {
			if e.url == t.String() {
				pids = append(pids, e.pid)
			}
		}
		return ends
	})
	return pids
}

// endPending ends the backends on t that a Neovim quitting while t could
// not be reached left to end: before a new link takes up what waits
// there, so it takes up none of them. Its error (t cannot be reached
// still) is a sentence, as DialBackend's.
func endPending(t Target, end func(pid int) error) error {
	for _, pid := range pendingOn(t) {
		if err := end(pid); err != nil && !errors.Is(err, ErrNothingLingers) {
			return err
		}
	}
	return nil
}
