package termhost

import (
	"crypto/rand"
	"encoding/hex"
	"os"
	"strconv"
)

// MarkerEnv is the environment variable every terminal's command gets,
// with a value unique to the terminal. Process groups and sessions do not
// hold everything a command starts: `setsid sleep 300 &`, daemons and
// double forks leave both. They keep the environment they were started
// with, though, and /proc/<pid>/environ shows it even after the process
// changed its variables. So kill, release and Close find, besides the
// terminal's session, every process started since the command that
// carries its marker (internal/procstat.Tree). A process exec'd with a
// clean environment (env -i, a service manager such as systemd-run) is
// still out of reach.
const MarkerEnv = "AGENTRUN_TERMINAL"

// markProcesses returns the environment entry for terminal id:
// "AGENTRUN_TERMINAL=<our pid>-<id>-<random>", unique to this terminal.
func markProcesses(id string) string {
	var nonce [8]byte
	_, _ = rand.Read(nonce[:])
	return MarkerEnv + "=" + strconv.Itoa(os.Getpid()) + "-" + id + "-" + hex.EncodeToString(nonce[:])
}
