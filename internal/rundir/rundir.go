package rundir

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
)

// Dir returns the socket directory, creating it (and checking an existing
// one: a real directory, ours, with no access for others).
func Dir() (string, error) {
	dir := ""
	if rt := os.Getenv("XDG_RUNTIME_DIR"); rt != "" && filepath.IsAbs(rt) {
		dir = filepath.Join(rt, "agentrun")
	} else {
		cache, err := os.UserCacheDir()
		if err != nil {
			return "", fmt.Errorf("no directory for agentrun's sockets: neither $XDG_RUNTIME_DIR nor a cache directory: %w", err)
		}
		dir = filepath.Join(cache, "agentrun", "run")
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", fmt.Errorf("socket directory %s: %w", dir, err)
	}
	fi, err := os.Lstat(dir)
	if err != nil {
		return "", fmt.Errorf("socket directory %s: %w", dir, err)
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	switch {
	case !fi.IsDir():
		return "", fmt.Errorf("socket directory %s is not a directory (a symlink?); remove it", dir)
	case ok && int(st.Uid) != os.Getuid():
		return "", fmt.Errorf("socket directory %s belongs to uid %d, not to you (uid %d); remove it", dir, st.Uid, os.Getuid())
	case fi.Mode().Perm()&0o077 != 0:
		if err := os.Chmod(dir, 0o700); err != nil {
			return "", fmt.Errorf("socket directory %s is open to others (%v) and cannot be closed: %w", dir, fi.Mode().Perm(), err)
		}
	}
	return dir, nil
}

// Socket is the path of the socket of the host with process id pid.
func Socket(dir string, pid int) string {
	return filepath.Join(dir, fmt.Sprintf("%d.sock", pid))
}

// Host is one host's socket and the process id it is named after (0 for
// a socket not named PID.sock).
type Host struct {
	PID    int
	Socket string
}

// Hosts lists the hosts with a socket in the user's socket directory.
func Hosts() ([]Host, error) {
	dir, err := Dir()
	if err != nil {
		return nil, err
	}
	sockets, err := Sockets(dir)
	if err != nil {
		return nil, err
	}
	out := make([]Host, 0, len(sockets))
	for _, s := range sockets {
		pid, _ := strconv.Atoi(strings.TrimSuffix(filepath.Base(s), ".sock"))
		out = append(out, Host{PID: pid, Socket: s})
	}
	return out, nil
}

// Sockets lists the sockets in dir, oldest host first (by pid).
func Sockets(dir string) ([]string, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, nil
		}
		return nil, err
	}
	var out []string
	for _, e := range entries {
		if strings.HasSuffix(e.Name(), ".sock") && e.Type()&os.ModeSocket != 0 {
			out = append(out, filepath.Join(dir, e.Name()))
		}
	}
	return out, nil
}

// StateDir is agentrun's folder in this machine's Neovim state folder
// ($XDG_STATE_HOME/nvim/agentrun, else ~/.local/state/nvim/agentrun),
// joined with sub: what Lua's stdpath("state") .. "/agentrun" names, for
// a backend that was not told (one on another machine). "" when there is
// no home folder to put it in.
func StateDir(sub ...string) string {
	state := os.Getenv("XDG_STATE_HOME")
	if state == "" {
		home, err := os.UserHomeDir()
		if err != nil {
			return ""
		}
		state = filepath.Join(home, ".local", "state")
	}
	return filepath.Join(append([]string{state, "nvim", "agentrun"}, sub...)...)
}
