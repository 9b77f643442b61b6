//go:build !linux

package tests

import "syscall"

// dieWithUs: no parent-death signal here; t.Cleanup stops the child.
func dieWithUs() *syscall.SysProcAttr { return &syscall.SysProcAttr{} }
