package cmdrule

import (
	"fmt"
	"path"
	"strings"

	"github.com/agentrun/agentrun.nvim/internal/lineshell"
	"github.com/agentrun/agentrun.nvim/internal/shquote"
	"mvdan.cc/sh/v3/expand"
	"mvdan.cc/sh/v3/syntax"
)

// Why this file is long: it walks the shell grammar (mvdan.cc/sh's syntax
// tree) node kind by node kind; a rule that can be walked around is a
// security bug, so every kind of node is handled here, in one place,
// rather than spread thin.

// Word is one word of a simple command.
type Word struct {
	// Value is the word after quote removal, when Known.
	Value string
	// Source is the word as written (a variable stays "$HOME").
	Source string
	// Known says the word's value is known before the line runs: no
	// parameter, command or arithmetic expansion in it.
	Known bool
	// Glob says the word has unquoted glob characters (*, ?, [), so the
	// shell replaces it with matching file names; Value holds the
	// pattern.
	Glob bool
}

// text is the word as Command.Text writes it.
func (w Word) text() string {
	if w.Known && !w.Glob {
		return shquote.Quote(w.Value)
	}
	return w.Source
}

// Redirect is a redirection that writes a file: Op is ">", ">>", ">|",
// "&>", "&>>", "<>" or ">&" with its file descriptor in front when one
// is given ("2>").
type Redirect struct {
	Op     string
	Target Word
}

// Command is one simple command a line runs.
type Command struct {
	// Program is the name it runs by, without its directory; empty for
	// redirections that stand alone ("> file").
	Program string
	// Args are the words after the program.
	Args []Word
	// Assigns are the NAME=value words before it (and env's).
	Assigns []Word
	// Writes are its redirections that write files (not those to
	// /dev/null or that duplicate a descriptor).
	Writes []Redirect
	// MoreArgs says more arguments come when it runs (xargs adds what
	// it reads).
	MoreArgs bool
	// Via names what runs it when that is not the line itself: "sudo",
	// "sh -c", "xargs", "find -exec".
	Via string
}

// Text is the command as one shell line: assignments, the program, its
// arguments (quoted where needed) and its writing redirections. Written
// as a rule, it matches the command again.
func (c Command) Text() string {
	var parts []string
	for _, a := range c.Assigns {
		parts = append(parts, a.text())
	}
	if c.Program != "" {
		parts = append(parts, shquote.Quote(c.Program))
	}
	for _, a := range c.Args {
		parts = append(parts, a.text())
	}
	for _, r := range c.Writes {
		parts = append(parts, r.Op+r.Target.text())
	}
	return strings.Join(parts, " ")
}

// Exact says Text matches this command and no other: every word is
// known and it takes no arguments at run time (a remembered answer must
// not grow into more than the user saw).
func (c Command) Exact() bool {
	if c.MoreArgs || c.Program == "" {
		return false
	}
	for _, list := range [][]Word{c.Args, c.Assigns} {
		for _, w := range list {
			if !w.Known || w.Glob {
				return false
			}
		}
	}
	for _, r := range c.Writes {
		if !r.Target.Known || r.Target.Glob {
			return false
		}
	}
	return true
}

// Analysis is what a shell line runs.
type Analysis struct {
	// Line is the line analysed.
	Line string
	// Commands are its simple commands, in the order they appear.
	Commands []Command
	// Unknown says, for each part whose program cannot be known before
	// the line runs, why ("eval runs text it builds when it runs").
	Unknown []string
}

// maxDepth bounds nested shells (sh -c "sh -c '…'") and wrappers.
const maxDepth = 16

// Analyze parses line in the dialect of the shell that runs agentrun's
// terminal lines (internal/lineshell: bash, or POSIX without it) and
// returns its simple commands.
func Analyze(line string) Analysis {
	return AnalyzeIn(line, lineshell.Dialect())
}

// The dialects AnalyzeIn reads a line in: lineshell.Bash,
// lineshell.POSIX, or AnyShell for a line a shell the line does not name
// runs ($SHELL -c, sh -c where sh may be dash or bash): it is read as
// both, and what either reading runs counts.
const AnyShell = "any"

