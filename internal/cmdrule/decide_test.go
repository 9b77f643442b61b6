package cmdrule

import (
	"strings"
	"testing"
)

// readmeRules are the README's example: allow go test and git status,
// deny rm -rf, ask otherwise.
var readmeRules = Rules{Allow: []string{"go test ./...", "git status*"}, Deny: []string{"rm -rf *"}, Otherwise: Ask}

func TestDecide(t *testing.T) {
	runAll := Rules{Deny: []string{"rm -rf *"}, Otherwise: Run}
	cases := []struct {
		name  string
		rules Rules
		line  string
		want  string
	}{
		// what the rules are for
		{"allowed", readmeRules, "go test ./...", Run},
		{"allowed prefix", readmeRules, "git status --short", Run},
		{"allowed bare", readmeRules, "git status", Run},
		{"harmless cd", readmeRules, "cd sub && go test ./...", Run},
		{"not allowed", readmeRules, "make", Ask},
		{"argument is only an argument", readmeRules, "git status '; rm -rf x'", Run},
		// issue 37, case 1: a second command rides along
		{"semicolon", readmeRules, "git status --short; rm -rf victim", Refuse},
		{"and", readmeRules, "git status && touch x", Ask},
		{"or", readmeRules, "git status || touch x", Ask},
		{"pipe", readmeRules, "git status | sh", Ask},
		{"background", readmeRules, "git status & touch x", Ask},
		{"newline", readmeRules, "git status\ntouch x", Ask},
		{"command substitution", readmeRules, "git status $(touch x)", Ask},
		{"backticks", readmeRules, "git status `touch x`", Ask},
		{"process substitution", readmeRules, "git status <(touch x)", Ask},
		{"write redirection", readmeRules, "git status > out.txt", Ask},
		{"harmless redirections", readmeRules, "git status 2>&1 >/dev/null", Run},
		{"go test then more", readmeRules, "go test ./... -run X", Ask},
		// issue 37, case 2: the same program spelled another way
		{"absolute path", runAll, "/bin/rm -rf x", Refuse},
		{"after cd", runAll, "cd d && rm -rf x", Refuse},
		{"after true", runAll, "true; rm -rf x", Refuse},
		{"sh -c", runAll, "sh -c 'rm -rf x'", Refuse},
		{"bash -lc", runAll, `bash -lc "rm -rf x"`, Refuse},
		{"nested sh -c", runAll, `sh -c "bash -c 'rm -rf x'"`, Refuse},
		{"command", runAll, "command rm -rf x", Refuse},
		{"env", runAll, "env FOO=1 rm -rf x", Refuse},
		{"env -i", runAll, "env -i PATH=/bin rm -rf x", Refuse},
		{"sudo", runAll, "sudo -u root rm -rf x", Refuse},
		{"nohup nice timeout", runAll, "nohup nice -n 5 timeout 10 rm -rf x", Refuse},
		{"xargs", runAll, "echo x | xargs rm -rf", Refuse},
		{"exec", runAll, "exec rm -rf x", Refuse},
		{"time", runAll, "time rm -rf x", Refuse},
		{"quoted program", runAll, `'rm' -rf x`, Refuse},
		{"escaped program", runAll, `r\m -rf x`, Refuse},
		{"brace expansion", runAll, `{rm,-rf,x}`, Refuse},
		{"find -exec", runAll, `find . -exec rm -rf {} +`, Refuse},
		{"subshell", runAll, "(rm -rf x)", Refuse},
		{"group", runAll, "{ rm -rf x; }", Refuse},
		{"if body", runAll, "if true; then rm -rf x; fi", Refuse},
		{"for body", runAll, "for f in a; do rm -rf $f; done", Refuse},
		{"function body", runAll, "f() { rm -rf x; }; f", Refuse},
		{"trap", runAll, "trap 'rm -rf x' EXIT", Refuse},
		{"eval plain", runAll, `eval "rm -rf x"`, Refuse},
		// what cannot be known is asked, even with otherwise = "run"
		{"variable program", runAll, "X=rm; $X -rf x", Ask},
		{"substituted program", runAll, "$(echo rm) -rf x", Ask},
		{"eval", runAll, `eval "$CMD"`, Ask},
		{"source computed", runAll, `source "$F"`, Ask},
		{"glob program", runAll, `/bin/r? -rf x`, Ask},
		{"does not parse", runAll, `echo 'unclosed`, Ask},
		{"unknown argument might be -rf", runAll, `rm $FLAGS x`, Ask},
		{"PATH changed", runAll, `PATH=/tmp/evil:$PATH; git status`, Ask},
		{"sh -c of a variable", runAll, `sh -c "$S"`, Ask},
		{"arithmetic on a variable", runAll, `x='a[$(rm -rf y)]'; echo $((x))`, Ask},
		{"git -c alias", runAll, `git -c alias.st='!rm -rf x' st`, Ask},
		// other commands run under otherwise = "run"
		{"run otherwise", runAll, "make && rm -f x", Run},
		{"a script on stdin", runAll, "echo 'rm -rf x' | sh", Ask},
		{"a script file", runAll, "echo 'rm -rf x' > s.sh; sh s.sh", Ask},
		{"source", runAll, "source ./env.sh", Ask},
		{"busybox", runAll, "busybox rm -rf x", Refuse},
		{"a deny rule that cannot be read", Rules{Deny: []string{"rm -rf $HOME/*"}, Otherwise: Run}, "rm -rf $HOME/victim", Ask},
		{"cd out of the project", readmeRules, "cd /tmp && go test ./...", Ask},
		{"cd up", readmeRules, "cd .. && go test ./...", Ask},
		{"cd down", readmeRules, "cd sub/pkg && go test ./...", Run},
		{"refuse otherwise", Rules{Allow: []string{"ls"}, Otherwise: Refuse}, "ls; make", Refuse},
		{"refuse unknown", Rules{Allow: []string{"ls"}, Otherwise: Refuse}, "$X", Refuse},
		// remembered answers allow as rules do
		{"remembered", Rules{Remembered: []string{"make test"}}, "make test", Run},
		{"remembered is exact", Rules{Remembered: []string{"make test"}}, "make test && make install", Ask},
		// a rule with a redirection allows it
		{"rule with redirection", Rules{Allow: []string{"go test ./... > test.log"}}, "go test ./... > test.log", Run},
		{"assignment must be allowed", readmeRules, "GOFLAGS=-exec=/tmp/x go test ./...", Ask},
		{"assignment in rule", Rules{Allow: []string{"CGO_ENABLED=0 go build*"}}, "CGO_ENABLED=0 go build ./...", Run},
		{"sudo must be allowed too", Rules{Allow: []string{"git status*"}}, "sudo git status", Ask},
		{"wrapper that changes nothing", Rules{Allow: []string{"git status*"}}, "setsid git status", Run},
		// nohup writes nohup.out when its output is the terminal
		{"nohup writes nohup.out", Rules{Allow: []string{"git status*"}}, "nohup git status", Ask},
		{"nohup.out named by the rule", Rules{Allow: []string{"git status* >>nohup.out"}}, "nohup git status", Run},
		{"nohup with its output elsewhere", Rules{Allow: []string{"git status* >log"}}, "nohup git status >log", Run},
		// find's actions that write or delete count as what they are
		{"find reads", Rules{Allow: []string{"find *"}}, "find . -name '*.go'", Run},
		{"find -delete is rm", Rules{Allow: []string{"find *"}}, "find . -name '*.o' -delete", Ask},
		{"find -delete and deny rm", Rules{Allow: []string{"find *"}, Deny: []string{"rm *"}}, "find . -delete", Refuse},
		{"find -fprint writes", Rules{Allow: []string{"find *"}}, "find . -fprint list", Ask},
		{"find -fprint0 writes", Rules{Allow: []string{"find *"}}, "find . -fprint0 list", Ask},
		{"find -fprintf writes", Rules{Allow: []string{"find *"}}, "find . -fprintf list %p", Ask},
		{"find -fls writes", Rules{Allow: []string{"find *"}}, "find . -fls list", Ask},
		{"find -fprint named by the rule", Rules{Allow: []string{"find * >list"}}, "find . -fprint list", Run},
		{"find -exec", Rules{Allow: []string{"find *"}}, "find . -exec touch {} +", Ask},
		{"find -okdir", Rules{Allow: []string{"find *"}}, "find . -okdir touch {} ;", Ask},
		{"xargs adds words", Rules{Allow: []string{"ls"}}, "echo a | xargs ls", Ask},
		{"xargs into a star", Rules{Allow: []string{"ls *", "echo *"}}, "echo a | xargs ls", Run},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			v := c.rules.Decide(c.line)
			if v.Decision != c.want {
				t.Errorf("Decide(%q) = %s (%s), want %s\ncommands %+v\nunknown %q", c.line, v.Decision, v.Reason, c.want, v.Commands, v.Unknown)
			}
			if v.Reason == "" {
				t.Errorf("Decide(%q): no reason given", c.line)
			}
		})
	}
}

