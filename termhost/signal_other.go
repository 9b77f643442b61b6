//go:build !linux

package termhost

// No real-time signal numbers outside Linux (macOS has none).
const sigrtmin, sigrtmax = 0, 0

// resetLibcSignals has nothing to do outside Linux.
func resetLibcSignals() {}
