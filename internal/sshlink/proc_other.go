//go:build !linux

package sshlink

import "syscall"

// sshAttr is how ssh is started: batch (it never asks) in a process group
// of its own, so a hangup of the terminal Neovim runs in does not end the
// link under Neovim, which decides what its end means. (Without Linux's
// parent-death signal, the agentrun that started it ends it on its way
// out, but for a SIGKILL.)
func sshAttr(batch bool) *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: batch}
}