// AnalyzeIn parses line in dialect (lineshell.Bash, lineshell.POSIX or
// AnyShell) and returns its simple commands.
func AnalyzeIn(line, dialect string) Analysis {
	a := &analyzer{}
	a.script(line, 0, "", dialect)
	return a.analysis(line)
}

// AnalyzeArgv returns what argv runs when it is executed as it is, with
// no shell (Codex's exec argv): each element is one word, and a shell in
// it (["bash", "-lc", "rm -rf x"]) runs its script in its own dialect.
func AnalyzeArgv(argv []string) Analysis {
	a := &analyzer{}
	if len(argv) == 0 || argv[0] == "" {
		a.unknownf("the command is empty")
		return a.analysis("")
	}
	words := make([]Word, len(argv))
	for i, s := range argv {
		words[i] = Word{Value: s, Source: shquote.Quote(s), Known: true}
	}
	a.words(nil, words, nil, false, 0, "")
	return a.analysis(shquote.Join(argv))
}

// WithEnv is an with the environment the command is given (NAME=value,
// terminal/create's env): a sensitive name (Sensitive) is not known
// before it runs, so the line is asked.
func (an Analysis) WithEnv(env []string) Analysis {
	var why []string
	for _, kv := range env {
		name, _, _ := strings.Cut(kv, "=")
		if sensitive(name) {
			why = append(why, fmt.Sprintf("its environment sets %s, which changes what it runs", name))
		}
	}
	if len(why) > 0 {
		an.Unknown = append(why, an.Unknown...)
	}
	return an
}

// analysis is what a found, failing closed on a line with no command.
func (a *analyzer) analysis(line string) Analysis {
	if len(a.commands) == 0 && len(a.unknown) == 0 {
		a.unknownf("the line runs no command agentrun can name")
	}
	return Analysis{Line: line, Commands: a.commands, Unknown: a.unknown}
}

type analyzer struct {
	commands []Command
	unknown  []string
	// dialect is that of the script being walked (eval and trap run
	// their text in it).
	dialect string
}

func (a *analyzer) unknownf(format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	for _, u := range a.unknown {
		if u == msg {
			return
		}
	}
	a.unknown = append(a.unknown, msg)
}

// script analyses a whole script: the line, or the script of a sh -c,
// in dialect (AnyShell: in bash's and in POSIX's).
func (a *analyzer) script(src string, depth int, via, dialect string) {
	if depth > maxDepth {
		a.unknownf("shells are nested more than %d deep", maxDepth)
		return
	}
	switch dialect {
	case AnyShell:
		a.script(src, depth, via, lineshell.Bash)
		seen := map[string]bool{}
		for _, c := range a.commands {
			seen[c.Via+"\x00"+c.Text()] = true
		}
		posix := &analyzer{dialect: a.dialect}
		posix.script(src, depth, via, lineshell.POSIX)
		for _, c := range posix.commands {
			if !seen[c.Via+"\x00"+c.Text()] {
				a.commands = append(a.commands, c)
			}
		}
		for _, u := range posix.unknown {
			a.unknownf("%s", u)
		}
		return
	case lineshell.POSIX:
	default:
		dialect = lineshell.Bash
	}
	outer := a.dialect
	a.dialect = dialect
	defer func() { a.dialect = outer }()
	lang := syntax.LangBash
	if dialect == lineshell.POSIX {
		lang = syntax.LangPOSIX
	}
	f, err := syntax.NewParser(syntax.Variant(lang)).Parse(strings.NewReader(src), "")
	if err != nil {
		a.unknownf("the line does not parse as a %s command: %v", dialectName(dialect), err)
		return
	}
	syntax.Walk(f, func(n syntax.Node) bool {
		if n == nil {
			return true
		}
		if !a.understood(n) {
			return false
		}
		switch n := n.(type) {
		case *syntax.Stmt:
			a.stmt(n, depth, via)
		case *syntax.ArithmCmd, *syntax.LetClause:
			a.arithm(n)
		case *syntax.ArithmExp:
			a.arithm(n.X)
		case *syntax.ParamExp:
			// the subscript and the offsets are arithmetic, not the name
			for _, x := range []syntax.ArithmExpr{n.Index, sliceOffset(n), sliceLength(n)} {
				if x != nil {
					a.arithm(x)
				}
			}
		case *syntax.BinaryTest:
			switch n.Op {
			case syntax.TsEql, syntax.TsNeq, syntax.TsLss, syntax.TsLeq, syntax.TsGtr, syntax.TsGeq:
				a.arithm(n)
			}
		}
		return true
	})
}

