package cmdrule

import (
	"fmt"
	"path"
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// Rule is one allow or deny rule: a simple command written as a shell
// line, whose words match a command's words.
type Rule struct {
	// Source is the rule as the user wrote it.
	Source  string
	program pattern
	args    []pattern
	assigns []pattern
	writes  []redirPattern
	// rest says the last word ended in `*`: any words may follow.
	rest bool
}

// pattern is one word of a rule: literal text and `*`s (any text).
type pattern struct {
	segs []string // literal pieces between the stars
	// lone is a word that is just `*`: any number of words.
	lone   bool
	source string
}

type redirPattern struct {
	op     string
	target pattern
}

// ParseRule reads a rule. A rule is one simple command: no ;, &&, |,
// no substitutions; `*` unquoted matches any text, quoted it is itself.
func ParseRule(src string) (Rule, error) {
	r := Rule{Source: src}
	if strings.TrimSpace(src) == "" {
		return r, fmt.Errorf("the rule %q is empty", src)
	}
	f, err := syntax.NewParser(syntax.Variant(syntax.LangBash)).Parse(strings.NewReader(src), "")
	if err != nil {
		return r, fmt.Errorf("the rule %q does not parse as a shell command: %w", src, err)
	}
	if len(f.Stmts) != 1 {
		return r, fmt.Errorf("the rule %q has %d commands; a rule matches one simple command, so write one rule for each", src, len(f.Stmts))
	}
	st := f.Stmts[0]
	call, ok := st.Cmd.(*syntax.CallExpr)
	if !ok || st.Background || st.Negated || st.Coprocess || len(call.Args) == 0 {
		return r, fmt.Errorf("the rule %q is not one simple command (a program and its words); a rule cannot hold ;, &&, ||, |, & or ( )", src)
	}
	for _, as := range call.Assigns {
		p, err := rulePattern(assignAsWord(as), src)
		if err != nil {
			return r, err
		}
		r.assigns = append(r.assigns, p)
	}
	for i, w := range call.Args {
		p, err := rulePattern(w, src)
		if err != nil {
			return r, err
		}
		if i == 0 {
			if p.lone {
				p.lone = false // a lone * as the program: any one program
			}
			if len(p.segs) == 1 && strings.Contains(p.segs[0], "/") {
				p.segs[0] = path.Base(p.segs[0])
			}
			r.program = p
			continue
		}
		r.args = append(r.args, p)
	}
	if n := len(r.args); n > 0 && !r.args[n-1].lone && r.args[n-1].endsInStar() {
		r.rest = true
	} else if n == 0 && r.program.endsInStar() && len(r.program.segs) > 1 {
		r.rest = true
	}
	for _, rd := range st.Redirs {
		p, err := rulePattern(rd.Word, src)
		if err != nil {
			return r, err
		}
		op := rd.Op.String()
		if rd.N != nil {
			op = rd.N.Value + op
		}
		r.writes = append(r.writes, redirPattern{op: op, target: p})
	}
	return r, nil
}

func assignAsWord(as *syntax.Assign) *syntax.Word {
	name := ""
	if as.Name != nil {
		name = as.Name.Value
	}
	parts := []syntax.WordPart{&syntax.Lit{Value: name + "="}}
	if as.Value != nil {
		parts = append(parts, as.Value.Parts...)
	}
	return &syntax.Word{Parts: parts}
}

// rulePattern reads one word of a rule.
func rulePattern(w *syntax.Word, src string) (pattern, error) {
	p := pattern{source: printNode(w)}
	cur := ""
	for _, part := range w.Parts {
		switch part := part.(type) {
		case *syntax.Lit:
			v := part.Value
			for i := 0; i < len(v); i++ {
				switch {
				case v[i] == '\\' && i+1 < len(v):
					i++
					cur += string(v[i])
				case v[i] == '*':
					p.segs = append(p.segs, cur)
					cur = ""
				default:
					cur += string(v[i])
				}
			}
		case *syntax.SglQuoted:
			if part.Dollar {
				return p, fmt.Errorf("the rule %q uses $'…'; write the text plainly", src)
			}
			cur += part.Value
		case *syntax.DblQuoted:
			for _, q := range part.Parts {
				lit, ok := q.(*syntax.Lit)
				if !ok {
					return p, fmt.Errorf("the rule %q has an expansion in %s; a rule is plain words and *", src, p.source)
				}
				cur += unescape(lit.Value, true)
			}
		default:
			return p, fmt.Errorf("the rule %q has an expansion in %s; a rule is plain words and *", src, p.source)
		}
	}
	p.segs = append(p.segs, cur)
	p.lone = len(p.segs) == 2 && p.segs[0] == "" && p.segs[1] == ""
	return p, nil
}

func (p pattern) endsInStar() bool {
	return len(p.segs) > 1 && p.segs[len(p.segs)-1] == ""
}

// anything says the pattern matches any text (`*`, `**`).
func (p pattern) anything() bool {
	for _, s := range p.segs {
		if s != "" {
			return false
		}
	}
	return len(p.segs) > 1
}

// match is the answer of matching a rule: no, yes, or maybe (a word
// known only when the line runs could make it match).
type match int

const (
	no match = iota
	maybe
	yes
)

func best(a, b match) match {
	if a > b {
		return a
	}
	return b
}

// glob matches one word's text.
func (p pattern) glob(s string) bool {
	if len(p.segs) == 1 {
		return s == p.segs[0]
	}
	first, last := p.segs[0], p.segs[len(p.segs)-1]
	if !strings.HasPrefix(s, first) || len(s) < len(first)+len(last) || !strings.HasSuffix(s, last) {
		return false
	}
	at, stop := len(first), len(s)-len(last)
	for _, mid := range p.segs[1 : len(p.segs)-1] {
		k := strings.Index(s[at:stop], mid)
		if k < 0 {
			return false
		}
		at += k + len(mid)
	}
	return true
}

// word matches one word of a command: a glob's pattern text is compared
// as written (a rule "ls *.go" matches "ls *.go").
func (p pattern) word(w Word) match {
	if w.Known {
		if p.glob(w.Value) {
			return yes
		}
		return no
	}
	if p.anything() {
		return yes
	}
	return maybe
}

// Match matches the rule against one command. For a deny rule (deny),
// the command's assignments and redirections count only when the rule
// names them; for an allow rule every one must be matched.
func (r Rule) Match(c Command, deny bool) match {
	if c.Program == "" || !r.program.glob(c.Program) {
		return no
	}
	m := yes
	if !deny || len(r.assigns) > 0 {
		m = min(m, matchSet(len(r.assigns), len(c.Assigns), func(i, j int) match { return r.assigns[i].word(c.Assigns[j]) }, !deny))
	}
	if m == no {
		return no
	}
	m = min(m, r.matchArgs(c))
	if m == no {
		return no
	}
	if !deny || len(r.writes) > 0 {
		m = min(m, r.matchWrites(c, !deny))
	}
	return m
}

// matchSet matches n rule items against k command items (pair(i, j)
// matches rule item i with command item j): every rule item matches some
// command item, and with all every command item is matched by some rule
// item.
func matchSet(n, k int, pair func(i, j int) match, all bool) match {
	m := yes
	for i := 0; i < n; i++ {
		found := no
		for j := 0; j < k; j++ {
			found = best(found, pair(i, j))
		}
		m = min(m, found)
	}
	for j := 0; all && j < k; j++ {
		found := no
		for i := 0; i < n; i++ {
			found = best(found, pair(i, j))
		}
		m = min(m, found)
	}
	return m
}

// matchWrites matches the rule's redirections with the command's: the
// same operator, the target by glob.
func (r Rule) matchWrites(c Command, all bool) match {
	return matchSet(len(r.writes), len(c.Writes), func(i, j int) match {
		if r.writes[i].op != c.Writes[j].Op {
			return no
		}
		return r.writes[i].target.word(c.Writes[j].Target)
	}, all)
}

// matchArgs matches the rule's words against the command's arguments:
// a lone `*` takes any number of words, a last word ending in `*` any
// words after it, other words one word each. An argument known only
// when it runs (a variable, unquoted: zero or more words) or the words
// xargs adds are taken for sure only by a lone `*` or the rest.
func (r Rule) matchArgs(c Command) match {
	type key struct{ i, j int }
	memo := map[key]match{}
	var rec func(i, j int) match
	rec = func(i, j int) match {
		k := key{i, j}
		if m, ok := memo[k]; ok {
			return m
		}
		var m match
		switch {
		case i == len(r.args) && j == len(c.Args):
			m = yes
			if c.MoreArgs && !r.rest {
				m = maybe
			}
		case i == len(r.args):
			// words left: taken by the rest, else an unknown word
			// may be empty.
			if r.rest {
				m = yes
			} else if !c.Args[j].Known {
				m = min(maybe, rec(i, j+1))
			}
		default:
			p := r.args[i]
			if p.lone {
				m = rec(i+1, j) // takes no word
				if j < len(c.Args) {
					m = best(m, rec(i, j+1)) // takes one more
				}
				if c.MoreArgs && i == len(r.args)-1 {
					m = best(m, yes)
				}
				break
			}
			if j == len(c.Args) {
				if c.MoreArgs {
					m = maybe // xargs may supply it
				}
				break
			}
			w := c.Args[j]
			if w.Known {
				if p.glob(w.Value) {
					m = rec(i+1, j+1)
				}
				break
			}
			// unknown: zero, one or more words; never surely this one
			m = min(maybe, best(rec(i+1, j+1), best(rec(i, j+1), rec(i+1, j))))
		}
		memo[k] = m
		return m
	}
	return rec(0, 0)
}

// Describe says in words what the rule matches, for :checkhealth.
func (r Rule) Describe() string {
	word := func(p pattern) string {
		if p.lone {
			return "any words"
		}
		if len(p.segs) == 1 {
			return p.segs[0]
		}
		return "a word like " + strings.Join(p.segs, "*")
	}
	parts := []string{word(r.program)}
	if len(r.program.segs) > 1 {
		parts[0] = "a program like " + strings.Join(r.program.segs, "*")
	}
	for _, a := range r.assigns {
		parts = append([]string{"with " + strings.Join(a.segs, "*")}, parts...)
	}
	for _, a := range r.args {
		parts = append(parts, word(a))
	}
	if r.rest {
		parts = append(parts, "any words after")
	}
	for _, w := range r.writes {
		parts = append(parts, "writing "+w.op+strings.Join(w.target.segs, "*"))
	}
	exact := true
	for _, a := range append(append([]pattern{r.program}, r.args...), r.assigns...) {
		if len(a.segs) > 1 {
			exact = false
		}
	}
	if exact {
		return "exactly: " + strings.Join(parts, " ") + " (one simple command)"
	}
	return strings.Join(parts, ", then ") + " (one simple command: never what follows ;, &&, || or |)"
}
