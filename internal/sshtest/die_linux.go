package sshtest

import "syscall"

// dieWithUs makes a child killed when the process that started it dies.
func dieWithUs() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}
