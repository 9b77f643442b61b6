//go:build !linux

package termhost

// setRlimits is the shell's ulimit where there is no prlimit(1).
var setRlimits rlimiter = ulimitPrefix
