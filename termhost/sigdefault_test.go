package termhost

import (
	"os"
	"os/exec"
	"strings"
	"testing"
)

// TestSignalsAtDefaultWhateverWeInherited: started with SIGHUP, SIGINT,
// SIGQUIT and SIGPIPE ignored (as under nohup, or from a script that runs
// Neovim in the background), the host's commands still start with every
// signal at its default and none blocked: kill -HUP and kill -INT end
// them, as <C-c> in a split must. The test runs itself again in a child
// that ignores those signals (sh's trap ” survives exec); without the
// reset the commands ignore them and exit 0.
func TestSignalsAtDefaultWhateverWeInherited(t *testing.T) {
	if os.Getenv("AGENTRUN_SIGNALS_IGNORED") == "" {
		cmd := exec.Command("sh", "-c", `trap '' HUP INT QUIT PIPE; exec "$0" -test.run='^TestSignalsAtDefaultWhateverWeInherited$' -test.count=1 -test.v`, os.Args[0])
		cmd.Env = append(os.Environ(), "AGENTRUN_SIGNALS_IGNORED=1")
		out, err := cmd.CombinedOutput()
		if err != nil || !strings.Contains(string(out), "--- PASS: TestSignalsAtDefaultWhateverWeInherited") {
			t.Fatalf("in a process that ignores SIGHUP, SIGINT, SIGQUIT and SIGPIPE: %v\n%s", err, out)
		}
		return
	}
	h := testHost(t, Options{})
	for _, tc := range []struct{ line, want string }{
		// the command the line runs (bash itself keeps SIGQUIT away even
		// when not interactive)
		{"exec sh -c 'kill -HUP $$'", "signal SIGHUP"},
		{"exec sh -c 'kill -INT $$'", "signal SIGINT"},
		{"exec sh -c 'kill -QUIT $$'", "signal SIGQUIT"},
		{"exec sh -c 'kill -PIPE $$'", "signal SIGPIPE"},
		// Linux says which signals a process ignores and blocks
		{"grep -q '^SigIgn:[[:space:]]*0*$' /proc/self/status || [ ! -e /proc/self/status ]", exitCode(0)},
		{"grep -q '^SigBlk:[[:space:]]*0*$' /proc/self/status || [ ! -e /proc/self/status ]", exitCode(0)},
	} {
		if st, out := run(t, h, tc.line); st.String() != tc.want {
			t.Errorf("%s: %v, want %s\n%s", tc.line, st, tc.want, out.Text)
		}
	}
}
