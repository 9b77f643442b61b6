package termhost

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"unsafe"

	"github.com/agentrun/agentrun.nvim/internal/lineshell"
	"github.com/creack/pty"
)

// resolveCommand returns the program to exec and its argv for spec,
// searching pathList (the terminal's own PATH) for a bare name.
func resolveCommand(spec Spec, pathList, dir string) (path string, argv []string, err error) {
	if spec.Shell {
		if strings.TrimSpace(spec.Command) == "" {
			return "", nil, errors.New("empty command line")
		}
		argv := lineshell.Argv(spec.Command)
		return argv[0], argv, nil
	}
	if spec.Command == "" {
		return "", nil, errors.New("empty command")
	}
	path, err = lookPath(spec.Command, pathList, dir)
	if err != nil {
		return "", nil, err
	}
	return path, append([]string{spec.Command}, spec.Args...), nil
}

// checkDir validates a terminal's working directory.
func checkDir(dir string) error {
	if !filepath.IsAbs(dir) {
		return fmt.Errorf("%w: %q is not an absolute path", ErrInvalidDir, dir)
	}
	st, err := os.Stat(dir)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("%w: %q does not exist", ErrInvalidDir, dir)
		}
		return fmt.Errorf("%w: %q: %w", ErrInvalidDir, dir, err)
	}
	if !st.IsDir() {
		return fmt.Errorf("%w: %q is not a directory", ErrInvalidDir, dir)
	}
	return nil
}

// lookPath finds name as exec would: a name with a slash is a path
// (relative to dir), any other is searched on pathList (the terminal's
// own PATH, not ours).
func lookPath(name, pathList, dir string) (string, error) {
	if strings.Contains(name, "/") {
		p := name
		if !filepath.IsAbs(p) {
			p = filepath.Join(dir, p)
		}
		if err := executable(p); err != nil {
			return "", &commandNotFoundError{command: name, detail: err.Error()}
		}
		return p, nil
	}
	for _, d := range filepath.SplitList(pathList) {
		if d == "" {
			d = "."
		}
		if !filepath.IsAbs(d) {
			d = filepath.Join(dir, d)
		}
		p := filepath.Join(d, name)
		if executable(p) == nil {
			return p, nil
		}
	}
	return "", &commandNotFoundError{command: name}
}

func executable(p string) error {
	st, err := os.Stat(p)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return errors.New("no such file")
		}
		return err
	}
	if st.IsDir() {
		return errors.New("is a directory")
	}
	if st.Mode()&0o111 == 0 {
		return errors.New("not executable")
	}
	return nil
}

// envValue returns the last value of key in env.
func envValue(env []string, key string) string {
	for i := len(env) - 1; i >= 0; i-- {
		if k, v, ok := strings.Cut(env[i], "="); ok && k == key {
			return v
		}
	}
	return ""
}

// startPty starts cmd on a new pty as the leader of its own session and
// process group, with the pty as its controlling terminal. The returned
// master is non-blocking and registered with Go's poller, so reads honour
// deadlines and a Close unblocks them.
func startPty(cmd *exec.Cmd, cols, rows uint16) (*os.File, error) {
	master, err := pty.StartWithAttrs(cmd, &pty.Winsize{Cols: cols, Rows: rows},
		&syscall.SysProcAttr{Setsid: true, Setctty: true})
	if err != nil {
		return nil, err
	}
	// creack/pty's ioctls put the master in blocking mode (os.File.Fd),
	// which takes it off the poller. Use a non-blocking duplicate instead.
	r, _, errno := syscall.Syscall(syscall.SYS_FCNTL, master.Fd(), syscall.F_DUPFD_CLOEXEC, 0)
	master.Close()
	fd := int(r)
	err = nil
	if errno != 0 {
		err = errno
	} else {
		err = syscall.SetNonblock(fd, true)
	}
	if err != nil {
		_ = cmd.Process.Kill()
		_, _ = cmd.Process.Wait()
		return nil, fmt.Errorf("set up pty: %w", err)
	}
	return os.NewFile(uintptr(fd), "/dev/ptmx"), nil
}

// setSize sets the pty's window size without leaving the poller (the
// ioctl goes through the file's raw connection, not Fd).
func setSize(f *os.File, cols, rows uint16) error {
	rc, err := f.SyscallConn()
	if err != nil {
		return err
	}
	ws := pty.Winsize{Cols: cols, Rows: rows}
	var errno syscall.Errno
	err = rc.Control(func(fd uintptr) {
		_, _, errno = syscall.Syscall(syscall.SYS_IOCTL, fd, syscall.TIOCSWINSZ, uintptr(unsafe.Pointer(&ws)))
	})
	if err != nil {
		return err
	}
	if errno != 0 {
		return errno
	}
	return nil
}
