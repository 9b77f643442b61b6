package termhost

import (
	"crypto/rand"
	"encoding/hex"
	"os"
	"strconv"
	"strings"
	"unicode"
)

// MarkerEnv is the environment variable every terminal's command gets,
// with a value unique to the terminal. Process groups and sessions do not
// hold everything a command starts: `setsid sleep 300 &`, daemons and
// double forks leave both. They keep the environment they were started
// with, though, and the process table (Linux: /proc/<pid>/environ;
// macOS: kern.procargs2) shows it even after the process
// changed its variables. So kill, release and Close find, besides the
// terminal's session, every process started since the command that
// carries its marker (internal/procstat.Tree). A process exec'd with a
// clean environment (env -i, a service manager such as systemd-run) is
// still out of reach.
const MarkerEnv = "AGENTRUN_TERMINAL"

// markProcesses returns the environment entry for terminal id:
// "AGENTRUN_TERMINAL=<our pid>-<id>-<random>", unique to this terminal.
func markProcesses(id string) string { return NewMarker(id) }

// NewMarker returns a MarkerEnv entry unique to name (only its letters,
// digits, '.', '_' and '-' are kept), for a process tree started outside
// the Host that is to be found the same way: an agent's.
func NewMarker(name string) string {
	clean := strings.Map(func(r rune) rune {
		if r < 0x80 && (unicode.IsLetter(r) || unicode.IsDigit(r) || r == '.' || r == '_' || r == '-') {
			return r
		}
		return -1
	}, name)
	var nonce [8]byte
	_, _ = rand.Read(nonce[:])
	return MarkerEnv + "=" + strconv.Itoa(os.Getpid()) + "-" + clean + "-" + hex.EncodeToString(nonce[:])
}
