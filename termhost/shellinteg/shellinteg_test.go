package shellinteg_test

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/agentrun/agentrun.nvim/ahp"
	"github.com/agentrun/agentrun.nvim/internal/testdeps"
	"github.com/agentrun/agentrun.nvim/termhost/shellinteg"
	"github.com/creack/pty"
)

// session drives a real shell in a real pty and keeps the AHP state its
// output produces, through the same Filter and Parser a
// terminal uses.
type session struct {
	t      *testing.T
	pty    *os.File
	chunks chan []byte
	exited chan struct{} // closed when the shell has exited
	stop   chan struct{} // closed at cleanup: the reader gives up
	filter shellinteg.Filter
	si     *shellinteg.Parser
	state  ahp.TerminalState
	raw    strings.Builder
}

func startSession(t *testing.T, l shellinteg.Launch, dir, nonce string) *session {
	t.Helper()
	cmd := exec.Command(l.Argv[0], l.Argv[1:]...)
	cmd.Env, cmd.Dir = l.Env, dir
	f, err := pty.StartWithSize(cmd, &pty.Winsize{Cols: 120, Rows: 30})
	if err != nil {
		t.Fatalf("start %v in a pty: %v", l.Argv, err)
	}
	s := &session{
		t: t, pty: f, chunks: make(chan []byte, 64), exited: make(chan struct{}), stop: make(chan struct{}),
		si: shellinteg.NewParser("agenthost:/terminal/test", nonce),
	}
	go func() {
		defer close(s.chunks)
		buf := make([]byte, 4096)
		for {
			n, err := f.Read(buf)
			if n > 0 {
				select {
				case s.chunks <- append([]byte(nil), buf[:n]...):
				case <-s.stop:
					return
				}
			}
			if err != nil {
				return
			}
		}
	}()
	go func() { _ = cmd.Wait(); close(s.exited) }()
	t.Cleanup(func() {
		close(s.stop)
		_ = cmd.Process.Kill()
		select {
		case <-s.exited:
		case <-time.After(5 * time.Second):
			t.Errorf("shell %d did not go away after SIGKILL", cmd.Process.Pid)
		}
		f.Close()
	})
	return s
}

func (s *session) feed(chunk []byte) {
	s.raw.Write(chunk)
	s.filter.Feed(chunk,
		func(d []byte) { s.state.Apply(ahp.DataAction{Data: string(d)}) },
		func(p []byte) {
			for _, a := range s.si.HandleOSC(p, time.Now()) {
				s.state.Apply(a)
			}
		})
}

// waitFor reads the shell's output until cond holds, for at most 10s.
func (s *session) waitFor(what string, cond func(ahp.TerminalState) bool) {
	s.t.Helper()
	deadline := time.After(10 * time.Second)
	for !cond(s.state) {
		select {
		case c, ok := <-s.chunks:
			if !ok {
				s.t.Fatalf("pty closed while waiting for %s; output so far:\n%q", what, s.raw.String())
			}
			s.feed(c)
		case <-deadline:
			s.t.Fatalf("timed out waiting for %s; output so far:\n%q", what, s.raw.String())
		}
	}
}

func (s *session) typeLine(line string) {
	s.t.Helper()
	if _, err := s.pty.Write([]byte(line + "\r")); err != nil {
		s.t.Fatalf("type %q: %v", line, err)
	}
}

func commands(st ahp.TerminalState) []ahp.ContentPart {
	var cmds []ahp.ContentPart
	for _, p := range st.Content {
		if p.Type == ahp.PartCommand {
			cmds = append(cmds, p)
		}
	}
	return cmds
}

func completed(n int) func(ahp.TerminalState) bool {
	return func(st ahp.TerminalState) bool {
		c := commands(st)
		return len(c) >= n && c[n-1].IsComplete
	}
}

// step is one line typed at the prompt and the command part it must give.
type step struct {
	input, commandLine, output string
	exit                       int
	cwd                        string // the cwd afterwards, when set
}

