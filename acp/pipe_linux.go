package acp

import "syscall"

// setPipeSize asks for a pipe buffer of size bytes (F_SETPIPE_SZ).
func setPipeSize(fd uintptr, size int) {
	_, _, _ = syscall.Syscall(syscall.SYS_FCNTL, fd, syscall.F_SETPIPE_SZ, uintptr(size))
}
