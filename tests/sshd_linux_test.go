package tests

import "syscall"

// dieWithUs makes a child killed when the test process dies.
func dieWithUs() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}
