package cmdrule

import (
	"fmt"
	"path"
	"strings"

	"github.com/agentrun/agentrun.nvim/internal/lineshell"
	"github.com/agentrun/agentrun.nvim/internal/shquote"
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
		"nohup":   wrapNohup,
		"nice":    inner(opts{arg: "n", long: []string{"adjustment=:n", "help", "version"}, numeric: true}),
		"time":    wrapTime,
		"timeout": wrapTimeout,
		"xargs":   wrapXargs,
		"env":     wrapEnv,
		"sudo":    wrapSudo,
		"doas":    outerAndInner(opts{flags: "ns", arg: "uCa"}),
		"stdbuf":  inner(opts{arg: "ioe", long: []string{"input=:i", "output=:o", "error=:e", "help", "version"}}),
		"setsid":  inner(opts{flags: "cfwhV", long: []string{"ctty", "fork", "wait", "help", "version"}}),
		"ionice":  wrapIonice,
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
		"su":      wrapSu,
		"runuser": wrapSu,
		"script":  wrapScript,
		"flock":   wrapFlock,
		"busybox": inner(opts{}),
	}
	for _, sh := range readShells {
		wrappers[sh] = wrapShell
	}
	for _, sh := range unreadShells {
		wrappers[sh] = unknownWith("agentrun does not read this shell's syntax")
	}
}

// readShells are the shells whose -c script is read as bash or POSIX sh;
// unreadShells those whose syntax is not read (their scripts are asked).
var (
	readShells   = []string{"sh", "bash", "dash", "ash", "posh", "rbash"}
	unreadShells = []string{"zsh", "ksh", "mksh", "yash", "fish", "csh", "tcsh", "pwsh", "nu", "elvish", "xonsh"}
)

// opts describes a wrapper's options before the program it runs, as
// its getopt_long reads them: short options combine (-0rt), a value
// follows attached or as the next word, an optional value only attached
// (xargs -i, -iX); long options take unique prefixes (--repl=X), a
// required value after = or as the next word, an optional one only
// after =.
type opts struct {
	flags    string // short options without a value
	arg      string // short options with a value
	optional string // short options with an optional, attached value
	// long are the long options: "name", "name=" (a value) or "name?"
	// (an optional value), each with ":c" when it is short option c.
	long []string
	// numeric allows -N (nice -5, -+5, --5).
	numeric bool
	// assigns allows NAME=value words after the options (env, sudo).
	assigns bool
	// permute reads options after operands too (script).
	permute bool
}

// opt is one option read: its short letter or long name (a long option
// with a short equivalent is named by the letter), and its value.
type opt struct {
	name     string
	value    string
	hasValue bool
}

// parsed is what skip read.
type parsed struct {
	// i is the index of the first word after the options.
	i       int
	assigns []Word
	seen    []opt
	// operands are the words that are not options, when permute.
	operands []Word
}

// has says whether one of names was given, and the last value.
func (p parsed) has(names ...string) (string, bool) {
	v, ok := "", false
	for _, o := range p.seen {
		for _, n := range names {
			if o.name == n {
				v, ok = o.value, true
			}
		}
	}
	return v, ok
}

// findLong returns the long option name matches (exactly, or as the
// only one it starts), its kind ('=', '?' or 0) and its short letter.
func (o opts) findLong(name string) (full string, kind byte, short string, ok bool) {
	var hits []string
	for _, l := range o.long {
		n, _, _ := strings.Cut(l, ":")
		base := strings.TrimRight(n, "=?")
		if base == name {
			hits = []string{l}
			break
		}
		if strings.HasPrefix(base, name) {
			hits = append(hits, l)
		}
	}
	if len(hits) != 1 {
		return "", 0, "", false
	}
	n, alias, _ := strings.Cut(hits[0], ":")
	full = strings.TrimRight(n, "=?")
	if len(n) > len(full) {
		kind = n[len(full)]
	}
	if alias == "" {
		alias = full
	}
	return full, kind, alias, true
}

