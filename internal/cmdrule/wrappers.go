package cmdrule

import (
	"strings"

	"github.com/agentrun/agentrun.nvim/internal/lineshell"
	"mvdan.cc/sh/v3/syntax"
)

// Why this file is long: it is a table of the programs that run other
// programs (sudo, env, nice, timeout, xargs, sh -c, …), one entry each
// with how its options take arguments: long because the world has many of
// them, each short.

// A wrapper looks through a program that runs another one (sudo rm …)
// or a script (sh -c '…'). It records what it finds and returns true, or
// returns false to have cmd recorded as it is.
type wrapper func(a *analyzer, cmd Command, depth int) bool

var wrappers map[string]wrapper

func init() {
	wrappers = map[string]wrapper{
		"command": wrapCommand,
		"builtin": inner(opts{}),
		"exec":    wrapExec,
		"nohup":   inner(opts{}),
		"nice":    inner(opts{arg: "n", long: []string{"adjustment="}, numeric: true}),
		"time":    inner(opts{flags: "pvq", arg: "fo", long: []string{"portability", "verbose", "quiet", "format=", "output=", "append"}}),
		"timeout": wrapTimeout,
		"xargs":   wrapXargs,
		"env":     wrapEnv,
		"sudo":    wrapSudo,
		"doas":    outerAndInner(opts{flags: "ns", arg: "uC"}),
		"stdbuf":  inner(opts{arg: "ioe", long: []string{"input=", "output=", "error="}}),
		"setsid":  inner(opts{flags: "cfw", long: []string{"ctty", "fork", "wait"}}),
		"ionice":  inner(opts{flags: "tu", arg: "cn", long: []string{"class=", "classdata=", "ignore"}}),
		"chroot":  wrapChroot,
		"find":    wrapFind,
		"watch":   wrapWatch,
		"eval":    wrapEval,
		"source":  wrapSource,
		".":       wrapSource,
		"trap":    wrapTrap,
		"alias":   wrapAlias,
		"hash":    wrapHash,
		"enable":  unknownWith("enable can load new builtins that replace any command"),
		"git":     wrapGit,
		"su":      wrapDashC("c", "command"),
		"runuser": wrapDashC("c", "command"),
		"script":  wrapDashC("c", "command"),
		"flock":   wrapDashC("c", "command"),
		"busybox": inner(opts{}),
	}
	for _, sh := range []string{"sh", "bash", "dash", "ash", "posh", "rbash"} {
		wrappers[sh] = wrapShell
	}
	for _, sh := range []string{"zsh", "ksh", "mksh", "yash", "fish", "csh", "tcsh", "pwsh", "nu", "elvish", "xonsh"} {
		wrappers[sh] = unknownWith("agentrun does not read this shell's syntax")
	}
}

// opts describes a wrapper's options before the program it runs.
type opts struct {
	flags string   // short options without a value
	arg   string   // short options with a value
	long  []string // long options; "name=" takes a value
	// numeric allows -N (nice -5).
	numeric bool
	// assigns allows NAME=value words after the options (env, sudo).
	assigns bool
}

// skip returns the index in args of the first word after the options
// (and assignments), the assignments, and "" — or a reason the words
// cannot be read before they run.
func (o opts) skip(args []Word) (int, []Word, string) {
	var assigns []Word
	for i := 0; i < len(args); i++ {
		w := args[i]
		if !w.Known {
			return 0, nil, "its option " + w.Source + " is known only when it runs"
		}
		v := w.Value
		if v == "--" {
			return i + 1, assigns, ""
		}
		if o.assigns && isAssign(v) {
			assigns = append(assigns, w)
			continue
		}
		if len(assigns) > 0 || !strings.HasPrefix(v, "-") || v == "-" {
			return i, assigns, ""
		}
		if strings.HasPrefix(v, "--") {
			name, _, hasValue := strings.Cut(v[2:], "=")
			known := false
			for _, l := range o.long {
				if l == name {
					known = true
				} else if l == name+"=" {
					known = true
					if !hasValue {
						i++
					}
				}
			}
			if !known {
				return 0, nil, "its option " + v + " is not one agentrun knows"
			}
			continue
		}
		if o.numeric && isDigits(v[1:]) {
			continue
		}
		for j := 1; j < len(v); j++ {
			c := v[j]
			switch {
			case strings.IndexByte(o.flags, c) >= 0:
			case strings.IndexByte(o.arg, c) >= 0:
				if j == len(v)-1 {
					i++
				}
				j = len(v)
			default:
				return 0, nil, "its option " + v + " is not one agentrun knows"
			}
		}
	}
	return len(args), assigns, ""
}