func sliceOffset(n *syntax.ParamExp) syntax.ArithmExpr {
	if n.Slice == nil {
		return nil
	}
	return n.Slice.Offset
}

func sliceLength(n *syntax.ParamExp) syntax.ArithmExpr {
	if n.Slice == nil {
		return nil
	}
	return n.Slice.Length
}

// dialectName names a dialect in a sentence.
func dialectName(d string) string {
	if d == lineshell.POSIX {
		return "POSIX shell"
	}
	return "bash"
}

// arithm: bash evaluates a variable's text inside arithmetic again, and
// an array index in that text can run a command ("a[$(cmd)]"), so
// arithmetic on anything but numbers is not known before it runs.
func (a *analyzer) arithm(n syntax.Node) {
	dynamic := false
	syntax.Walk(n, func(m syntax.Node) bool {
		switch m := m.(type) {
		case *syntax.ParamExp, *syntax.CmdSubst:
			dynamic = true
		case *syntax.Lit:
			if m.Value != "" && strings.IndexFunc(m.Value, func(r rune) bool {
				return r == '_' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z'
			}) >= 0 {
				dynamic = true
			}
		}
		return !dynamic
	})
	if dynamic {
		a.unknownf("arithmetic on a variable can run commands hidden in its value")
	}
}

// stmt records the simple command of one statement, with the
// redirections written on it.
func (a *analyzer) stmt(st *syntax.Stmt, depth int, via string) {
	writes := a.writes(st.Redirs)
	switch c := st.Cmd.(type) {
	case *syntax.CallExpr:
		a.call(c, writes, depth, via)
	case *syntax.DeclClause:
		a.decl(c, writes, via)
	case nil:
		a.alone(writes, via)
	default:
		// a compound command ({ }, ( ), if, for…): its commands are
		// walked on their own; what it writes as a whole stands alone.
		a.alone(writes, via)
	}
}

// alone records redirections that write without a program of their own
// ("> file" truncates it).
func (a *analyzer) alone(writes []Redirect, via string) {
	if len(writes) > 0 {
		a.commands = append(a.commands, Command{Writes: writes, Via: via})
	}
}

// writes returns the redirections of rs that write files.
func (a *analyzer) writes(rs []*syntax.Redirect) []Redirect {
	var out []Redirect
	for _, r := range rs {
		var op string
		switch r.Op {
		case syntax.RdrOut, syntax.AppOut, syntax.RdrClob, syntax.AppClob, syntax.RdrAll, syntax.RdrAllClob, syntax.AppAll, syntax.AppAllClob, syntax.RdrInOut:
			op = r.Op.String()
		case syntax.DplOut:
			// >&2, 2>&1, >&- duplicate or close; >&file writes file.
			if w := word(r.Word); w.Known && (w.Value == "-" || isDigits(strings.TrimSuffix(w.Value, "-"))) {
				continue
			}
			op = r.Op.String()
		default:
			continue
		}
		target := word(r.Word)
		if target.Known && !target.Glob && harmlessTarget[target.Value] {
			continue
		}
		if r.N != nil {
			op = r.N.Value + op
		}
		out = append(out, Redirect{Op: op, Target: target})
	}
	return out
}

// harmlessTarget are files a redirection may write without writing
// anything anyone keeps.
var harmlessTarget = map[string]bool{"/dev/null": true, "/dev/stdout": true, "/dev/stderr": true, "/dev/tty": true}

func isDigits(s string) bool {
	return s != "" && strings.Trim(s, "0123456789") == ""
}

