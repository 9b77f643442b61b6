package cmdrule

import (
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/agentrun/agentrun.nvim/internal/lineshell"
)

// programs is what Analyze finds in line: each command's text, "; "
// between, and "?" at the end when something is unknown.
func programs(line string) string {
	an := AnalyzeIn(line, lineshell.Bash)
	var parts []string
	for _, c := range an.Commands {
		parts = append(parts, c.Text())
	}
	out := strings.Join(parts, "; ")
	if len(an.Unknown) > 0 {
		out += " ?"
	}
	return out
}

// TestWrapperOptions: each wrapper's options are read as the real
// program's getopt reads them (coreutils, findutils, util-linux, procps,
// GNU time), so the word taken for the program is the one that runs.
// "?" means the line is asked (an option agentrun cannot read).
func TestWrapperOptions(t *testing.T) {
	for _, c := range []struct{ line, want string }{
		// xargs: -e, -i, -l take an optional value, attached only
		{"xargs -i touch ls P", "touch ls P"},
		{"xargs -i rm v", "rm v"},
		{"xargs -iX rm X", "rm X"},
		{"xargs -i{} rm {}", "rm '{}'"},
		{"xargs -I X rm X", "rm X"},
		{"xargs -IX rm X", "rm X"},
		{"xargs -l rm", "rm"},
		{"xargs -l2 rm", "rm"},
		{"xargs -L 2 rm", "rm"},
		{"xargs -e rm", "rm"},
		{"xargs -eEND rm", "rm"},
		{"xargs -E END rm", "rm"},
		{"xargs --replace rm", "rm"},
		{"xargs --replace=X rm X", "rm X"},
		{"xargs --repl rm", "rm"},
		{"xargs --max-lines rm", "rm"},
		{"xargs --max-lines=3 rm", "rm"},
		{"xargs --eof rm", "rm"},
		{"xargs -0rt rm", "rm"},
		{"xargs -0n1 rm", "rm"},
		{"xargs -n 1 -P 4 rm", "rm"},
		{"xargs -tn1 rm", "rm"},
		{"xargs -a list rm", "rm"},
		{"xargs -d '\\n' rm", "rm"},
		{"xargs --delimiter=x rm", "rm"},
		{"xargs --max-args 1 rm", "rm"},
		{"xargs -o rm", "rm"},
		{"xargs --process-slot-var=V rm", "rm"},
		{"xargs -Q rm", "?"},
		{"xargs --re rm", "rm"}, // --replace, the only one
		{"xargs --max rm", "?"}, // ambiguous: --max-lines, --max-args…
		{"xargs", "echo"},
		// env
		{"env -S 'rm\\_v'", "rm v"},
		{"env -S 'rm -f x'", "rm -f x"},
		{"env -S\"rm x\"", "rm x"},
		{"env --split-string='rm x'", "rm x"},
		{"env -iS 'rm x'", "rm x"},
		{"env -S 'A=1 rm x'", "A=1 rm x"},
		{"env -S 'rm \"a b\"'", "rm 'a b'"},
		{"env -S 'rm ${X}'", "?"},
		{"env -S 'rm \\c'", "?"},
		{"env -C /tmp rm x", "cd /tmp; rm x"},
		{"env -C/tmp rm x", "cd /tmp; rm x"},
		{"env --chdir=/tmp rm x", "cd /tmp; rm x"},
		{"env --chdir /tmp rm x", "cd /tmp; rm x"},
		{"env --ch=/tmp rm x", "cd /tmp; rm x"},
		{"env -u X rm", "rm"},
		{"env -uX rm", "rm"},
		{"env --unset=X rm", "rm"},
		{"env -i0v rm", "rm"},
		{"env --ignore-signal rm", "rm"},
		{"env --ignore-signal=INT rm", "rm"},
		{"env --block-signal rm", "rm"},
		{"env FOO=1 rm", "FOO=1 rm"},
		{"env HOME=. git status", "HOME=. git status ?"},
		{"env -x rm", "?"},
		// nice
		{"nice rm", "rm"},
		{"nice -n 5 rm", "rm"},
		{"nice -n5 rm", "rm"},
		{"nice -5 rm", "rm"},
		{"nice --5 rm", "rm"},
		{"nice -+5 rm", "rm"},
		{"nice --adjustment=5 rm", "rm"},
		{"nice --adj 5 rm", "rm"},
		// timeout
		{"timeout 5 rm", "rm"},
		{"timeout -s KILL 5 rm", "rm"},
		{"timeout -sKILL 5 rm", "rm"},
		{"timeout -k 1 5 rm", "rm"},
		{"timeout --signal=KILL 5 rm", "rm"},
		{"timeout --kill-after 1 5 rm", "rm"},
		{"timeout --foreground --preserve-status -v 5 rm", "rm"},
		{"timeout -vk1 5 rm", "rm"},
		// stdbuf
		{"stdbuf -oL rm", "rm"},
		{"stdbuf -o L rm", "rm"},
		{"stdbuf --output=L -e0 rm", "rm"},
		// nohup
		{"nohup rm", "rm >>nohup.out"}, // its output is the terminal: nohup writes nohup.out
		{"nohup rm >x", "rm >x"},
		{"nohup rm 2>&1 >>x", "rm >>x"},
		// setsid
		{"setsid -w rm", "rm"},
		{"setsid -cfw rm", "rm"},
		{"setsid --fork rm", "rm"},
		// ionice
		{"ionice -c 3 rm", "rm"},
		{"ionice -c3 -n7 rm", "rm"},
		{"ionice -t rm", "rm"},
		{"ionice --class idle rm", "rm"},
		{"ionice -p 1 2", "ionice -p 1 2"},
		{"ionice -u 1000", "ionice -u 1000"},
		// flock
		{"flock /tmp/l rm x", "flock /tmp/l rm x; rm x"},
		{"flock -n /tmp/l rm x", "flock -n /tmp/l rm x; rm x"},
		{"flock -w 5 /tmp/l rm x", "flock -w 5 /tmp/l rm x; rm x"},
		{"flock -xnw5 /tmp/l rm x", "flock -xnw5 /tmp/l rm x; rm x"},
		{"flock --timeout=5 /tmp/l rm x", "flock --timeout=5 /tmp/l rm x; rm x"},
		{"flock /tmp/l -c 'rm x'", "flock /tmp/l -c 'rm x'; rm x"},
		{"flock /tmp/l --command 'rm x'", "flock /tmp/l --command 'rm x'; rm x"},
		{"flock 9", "flock 9"},
		// script
		{"script -qc 'rm x' /dev/null", "script -qc 'rm x' /dev/null; rm x"},
		{"script -q -c 'rm x' out", "script -q -c 'rm x' out >out; rm x"},
		{"script out -c 'rm x'", "script out -c 'rm x' >out; rm x"},
		{"script --command='rm x' -q /dev/null", "script '--command=rm x' -q /dev/null; rm x"},
		{"script -c 'rm x'", "script -c 'rm x' >typescript; rm x"},
		{"script -tlog -c ls /dev/null", "script -tlog -c ls /dev/null >log; ls"},
		// GNU time (not the keyword)
		{"\\time rm", "rm"},
		{"command time -o F rm", "rm >F"},
		{"env time -o F rm", "rm >F"},
		{"env time -o F", "time -o F >F"},
		{"env time -aoF rm", "rm >>F"},
		{"env time -p -f %e rm", "rm"},
		{"env time --output=F --append rm", "rm >>F"},
		{"env time -v rm", "rm"},
		// watch
		{"watch --differences rm x", "rm x"},
		{"watch --differences=permanent rm x", "rm x"},
		{"watch -d rm x", "rm x"},
		{"watch -dpermanent rm x", "rm x"},
		{"watch -n 1 rm x", "rm x"},
		{"watch -n1 -t rm x", "rm x"},
		{"watch --interval 1 rm x", "rm x"},
		{"watch -x rm x", "rm x"},
		{"watch -q 3 rm x", "rm x"},
		{"watch 'ls; rm x'", "ls; rm x"},
		{"watch -z rm", "?"},
		// sudo (recorded too: it must be allowed as well)
		{"sudo rm x", "sudo rm x; rm x"},
		{"sudo -u me rm x", "sudo -u me rm x; rm x"},
		{"sudo -ume rm x", "sudo -ume rm x; rm x"},
		{"sudo --preserve-env rm x", "sudo --preserve-env rm x; rm x"},
		{"sudo --preserve-env=PATH rm x", "sudo --preserve-env=PATH rm x; rm x"},
		{"sudo -E -H -n rm x", "sudo -E -H -n rm x; rm x"},
		{"sudo -D /tmp rm x", "sudo -D /tmp rm x; rm x"},
		{"sudo FOO=1 rm x", "sudo FOO=1 rm x; FOO=1 rm x"},
		// su, runuser
		{"su -c 'rm x'", "su -c 'rm x'; rm x"},
		{"su -lc 'rm x' root", "su -lc 'rm x' root; rm x"},
		{"su root -c 'rm x'", "su root -c 'rm x'; rm x"},
		{"runuser -u me -- rm x", "runuser -u me -- rm x"},
		{"su -s /bin/zsh -c 'rm x'", "su -s /bin/zsh -c 'rm x' ?"},
	} {
		if got := programs(c.line); got != c.want && !(c.want == "?" && strings.HasSuffix(got, "?")) {
			t.Errorf("%q: read as %q, want %q", c.line, got, c.want)
		}
	}
}

