package sshlink

import "syscall"

// sshAttr is how ssh is started: batch (it never asks) in a process group
// of its own, so a hangup of the terminal Neovim runs in does not end the
// link under Neovim, which decides what its end means; and always ended
// (SIGTERM) when the agentrun that started it dies, however it dies (a
// SIGKILL included): nothing of ours outlives it.
func sshAttr(batch bool) *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: batch, Pdeathsig: syscall.SIGTERM}
}
