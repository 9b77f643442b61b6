//go:build !linux

package sandbox

import (
	"fmt"
	"runtime"
)

// check refuses: the sandbox is bubblewrap, which needs Linux's
// namespaces. A session asked to sandbox its commands does not start
// (nothing runs unconfined in its place).
func check() (string, error) {
	return "", fmt.Errorf("the sandbox (terminal.sandbox) is not available on %s: agentrun confines commands with bubblewrap, which runs only on Linux; set terminal.sandbox = false to run the agent's commands unconfined", osName())
}

// osName is the platform as people call it.
func osName() string {
	switch runtime.GOOS {
	case "darwin":
		return "macOS"
	case "freebsd":
		return "FreeBSD"
	}
	return runtime.GOOS
}