func TestRuleErrors(t *testing.T) {
	for _, src := range []string{"", "a; b", "a && b", "a | b", "(a)", "echo $HOME", "echo $(x)"} {
		if _, err := ParseRule(src); err == nil {
			t.Errorf("ParseRule(%q) gave no error", src)
		} else if !strings.Contains(err.Error(), "rule") {
			t.Errorf("ParseRule(%q): %v does not name the rule", src, err)
		}
	}
	v := Rules{Allow: []string{"a; b"}}.Decide("a")
	if v.Decision != Ask || len(v.Errors) != 1 {
		t.Errorf("a bad allow rule: %+v, want it to match nothing and be named", v)
	}
}

func TestRuleMatch(t *testing.T) {
	cases := []struct {
		rule, cmd string
		want      bool
	}{
		{"git status*", "git status", true},
		{"git status*", "git status -s", true},
		{"git status*", "git stash", false},
		{"rm -rf *", "rm -rf", true},
		{"rm -rf *", "rm -rf a b", true},
		{"rm -rf *", "rm -fr a", false},
		{"/usr/bin/make", "make", true},
		{"make", "/usr/bin/make", true},
		{"ls *.go", "ls *.go", true},
		{"ls *.go", "ls a.go", true},
		{"ls *.go", "ls a.go b.go", false},
		{"echo '*'", "echo x", false},
		{"echo '*'", "echo '*'", true},
		{"npm run *", "npm run build -- --watch", true},
		{"npm run*", "npm runx", true},
	}
	for _, c := range cases {
		r, err := ParseRule(c.rule)
		if err != nil {
			t.Fatal(err)
		}
		an := Analyze(c.cmd)
		if len(an.Commands) != 1 {
			t.Fatalf("%q: %d commands", c.cmd, len(an.Commands))
		}
		if got := r.Match(an.Commands[0], false) == yes; got != c.want {
			t.Errorf("rule %q on %q: %v, want %v", c.rule, c.cmd, got, c.want)
		}
	}
}

// TestTextMatchesItself: a command's Text, kept as a rule (an "always
// allow" answer), matches the command again.
func TestTextMatchesItself(t *testing.T) {
	for _, line := range []string{"go test ./...", "echo 'a b' \"c\"", "git commit -m 'it'\\''s'", "make -j4 > build.log", "FOO=1 make", "grep -r '*' ."} {
		for _, c := range Analyze(line).Commands {
			r, err := ParseRule(c.Text())
			if err != nil {
				t.Fatalf("%q: its text %q is no rule: %v", line, c.Text(), err)
			}
			if r.Match(c, false) != yes {
				t.Errorf("%q: the rule %q does not match it again", line, c.Text())
			}
		}
	}
}
