// Package lineshell names the shell that runs the command lines of
// agentrun's terminals, so that the line is judged (internal/cmdrule) in
// the dialect of the shell that really runs it: bash started with
// --noprofile --norc (no startup file adds aliases or functions), or,
// on a machine without bash, /bin/sh read as a POSIX shell.
package lineshell

import (
	"os/exec"
	"sync"
)

// The dialects a line is parsed in.
const (
	// Bash is GNU bash's syntax.
	Bash = "bash"
	// POSIX is the POSIX shell's syntax (dash, busybox sh).
	POSIX = "posix"
)

var (
	once sync.Once
	bash string
)

// find looks for bash where it is installed, then on PATH.
func find() {
	for _, p := range []string{"/bin/bash", "/usr/bin/bash", "/usr/local/bin/bash"} {
		if _, err := exec.LookPath(p); err == nil {
			bash = p
			return
		}
	}
	if p, err := exec.LookPath("bash"); err == nil {
		bash = p
	}
}

// Path is the shell that runs lines: bash's path, else /bin/sh.
func Path() string {
	once.Do(find)
	if bash == "" {
		return "/bin/sh"
	}
	return bash
}

// Dialect is the syntax of Path's shell: Bash or POSIX.
func Dialect() string {
	once.Do(find)
	if bash == "" {
		return POSIX
	}
	return Bash
}

// Argv is exactly what runs line: [bash --noprofile --norc -c line], or
// [/bin/sh -c line] without bash.
func Argv(line string) []string {
	if Dialect() == Bash {
		return []string{Path(), "--noprofile", "--norc", "-c", line}
	}
	return []string{"/bin/sh", "-c", line}
}
