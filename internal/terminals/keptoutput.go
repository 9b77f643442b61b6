package terminals

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"syscall"

	"github.com/agentrun/agentrun.nvim/internal/rawlog"
	"github.com/agentrun/agentrun.nvim/internal/rundir"
	"github.com/agentrun/agentrun.nvim/termhost"
)

// DefaultKeptBytes is terminal.kept_bytes unset: the raw output of
// ended (released) terminals that were shown, kept in memory so that a
// split Lua wiped out of sight (ui/termend.lua) is made again at once;
// beyond it, the oldest go to files under the state folder.
const DefaultKeptBytes = 64 << 20

// keptOutput is what a released terminal that was shown keeps once its
// termhost terminal (its rendered text, its AHP state) is let go: its
// display's raw bytes and how it ended, enough for a pump to show it
// again from its start. In memory (log) while within the budget, else in
// a file (file, start); both nil/empty once it could not be kept.
type keptOutput struct {
	id   string
	exit termhost.ExitStatus
	done chan struct{} // closed: nothing more comes

	mu    sync.Mutex
	log   *rawlog.Log
	file  string
	start int64 // the offset of the file's first byte in the log it came from
	size  int   // bytes kept (in memory or in the file)
	lost  int64 // bytes ever printed, when none are kept any more
}

func newKeptOutput(t *termhost.Terminal, st termhost.ExitStatus) *keptOutput {
	log := t.Display()
	start, data := log.Kept()
	done := make(chan struct{})
	close(done)
	return &keptOutput{id: t.ID(), exit: st, done: done, log: rawlog.Restore(start, data), size: len(data)}
}

// ID, Display, Done and Exited make a keptOutput a pump's displaySource.
func (k *keptOutput) ID() string { return k.id }

func (k *keptOutput) Done() <-chan struct{} { return k.done }

func (k *keptOutput) Exited() (termhost.ExitStatus, bool) { return k.exit, true }

// Display returns the kept bytes as a closed log: the one in memory, or
// one read back from its file (an empty one, with what went wrong, when
// that fails).
func (k *keptOutput) Display() *rawlog.Log {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.log != nil {
		return k.log
	}
	if k.file == "" {
		msg := fmt.Sprintf("[agentrun: its output is no longer kept (%d bytes): terminal.kept_bytes was full and the state folder could not take it]\r\n", k.lost)
		return rawlog.Restore(0, []byte(msg))
	}
	data, err := os.ReadFile(k.file)
	if err != nil {
		msg := fmt.Sprintf("[agentrun: its output could not be read back from %s: %v]\r\n", k.file, err)
		return rawlog.Restore(0, []byte(msg))
	}
	return rawlog.Restore(k.start, data)
}

// inMemory is how many bytes it holds in memory.
func (k *keptOutput) inMemory() int {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.log == nil {
		return 0
	}
	return k.size
}

// spill moves the kept bytes to a file in dir; without dir, or when
// writing fails, they are let go (Display says so, with how many).
func (k *keptOutput) spill(dir string) error {
	k.mu.Lock()
	log := k.log
	k.mu.Unlock()
	if log == nil {
		return nil
	}
	start, data := log.Kept()
	var err error
	file := ""
	if dir == "" {
		err = fmt.Errorf("no folder for kept output")
	} else if err = os.MkdirAll(dir, 0o700); err == nil {
		file = filepath.Join(dir, k.id+".raw")
		if err = os.WriteFile(file, data, 0o600); err != nil {
			file = ""
		}
	}
	k.mu.Lock()
	k.log, k.file, k.start = nil, file, start
	if file == "" {
		k.lost = start + int64(len(data))
	}
	k.mu.Unlock()
	if err != nil {
		return fmt.Errorf("keep %s's output in %q: %w", k.id, dir, err)
	}
	return nil
}

// KeptDir is where this backend's kept output goes beyond the budget:
// base/<pid>. base "" (Lua sent none: a backend on another machine) is
// $XDG_STATE_HOME/nvim/agentrun/output there, as Lua's state folder.
func KeptDir(base string) string {
	if base == "" {
		if base = rundir.StateDir("output"); base == "" {
			return ""
		}
	}
	return filepath.Join(base, strconv.Itoa(os.Getpid()))
}

// removeStaleKept removes the folders under base's parent of backends
// no longer running (one killed left its folder), not dir itself.
func removeStaleKept(dir string) {
	if dir == "" {
		return
	}
	entries, err := os.ReadDir(filepath.Dir(dir))
	if err != nil {
		return
	}
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid <= 0 || !e.IsDir() || pid == os.Getpid() {
			continue
		}
		if syscall.Kill(pid, 0) == syscall.ESRCH {
			_ = os.RemoveAll(filepath.Join(filepath.Dir(dir), e.Name()))
		}
	}
}