// isAssign says whether v is NAME=value.
func isAssign(v string) bool {
	name, _, ok := strings.Cut(v, "=")
	if !ok || name == "" {
		return false
	}
	for i, r := range name {
		if !(r == '_' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || i > 0 && r >= '0' && r <= '9') {
			return false
		}
	}
	return true
}

// runInner records what cmd runs from its argument i on, with the extra
// assignments.
func (a *analyzer) runInner(cmd Command, i int, assigns []Word, depth int) {
	for _, as := range assigns {
		name, _, _ := strings.Cut(as.Value, "=")
		if sensitive(name) {
			a.unknownf("it sets %s, which changes what later commands run", name)
		}
	}
	via := cmd.Program
	if cmd.Via != "" {
		via = cmd.Via
	}
	all := append(append([]Word(nil), cmd.Assigns...), assigns...)
	a.words(all, cmd.Args[i:], cmd.Writes, cmd.MoreArgs, depth+1, via)
}

// inner: a wrapper whose options o come before the program it runs; the
// wrapper alone (no program) is recorded as it is.
func inner(o opts) wrapper {
	return func(a *analyzer, cmd Command, depth int) bool {
		i, assigns, why := o.skip(cmd.Args)
		if why != "" {
			a.unknownf("%s: %s", cmd.Program, why)
			return true
		}
		if i >= len(cmd.Args) {
			return false
		}
		a.runInner(cmd, i, assigns, depth)
		return true
	}
}

// outerAndInner: as inner, and the wrapper is recorded too (sudo runs as
// another user: a rule must allow that as well).
func outerAndInner(o opts) wrapper {
	in := inner(o)
	return func(a *analyzer, cmd Command, depth int) bool {
		a.commands = append(a.commands, cmd)
		in(a, cmd, depth)
		return true
	}
}

func wrapCommand(a *analyzer, cmd Command, depth int) bool {
	for _, w := range cmd.Args {
		if w.Known && (w.Value == "-v" || w.Value == "-V" || strings.HasPrefix(w.Value, "-") && strings.ContainsAny(w.Value, "vV")) {
			return false // command -v only says where a program is
		}
		if !w.Known || !strings.HasPrefix(w.Value, "-") {
			break
		}
	}
	return inner(opts{flags: "p"})(a, cmd, depth)
}

func wrapExec(a *analyzer, cmd Command, depth int) bool {
	return inner(opts{flags: "cl", arg: "a"})(a, cmd, depth)
}

func wrapTimeout(a *analyzer, cmd Command, depth int) bool {
	o := opts{flags: "v", arg: "sk", long: []string{"signal=", "kill-after=", "foreground", "preserve-status", "verbose"}}
	i, _, why := o.skip(cmd.Args)
	if why != "" {
		a.unknownf("timeout: %s", why)
		return true
	}
	if i+1 >= len(cmd.Args) {
		return false
	}
	a.runInner(cmd, i+1, nil, depth) // after the duration
	return true
}