// decl records export/declare/local/readonly/typeset as a command of
// that name whose arguments are its flags and assignments, checked as
// the builtin is (checkBuiltin).
func (a *analyzer) decl(d *syntax.DeclClause, writes []Redirect, via string) {
	c := Command{Program: d.Variant.Value, Writes: writes, Via: via}
	for _, as := range d.Args {
		if as.Naked && as.Name == nil {
			c.Args = append(c.Args, word(as.Value)) // a flag or a word given as is
			continue
		}
		a.checkAssign(as)
		c.Args = append(c.Args, assignWord(as))
	}
	a.checkBuiltin(c)
	a.commands = append(a.commands, c)
}

// sensitive are variables that change which program later words run or
// what runs around them: set on their own they are not known before the
// line runs.
func sensitive(name string) bool {
	switch name {
	case "PATH", "IFS", "ENV", "BASH_ENV", "SHELLOPTS", "BASHOPTS", "PS4", "PROMPT_COMMAND", "CDPATH", "HOME", "ZDOTDIR", "INPUTRC", "GLOBIGNORE",
		"PAGER", "EDITOR", "VISUAL", "BROWSER", "LESSOPEN", "LESSCLOSE", "MANPAGER", "SHELL", "TERMINAL", "TMPDIR",
		"NODE_OPTIONS", "PYTHONPATH", "PYTHONSTARTUP", "PYTHONHOME", "PERL5OPT", "PERL5LIB", "RUBYOPT", "RUBYLIB",
		"GOFLAGS", "MAKEFLAGS", "SSH_ASKPASS", "SUDO_ASKPASS":
		return true
	}
	for _, p := range []string{"LD_", "DYLD_", "GIT_", "BASH_FUNC_", "XDG_", "CARGO_", "npm_config_", "NPM_CONFIG_"} {
		if strings.HasPrefix(name, p) {
			return true
		}
	}
	return strings.HasSuffix(name, "_COMMAND") || strings.HasSuffix(name, "_EDITOR") || strings.HasSuffix(name, "_PAGER")
}

// Sensitive says whether setting the environment variable name can
// change what a command runs or which files it reads (PATH, HOME,
// XDG_*, GIT_*, LD_*, BASH_ENV, ENV, …): a line or a terminal's env that
// sets one is asked.
func Sensitive(name string) bool { return sensitive(name) }

func (a *analyzer) checkAssign(as *syntax.Assign) {
	if as.Name != nil && sensitive(as.Name.Value) {
		a.unknownf("it sets %s, which changes what later commands run", as.Name.Value)
	}
}

// assignWord is NAME=value as one word.
func assignWord(as *syntax.Assign) Word {
	name := ""
	if as.Name != nil {
		name = as.Name.Value
	}
	op := "="
	if as.Append {
		op = "+="
	}
	if as.Naked {
		return Word{Value: name, Source: name, Known: true}
	}
	if as.Array != nil || as.Index != nil {
		src := printNode(as)
		return Word{Value: src, Source: src}
	}
	v := word(as.Value)
	v.Source = name + op + v.Source
	v.Value = name + op + v.Value
	return v
}

func printNode(n syntax.Node) string {
	var b strings.Builder
	_ = syntax.NewPrinter().Print(&b, n)
	return b.String()
}

// word reads one shell word: its value when known, and how it was
// written.
func word(w *syntax.Word) Word {
	if w == nil {
		return Word{Known: true}
	}
	out := Word{Source: printNode(w), Known: true}
	var b strings.Builder
	for _, p := range w.Parts {
		switch p := p.(type) {
		case *syntax.Lit:
			v := unescape(p.Value, false)
			if strings.ContainsAny(stripEscaped(p.Value), "*?[") {
				out.Glob = true
			}
			b.WriteString(v)
		case *syntax.SglQuoted:
			if !p.Dollar {
				b.WriteString(p.Value)
				continue
			}
			v, err := expand.Literal(nil, &syntax.Word{Parts: []syntax.WordPart{p}})
			if err != nil {
				out.Known = false
			}
			b.WriteString(v)
		case *syntax.DblQuoted:
			for _, q := range p.Parts {
				lit, ok := q.(*syntax.Lit)
				if !ok {
					out.Known = false
					continue
				}
				b.WriteString(unescape(lit.Value, true))
			}
		case *syntax.ExtGlob:
			out.Glob = true
			b.WriteString(printNode(&syntax.Word{Parts: []syntax.WordPart{p}}))
		default: // parameter, command, arithmetic or process expansion
			out.Known = false
		}
	}
	if out.Known {
		out.Value = b.String()
	}
	return out
}

