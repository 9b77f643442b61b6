package termhost

import (
	"syscall"
	"unsafe"
)

// Linux's real-time signals as the C library numbers them (glibc and
// musl keep 32 and 33 for themselves).
const sigrtmin, sigrtmax = 34, 64

// resetLibcSignals sets signals 32 and 33 to their default when they are
// ignored (sigdefault.go): os/signal cannot handle them, so Go would pass
// an inherited SIG_IGN on to every command. A zeroed kernel sigaction is
// SIG_DFL with no flags, whatever the architecture's field order.
func resetLibcSignals() {
	for _, sig := range []uintptr{32, 33} {
		var old, dfl [4]uint64
		if _, _, e := syscall.RawSyscall6(syscall.SYS_RT_SIGACTION, sig, 0, uintptr(unsafe.Pointer(&old)), 8, 0, 0); e != 0 {
			continue
		}
		if old[0] == 1 { // SIG_IGN
			syscall.RawSyscall6(syscall.SYS_RT_SIGACTION, sig, uintptr(unsafe.Pointer(&dfl)), 0, 8, 0, 0)
		}
	}
}