func wrapXargs(a *analyzer, cmd Command, depth int) bool {
	o := opts{
		flags: "0rtpxe", arg: "adEIiLlnPs",
		long: []string{"null", "no-run-if-empty", "verbose", "interactive", "exit", "open-tty", "arg-file=", "delimiter=", "eof=", "replace=", "max-lines=", "max-args=", "max-procs=", "max-chars=", "process-slot-var=", "show-limits"},
	}
	i, _, why := o.skip(cmd.Args)
	if why != "" {
		a.unknownf("xargs: %s", why)
		return true
	}
	inner := cmd
	inner.MoreArgs = true
	if i >= len(cmd.Args) {
		inner.Args = []Word{{Value: "echo", Source: "echo", Known: true}}
		i = 0
	}
	a.runInner(inner, i, nil, depth)
	return true
}

func wrapEnv(a *analyzer, cmd Command, depth int) bool {
	o := opts{flags: "i0v", arg: "uC", long: []string{"ignore-environment", "null", "unset=", "chdir=", "debug", "split-string="}, assigns: true}
	args := cmd.Args
	// -S STRING / --split-string: env splits STRING into words itself.
	for i, w := range args {
		if !w.Known || !strings.HasPrefix(w.Value, "-") || isAssign(w.Value) {
			break
		}
		var str string
		var rest []Word
		switch {
		case w.Value == "-S" || w.Value == "--split-string":
			if i+1 >= len(args) {
				return false
			}
			if !args[i+1].Known {
				a.unknownf("env -S: its string is known only when it runs")
				return true
			}
			str, rest = args[i+1].Value, args[i+2:]
		case strings.HasPrefix(w.Value, "-S"):
			str, rest = w.Value[2:], args[i+1:]
		case strings.HasPrefix(w.Value, "--split-string="):
			str, rest = strings.TrimPrefix(w.Value, "--split-string="), args[i+1:]
		default:
			continue
		}
		split, ok := splitWords(str)
		if !ok {
			a.unknownf("env -S: its string %q cannot be read as words before it runs", str)
			return true
		}
		cmd.Args = append(append(append([]Word(nil), args[:i]...), split...), rest...)
		return wrapEnv(a, cmd, depth)
	}
	i, assigns, why := o.skip(args)
	if why != "" {
		a.unknownf("env: %s", why)
		return true
	}
	if i >= len(args) {
		return false // env alone prints the environment
	}
	a.runInner(cmd, i, assigns, depth)
	return true
}

// splitWords reads s as the plain words of one simple command.
func splitWords(s string) ([]Word, bool) {
	f, err := syntax.NewParser(syntax.Variant(syntax.LangBash)).Parse(strings.NewReader(s), "")
	if err != nil || len(f.Stmts) != 1 {
		return nil, false
	}
	call, ok := f.Stmts[0].Cmd.(*syntax.CallExpr)
	if !ok || len(call.Assigns) > 0 || len(f.Stmts[0].Redirs) > 0 {
		return nil, false
	}
	var out []Word
	for _, w := range call.Args {
		out = append(out, word(w))
	}
	return out, true
}

func wrapSudo(a *analyzer, cmd Command, depth int) bool {
	for _, w := range cmd.Args {
		if !w.Known || !strings.HasPrefix(w.Value, "-") || w.Value == "--" {
			break
		}
		if strings.HasPrefix(w.Value, "--") {
			continue
		}
		if strings.ContainsAny(w.Value[1:], "elvkKV") && !strings.ContainsAny(w.Value[1:], "ughpCDrtUTR") {
			return false // sudo -l, -v, -k, -e: no program of its own
		}
	}
	o := opts{
		flags: "AbEHiknPSsBN", arg: "ughpCDrtUTR", assigns: true,
		long: []string{"askpass", "background", "preserve-env", "preserve-env=", "set-home", "login", "non-interactive", "preserve-groups", "stdin", "shell", "bell",
			"user=", "group=", "host=", "prompt=", "close-from=", "chdir=", "role=", "type=", "other-user=", "command-timeout=", "chroot="},
	}
	return outerAndInner(o)(a, cmd, depth)
}