// skip reads the options of args — or says why they cannot be read
// before they run.
func (o opts) skip(args []Word) (parsed, string) {
	var p parsed
	for i := 0; i < len(args); i++ {
		w := args[i]
		if !w.Known {
			return p, "its option " + w.Source + " is known only when it runs"
		}
		v := w.Value
		if v == "--" {
			p.i = i + 1
			if o.permute {
				p.operands = append(p.operands, args[i+1:]...)
				p.i = len(args)
			}
			return p, ""
		}
		if o.assigns && isAssign(v) {
			p.assigns = append(p.assigns, w)
			continue
		}
		if len(p.assigns) > 0 || !strings.HasPrefix(v, "-") || v == "-" {
			if o.permute {
				p.operands = append(p.operands, w)
				continue
			}
			p.i = i
			return p, ""
		}
		if o.numeric {
			d := v[1:]
			if d != "" && (d[0] == '-' || d[0] == '+') {
				d = d[1:]
			}
			if d != "" && d[0] >= '0' && d[0] <= '9' {
				p.seen = append(p.seen, opt{name: "n", value: v[1:], hasValue: true})
				continue
			}
		}
		if strings.HasPrefix(v, "--") {
			name, value, hasValue := strings.Cut(v[2:], "=")
			_, kind, short, ok := o.findLong(name)
			if !ok {
				return p, "its option " + v + " is not one agentrun knows"
			}
			switch kind {
			case '=':
				if !hasValue {
					i++
					if i >= len(args) {
						return p, "its option " + v + " lacks its value"
					}
					if !args[i].Known {
						return p, "the value of its option " + v + " is known only when it runs"
					}
					value, hasValue = args[i].Value, true
				}
			case '?':
			default:
				if hasValue {
					return p, "its option " + v + " takes no value"
				}
			}
			p.seen = append(p.seen, opt{name: short, value: value, hasValue: hasValue})
			continue
		}
		for j := 1; j < len(v); j++ {
			c := v[j]
			switch {
			case strings.IndexByte(o.flags, c) >= 0:
				p.seen = append(p.seen, opt{name: string(c)})
			case strings.IndexByte(o.optional, c) >= 0:
				p.seen = append(p.seen, opt{name: string(c), value: v[j+1:], hasValue: j+1 < len(v)})
				j = len(v)
			case strings.IndexByte(o.arg, c) >= 0:
				value := v[j+1:]
				if j == len(v)-1 {
					i++
					if i >= len(args) {
						return p, "its option -" + string(c) + " lacks its value"
					}
					if !args[i].Known {
						return p, "the value of its option -" + string(c) + " is known only when it runs"
					}
					value = args[i].Value
				}
				p.seen = append(p.seen, opt{name: string(c), value: value, hasValue: true})
				j = len(v)
			default:
				return p, "its option " + v + " is not one agentrun knows"
			}
		}
	}
	p.i = len(args)
	return p, ""
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
		p, why := o.skip(cmd.Args)
		if why != "" {
			a.unknownf("%s: %s", cmd.Program, why)
			return true
		}
		if p.i >= len(cmd.Args) {
			return false
		}
		a.runInner(cmd, p.i, p.assigns, depth)
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

// wrapTime: GNU time (time the keyword is bash's own syntax, a
// TimeClause). -o FILE writes FILE.
func wrapTime(a *analyzer, cmd Command, depth int) bool {
	o := opts{flags: "apqvV", arg: "fo", long: []string{"append:a", "format=:f", "output=:o", "portability:p", "quiet:q", "verbose:v", "version:V", "help"}}
	p, why := o.skip(cmd.Args)
	if why != "" {
		a.unknownf("time: %s", why)
		return true
	}
	if out, ok := p.has("o"); ok {
		op := ">"
		if _, app := p.has("a"); app {
			op = ">>"
		}
		// the program it runs is judged with the file time writes
		cmd.Writes = append(append([]Redirect(nil), cmd.Writes...), Redirect{Op: op, Target: Word{Value: out, Source: shquote.Quote(out), Known: true}})
	}
	if p.i >= len(cmd.Args) {
		a.commands = append(a.commands, cmd)
		return true
	}
	a.runInner(cmd, p.i, nil, depth)
	return true
}

func wrapTimeout(a *analyzer, cmd Command, depth int) bool {
	o := opts{flags: "vfp", arg: "sk", long: []string{"signal=:s", "kill-after=:k", "foreground:f", "preserve-status:p", "verbose:v", "help", "version"}}
	p, why := o.skip(cmd.Args)
	if why != "" {
		a.unknownf("timeout: %s", why)
		return true
	}
	if p.i+1 >= len(cmd.Args) {
		return false
	}
	a.runInner(cmd, p.i+1, nil, depth) // after the duration
	return true
}

// wrapXargs: findutils' xargs, "+0a:E:e::i::I:l::L:n:oprs:txP:d:": -e,
// -i and -l take an optional value, attached only.
func wrapXargs(a *analyzer, cmd Command, depth int) bool {
	o := opts{
		flags: "0oprtx", arg: "adEILnPs", optional: "eil",
		long: []string{"null:0", "arg-file=:a", "delimiter=:d", "eof?:e", "replace?:i", "max-lines?:l", "max-args=:n", "open-tty:o", "interactive:p",
			"no-run-if-empty:r", "max-chars=:s", "verbose:t", "show-limits", "exit:x", "max-procs=:P", "process-slot-var=", "help", "version"},
	}
	p, why := o.skip(cmd.Args)
	if why != "" {
		a.unknownf("xargs: %s", why)
		return true
	}
	inner := cmd
	inner.MoreArgs = true
	i := p.i
	if i >= len(cmd.Args) {
		inner.Args = []Word{{Value: "echo", Source: "echo", Known: true}}
		i = 0
	}
	a.runInner(inner, i, nil, depth)
	return true
}

// wrapEnv: coreutils' env, "+C:iS:u:v0" (and -a in newer ones). -S
// splits its string into words as env does; -C DIR changes directory
// as cd does, so it is judged as a cd.
func wrapEnv(a *analyzer, cmd Command, depth int) bool {
	args := cmd.Args
	// -S STRING / --split-string: env splits STRING into words itself.
	for i, w := range args {
		if !w.Known || !strings.HasPrefix(w.Value, "-") || isAssign(w.Value) || w.Value == "--" {
			break
		}
		var str string
		var rest []Word
		switch {
		case w.Value == "-S" || w.Value == "--split-string" || w.Value == "--split" || w.Value == "--s":
			if i+1 >= len(args) {
				return false
			}
			if !args[i+1].Known {
				a.unknownf("env -S: its string is known only when it runs")
				return true
			}
			str, rest = args[i+1].Value, args[i+2:]
		case strings.HasPrefix(w.Value, "-") && !strings.HasPrefix(w.Value, "--") && strings.Contains(w.Value, "S"):
			if strings.Trim(w.Value[1:strings.Index(w.Value, "S")], "iv0") != "" {
				a.unknownf("env: its option %s is not one agentrun reads", w.Value)
				return true
			}
			str, rest = w.Value[strings.Index(w.Value, "S")+1:], args[i+1:]
			if str == "" {
				if i+1 >= len(args) || !args[i+1].Known {
					a.unknownf("env -S: its string is known only when it runs")
					return true
				}
				str, rest = args[i+1].Value, args[i+2:]
			}
		case strings.HasPrefix(w.Value, "--s") && strings.Contains(w.Value, "="):
			_, str, _ = strings.Cut(w.Value, "=")
			rest = args[i+1:]
		default:
			continue
		}
		split, why := envSplit(str)
		if why != "" {
			a.unknownf("env -S: %s", why)
			return true
		}
		cmd.Args = append(append(append([]Word(nil), args[:i]...), split...), rest...)
		return wrapEnv(a, cmd, depth)
	}
	o := opts{flags: "i0v", arg: "uCa", assigns: true, long: []string{"ignore-environment:i", "null:0", "unset=:u", "chdir=:C", "debug:v", "argv0=:a",
		"block-signal?", "default-signal?", "ignore-signal?", "list-signal-handling", "help", "version"}}
	p, why := o.skip(args)
	if why != "" {
		a.unknownf("env: %s", why)
		return true
	}
	if p.i >= len(args) {
		return false // env alone prints the environment
	}
	for _, op := range p.seen {
		if op.name == "C" {
			// a cd: it leaves the project unless it goes down into it
			a.commands = append(a.commands, Command{Program: "cd", Args: []Word{{Value: op.value, Source: shquote.Quote(op.value), Known: true}}, Via: "env -C"})
		}
		if op.name == "a" {
			a.unknownf("env -a runs the program under another name")
		}
	}
	a.runInner(cmd, p.i, p.assigns, depth)
	return true
}

// envSplit splits s as env -S does (coreutils' env.c): whitespace
// separates words; '…' keeps all but \\ and \'; "…" and bare words take
// the escapes \\ \' \" \_ \t \n \r \f \v \# \$, \_ being a space (outside
// quotes a separator); # at a word's start begins a comment. ${VAR} and
// \c are not read: they make the line asked.
func envSplit(s string) ([]Word, string) {
	var out []Word
	var cur strings.Builder
	inWord := false
	flush := func() {
		if inWord {
			v := cur.String()
			out = append(out, Word{Value: v, Source: shquote.Quote(v), Known: true})
		}
		cur.Reset()
		inWord = false
	}
	escapes := map[byte]string{'\\': "\\", '\'': "'", '"': "\"", 't': "\t", 'n': "\n", 'r': "\r", 'f': "\f", 'v': "\v", '#': "#", '$': "$"}
	sq, dq := false, false
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case sq:
			if c == '\'' {
				sq = false
			} else if c == '\\' && i+1 < len(s) && (s[i+1] == '\\' || s[i+1] == '\'') {
				i++
				cur.WriteByte(s[i])
			} else {
				cur.WriteByte(c)
			}
		case c == '\'' && !dq:
			sq, inWord = true, true
		case c == '"':
			dq, inWord = !dq, true
		case c == '$':
			return nil, "its string expands a variable, known only when it runs"
		case c == '\\':
			if i+1 >= len(s) {
				return nil, "its string ends in a backslash"
			}
			i++
			n := s[i]
			if n == '_' {
				if dq {
					cur.WriteByte(' ')
				} else {
					flush()
				}
				continue
			}
			e, ok := escapes[n]
			if !ok {
				return nil, fmt.Sprintf("its string has the escape \\%c, which agentrun does not read", n)
			}
			cur.WriteString(e)
			inWord = true
		case !dq && strings.IndexByte(" \t\n\v\f\r", c) >= 0:
			flush()
		case !dq && c == '#' && !inWord:
			i = len(s)
		default:
			cur.WriteByte(c)
			inWord = true
		}
	}
	if sq || dq {
		return nil, "its string has an unterminated quote"
	}
	flush()
	return out, ""
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
		// sudo 1.9: "+Aa:BbC:c:D:Eeg:Hh::iKklNnPp:R:r:SsT:t:U:u:Vv"
		flags: "AbBEHiKknNPSs", arg: "acCDgpRrTtUu", optional: "h", assigns: true,
		long: []string{"askpass:A", "background:b", "preserve-env?:E", "set-home:H", "login:i", "non-interactive:n", "preserve-groups:P", "stdin:S", "shell:s", "bell:B",
			"user=:u", "group=:g", "host=:h", "prompt=:p", "close-from=:C", "chdir=:D", "role=:r", "type=:t", "other-user=:U", "command-timeout=:T", "chroot=:R", "auth-type=:a", "login-class=:c"},
	}
	return outerAndInner(o)(a, cmd, depth)
}

