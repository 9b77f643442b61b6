// Package sandbox confines a command with bubblewrap (Linux only; on
// other platforms Available says it is not available): the file system
// read-only except the directories a profile makes writable, a private
// /tmp, $HOME read-only or hidden, and no network unless the profile
// allows it. It builds the bwrap argv that goes in front of a command
// and checks, once, that bubblewrap can run here; it never runs a command
// unconfined when it was asked to confine it: every failure is an error.
//
// What it does not do: it is no defence against the kernel, it does not
// hide the process table (pids are shared, so the terminal's process tree
// can still be killed from outside), and files readable by the user stay
// readable (only writes and the network are cut off).
package sandbox
