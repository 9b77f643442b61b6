package cmdrule

import (
	"bytes"
	"context"
	"fmt"
	"io/fs"
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/agentrun/agentrun.nvim/internal/lineshell"
	"github.com/agentrun/agentrun.nvim/internal/shquote"
)

// The differential property test (issue 47): a grammar makes lines that
// mix bash-only and POSIX syntax ([[ ]], $'…', &>, |&, arithmetic,
// arrays and subscripts, ${x@P}, here-documents, functions, every
// wrapper's option forms, assignments) around the attack lines.
// Each line is decided with diffRules, then RUN in the shell that really
// runs it (bash --noprofile --norc -c for agentrun's terminals and an
// agent's Bash; /bin/sh for the POSIX dialect; no shell for an argv) in
// a temporary directory, HOME inside it, a cleared environment and a PATH
// of logging stubs only (the wrappers are the real programs, which then
// run stubs), the whole test inside a bubblewrap sandbox that can write
// only its own /tmp (sandbox_test.go). What ran (the stubs' log) and what was written (the tree
// before and after) must be what the decision allowed: a line decided
// "run" runs only what the allow rules mean and writes nothing.
//
// AGENTRUN_SHELLDIFF_N sets how many generated lines (default 100, with
// the attack lines in each way they run about 15 s);
// make fuzz runs more. A failure prints the seed
// (AGENTRUN_SHELLDIFF_SEED repeats it).

var diffRules = Rules{Allow: []string{"ls *", "echo *", "git status*"}, Deny: []string{"rm *"}, Otherwise: Ask}

// diffStubs are the programs the grammar names; each logs its argv.
var diffStubs = []string{"ls", "git", "rm", "touch", "cat", "cp", "curl"}

// diffReal are wrappers run as the real programs (found on the test's
// PATH), which run the stubs in turn.
var diffReal = []string{"env", "xargs", "timeout", "nice", "stdbuf", "nohup", "setsid", "ionice", "flock", "script", "time", "watch", "find", "sh", "bash", "dash"}

// diffSafe says whether one logged call is one diffRules allow.
func diffSafe(call []string) bool {
	switch call[0] {
	case "ls":
		return true
	case "git":
		return len(call) >= 2 && call[1] == "status"
	}
	return false
}

// diffAttacks are issue 47's lines, always among those run.
var diffAttacks = []string{
	"[[ a || rm == victim ]]",
	": &>/dev/null touch x",
	": $'\\' ; touch x #'",
	"[[ a > f ]]",
	"x='a[$(touch P)]'; b[x]=1",
	"x='a[$(touch P)]'; for ((i=x;0;)); do :; done",
	"x='a[$(touch P)]'; [[ -v b[x] ]]",
	"x='a[$(touch P)]'; b[x]+=1",
	"x='$(touch P)'; : ${x@P}",
	"x='a[$(touch P)]'; declare -n r=x; : $r",
	"x='a[$(touch P)]'; echo $((x))",
	"echo x | xargs -i touch ls P",
	"echo x | xargs -i rm v",
	"echo x | xargs -l touch",
	"echo x | xargs --replace touch ls",
	"echo x | xargs -iX touch X",
	"env -S 'touch\\_v'",
	"flock lockf touch x",
	"flock lockf -c 'touch x'",
	"script -qc 'touch x' /dev/null",
	"time -o F rm",
	"\\time -o F ls",
	"env -C .. ls",
	"HOME=.; git status",
	"ls |& touch x",
	"cat <<EOF\n$(touch x)\nEOF",
	"f() { touch x; }; f",
}

type diffGen struct {
	r *rand.Rand
}

func (g *diffGen) pick(list ...string) string { return list[g.r.Intn(len(list))] }

