package termhost

import (
	"fmt"
	"syscall"
)

// signalNames are the conventional names of the Linux signals.
var signalNames = map[syscall.Signal]string{
	syscall.SIGHUP: "SIGHUP", syscall.SIGINT: "SIGINT", syscall.SIGQUIT: "SIGQUIT",
	syscall.SIGILL: "SIGILL", syscall.SIGTRAP: "SIGTRAP", syscall.SIGABRT: "SIGABRT",
	syscall.SIGBUS: "SIGBUS", syscall.SIGFPE: "SIGFPE", syscall.SIGKILL: "SIGKILL",
	syscall.SIGUSR1: "SIGUSR1", syscall.SIGSEGV: "SIGSEGV", syscall.SIGUSR2: "SIGUSR2",
	syscall.SIGPIPE: "SIGPIPE", syscall.SIGALRM: "SIGALRM", syscall.SIGTERM: "SIGTERM",
	syscall.SIGSTKFLT: "SIGSTKFLT", syscall.SIGCHLD: "SIGCHLD", syscall.SIGCONT: "SIGCONT",
	syscall.SIGSTOP: "SIGSTOP", syscall.SIGTSTP: "SIGTSTP", syscall.SIGTTIN: "SIGTTIN",
	syscall.SIGTTOU: "SIGTTOU", syscall.SIGURG: "SIGURG", syscall.SIGXCPU: "SIGXCPU",
	syscall.SIGXFSZ: "SIGXFSZ", syscall.SIGVTALRM: "SIGVTALRM", syscall.SIGPROF: "SIGPROF",
	syscall.SIGWINCH: "SIGWINCH", syscall.SIGIO: "SIGIO", syscall.SIGPWR: "SIGPWR",
	syscall.SIGSYS: "SIGSYS",
}

// SignalName returns the conventional name of sig ("SIGTERM"); real-time
// signals are "SIGRTMIN+n", unknown ones "SIG<n>".
func SignalName(sig syscall.Signal) string {
	if name, ok := signalNames[sig]; ok {
		return name
	}
	const sigrtmin, sigrtmax = 34, 64
	if sig >= sigrtmin && sig <= sigrtmax {
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

// String renders the status as "exit 0" or "SIGTERM".
func (s ExitStatus) String() string {
	if s.Code != nil {
		return fmt.Sprintf("exit %d", *s.Code)
	}
	if s.Signal != "" {
		return s.Signal
	}
	return "unknown"
}
