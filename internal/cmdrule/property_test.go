package cmdrule

import (
	"bytes"
	"context"
	"fmt"
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentrun/agentrun.nvim/internal/shquote"
)

// The property test generates shell lines from a grammar (words,
// operators, groups, substitutions, wrappers, quoting, sh -c nesting,
// eval, variables in command position), runs each in a real bash with
// stub programs that log how they were called, and checks the decision
// against what really ran:
//
//   - with otherwise = "ask", a line that ran a command the rules do not
//     allow (or wrote a file) was never decided "run";
//   - with otherwise = "run", a line that ran a denied command was never
//     decided "run".
//
// AGENTRUN_RULES_LINES sets how many lines (default 500); a failure
// prints the seed (AGENTRUN_RULES_SEED repeats it); -short (make check) runs 60.

// propRules allow the safe commands of the grammar and deny rm.
var (
	propAllow = []string{"git status*", "go test ./...", "ls"}
	propDeny  = []string{"rm *"}
)

// stubs are the programs the grammar runs; each logs its name and
// arguments.
var stubs = []string{"git", "go", "ls", "rm", "curl", "touch"}

// safe says whether one logged call is one the allow rules mean.
func safe(call []string) bool {
	switch call[0] {
	case "git":
		return len(call) >= 2 && call[1] == "status"
	case "go":
		return len(call) == 3 && call[1] == "test" && call[2] == "./..."
	case "ls":
		return len(call) == 1
	}
	return false
}

type gen struct {
	r   *rand.Rand
	dir string // the stubs' directory, for spelling a program by path
	// wrote is set when the line has a redirection that writes a file.
	wrote bool
	funcs int
}

func (g *gen) pick(list ...string) string { return list[g.r.Intn(len(list))] }