func wrapChroot(a *analyzer, cmd Command, depth int) bool {
	o := opts{long: []string{"userspec=", "groups=", "skip-chdir"}}
	i, _, why := o.skip(cmd.Args)
	if why != "" {
		a.unknownf("chroot: %s", why)
		return true
	}
	a.commands = append(a.commands, cmd)
	if i+1 < len(cmd.Args) {
		a.runInner(cmd, i+1, nil, depth) // after the new root
	}
	return true
}

// wrapFind records find itself and each program its -exec, -execdir,
// -ok and -okdir run.
func wrapFind(a *analyzer, cmd Command, depth int) bool {
	a.commands = append(a.commands, cmd)
	args := cmd.Args
	for i := 0; i < len(args); i++ {
		if !args[i].Known {
			continue
		}
		switch args[i].Value {
		case "-exec", "-execdir", "-ok", "-okdir":
		default:
			continue
		}
		j := i + 1
		for j < len(args) && !(args[j].Known && (args[j].Value == ";" || args[j].Value == "+")) {
			j++
		}
		if j > i+1 {
			a.words(nil, args[i+1:j], nil, false, depth+1, "find "+args[i].Value)
		}
		i = j
	}
	return true
}

func wrapWatch(a *analyzer, cmd Command, depth int) bool {
	o := opts{flags: "bcCdeEgprtwx", arg: "nq", long: []string{"beep", "color", "no-color", "differences", "differences=", "errexit", "exec", "chgexit", "interval=", "precise", "no-rerun", "no-title", "no-wrap", "no-linewrap", "equexit="}}
	i, _, why := o.skip(cmd.Args)
	if why != "" {
		a.unknownf("watch: %s", why)
		return true
	}
	if i >= len(cmd.Args) {
		return false
	}
	var parts []string
	for _, w := range cmd.Args[i:] {
		if !w.Known {
			a.unknownf("watch: the command it runs is known only when it runs")
			return true
		}
		parts = append(parts, w.Value)
	}
	a.script(strings.Join(parts, " "), depth+1, "watch", AnyShell) // sh -c
	return true
}

// wrapEval: eval runs text it builds when it runs; when that text is
// plain, its commands are still looked at, so a deny rule refuses them.
func wrapEval(a *analyzer, cmd Command, depth int) bool {
	a.unknownf("eval runs text it builds when it runs")
	var parts []string
	for _, w := range cmd.Args {
		if !w.Known {
			return true
		}
		parts = append(parts, w.Value)
	}
	a.script(strings.Join(parts, " "), depth+1, "eval", a.dialect)
	return true
}

func wrapSource(a *analyzer, cmd Command, depth int) bool {
	a.unknownf("%s runs the commands of a file the line does not show", cmd.Program)
	a.commands = append(a.commands, cmd)
	return true
}

// wrapTrap: trap's action runs later, as a script.
func wrapTrap(a *analyzer, cmd Command, depth int) bool {
	a.commands = append(a.commands, cmd)
	if len(cmd.Args) < 2 || cmd.Args[0].Known && strings.HasPrefix(cmd.Args[0].Value, "-") {
		return true
	}
	if !cmd.Args[0].Known {
		a.unknownf("trap's action is known only when it runs")
		return true
	}
	a.script(cmd.Args[0].Value, depth+1, "trap", a.dialect)
	return true
}

func wrapAlias(a *analyzer, cmd Command, depth int) bool {
	for _, w := range cmd.Args {
		if !w.Known || strings.Contains(w.Value, "=") {
			a.unknownf("alias can change what later words run")
			break
		}
	}
	return false
}

func wrapHash(a *analyzer, cmd Command, depth int) bool {
	for _, w := range cmd.Args {
		if !w.Known || strings.HasPrefix(w.Value, "-") && strings.Contains(w.Value, "p") {
			a.unknownf("hash -p changes which file a program name runs")
			break
		}
	}
	return false
}

