// Package procstat reads the few facts of the process table that termhost
// (which process groups a terminal's session still has, the tree's memory
// and process count) and the guard (which processes to kill after the
// backend died) need: on Linux from /proc, on macOS from sysctl kern.proc.
package procstat