// TestEnvChdirIsCd: env -C leaves the project as cd does: asked, unless
// it goes down into it.
func TestEnvChdirIsCd(t *testing.T) {
	rs := Rules{Allow: []string{"ls *"}, Otherwise: Ask}
	for line, want := range map[string]string{
		"env -C /etc ls":       Ask,
		"env --chdir=.. ls":    Ask,
		"env -C sub ls":        Run,
		"env --chdir sub ls x": Run,
	} {
		if v := rs.Decide(line); v.Decision != want {
			t.Errorf("%q: %s (%s), want %s", line, v.Decision, v.Reason, want)
		}
	}
}

// TestWrappersAreDocumented: every program the wrappers table knows is
// named in doc/agentrun.txt (`name`, with its options or alone), so the
// user's list of what a rule sees through stays whole: a new wrapper is
// this package's table, its test, and that list.
func TestWrappersAreDocumented(t *testing.T) {
	b, err := os.ReadFile("../../doc/agentrun.txt")
	if err != nil {
		t.Fatal(err)
	}
	doc := string(b)
	for name := range wrappers {
		if slices.Contains(readShells, name) || slices.Contains(unreadShells, name) {
			continue // the shells are said as such ("a zsh, ksh or fish script is asked")
		}
		if !strings.Contains(doc, "`"+name+"`") && !strings.Contains(doc, "`"+name+" ") && !strings.Contains(doc, "`"+name+"/") && !strings.Contains(doc, "/`"+name+"`") {
			t.Errorf("the wrapper %q is not named in doc/agentrun.txt (*agentrun-rules*: the programs that run another one)", name)
		}
	}
}
