package termhost

import (
	"fmt"
	"syscall"

	"golang.org/x/sys/unix"
)

// SignalName returns the conventional name of sig on this platform
// ("SIGTERM", from golang.org/x/sys/unix's table); Linux's real-time
// signals are "SIGRTMIN+n", unknown ones "SIG<n>".
func SignalName(sig syscall.Signal) string {
	if name := unix.SignalName(sig); name != "" {
		return name
	}
	if sigrtmin > 0 && sig >= sigrtmin && sig <= sigrtmax {
		return fmt.Sprintf("SIGRTMIN+%d", int(sig)-sigrtmin)
	}
	return fmt.Sprintf("SIG%d", int(sig))
}

// exitStatusOf converts a wait status to an ExitStatus.
func exitStatusOf(ws syscall.WaitStatus) ExitStatus {
	if ws.Signaled() {
		return ExitStatus{Signal: SignalName(ws.Signal())}
	}
	code := ws.ExitStatus()
	return ExitStatus{Code: &code}
}

// String renders the status as the splits, the list and the messages
// say it: "exit 0", "signal SIGTERM" ("signal unknown" when the reason
// was lost).
func (s ExitStatus) String() string {
	if s.Code != nil {
		return fmt.Sprintf("exit %d", *s.Code)
	}
	if s.Signal != "" {
		return "signal " + s.Signal
	}
	return "signal unknown"
}
