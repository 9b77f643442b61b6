package cmdrule

import (
	"strings"
	"testing"

	"github.com/agentrun/agentrun.nvim/internal/lineshell"
)

// attackRules allow what the attacks hide behind and deny rm.
var attackRules = Rules{Allow: []string{"ls *", "echo *", "git status*", ": *"}, Deny: []string{"rm *"}, Otherwise: Ask}

// TestFailClosed: issue 47's lines built for the analyzer's blind spots
// are asked (never run unasked, never allowed by a rule), with the rule
// set that would have allowed them, under ask and under run.
func TestFailClosed(t *testing.T) {
	runAll := attackRules
	runAll.Otherwise = Run
	for _, line := range []string{
		"[[ a || rm == ~/.bashrc ]]",
		"[[ a > f ]]",
		"[[ $(touch P) ]] && ls",
		"[[ -v b[x] ]] && ls",
		"x='a[$(touch P)]'; b[x]=1; ls",
		"b[x]+=1; ls",
		"b=(1 2); ls",
		"for ((i=x;0;)); do ls; done",
		"(( x )) && ls",
		"echo $((x+1))",
		"echo ${a[x]}",
		"echo ${x:i}",
		": ${x@P}",
		"echo ${x@P}",
		"echo ${!x}",
		"echo ${!pre*}",
		"declare -n r=x; ls",
		"typeset -n r=x; ls",
		"local -n r=x; ls",
		"declare -i x; ls",
		"builtin declare -n x=y; ls",
		"command typeset -n x=y; ls",
		"declare \"$v\"; ls",
		"unset 'a[$(touch P)]'; ls",
		"read 'a[$(touch P)]' </dev/null; ls",
		"printf -v 'a[$(touch P)]' x; ls",
		"test -v 'a[$(touch P)]'; ls",
		"mapfile -C f x; ls",
		"shopt -s extdebug; ls",
		"set -x; ls",
		"fc -s; ls",
		"coproc ls",
		"x=1",
		"HOME=.; git status",
		"HOME=. git status",
		"export HOME=.; git status",
		"declare -x GIT_DIR=/tmp; git status",
		"XDG_CONFIG_HOME=. git status",
		"PATH=.:$PATH ls",
		"LD_PRELOAD=./x.so ls",
		"BASH_ENV=./x bash -c ls",
		"ENV=./x sh -c ls",
		"IFS=/ ls",
		"PROMPT_COMMAND=x ls",
		"ZDOTDIR=. ls",
		"read PATH </dev/null; ls",
		"zsh -c ls",
	} {
		for _, rs := range []Rules{attackRules, runAll} {
			if v := rs.Decide(line); v.Decision == Run {
				t.Errorf("%q with otherwise = %s: run (%s), want asked", line, rs.Otherwise, v.Reason)
			}
		}
	}
}

// TestUnderstood: the syntax the analyzer understands still runs by the
// rules, and builtins alone are not said to be allowed.
func TestUnderstood(t *testing.T) {
	for _, c := range []struct{ line, want, reason string }{
		{"ls -la; echo hi", Run, "allowed: "},
		{"echo $((1+2)) ${#x} ${x:-a} ${x/a/b} \"$HOME\" $'a\\tb'", Run, "allowed: "},
		{"echo ${x:1:2} ${a[0]} ${a[@]}", Run, "allowed: "},
		{"for f in a b; do echo $f; done", Run, "allowed: "},
		{"f() { ls; }; f", Ask, ""}, // f is a program no rule allows
		{"[[ -f x ]] && ls", Run, "allowed: "},
		{"ls <<EOF\nhi\nEOF", Run, "allowed: "},
		{"true", Run, "not asked: it runs only builtins that change nothing (`true`)"},
		{"cd sub && :", Run, "not asked: it runs only builtins that change nothing (`cd sub`, `:`)"},
		{"export FOO=1", Ask, ""},
		{"git status | cat", Ask, ""},
	} {
		v := attackRules.Decide(c.line)
		if v.Decision != c.want || !strings.HasPrefix(v.Reason, c.reason) {
			t.Errorf("%q: %s (%s), want %s (%s…)", c.line, v.Decision, v.Reason, c.want, c.reason)
		}
	}
}