func unknownWith(why string) wrapper {
	return func(a *analyzer, cmd Command, depth int) bool {
		if len(cmd.Args) > 0 {
			a.unknownf("%s", why)
		}
		return false
	}
}

// wrapGit: git -c and --config-env can set any program git runs (an
// alias with !, core.pager, core.sshCommand…).
func wrapGit(a *analyzer, cmd Command, depth int) bool {
	for _, w := range cmd.Args {
		if !w.Known {
			break
		}
		v := w.Value
		if v == "-c" || strings.HasPrefix(v, "--config-env") || strings.HasPrefix(v, "-c") && len(v) > 2 && strings.Contains(v, "=") {
			a.unknownf("git -c can make git run any program")
			break
		}
		if !strings.HasPrefix(v, "-") {
			break // the subcommand
		}
	}
	return false
}

// wrapDashC: su -c CMD, script -c CMD, flock … -c CMD: the value of the
// option runs as a script; the program is recorded too.
func wrapDashC(short, long string) wrapper {
	return func(a *analyzer, cmd Command, depth int) bool {
		a.commands = append(a.commands, cmd)
		for i, w := range cmd.Args {
			if !w.Known {
				continue
			}
			var script *Word
			switch {
			case w.Value == "-"+short || w.Value == "--"+long:
				if i+1 < len(cmd.Args) {
					script = &cmd.Args[i+1]
				}
			case strings.HasPrefix(w.Value, "--"+long+"="):
				s := Word{Value: strings.TrimPrefix(w.Value, "--"+long+"="), Known: true}
				script = &s
			}
			if script == nil {
				continue
			}
			if !script.Known {
				a.unknownf("%s -%s: the command is known only when it runs", cmd.Program, short)
				continue
			}
			a.script(script.Value, depth+1, cmd.Program+" -"+short, AnyShell) // $SHELL -c
		}
		return true
	}
}

// shellDialect is the syntax the shell named prog reads: bash's for
// bash, either for sh (dash here, bash elsewhere) and the other POSIX
// shells.
func shellDialect(prog string) string {
	if prog == "bash" || prog == "rbash" {
		return lineshell.Bash
	}
	return AnyShell
}

// wrapShell: sh -c SCRIPT (and -lc, -ec, …) runs SCRIPT, which is read
// like the line; a shell given a file or stdin is a program of its own.
func wrapShell(a *analyzer, cmd Command, depth int) bool {
	args := cmd.Args
	dashC := false
	i := 0
	for ; i < len(args); i++ {
		w := args[i]
		if !w.Known {
			a.unknownf("%s: its option %s is known only when it runs", cmd.Program, w.Source)
			return true
		}
		v := w.Value
		if v == "--" || v == "-" {
			i++
			break
		}
		if !strings.HasPrefix(v, "-") && !strings.HasPrefix(v, "+") {
			break
		}
		if strings.HasPrefix(v, "--") {
			switch v {
			case "--rcfile", "--init-file":
				i++
			}
			continue
		}
		for _, c := range v[1:] {
			switch c {
			case 'c':
				dashC = true
			case 'o', 'O':
				i++ // -o pipefail
			}
		}
	}
	if !dashC {
		// a script from a file or from its input: what it runs cannot be
		// seen in the line
		a.unknownf("%s runs a script the line does not show (from its input or a file)", cmd.Program)
		a.commands = append(a.commands, cmd)
		return true
	}
	if i >= len(args) {
		a.unknownf("%s -c without a command", cmd.Program)
		return true
	}
	if !args[i].Known {
		a.unknownf("the script of %s -c is known only when it runs", cmd.Program)
		return true
	}
	for _, w := range cmd.Writes {
		a.commands = append(a.commands, Command{Writes: []Redirect{w}, Via: cmd.Program + " -c"})
	}
	a.script(args[i].Value, depth+1, cmd.Program+" -c", shellDialect(cmd.Program))
	return true
}
