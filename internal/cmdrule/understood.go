package cmdrule

import (
	"fmt"
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// Fail closed: a line runs unasked only when every node of its syntax
// tree is one the analyzer understands, listed here. Anything else (a
// kind of node not named below, or a named one in a form that can run
// code the analyzer does not see) makes the line asked, whatever the
// rules and remembered answers say.
//
// Understood:
//   - lists, pipelines (|, |&), && and ||, ( ) and { } groups, if, while,
//     until, case, for NAME in WORDS, functions, the time keyword;
//   - simple commands whose words are literals, quotes ('…', "…", $'…'),
//     plain parameter expansions (${x}, ${#x}, ${x:-word}, ${x/a/b}, …),
//     command and process substitutions (their commands are judged too),
//     globs and brace expansion;
//   - redirections (the ones that write files are judged as writes),
//     here-documents and here-strings;
//   - assignments of plain values to names that are not sensitive;
//   - arithmetic on numbers only;
//   - [[ ]] tests on such words without substitutions;
//   - the builtins in understoodBuiltins, in the forms checkBuiltin
//     accepts, and every program that is not a shell builtin.
//
// Always asked: arithmetic on variables ((( )), $(( )), let, for (( ))
// and subscripts), arrays, ${!x} and ${!prefix*}, ${x@P} and the other @
// operators, namerefs and other declare attributes, coproc, [[ ]] with a
// substitution, a sensitive assignment, builtins outside the list (and
// shopt, set -x, printf -v, mapfile…), and a line with no command.

// understood reports, through unknownf, a node that is not understood.
// It returns false when the walk need not go into n.
func (a *analyzer) understood(n syntax.Node) bool {
	switch n := n.(type) {
	case *syntax.File, *syntax.Stmt, *syntax.CallExpr, *syntax.Word, *syntax.Lit, *syntax.SglQuoted, *syntax.DblQuoted,
		*syntax.CmdSubst, *syntax.ProcSubst, *syntax.BinaryCmd, *syntax.Subshell, *syntax.Block, *syntax.IfClause,
		*syntax.WhileClause, *syntax.CaseClause, *syntax.CaseItem, *syntax.FuncDecl, *syntax.Comment, *syntax.ExtGlob,
		*syntax.BraceExp, *syntax.TimeClause, *syntax.Redirect, *syntax.WordIter, *syntax.DeclClause, *syntax.CStyleLoop:
		return true
	case *syntax.ArithmCmd, *syntax.ArithmExp, *syntax.LetClause, *syntax.BinaryArithm, *syntax.UnaryArithm, *syntax.ParenArithm:
		return true // arithm judges them: numbers only
	case *syntax.ForClause:
		if _, ok := n.Loop.(*syntax.CStyleLoop); ok {
			a.unknownf("a for (( )) loop does arithmetic, which can run commands hidden in a variable")
		}
		return true
	case *syntax.Assign:
		if n.Index != nil || n.Array != nil {
			a.unknownf("an array assignment can run commands hidden in its subscripts")
		}
		return true
	case *syntax.ParamExp:
		switch {
		case n.Excl && !n.Short:
			a.unknownf("${!…} names a variable only when it runs")
		case n.Names != 0:
			a.unknownf("${!prefix*} names variables only when it runs")
		case n.Exp != nil && n.Exp.Op == syntax.OtherParamOps:
			a.unknownf("${x@…} can run commands hidden in a variable (@P expands a prompt)")
		case n.Exp != nil && (n.Exp.Op == syntax.AssignUnset || n.Exp.Op == syntax.AssignUnsetOrNull) && n.Param != nil && sensitive(n.Param.Value):
			a.unknownf("it sets %s, which changes what later commands run", n.Param.Value)
		case n.Flags != nil, n.Width, n.IsSet, n.NestedParam != nil, len(n.Modifiers) > 0:
			a.unknownf("the expansion %s is not one agentrun understands", printNode(&syntax.Word{Parts: []syntax.WordPart{n}}))
		}
		return true
	case *syntax.TestClause:
		syntax.Walk(n.X, func(m syntax.Node) bool {
			switch m.(type) {
			case *syntax.CmdSubst, *syntax.ProcSubst:
				a.unknownf("a [[ ]] test with a substitution in it is not judged: it is asked")
				return false
			}
			return true
		})
		return true
	case *syntax.BinaryTest, *syntax.ParenTest:
		return true
	case *syntax.UnaryTest:
		if n.Op == syntax.TsVarSet || n.Op == syntax.TsRefVar {
			if w, ok := n.X.(*syntax.Word); !ok || strings.Contains(printNode(w), "[") || !word(w).Known {
				a.unknownf("[[ -v ]] on a subscript evaluates it, which can run commands")
			}
		}
		return true
	case *syntax.ArrayExpr, *syntax.ArrayElem:
		a.unknownf("an array can run commands hidden in its subscripts")
		return false
	case *syntax.CoprocClause:
		a.unknownf("coproc is not judged: it is asked")
		return true
	default:
		a.unknownf("the line uses syntax agentrun does not understand (%s)", strings.TrimPrefix(fmt.Sprintf("%T", n), "*syntax."))
		return true
	}
}

// builtins are bash's builtins (a program of that name would never run).
var builtins = map[string]bool{}

// understoodBuiltins are the builtins the analyzer knows what they do:
// those that run another command (command, exec, eval, source, trap…,
// judged in wrappers.go), those that change nothing outside the shell,
// and those checkBuiltin checks.
var understoodBuiltins = map[string]bool{}

func init() {
	for _, b := range strings.Fields("alias bg bind break builtin caller cd command compgen complete compopt continue declare dirs disown echo enable eval exec exit export false fc fg getopts hash help history jobs kill let local logout mapfile popd printf pushd pwd read readarray readonly return set shift shopt source suspend test times trap true type typeset ulimit umask unalias unset wait . : [") {
		builtins[b] = true
	}
	for _, b := range strings.Fields("alias break builtin cd command continue declare dirs echo enable eval exec exit export false getopts hash jobs kill local popd printf pushd pwd read readonly return set shift source test times trap true type typeset umask unset wait . : [") {
		understoodBuiltins[b] = true
	}
}

// UnderstoodBuiltins lists the builtins the analyzer understands (for
// the docs); every other bash builtin makes a line asked.
func UnderstoodBuiltins() []string {
	return strings.Fields("alias break builtin cd command continue declare dirs echo enable eval exec exit export false getopts hash jobs kill local popd printf pushd pwd read readonly return set shift source test times trap true type typeset umask unset wait . : [")
}

// declFlags are the attributes declare, typeset and local may set and
// stay understood: -r readonly, -x export, -g global, -p and -f/-F print.
const declFlags = "rxgpfF"

// checkBuiltin reports the forms of an understood builtin that are not
// understood: the ones that set a variable named by a word (which may be
// sensitive or hold a subscript that runs code) or change the shell.
func (a *analyzer) checkBuiltin(c Command) {
	args := c.Args
	switch c.Program {
	case "declare", "typeset", "local", "export", "readonly":
		flags := declFlags
		switch c.Program {
		case "export":
			flags = "pn"
		case "readonly":
			flags = "p"
		}
		for _, w := range args {
			if !w.Known {
				a.unknownf("%s %s: a word known only when it runs may set any variable", c.Program, w.Source)
				continue
			}
			v := w.Value
			if (strings.HasPrefix(v, "-") || strings.HasPrefix(v, "+")) && !strings.Contains(v, "=") {
				if strings.Trim(v[1:], flags) != "" {
					a.unknownf("%s %s sets an attribute agentrun does not judge (-n is a nameref, -i makes assignments arithmetic)", c.Program, v)
				}
				continue
			}
			a.checkName(c.Program, v)
		}
	case "read", "unset", "getopts", "wait":
		for _, w := range args {
			if !w.Known {
				a.unknownf("%s %s: a word known only when it runs may name any variable", c.Program, w.Source)
				continue
			}
			if c.Program == "read" && strings.HasPrefix(w.Value, "-") && strings.ContainsAny(w.Value, "au") {
				a.unknownf("read %s is not judged: it is asked", w.Value)
			}
			a.checkName(c.Program, w.Value)
		}
	case "printf":
		for _, w := range args {
			if !w.Known || !strings.HasPrefix(w.Value, "-") || w.Value == "--" {
				break
			}
			if strings.Contains(w.Value, "v") {
				a.unknownf("printf -v sets a variable: it is asked")
			}
		}
	case "test", "[":
		for i, w := range args {
			if w.Known && (w.Value == "-v" || w.Value == "-R") && i+1 < len(args) && (!args[i+1].Known || strings.Contains(args[i+1].Value, "[")) {
				a.unknownf("%s -v on a subscript evaluates it, which can run commands", c.Program)
			}
		}
	case "set":
		a.checkSet(args)
	case "kill":
		for _, w := range args {
			if !w.Known {
				a.unknownf("kill: %s is known only when it runs", w.Source)
			}
		}
	}
}

// checkName reports a word that sets or names a variable (NAME,
// NAME=value, NAME[i]) in a form that is not understood.
func (a *analyzer) checkName(prog, v string) {
	name, _, _ := strings.Cut(v, "=")
	name = strings.TrimSuffix(name, "+")
	if strings.Contains(name, "[") {
		a.unknownf("%s %s: a subscript can run commands", prog, v)
		return
	}
	if sensitive(name) && (strings.Contains(v, "=") || prog == "read" || prog == "getopts" || prog == "unset" || prog == "wait") {
		a.unknownf("it sets %s, which changes what later commands run", name)
	}
}

// setOptions are the set options understood: exit on error, unset
// variables are errors, noclobber, noglob, and -o pipefail and the like.
var setOptions = map[string]bool{"errexit": true, "nounset": true, "pipefail": true, "noclobber": true, "noglob": true, "verbose": true}

func (a *analyzer) checkSet(args []Word) {
	for i := 0; i < len(args); i++ {
		w := args[i]
		if !w.Known {
			a.unknownf("set %s: known only when it runs", w.Source)
			return
		}
		v := w.Value
		if v == "--" || v == "-" || !strings.HasPrefix(v, "-") && !strings.HasPrefix(v, "+") {
			return // the positional parameters
		}
		for _, c := range v[1:] {
			switch c {
			case 'e', 'u', 'C', 'f', 'v', 'n':
			case 'o':
				i++
				if i >= len(args) || !args[i].Known || !setOptions[args[i].Value] {
					a.unknownf("set -o: only %s are judged; this one is asked", "errexit, nounset, pipefail, noclobber, noglob, verbose")
					return
				}
			default:
				a.unknownf("set %s is not judged (-x expands PS4, which can run commands): it is asked", v)
				return
			}
		}
	}
}