func wrapChroot(a *analyzer, cmd Command, depth int) bool {
	o := opts{long: []string{"userspec=", "groups=", "skip-chdir"}}
	p, why := o.skip(cmd.Args)
	if why != "" {
		a.unknownf("chroot: %s", why)
		return true
	}
	a.commands = append(a.commands, cmd)
	if p.i+1 < len(cmd.Args) {
		a.runInner(cmd, p.i+1, nil, depth) // after the new root
	}
	return true
}

// wrapFind records find itself and each program its -exec, -execdir,
// -ok and -okdir run. Its actions that write count as what they are:
// -fprint, -fprint0, -fprintf and -fls FILE write FILE (as > FILE does),
// -delete removes what find finds (an rm run by find): a rule allowing
// "find *" allows neither.
func wrapFind(a *analyzer, cmd Command, depth int) bool {
	args := cmd.Args
	var writes []Redirect
	deletes := false
	for i := 0; i < len(args); i++ {
		if !args[i].Known {
			continue
		}
		switch args[i].Value {
		case "-fprint", "-fprint0", "-fprintf", "-fls":
			if i+1 < len(args) {
				writes = append(writes, Redirect{Op: ">", Target: args[i+1]})
			}
		case "-delete":
			deletes = true
		}
	}
	if len(writes) > 0 {
		cmd.Writes = append(append([]Redirect(nil), cmd.Writes...), writes...)
	}
	a.commands = append(a.commands, cmd)
	if deletes {
		a.commands = append(a.commands, Command{Program: "rm", MoreArgs: true, Via: "find -delete"})
	}
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

// wrapNohup: nohup runs its program with output to nohup.out (appended)
// when its standard output is a terminal, as it is in agentrun's ptys:
// unless the line sends its output elsewhere, the program is judged with
// that write. (A redirection to /dev/null is not among the writes, so
// nohup CMD >/dev/null is judged as writing nohup.out too: asked, never
// run by mistake.)
func wrapNohup(a *analyzer, cmd Command, depth int) bool {
	stdout := false
	for _, w := range cmd.Writes {
		switch strings.TrimPrefix(w.Op, "1") {
		case ">", ">>", ">|", "&>", "&>>", ">&":
			stdout = true
		}
	}
	if !stdout {
		out := "nohup.out"
		cmd.Writes = append(append([]Redirect(nil), cmd.Writes...), Redirect{Op: ">>", Target: Word{Value: out, Source: out, Known: true}})
	}
	return inner(opts{long: []string{"help", "version"}})(a, cmd, depth)
}

// wrapWatch: procps' watch, "+bcCd::egq:n:prtwxhv": -d takes an
// optional value; without -x the words are joined with spaces and run by
// sh -c.
func wrapWatch(a *analyzer, cmd Command, depth int) bool {
	o := opts{flags: "bcCegprtwxhv", arg: "nq", optional: "d", long: []string{"beep:b", "color:c", "no-color:C", "differences?:d", "errexit:e", "chgexit:g",
		"equexit=:q", "interval=:n", "precise:p", "no-rerun:r", "no-title:t", "no-wrap:w", "no-linewrap:w", "exec:x", "help:h", "version:v"}}
	p, why := o.skip(cmd.Args)
	if why != "" {
		a.unknownf("watch: %s", why)
		return true
	}
	if p.i >= len(cmd.Args) {
		return false
	}
	if _, ok := p.has("x"); ok {
		a.runInner(cmd, p.i, nil, depth)
		return true
	}
	var parts []string
	for _, w := range cmd.Args[p.i:] {
		if !w.Known {
			a.unknownf("watch: the command it runs is known only when it runs")
			return true
		}
		parts = append(parts, w.Value)
	}
	a.keepWrites(cmd, "watch")
	a.script(strings.Join(parts, " "), depth+1, "watch", AnyShell) // sh -c
	return true
}

// wrapIonice: util-linux ionice, "+c:n:p:P:tu:hV": with -p, -P or -u
// its words are process ids, not a command.
func wrapIonice(a *analyzer, cmd Command, depth int) bool {
	o := opts{flags: "thV", arg: "cnpPu", long: []string{"class=:c", "classdata=:n", "ignore:t", "pid=:p", "pgid=:P", "uid=:u", "help", "version"}}
	p, why := o.skip(cmd.Args)
	if why != "" {
		a.unknownf("ionice: %s", why)
		return true
	}
	if _, ids := p.has("p", "P", "u"); ids || p.i >= len(cmd.Args) {
		return false
	}
	a.runInner(cmd, p.i, nil, depth)
	return true
}

// wrapFlock: util-linux flock, "+sexnoFuw:E:hV", then FILE, then -c
// SCRIPT (run by $SHELL -c) or the command; FILE alone is a descriptor.
func wrapFlock(a *analyzer, cmd Command, depth int) bool {
	o := opts{flags: "sexnoFuhV", arg: "wE", long: []string{"shared:s", "exclusive:x", "unlock:u", "nonblocking:n", "nb:n", "timeout=:w", "wait=:w",
		"conflict-exit-code=:E", "close:o", "no-fork:F", "verbose", "help", "version"}}
	p, why := o.skip(cmd.Args)
	if why != "" {
		a.unknownf("flock: %s", why)
		return true
	}
	a.commands = append(a.commands, cmd)
	rest := cmd.Args[p.i:]
	if len(rest) < 2 {
		return true
	}
	if rest[1].Known && (rest[1].Value == "-c" || rest[1].Value == "--command") {
		if len(rest) != 3 || !rest[2].Known {
			a.unknownf("flock -c: the command is known only when it runs")
			return true
		}
		a.script(rest[2].Value, depth+1, "flock -c", AnyShell)
		return true
	}
	if !rest[1].Known {
		a.unknownf("flock: the command is known only when it runs")
		return true
	}
	a.runInner(cmd, p.i+1, nil, depth)
	return true
}

// wrapScript: util-linux script, options anywhere ("ac:eE:fI:O:B:T:t::m:o:qVh"):
// -c COMMAND runs by $SHELL -c; the file it names and its logs are
// written.
func wrapScript(a *analyzer, cmd Command, depth int) bool {
	o := opts{flags: "aefqVh", arg: "cEIOBTmo", optional: "t", permute: true, long: []string{"append:a", "command=:c", "return:e", "flush:f", "force",
		"echo=:E", "log-in=:I", "log-out=:O", "log-io=:B", "log-timing=:T", "logging-format=:m", "output-limit=:o", "quiet:q", "timing?:t", "version:V", "help:h"}}
	p, why := o.skip(cmd.Args)
	if why != "" {
		a.unknownf("script: %s", why)
		return true
	}
	rec := cmd
	rec.Writes = append([]Redirect(nil), cmd.Writes...)
	file := func(v string) {
		if harmlessTarget[v] {
			return
		}
		rec.Writes = append(rec.Writes, Redirect{Op: ">", Target: Word{Value: v, Source: shquote.Quote(v), Known: true}})
	}
	for _, op := range p.seen {
		switch op.name {
		case "I", "O", "B", "T":
			file(op.value)
		case "t":
			if op.hasValue {
				file(op.value)
			}
		}
	}
	if len(p.operands) > 0 {
		if !p.operands[0].Known {
			a.unknownf("script: the file it writes is known only when it runs")
		}
		file(p.operands[0].Value)
	} else if _, ok := p.has("I", "O", "B"); !ok {
		file("typescript")
	}
	a.commands = append(a.commands, rec)
	if c, ok := p.has("c"); ok {
		a.script(c, depth+1, "script -c", AnyShell)
	}
	return true
}

// wrapSu: su and runuser, -c COMMAND (and --session-command) run by the
// user's shell; -s names that shell. Options anywhere.
func wrapSu(a *analyzer, cmd Command, depth int) bool {
	o := opts{flags: "flmpPhV", arg: "cCgGsuwZ", permute: true, long: []string{"command=:c", "session-command=:C", "fast:f", "group=:g", "supp-group=:G",
		"login:l", "preserve-environment:m", "pty:P", "shell=:s", "user=:u", "whitelist-environment=:w", "help", "version"}}
	a.commands = append(a.commands, cmd)
	p, why := o.skip(cmd.Args)
	if why != "" {
		a.unknownf("%s: %s", cmd.Program, why)
		return true
	}
	script, ok := p.has("c", "C")
	if !ok {
		return true
	}
	if sh, ok := p.has("s"); ok && shellDialect(path.Base(sh)) != lineshell.Bash && path.Base(sh) != "sh" && path.Base(sh) != "dash" {
		a.unknownf("%s -s %s: agentrun does not read that shell's syntax", cmd.Program, sh)
		return true
	}
	a.script(script, depth+1, cmd.Program+" -c", AnyShell)
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
	a.keepWrites(cmd, "eval")
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

// keepWrites records the redirections written on a command whose
// script is judged on its own (sh -c '…' > f): they write all the same.
func (a *analyzer) keepWrites(cmd Command, via string) {
	for _, w := range cmd.Writes {
		a.commands = append(a.commands, Command{Writes: []Redirect{w}, Via: via})
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
	a.keepWrites(cmd, cmd.Program+" -c")
	a.script(args[i].Value, depth+1, cmd.Program+" -c", shellDialect(cmd.Program))
	return true
}
