//go:build !linux

package sandbox

import "runtime"

// check refuses: the sandbox is bubblewrap, which needs Linux's
// namespaces.
func check() (string, error) { return "", unavailable(runtime.GOOS) }