// program spells one stub's name in one of the ways a shell reads as it.
func (g *gen) program(name string) string {
	switch g.r.Intn(13) {
	case 8:
		return fmt.Sprintf("$'%s\\x%02x%s'", name[:1], name[1], name[2:])
	case 9:
		return name[:1] + "''" + name[1:]
	case 10:
		return `"` + name[:1] + `"` + name[1:]
	case 11:
		return "${UNSET:-" + name + "}"
	case 12:
		return "{" + name + ",}"
	case 0:
		return filepath.Join(g.dir, name)
	case 1:
		return "'" + name + "'"
	case 2:
		return `"` + name + `"`
	case 3:
		return name[:1] + `\` + name[1:]
	case 4:
		return `\` + name
	case 5:
		return "./" + filepath.Base(g.dir) + "/" + name
	default:
		return name
	}
}

func (g *gen) args(name string) string {
	switch name {
	case "git":
		return g.pick(" status", " status --short", " log", ` status "a b"`, " status '; touch y'")
	case "go":
		return g.pick(" test ./...", " build", " test ./... -run X")
	case "ls":
		return g.pick("", "", " -la")
	case "rm":
		return g.pick(" -rf x", " x", " -f y")
	case "curl":
		return " http://127.0.0.1:9"
	default:
		return " y"
	}
}

func (g *gen) simple(depth int) string {
	name := stubs[g.r.Intn(len(stubs))]
	if g.r.Intn(2) == 0 {
		name = stubs[g.r.Intn(3)] // the safe ones, more often
	}
	var pre []string
	for g.r.Intn(4) == 0 {
		pre = append(pre, g.pick("command", "env", "env FOO=1", "nohup", "nice -n 1", "timeout 5", "stdbuf -oL", "setsid -w", "exec", "builtin command", "env -u X"))
	}
	line := strings.Join(append(pre, g.program(name)), " ") + g.args(name)
	if g.r.Intn(6) == 0 {
		line = "FOO=bar " + line
	}
	switch g.r.Intn(8) {
	case 0:
		line += " >/dev/null 2>&1"
	case 1:
		line += " > out.txt"
		g.wrote = true
	case 2:
		line += " 2>&1"
	}
	return line
}

func (g *gen) stmt(depth int) string {
	if depth > 2 || g.r.Intn(2) == 0 {
		return g.simple(depth)
	}
	switch g.r.Intn(13) {
	case 0:
		return "( " + g.list(depth+1) + " )"
	case 1:
		return "{ " + g.list(depth+1) + "; }"
	case 2:
		return "if " + g.simple(depth) + "; then " + g.list(depth+1) + "; fi"
	case 3:
		return "for i in 1; do " + g.list(depth+1) + "; done"
	case 4:
		return "git status $(" + g.list(depth+1) + ")"
	case 5:
		return g.pick("sh", "bash") + " " + g.pick("-c", "-ec", "-c --") + " " + shquote.Quote(g.list(depth+1))
	case 6:
		return "eval " + shquote.Quote(g.list(depth+1))
	case 7:
		name := stubs[g.r.Intn(len(stubs))]
		return "X=" + name + "; $X" + g.args(name)
	case 8:
		return "ls <(" + g.list(depth+1) + ")"
	case 9:
		return "echo x | xargs " + g.program(stubs[g.r.Intn(len(stubs))])
	case 10:
		g.funcs++ // a name of its own: a body calling itself would not end
		f := fmt.Sprintf("f%d", g.funcs)
		return f + "() { " + g.list(depth+1) + "; }; " + f
	case 11:
		switch g.r.Intn(3) {
		case 0:
			return "trap " + shquote.Quote(g.simple(depth)) + " EXIT; " + g.simple(depth)
		case 1:
			return "find . -maxdepth 0 -exec " + g.simple(depth) + " \\; ; " + g.simple(depth)
		}
		return "true; " + g.simple(depth)
	case 12:
		return "cd . && " + g.simple(depth)
	default:
		return g.simple(depth)
	}
}

func (g *gen) list(depth int) string {
	s := g.stmt(depth)
	for n := g.r.Intn(3) - depth; n > 0; n-- {
		s += g.pick("; ", " && ", " || ", " | ", "\n") + g.stmt(depth)
	}
	return s
}

func TestRulesHoldAgainstWhatBashRuns(t *testing.T) {
	if _, err := exec.LookPath("bash"); err != nil {
		t.Fatal("bash is needed to run the generated lines")
	}
	if inLineSandbox(t) { // real programs run: confine them (sandbox_test.go)
		return
	}
	n := 160
	if testing.Short() {
		n = 60 // make check's inner loop; make test runs 160, make fuzz 3000
	}
	if s := os.Getenv("AGENTRUN_RULES_LINES"); s != "" {
		n, _ = strconv.Atoi(s)
	}
	seed := time.Now().UnixNano()
	if s := os.Getenv("AGENTRUN_RULES_SEED"); s != "" {
		seed, _ = strconv.ParseInt(s, 10, 64)
	}
	t.Logf("seed %d (AGENTRUN_RULES_SEED repeats it), %d lines", seed, n)

	work := t.TempDir()
	bin := filepath.Join(work, "bin")
	if err := os.Mkdir(bin, 0o755); err != nil {
		t.Fatal(err)
	}
	// one write per call: the commands of a pipeline log at once
	stub := "#!/bin/sh\nl=\"${0##*/}\"\nfor a in \"$@\"; do l=\"$l\t$a\"; done\nprintf '%s\\n' \"$l\" >> \"$CALLS\"\n"
	for _, s := range stubs {
		if err := os.WriteFile(filepath.Join(bin, s), []byte(stub), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	g := &gen{r: rand.New(rand.NewSource(seed)), dir: bin}
	ask := Rules{Allow: propAllow, Deny: propDeny, Otherwise: Ask}
	runAll := Rules{Deny: propDeny, Otherwise: Run}
	type run struct {
		line  string
		log   string
		wrote bool
	}
	var runs []run
	for i := 0; i < n; i++ {
		g.wrote = false
		r := run{line: g.list(0), log: filepath.Join(work, fmt.Sprintf("calls-%d.log", i))}
		r.wrote = g.wrote
		runs = append(runs, r)
	}
	// the lines run four at a time (each logs to its own file)
	var wg sync.WaitGroup
	slots := make(chan struct{}, 4)
	for _, r := range runs {
		wg.Add(1)
		slots <- struct{}{}
		go func() {
			defer func() { <-slots; wg.Done() }()
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			cmd := exec.CommandContext(ctx, "bash", "-c", r.line)
			cmd.Dir = work
			cmd.Env = []string{"PATH=" + bin + ":/usr/bin:/bin", "CALLS=" + r.log, "HOME=" + work}
			cmd.Stdin = bytes.NewReader(nil)
			t0 := time.Now()
			_ = cmd.Run() // many lines fail; what ran is in the log
			if d := time.Since(t0); d > 2*time.Second {
				t.Logf("slow %v: %q", d, r.line)
			}
		}()
	}
	wg.Wait()
	// Process substitutions and pipelines may still write after bash has
	// exited: read the logs once every line has run.
	time.Sleep(100 * time.Millisecond)
	var ran, denied, unsafeRan int
	for _, r := range runs {
		raw, _ := os.ReadFile(r.log)
		var calls [][]string
		for _, l := range strings.Split(strings.TrimSpace(string(raw)), "\n") {
			if l != "" {
				calls = append(calls, strings.Split(l, "\t"))
			}
		}
		line := r.line
		va, vr := ask.Decide(line), runAll.Decide(line)
		if va.Decision == Run {
			ran++
		}
		for _, c := range calls {
			if c[0] == "rm" {
				denied++
				if vr.Decision == Run {
					t.Errorf("seed %d: bash ran %q for the line\n%s\nyet with deny %q and otherwise = run it was decided %s (%s)", seed, strings.Join(c, " "), line, propDeny, vr.Decision, vr.Reason)
				}
			}
			if !safe(c) {
				unsafeRan++
				if va.Decision == Run {
					t.Errorf("seed %d: bash ran %q for the line\n%s\nwhich no rule of %q allows, yet it was decided run (%s)", seed, strings.Join(c, " "), line, propAllow, va.Reason)
				}
			}
		}
		if r.wrote && va.Decision == Run {
			t.Errorf("seed %d: the line writes a file and no rule allows that, yet it was decided run:\n%s", seed, line)
		}
		if t.Failed() {
			return
		}
	}
	t.Logf("%d lines: %d decided run under the allow rules, %d denied calls and %d unallowed calls really ran", n, ran, denied, unsafeRan)
	// The grammar must reach both sides, or the test proves nothing.
	if ran < n/40 || denied < n/20 || unsafeRan < n/10 {
		t.Errorf("the grammar is too one-sided: %d of %d lines run, %d denied and %d unallowed calls: tune it", ran, n, denied, unsafeRan)
	}
}
