//go:build !linux

package sshtest

import "syscall"

// dieWithUs: no parent-death signal here; the Cleanup stops the child.
func dieWithUs() *syscall.SysProcAttr { return &syscall.SysProcAttr{} }
