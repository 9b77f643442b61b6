package editor

import (
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"time"

	"github.com/agentrun/agentrun.nvim/internal/guard"
	"github.com/agentrun/agentrun.nvim/termhost"
)

// guardByeTimeout bounds how long Serve waits for the guard to exit
// after telling it the backend cleaned up.
const guardByeTimeout = 2 * time.Second

// startGuard starts `agentrun guard` (package guard), which kills the
// terminals' sessions if this process dies without cleaning up. Its
// output goes to our log file. Without a guard (it could not start) the
// backend runs on as before: only its own cleanup protects against
// leftovers.
func startGuard(log *slog.Logger) *guard.Client {
	exe, err := os.Executable()
	if err != nil {
		log.Warn("no guard: cannot find our own binary; a SIGKILL of the backend can leave commands that ignore SIGHUP running", "err", err)
		return nil
	}
	cmd := exec.Command(exe, "guard")
	cmd.Dir = "/" // hold no directory of the user's busy
	if path := os.Getenv("AGENTRUN_LOG"); path != "" {
		if f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0); err == nil {
			defer f.Close() // the guard has its own copy once started
			cmd.Stderr = f
		}
	}
	c, err := guard.Start(cmd, func(format string, args ...any) {
		log.Warn(fmt.Sprintf(format, args...))
	})
	if err != nil {
		log.Warn("no guard: a SIGKILL of the backend can leave commands that ignore SIGHUP running", "err", err)
		return nil
	}
	log.Info("guard started", "guard_pid", c.Pid())
	return c
}

// guardHooks points the terminal host's session hooks at the guard; with
// no guard it returns opts as they are.
func guardHooks(opts termhost.Options, g *guard.Client, log *slog.Logger) termhost.Options {
	if g == nil {
		return opts
	}
	opts.SessionStarted = func(pid int, marker string) {
		if err := g.Register(pid, marker); err != nil {
			log.Warn("terminal session not registered with the guard", "pid", pid, "err", err)
		}
	}
	opts.SessionEnded = g.Unregister
	return opts
}

// stopGuard tells the guard that the backend cleaned up (every terminal
// is gone) and waits for it to exit.
func stopGuard(g *guard.Client, log *slog.Logger) {
	if g == nil {
		return
	}
	if err := g.Close(guardByeTimeout); err != nil {
		log.Warn("guard", "err", err)
		return
	}
	log.Info("guard stopped")
}
