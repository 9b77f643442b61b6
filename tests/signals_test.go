package tests

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestScreenCommandsGetSignalsWhateverNeovimInherited: Neovim started
// with SIGINT and SIGHUP ignored (under nohup, or from a script that runs
// it in the background): <C-c> in a command's split still interrupts it,
// and a command's kill -HUP of itself still ends it — every command
// starts with each signal at its default (termhost's own test,
// TestSignalsAtDefaultWhateverWeInherited, fails without that reset).
func TestScreenCommandsGetSignalsWhateverNeovimInherited(t *testing.T) {
	s := startScreenIgnoring(t, 100, 30, "", "INT HUP")
	s.keys(":AgentRun", "Enter")
	s.waitShows(10*time.Second, "agentrun · demo · ready")
	s.prompt("grep -E '^SigIgn' /proc/self/status; sleep 60")
	if sc := s.waitShows(10*time.Second, "[execute] · in progress", "SigIgn:"); !strings.Contains(sc, "SigIgn: 0000000000000000") {
		t.Errorf("the command ignores some signals (want SigIgn all zero):\n%s", sc)
	}
	s.keys("C-c")
	s.waitShows(10*time.Second, interruptedMarker, "was killed by SIGINT.")
	s.prompt("kill -HUP $$")
	s.waitShows(10*time.Second, signalMarker("SIGHUP"), "kill -HUP $$ was killed by SIGHUP.")
}

// TestAgentShellTypedWhileRcLoads: :AgentShell in a home whose ~/.bashrc
// is slow to load (pyenv's init waiting on its rehash lock) and installs
// a DEBUG trap and prompt hook of its own (starship's): the lines the user
// types while it loads are reported as commands with their exit codes,
// and the cwd follows, as for lines typed later.
func TestAgentShellTypedWhileRcLoads(t *testing.T) {
	e := startEditor(t, "")
	rc := `sleep 2
starship_preexec() { local ret=$?; STARSHIP_START_TIME=1; return $ret; }
starship_precmd() { STARSHIP_CMD_STATUS=$?; PS1='starship> '; }
trap 'starship_preexec "$_"' DEBUG
PROMPT_COMMAND="starship_precmd;${PROMPT_COMMAND-}"
unset HISTFILE # (a history written as the shell hangs up would race the test's folder's removal)
`
	if err := os.WriteFile(filepath.Join(e.dir, ".bashrc"), []byte(rc), 0o600); err != nil {
		t.Fatal(err)
	}
	id := e.agentShell()
	// typed at once, while the rc sleeps
	if _, err := e.v.Input("echo early<CR>false<CR>cd /tmp<CR>"); err != nil {
		t.Fatal(err)
	}
	sh := e.waitAHP(id, "the lines typed while the rc loaded to be reported", func(x ahpTerm) bool {
		return len(x.Commands) == 3 && x.Commands[2].IsComplete && x.Cwd == "/tmp"
	})
	var got []string
	for _, c := range sh.Commands {
		code := "none"
		if c.ExitCode != nil {
			code = strconv.Itoa(*c.ExitCode)
		}
		got = append(got, c.CommandLine+" -> "+code)
	}
	if want := "echo early -> 0|false -> 1|cd /tmp -> 0"; strings.Join(got, "|") != want {
		t.Errorf("commands %q, want %q", strings.Join(got, "|"), want)
	}
}