// program spells a stub's name in one of the ways a shell reads as it.
func (g *diffGen) program(name string) string {
	switch g.r.Intn(8) {
	case 0:
		return "'" + name + "'"
	case 1:
		return fmt.Sprintf("$'%s\\x%02x%s'", name[:1], name[1], name[2:])
	case 2:
		return `\` + name
	default:
		return name
	}
}

func (g *diffGen) args(name string) string {
	switch name {
	case "git":
		return g.pick(" status", " status --short", " log", " status '; touch y'")
	case "ls":
		return g.pick("", " -la", " P", " x")
	case "rm":
		return g.pick(" -f x", " v")
	case "echo":
		return g.pick(" hi", " $'a\\tb'", " \"$HOME\"")
	default:
		return g.pick(" x", " y", " P")
	}
}

// wrapper is one wrapper with one of its option forms; xargs's read
// their words from an echo in front.
func (g *diffGen) wrapper() (string, bool) {
	w := g.pick(
		"env", "env -i", "env -u X", "env FOO=1", "env -C sub", "env -C ..", "env --chdir=sub", "env -0", "env --ignore-signal",
		"nice", "nice -n 1", "nice -5", "nice --adjustment=1", "nice -n1",
		"timeout 5", "timeout -s KILL 5", "timeout -k1 5", "timeout --signal=KILL 5", "timeout --foreground 5",
		"stdbuf -oL", "stdbuf -o L", "stdbuf --output=L",
		"nohup", "setsid", "setsid -w", "ionice -c3", "ionice -c 3 -n 7", "ionice -t",
		"flock lockf", "flock -n lockf", "flock -w 5 lockf", "flock -xn lockf",
		"time -p", "command", "command -p", "builtin", "\\time -p", "\\time -o tfile", "command time -a -o tfile",
		"xargs", "xargs -i", "xargs -iX", "xargs -I{}", "xargs -l", "xargs -l1", "xargs -L1", "xargs --replace", "xargs --replace=X", "xargs -0r", "xargs -n1", "xargs -tn1", "xargs -e", "xargs -eEND", "xargs -E END", "xargs --max-lines", "xargs --eof",
		"watch -n1", "watch --differences", "watch -x",
	)
	return w, strings.HasPrefix(w, "xargs")
}

func (g *diffGen) simple() string {
	name := diffStubs[g.r.Intn(len(diffStubs))]
	if g.r.Intn(3) == 0 {
		name = g.pick("ls", "git", "echo", ":", "true")
	}
	prog := name
	if name != ":" && name != "echo" && name != "true" {
		prog = g.program(name)
	}
	line := prog + g.args(name)
	xargs := false
	for g.r.Intn(3) == 0 {
		w, x := g.wrapper()
		xargs = xargs || x
		line = w + " " + line
	}
	switch g.r.Intn(7) {
	case 0:
		line = g.pick("FOO=1 ", "HOME=. ", "GIT_DIR=x ", "X=$'a b' ", "PATH=$PATH ") + line
	case 1:
		line = "env -S " + shquote.Quote(strings.ReplaceAll(line, " ", g.pick("\\_", " ")))
	case 2:
		line = g.pick("script -qc ", "flock lockf -c ", "sh -c ", "bash -c ", "eval ", "watch ") + shquote.Quote(line) + g.pick("", " /dev/null")
	}
	switch g.r.Intn(9) {
	case 0:
		line += " >/dev/null 2>&1"
	case 1:
		line += " > out"
	case 2:
		line += " &>/dev/null"
	case 3:
		line += " &> out"
	case 4:
		line += " 2>&1"
	}
	if xargs {
		line = "echo a | " + line
	}
	return line
}

func (g *diffGen) stmt(depth int) string {
	if depth > 2 || g.r.Intn(2) == 0 {
		return g.simple()
	}
	switch g.r.Intn(16) {
	case 0:
		return "( " + g.list(depth+1) + " )"
	case 1:
		return "{ " + g.list(depth+1) + "; }"
	case 2:
		return "if " + g.simple() + "; then " + g.list(depth+1) + "; fi"
	case 3:
		return "for i in 1; do " + g.list(depth+1) + "; done"
	case 4:
		return "[[ " + g.pick("a", "$x", "-f x", "a || "+g.pick("rm", "touch")+" == x", "a > f", "-v b[x]", "$(touch P)") + " ]] && " + g.simple()
	case 5:
		return "x='a[$(touch P)]'; " + g.pick("b[x]=1", "b[x]+=1", "(( x ))", "echo $((x+1))", "for ((i=x;0;)); do :; done", "declare -n r=x; : $r", ": ${b[x]}", "unset 'b[$(touch P)]'", "test -v 'b[$(touch P)]'") + "; " + g.simple()
	case 6:
		return "x='$(touch P)'; : ${x@P}; " + g.simple()
	case 7:
		return "a=(1 2); " + g.simple()
	case 8:
		return "cat <<EOF\n$(" + g.simple() + ")\nEOF"
	case 9:
		return "f() { " + g.list(depth+1) + "; }; f"
	case 10:
		return ": $'\\' ; " + g.simple() + " #'"
	case 11:
		return g.simple() + " |& " + g.simple()
	case 12:
		return ": &>/dev/null " + g.simple()
	case 13:
		return g.pick("sh", "bash", "dash") + " -c " + shquote.Quote(g.list(depth+1))
	case 14:
		return "HOME=.; " + g.simple()
	default:
		return "echo a | xargs " + g.pick("-i", "-l", "--replace", "-iX") + " " + g.simple()
	}
}

func (g *diffGen) list(depth int) string {
	s := g.stmt(depth)
	for n := g.r.Intn(3) - depth; n > 0; n-- {
		s += g.pick("; ", " && ", " || ", " | ", "\n") + g.stmt(depth)
	}
	return s
}

// diffCase is one generated line and how it runs: in a dialect's shell,
// or as an argv without a shell.
type diffCase struct {
	line    string
	dialect string   // lineshell.Bash or lineshell.POSIX
	argv    []string // when set: run as it is (Codex's exec)
}

func (c diffCase) decide() Verdict {
	if c.argv != nil {
		return diffRules.DecideAnalysis(AnalyzeArgv(c.argv))
	}
	return diffRules.DecideAnalysis(AnalyzeIn(c.line, c.dialect))
}

func (c diffCase) String() string {
	if c.argv != nil {
		return fmt.Sprintf("argv %q", c.argv)
	}
	return fmt.Sprintf("%s line %q", c.dialect, c.line)
}

// diffEnv is the sandbox lines run in.
type diffEnv struct {
	root, bin string
}

func newDiffEnv(t *testing.T) diffEnv {
	t.Helper()
	e := diffEnv{root: t.TempDir()}
	e.bin = filepath.Join(e.root, "bin")
	if err := os.Mkdir(e.bin, 0o755); err != nil {
		t.Fatal(err)
	}
	// one write per call: the commands of a pipeline log at once
	stub := "#!/bin/sh\nl=\"${0##*/}\"\nfor a in \"$@\"; do l=\"$l\t$a\"; done\nprintf '%s\\n' \"$l\" >> \"$CALLS\"\n"
	for _, s := range diffStubs {
		if err := os.WriteFile(filepath.Join(e.bin, s), []byte(stub), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, r := range diffReal {
		p, err := exec.LookPath(r)
		if err != nil {
			continue // that wrapper is not installed: its lines run nothing
		}
		if err := os.Symlink(p, filepath.Join(e.bin, r)); err != nil {
			t.Fatal(err)
		}
	}
	return e
}

// snapshot lists the files under dir with what changes when one is
// written.
func snapshot(dir string) map[string]string {
	out := map[string]string{}
	_ = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		info, err := d.Info()
		if err != nil || d.IsDir() {
			return nil
		}
		out[p] = fmt.Sprintf("%v %d %d", info.Mode(), info.Size(), info.ModTime().UnixNano())
		return nil
	})
	return out
}

// run runs c in a fresh work directory and returns the calls the stubs
// logged and the files written.
func (e diffEnv) run(t *testing.T, i int, c diffCase) (calls [][]string, written []string) {
	t.Helper()
	work := filepath.Join(e.root, fmt.Sprintf("w%d", i))
	home := filepath.Join(work, "home")
	for _, d := range []string{filepath.Join(work, "sub"), home} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Error(err)
			return nil, nil
		}
	}
	for _, f := range []string{"victim", "x", "v", "lockf", filepath.Join("home", ".bashrc")} {
		if err := os.WriteFile(filepath.Join(work, f), []byte("keep\n"), 0o644); err != nil {
			t.Error(err)
			return nil, nil
		}
	}
	log := filepath.Join(e.root, fmt.Sprintf("calls-%d.log", i))
	before := snapshot(work)
	argv := c.argv
	switch {
	case argv != nil:
	case c.dialect == lineshell.POSIX:
		argv = []string{"/bin/sh", "-c", c.line}
	default:
		argv = []string{lineshell.Path(), "--noprofile", "--norc", "-c", c.line}
	}
	// watch never ends: it runs its command at once, then every second
	ctx, cancel := context.WithTimeout(context.Background(), 700*time.Millisecond)
	defer cancel()
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	if !strings.Contains(argv[0], "/") {
		cmd.Path = filepath.Join(e.bin, argv[0])
	}
	cmd.Dir = work
	cmd.Env = []string{"PATH=" + e.bin, "CALLS=" + log, "HOME=" + home, "TERM=dumb"}
	cmd.Stdin = bytes.NewReader(nil)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = time.Second
	t0 := time.Now()
	_ = cmd.Run() // many lines fail; what ran is in the log
	if d := time.Since(t0); d > 2*time.Second {
		t.Logf("slow %v: %s", d, c)
	}
	// a background job of the line may still run: end the group
	if cmd.Process != nil {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	}
	raw, _ := os.ReadFile(log)
	for _, l := range strings.Split(strings.TrimSpace(string(raw)), "\n") {
		if l != "" {
			calls = append(calls, strings.Split(l, "\t"))
		}
	}
	after := snapshot(work)
	for p, st := range after {
		if before[p] != st && !strings.HasPrefix(filepath.Base(p), "calls-") {
			written = append(written, strings.TrimPrefix(p, work+"/"))
		}
	}
	for p := range before {
		if _, ok := after[p]; !ok {
			written = append(written, strings.TrimPrefix(p, work+"/")+" (removed)")
		}
	}
	sort.Strings(written)
	return calls, written
}

func TestShellDiff(t *testing.T) {
	if _, err := exec.LookPath("bash"); err != nil {
		t.Skip("bash is not installed: the lines run by /bin/sh are what lineshell runs then")
	}
	if inLineSandbox(t) {
		return
	}
	n := 100
	if testing.Short() {
		n = 30 // make check's inner loop (the attack lines still all run); make test runs 100, make fuzz 3000
	}
	if s := os.Getenv("AGENTRUN_SHELLDIFF_N"); s != "" {
		n, _ = strconv.Atoi(s)
	}
	seed := time.Now().UnixNano()
	if s := os.Getenv("AGENTRUN_SHELLDIFF_SEED"); s != "" {
		seed, _ = strconv.ParseInt(s, 10, 64)
	}
	t.Logf("seed %d (AGENTRUN_SHELLDIFF_SEED repeats it), %d lines", seed, n)
	e := newDiffEnv(t)
	g := &diffGen{r: rand.New(rand.NewSource(seed))}
	var cases []diffCase
	for _, l := range diffAttacks {
		cases = append(cases, diffCase{line: l, dialect: lineshell.Bash}, diffCase{line: l, dialect: lineshell.POSIX},
			diffCase{argv: []string{"sh", "-c", l}}, diffCase{argv: []string{"bash", "-c", l}})
	}
	for len(cases) < n+4*len(diffAttacks) {
		l := g.list(0)
		switch g.r.Intn(6) {
		case 0:
			cases = append(cases, diffCase{line: l, dialect: lineshell.POSIX})
		case 1:
			cases = append(cases, diffCase{argv: []string{g.pick("sh", "bash", "dash"), "-c", l}})
		default:
			cases = append(cases, diffCase{line: l, dialect: lineshell.Bash})
		}
	}
	// the lines run four at a time (most of a line's time is waiting);
	// each has its own directory and log
	type result struct {
		calls   [][]string
		written []string
	}
	results := make([]result, len(cases))
	next := make(chan int)
	var wg sync.WaitGroup
	for w := 0; w < 4; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				results[i].calls, results[i].written = e.run(t, i, cases[i])
			}
		}()
	}
	for i := range cases {
		next <- i
	}
	close(next)
	wg.Wait()
	var ran, unsafeRan, wrote int
	for i, c := range cases {
		v := c.decide()
		calls, written := results[i].calls, results[i].written
		if v.Decision == Run {
			ran++
		}
		for _, call := range calls {
			if diffSafe(call) {
				continue
			}
			unsafeRan++
			if v.Decision == Run {
				t.Errorf("seed %d: %s ran %q, which no rule of %q allows, yet it was decided run (%s)", seed, c, strings.Join(call, " "), diffRules.Allow, v.Reason)
			}
		}
		if len(written) > 0 {
			wrote++
			if v.Decision == Run {
				t.Errorf("seed %d: %s wrote %q and no rule allows that, yet it was decided run (%s)", seed, c, written, v.Reason)
			}
		}
	}
	t.Logf("%d lines: %d decided run, %d unallowed calls ran, %d lines wrote files", len(cases), ran, unsafeRan, wrote)
	// The grammar must reach both sides, or the test proves nothing.
	if ran < len(cases)/30 || unsafeRan < len(cases)/10 || wrote < len(cases)/20 {
		t.Errorf("the grammar is too one-sided: %d of %d lines run, %d unallowed calls, %d lines wrote: tune it", ran, len(cases), unsafeRan, wrote)
	}
}
