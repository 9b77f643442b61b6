package termhost

import (
	"os"
	"os/signal"
	"sync"
	"syscall"
)

// Every command starts with each signal at its default, whatever this
// process inherited, as Neovim's own :terminal (libuv) does. A signal
// ignored when this process started (Neovim run under nohup, or from a
// script that backgrounds it: SIGHUP, SIGINT, SIGQUIT ignored) stays
// ignored across fork and exec, so a command would ignore <C-c> and a
// hangup. Go resets to the default, in the child, every signal it
// handles itself; so for each signal ignored here, this process handles
// it (Notify) and drops what arrives: it still ignores it, and the
// commands it starts do not. The signal mask needs nothing: Go's child
// restores the mask Go runs with, which blocks nothing the commands get.
// Linux's 32 and 33, which the C library keeps and Go does not handle
// (GNU make ignores them in its recipes), are set to their default here
// (resetLibcSignals): nothing sends them to a Go program.

var signalsAtDefault sync.Once

// resetIgnoredSignals makes the signals this process ignores default in
// the commands it starts (once, at the first Host).
func resetIgnoredSignals() {
	signalsAtDefault.Do(func() {
		resetLibcSignals()
		var ignored []os.Signal
		last := syscall.Signal(31)
		if sigrtmax > 0 {
			last = sigrtmax
		}
		for s := syscall.Signal(1); s <= last; s++ {
			if s == 32 || s == 33 || s == syscall.SIGKILL || s == syscall.SIGSTOP {
				continue
			}
			if signal.Ignored(s) {
				ignored = append(ignored, s)
			}
		}
		if len(ignored) == 0 {
			return
		}
		drop := make(chan os.Signal, 16)
		signal.Notify(drop, ignored...)
		go func() {
			for range drop {
			}
		}()
	})
}