// TestDialects: a line is read as the shell that runs it reads it; a
// script whose shell is not known (sh -c: dash or bash) is read both
// ways, so what either runs counts.
func TestDialects(t *testing.T) {
	deny := Rules{Deny: []string{"rm *", "touch *"}, Otherwise: Run}
	for _, c := range []struct {
		line, dialect, want string
	}{
		// mvdan.cc/sh's POSIX parser rejects &> where dash reads "& >":
		// a line the parser rejects is asked
		{": &>/dev/null touch x", lineshell.POSIX, Ask},
		{"[[ a || rm == x ]]", lineshell.POSIX, Refuse},
		{": $'\\' ; touch x #'", lineshell.POSIX, Refuse},
		{"sh -c ': &>/dev/null touch x'", lineshell.Bash, Ask},
		{"sh -c '[[ a || rm == x ]]'", lineshell.Bash, Refuse},
		{"dash -c ': $'\\''\\'\\'' ; touch x #'\\'", lineshell.Bash, Refuse},
		{"watch -n 1 ': &>/dev/null touch x'", lineshell.Bash, Ask},
		{"watch -n 1 '[[ a || rm == x ]]'", lineshell.Bash, Refuse},
		{": &>/dev/null touch x", AnyShell, Ask},
		{": &>/dev/null echo x", lineshell.Bash, Run},
	} {
		if v := deny.DecideAnalysis(AnalyzeIn(c.line, c.dialect)); v.Decision != c.want {
			t.Errorf("%q in %s: %s (%s), want %s", c.line, c.dialect, v.Decision, v.Reason, c.want)
		}
	}
}

// TestArgv: an argv that runs without a shell is judged word by word; a
// shell in it runs its script (Codex's ["/bin/bash", "-lc", "rm -rf x"]).
func TestArgv(t *testing.T) {
	rs := Rules{Allow: []string{"ls *"}, Deny: []string{"rm -rf *"}, Otherwise: Ask}
	for _, c := range []struct {
		argv []string
		want string
	}{
		{[]string{"/bin/bash", "-lc", "rm -rf x"}, Refuse},
		{[]string{"bash", "-c", "ls; rm -rf x"}, Refuse},
		{[]string{"/bin/sh", "-c", ": &>/dev/null rm -rf x"}, Ask},
		{[]string{"/bin/sh", "-c", "[[ a || rm -rf x ]]"}, Refuse},
		{[]string{"ls", "-la", "; rm -rf x"}, Run},
		{[]string{"ls", "$(rm -rf x)"}, Run}, // one word, no shell
		{[]string{"/bin/bash", "-lc", "ls"}, Run},
		{[]string{"zsh", "-c", "ls"}, Ask},
		{[]string{}, Ask},
	} {
		if v := rs.DecideAnalysis(AnalyzeArgv(c.argv)); v.Decision != c.want {
			t.Errorf("%q: %s (%s), want %s", c.argv, v.Decision, v.Reason, c.want)
		}
	}
}

// TestWithEnv: the env an agent gives terminal/create is part of the
// command: a sensitive name makes an allowed line asked.
func TestWithEnv(t *testing.T) {
	for _, c := range []struct {
		env  []string
		want string
	}{
		{nil, Run},
		{[]string{"FOO=1", "CI=true"}, Run},
		{[]string{"GIT_CONFIG_COUNT=1"}, Ask},
		{[]string{"PATH=/tmp"}, Ask},
		{[]string{"LD_PRELOAD=/tmp/x.so"}, Ask},
		{[]string{"HOME=/tmp"}, Ask},
		{[]string{"XDG_CONFIG_HOME=/tmp"}, Ask},
		{[]string{"BASH_ENV=/tmp/x"}, Ask},
	} {
		if v := attackRules.DecideAnalysis(Analyze("git status").WithEnv(c.env)); v.Decision != c.want {
			t.Errorf("env %q: %s (%s), want %s", c.env, v.Decision, v.Reason, c.want)
		}
	}
}