// stripEscaped removes backslash-escaped characters from an unquoted
// literal, so an escaped \* is not taken for a glob.
func stripEscaped(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' {
			i++
			continue
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// unescape removes the backslashes of an unquoted literal (any character
// after one is itself; a backslash-newline is nothing), or of a literal
// inside double quotes (only before $ ` " \ and newline).
func unescape(s string, dquoted bool) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c != '\\' || i+1 == len(s) {
			b.WriteByte(c)
			continue
		}
		next := s[i+1]
		if dquoted && !strings.ContainsRune("$`\"\\\n", rune(next)) {
			b.WriteByte(c)
			continue
		}
		i++
		if next != '\n' {
			b.WriteByte(next)
		}
	}
	return b.String()
}

// expandWords applies brace expansion (bash's {a,b} and {1..3}) and reads
// each resulting word.
func expandWords(ws []*syntax.Word) ([]Word, bool) {
	var out []Word
	for _, w := range ws {
		if !strings.Contains(printNode(w), "{") {
			out = append(out, word(w))
			continue
		}
		cp := &syntax.Word{Parts: append([]syntax.WordPart(nil), w.Parts...)}
		if !syntax.SplitBraces(cp) {
			out = append(out, word(w))
			continue
		}
		n := 0
		for ew, err := range expand.BracesSeq(nil, cp) {
			if err != nil || n > 1000 {
				return nil, false
			}
			out = append(out, word(ew))
			n++
		}
	}
	return out, true
}

// call records one simple command (and what it runs through wrappers).
func (a *analyzer) call(c *syntax.CallExpr, writes []Redirect, depth int, via string) {
	var assigns []Word
	for _, as := range c.Assigns {
		a.checkAssign(as)
		assigns = append(assigns, assignWord(as))
	}
	words, ok := expandWords(c.Args)
	if !ok {
		a.unknownf("a brace expansion makes more words than can be checked")
		return
	}
	if len(words) == 0 {
		if len(assigns) > 0 || len(writes) > 0 {
			// NAME=value alone: sensitive names were said above.
			a.alone(writes, via)
		}
		return
	}
	a.words(assigns, words, writes, false, depth, via)
}

// words records the command words run (after assigns), unwrapping the
// programs that run another one.
func (a *analyzer) words(assigns, words []Word, writes []Redirect, more bool, depth int, via string) {
	if depth > maxDepth {
		a.unknownf("wrappers are nested more than %d deep", maxDepth)
		return
	}
	prog := words[0]
	if !prog.Known {
		a.unknownf("the program %s is known only when it runs", prog.Source)
		return
	}
	if prog.Glob {
		a.unknownf("the program %s is a file name pattern, known only when it runs", prog.Source)
		return
	}
	name := prog.Value
	if strings.Contains(name, "/") {
		name = path.Base(name)
	}
	if name == "" || name == "." && len(words) == 1 {
		a.unknownf("the program %q is not a command", prog.Value)
		return
	}
	cmd := Command{Program: name, Args: words[1:], Assigns: assigns, Writes: writes, MoreArgs: more, Via: via}
	if builtins[name] && !strings.Contains(prog.Value, "/") {
		if !understoodBuiltins[name] {
			a.unknownf("the builtin %s is not one agentrun understands", name)
		}
		a.checkBuiltin(cmd)
	}
	if w, ok := wrappers[name]; ok {
		if handled := w(a, cmd, depth); handled {
			return
		}
	}
	a.commands = append(a.commands, cmd)
}
