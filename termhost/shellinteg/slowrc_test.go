package shellinteg_test

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/agentrun/agentrun.nvim/ahp"
	"github.com/agentrun/agentrun.nvim/internal/testdeps"
	"github.com/agentrun/agentrun.nvim/termhost/shellinteg"
)

// bashPreexecStyle is a stand-in for bash-preexec (rcaloha/bash-preexec),
// as far as shell integration sees it: it owns the DEBUG trap and
// PROMPT_COMMAND and calls preexec_functions and precmd_functions.
const bashPreexecStyle = `
bash_preexec_imported=defined
preexec_functions=() precmd_functions=()
__bp_preexec_interactive_mode=
__bp_precmd_invoke_cmd() { local s=$? f; for f in "${precmd_functions[@]}"; do (exit $s); "$f"; done; __bp_preexec_interactive_mode=on; }
__bp_preexec_invoke_exec() {
	[[ -n $__bp_preexec_interactive_mode ]] || return
	[[ $BASH_COMMAND == __bp_* ]] && return
	__bp_preexec_interactive_mode=
	local line f; line=$(HISTTIMEFORMAT= builtin history 1); line=${line#*[0-9]  }
	for f in "${preexec_functions[@]}"; do "$f" "$line"; done
}
trap '__bp_preexec_invoke_exec "$_"' DEBUG
PROMPT_COMMAND=__bp_precmd_invoke_cmd
`

// TestShellTypedWhileRcLoads: lines typed while a slow ~/.bashrc (or
// .zshrc) still loads — pyenv's init waiting on its rehash, a prompt
// framework starting — are command lines like any other: each is
// reported with its exit status, and the cwd is known, whatever the rc
// installs (pyenv's PROMPT_COMMAND hook, starship's DEBUG trap and
// precmd, bash-preexec).
func TestShellTypedWhileRcLoads(t *testing.T) {
	for _, c := range []struct{ name, shell, rcName, rc string }{
		{"bash, a slow rc", "bash", ".bashrc", "sleep 1.5\nPS1='slow$ '\n"},
		{"bash, pyenv's init", "bash", ".bashrc", `sleep 1.5
export PYENV_SHELL=bash
pyenv() { :; }
_pyenv_virtualenv_hook() { local ret=$?; return $ret; }
if ! [[ "${PROMPT_COMMAND-}" =~ _pyenv_virtualenv_hook ]]; then
  PROMPT_COMMAND="_pyenv_virtualenv_hook;${PROMPT_COMMAND-}"
fi
`},
		{"bash, starship", "bash", ".bashrc", `sleep 1.5
starship_preexec() { local ret=$?; if [[ -n $STARSHIP_PREEXEC_READY ]]; then STARSHIP_PREEXEC_READY=; STARSHIP_START_TIME=1; fi; return $ret; }
starship_precmd() { STARSHIP_CMD_STATUS=$?; PS1='starship> '; STARSHIP_PREEXEC_READY=true; }
trap 'starship_preexec "$_"' DEBUG
PROMPT_COMMAND="starship_precmd;${PROMPT_COMMAND-}"
`},
		{"bash, bash-preexec", "bash", ".bashrc", "sleep 1.5\n" + bashPreexecStyle},
		{"zsh, a slow rc", "zsh", ".zshrc", "sleep 1.5\nPS1='slow%# '\n"},
	} {
		t.Run(c.name, func(t *testing.T) {
			shell := testdeps.Program(t, c.shell, "apt-get install "+c.shell)
			home := t.TempDir()
			if err := os.WriteFile(filepath.Join(home, c.rcName), []byte(c.rc), 0o600); err != nil {
				t.Fatal(err)
			}
			nonce, err := shellinteg.NewNonce()
			if err != nil {
				t.Fatal(err)
			}
			env := []string{"HOME=" + home, "PATH=" + os.Getenv("PATH"), "TERM=xterm-256color", "LANG=C.UTF-8"}
			l, err := shellinteg.Prepare(shell, env, nonce, t.TempDir())
			if err != nil {
				t.Fatal(err)
			}
			s := startSession(t, l, home, nonce)
			// typed at once, while the rc sleeps
			s.typeLine("echo early")
			s.typeLine("false")
			s.waitFor("the lines typed early to be reported", completed(2))
			for i, want := range []struct {
				line string
				exit int
			}{{"echo early", 0}, {"false", 1}} {
				got := commands(s.state)[i]
				if got.CommandLine != want.line || got.ExitCode == nil || *got.ExitCode != want.exit {
					t.Errorf("command %d: line %q exit %v, want %q exit %d", i+1, got.CommandLine, deref(got.ExitCode), want.line, want.exit)
				}
			}
			s.waitFor("the cwd", func(st ahp.TerminalState) bool { return st.Cwd == ahp.FileURI(home) })
			s.typeLine("echo later; cd /")
			s.waitFor("a line typed after the rc", completed(3))
			if got := commands(s.state)[2]; got.CommandLine != "echo later; cd /" {
				t.Errorf("command 3: line %q", got.CommandLine)
			}
			s.waitFor("cwd /", func(st ahp.TerminalState) bool { return st.Cwd == ahp.FileURI("/") })
			fmt.Fprint(s.pty, "exit\r")
		})
	}
}