func TestShellSession(t *testing.T) {
	for _, c := range []struct {
		name, shell string
		files       map[string]string // in $HOME
		steps       []step
	}{
		{"bash", "bash", map[string]string{".bashrc": "export FROM_RC=yes\nPS1='test$ '\n"}, []step{
			{input: "echo one", commandLine: "echo one", output: "one\r\n", exit: 0},
			{input: "false", commandLine: "false", exit: 1},
			{input: "cd /tmp", commandLine: "cd /tmp", exit: 0, cwd: "/tmp"},
			{input: `echo "rc=$FROM_RC nonce=${AGENTRUN_NONCE:-gone}"`, commandLine: `echo "rc=$FROM_RC nonce=${AGENTRUN_NONCE:-gone}"`,
				output: "rc=yes nonce=gone\r\n"},
			{input: "printf 'a;b\\n' | cat; (exit 3)", commandLine: "printf 'a;b\\n' | cat; (exit 3)", output: "a;b\r\n", exit: 3},
		}},
		{"bash with its own PROMPT_COMMAND and HISTCONTROL", "bash", map[string]string{
			".bashrc": "HISTCONTROL=ignoreboth\nPROMPT_COMMAND='PS1=\"[\\w]\\$ \"'\n"}, []step{
			{input: "echo one", commandLine: "echo one", output: "one\r\n"},
			{input: " echo hidden", commandLine: "echo hidden", output: "hidden\r\n"}, // not in history
			{input: "echo one", commandLine: "echo one", output: "one\r\n"},           // a duplicate, not in history
			{input: "cd /", commandLine: "cd /", cwd: "/"},
		}},
		{"zsh", "zsh", map[string]string{".zshrc": "export FROM_RC=yes\nPS1='test%# '\n"}, []step{
			{input: "echo one", commandLine: "echo one", output: "one\r\n", exit: 0},
			{input: "false", commandLine: "false", exit: 1},
			{input: "cd /tmp", commandLine: "cd /tmp", exit: 0, cwd: "/tmp"},
			{input: `echo "rc=$FROM_RC nonce=${AGENTRUN_NONCE:-gone}"`, commandLine: `echo "rc=$FROM_RC nonce=${AGENTRUN_NONCE:-gone}"`,
				output: "rc=yes nonce=gone\r\n"},
			{input: `echo "zdotdir=${ZDOTDIR-unset}"`, commandLine: `echo "zdotdir=${ZDOTDIR-unset}"`, output: "zdotdir=unset\r\n"},
		}},
		{"zsh with the user's own ZDOTDIR and a precmd that rebuilds PS1", "zsh", map[string]string{
			".zshenv":            "export ZDOTDIR=$HOME/.config/zsh\n",
			".config/zsh/.zshrc": "export FROM_RC=dotdir\nprecmd() { PS1=\"[%~]%# \" }\n",
		}, []step{
			{input: `echo "rc=$FROM_RC zdotdir=$ZDOTDIR"`, commandLine: `echo "rc=$FROM_RC zdotdir=$ZDOTDIR"`, output: "rc=dotdir zdotdir={home}/.config/zsh\r\n"},
			{input: "cd /tmp && false", commandLine: "cd /tmp && false", exit: 1, cwd: "/tmp"},
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			shell, err := exec.LookPath(c.shell)
			if err != nil {
				if c.shell == "bash" {
					t.Fatalf("bash is needed for this test: %v", err)
				}
				testdeps.Need(t, false, c.shell, "apt-get install "+c.shell)
			}
			home := t.TempDir()
			for name, body := range c.files {
				path := filepath.Join(home, name)
				if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(path, []byte(body), 0o600); err != nil {
					t.Fatal(err)
				}
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
			s.waitFor("the first prompt with the cwd", func(st ahp.TerminalState) bool {
				return st.SupportsCommandDetection && st.Cwd == ahp.FileURI(home)
			})
			for i, st := range c.steps {
				s.typeLine(st.input)
				s.waitFor(fmt.Sprintf("command %d (%q) to finish", i+1, st.input), completed(i+1))
				got := commands(s.state)[i]
				output := got.Output
				if c.shell == "zsh" {
					// zsh prints its PROMPT_SP partial-line marker after the
					// command and before precmd can report the end: it is
					// part of the command's output.
					output, _, _ = strings.Cut(output, "\x1b[1m\x1b[7m")
				}
				st.output = strings.ReplaceAll(st.output, "{home}", home)
				if got.CommandLine != st.commandLine || got.ExitCode == nil || *got.ExitCode != st.exit ||
					(st.output != "" && output != st.output) || got.DurationMs == nil {
					t.Errorf("command %d: line %q exit %v output %q duration %v\nwant line %q exit %d output %q",
						i+1, got.CommandLine, deref(got.ExitCode), got.Output, deref64(got.DurationMs), st.commandLine, st.exit, st.output)
				}
				if st.cwd != "" {
					s.waitFor("cwd "+st.cwd, func(ts ahp.TerminalState) bool { return ts.Cwd == ahp.FileURI(st.cwd) })
				}
			}
			for _, p := range s.state.Content {
				if strings.Contains(p.Text(), "\x1b]633") {
					t.Errorf("a shell integration sequence reached the content: %q", p.Text())
				}
			}
			s.typeLine("exit")
			select {
			case <-s.exited:
			case <-time.After(10 * time.Second):
				t.Errorf("the shell did not exit after \"exit\"")
			}
		})
	}
}

func deref(p *int) any {
	if p == nil {
		return nil
	}
	return *p
}

func deref64(p *int64) any {
	if p == nil {
		return nil
	}
	return *p
}

func TestPrepare(t *testing.T) {
	dir := t.TempDir()
	env := []string{"HOME=/home/u", "AGENTRUN_NONCE=stale", "ZDOTDIR=/home/u/.config/zsh", "PATH=/bin"}

	l, err := shellinteg.Prepare("/bin/bash", env, "n1", dir)
	if err != nil {
		t.Fatal(err)
	}
	rc := filepath.Join(dir, "agentrun.bash")
	if want := []string{"/bin/bash", "--init-file", rc, "-i"}; !slices.Equal(l.Argv, want) {
		t.Errorf("bash argv = %q, want %q", l.Argv, want)
	}
	if want := []string{"HOME=/home/u", "ZDOTDIR=/home/u/.config/zsh", "PATH=/bin", "AGENTRUN_NONCE=n1"}; !slices.Equal(l.Env, want) {
		t.Errorf("bash env = %q, want %q", l.Env, want)
	}
	if body, err := os.ReadFile(rc); err != nil || !strings.Contains(string(body), "633;E") {
		t.Errorf("bash script not written to %s: %v", rc, err)
	}

	l, err = shellinteg.Prepare("zsh", env, "n2", dir)
	if err != nil {
		t.Fatal(err)
	}
	zdir := filepath.Join(dir, "zsh")
	if want := []string{"zsh", "-i"}; !slices.Equal(l.Argv, want) {
		t.Errorf("zsh argv = %q, want %q", l.Argv, want)
	}
	if want := []string{"HOME=/home/u", "PATH=/bin", "AGENTRUN_NONCE=n2", "AGENTRUN_USER_ZDOTDIR=/home/u/.config/zsh", "ZDOTDIR=" + zdir}; !slices.Equal(l.Env, want) {
		t.Errorf("zsh env = %q, want %q", l.Env, want)
	}
	for _, name := range []string{".zshenv", ".zprofile", ".zshrc"} {
		if _, err := os.Stat(filepath.Join(zdir, name)); err != nil {
			t.Errorf("zsh %s not written: %v", name, err)
		}
	}

	for _, c := range []struct {
		shell, nonce, dir, wantErr string
	}{
		{"fish", "n", dir, `shell "fish"`},
		{"bash", "", dir, "nonce"},
		{"bash", "a;b", dir, "nonce"},
		{"bash", "n", "relative", `dir "relative" is not absolute`},
	} {
		_, err := shellinteg.Prepare(c.shell, env, c.nonce, c.dir)
		if err == nil || !strings.Contains(err.Error(), c.wantErr) {
			t.Errorf("Prepare(%q, nonce %q, dir %q) error = %v, want one containing %q", c.shell, c.nonce, c.dir, err, c.wantErr)
		}
	}
	if _, err := shellinteg.Prepare("fish", env, "n", dir); !errors.Is(err, shellinteg.ErrUnsupportedShell) {
		t.Errorf("Prepare(fish) = %v, want ErrUnsupportedShell", err)
	}
}

func TestNewNonceIsFreshAndUsable(t *testing.T) {
	a, err1 := shellinteg.NewNonce()
	b, err2 := shellinteg.NewNonce()
	if err1 != nil || err2 != nil || a == b || len(a) != 32 {
		t.Errorf("NewNonce gave %q, %q (%v, %v): want two different 32-hex-digit nonces", a, b, err1, err2)
	}
}
