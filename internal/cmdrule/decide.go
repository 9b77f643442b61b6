package cmdrule

import (
	"fmt"
	"strings"
)

// Rules are the user's rules for one decision.
type Rules struct {
	// Allow are the rules a command may run by unasked.
	Allow []string
	// Deny are the rules that refuse a line.
	Deny []string
	// Remembered are the commands the user always allowed (one per
	// line of the remembered file); they allow as Allow does.
	Remembered []string
	// Otherwise is what happens to a line some command of which no rule
	// allows: "ask" (the default), "run" or "refuse".
	Otherwise string
}

// The decisions.
const (
	Run    = "run"
	Refuse = "refuse"
	Ask    = "ask"
)

// Checked is one simple command as the rules saw it.
type Checked struct {
	// Text is the command as one line (Command.Text).
	Text string `msgpack:"text" json:"text"`
	// Program is its program's name.
	Program string `msgpack:"program" json:"program"`
	// Via names what runs it ("sudo", "sh -c"), when not the line.
	Via string `msgpack:"via,omitempty" json:"via,omitempty"`
	// Allowed says it may run unasked; By then names the rule ("allow
	// \"go test *\"", "remembered \"make\"", "harmless builtin").
	Allowed bool   `msgpack:"allowed" json:"allowed"`
	By      string `msgpack:"by,omitempty" json:"by,omitempty"`
	// Denied names the deny rule that matched it; Unsure the one that
	// might (a word known only when it runs).
	Denied string `msgpack:"denied,omitempty" json:"denied,omitempty"`
	Unsure string `msgpack:"unsure,omitempty" json:"unsure,omitempty"`
	// Exact says Text, remembered, allows this command and no more.
	Exact bool `msgpack:"exact" json:"exact"`
}

// Verdict is the decision on a line and why.
type Verdict struct {
	// Decision is Run, Refuse or Ask.
	Decision string `msgpack:"decision" json:"decision"`
	// Reason says why, in a sentence a person reads in the chat.
	Reason string `msgpack:"reason" json:"reason"`
	// Commands are the line's simple commands, checked.
	Commands []Checked `msgpack:"commands" json:"commands"`
	// Unknown says what of the line cannot be known before it runs.
	Unknown []string `msgpack:"unknown" json:"unknown"`
	// Errors name the rules that could not be read (they match nothing).
	Errors []string `msgpack:"errors,omitempty" json:"errors,omitempty"`
}

// harmless are builtins that run nothing and write nothing, allowed
// without a rule (so "cd sub && go test ./..." needs only the go rule).
var harmless = map[string]bool{"cd": true, "pushd": true, "popd": true, "pwd": true, "true": true, "false": true, ":": true}

// staysHere says a cd-like command moves only down into the project: a
// relative directory with no "..", known before it runs. A cd elsewhere
// would run the allowed commands after it outside the project.
func staysHere(c Command) bool {
	if c.Program != "cd" && c.Program != "pushd" && c.Program != "popd" {
		return true
	}
	if c.Program == "popd" {
		return false
	}
	for _, a := range c.Args {
		if !a.Known || a.Glob || strings.HasPrefix(a.Value, "/") || strings.HasPrefix(a.Value, "~") || a.Value == "-" {
			return false
		}
		for _, part := range strings.Split(a.Value, "/") {
			if part == ".." {
				return false
			}
		}
	}
	return len(c.Args) > 0 // cd alone goes home
}

// Harmless lists the programs allowed without a rule (for the docs).
func Harmless() []string { return []string{"cd", "pushd", "popd", "pwd", "true", "false", ":"} }

// Decide decides on line.
func (rs Rules) Decide(line string) Verdict {
	return rs.DecideAnalysis(Analyze(line))
}

// DecideAnalysis decides on an analysed line: refused when a deny rule
// matches any of its commands; run when every command is allowed and
// nothing of it is unknown; else as Otherwise says — except that a line
// with an unknown part, or a command a deny rule might match, is asked
// rather than run.
func (rs Rules) DecideAnalysis(an Analysis) Verdict {
	v := Verdict{Unknown: an.Unknown, Commands: []Checked{}}
	if v.Unknown == nil {
		v.Unknown = []string{}
	}
	parse := func(list []string, what string) []Rule {
		var out []Rule
		for _, s := range list {
			r, err := ParseRule(s)
			if err != nil {
				v.Errors = append(v.Errors, fmt.Sprintf("%s: %v", what, err))
				continue
			}
			out = append(out, r)
		}
		return out
	}
	deny, allow, kept := parse(rs.Deny, "deny"), parse(rs.Allow, "allow"), parse(rs.Remembered, "remembered")
	// A deny rule that cannot be read might have refused the line: it
	// is never run unasked then.
	badDeny := ""
	for _, e := range v.Errors {
		if strings.HasPrefix(e, "deny: ") && badDeny == "" {
			badDeny = e
		}
	}
	var denied, unsure, notAllowed []Checked
	for _, c := range an.Commands {
		ch := Checked{Text: c.Text(), Program: c.Program, Via: c.Via, Exact: c.Exact()}
		for _, r := range deny {
			switch r.Match(c, true) {
			case yes:
				if ch.Denied == "" {
					ch.Denied = r.Source
				}
			case maybe:
				if ch.Unsure == "" {
					ch.Unsure = r.Source
				}
			}
		}
		switch {
		case harmless[c.Program] && len(c.Writes) == 0 && staysHere(c):
			ch.Allowed, ch.By = true, "a builtin that changes nothing"
		default:
			for _, list := range []struct {
				rules []Rule
				what  string
			}{{allow, "allow"}, {kept, "remembered"}} {
				for _, r := range list.rules {
					if r.Match(c, false) == yes {
						ch.Allowed, ch.By = true, fmt.Sprintf("%s %q", list.what, r.Source)
						break
					}
				}
				if ch.Allowed {
					break
				}
			}
		}
		if ch.Denied != "" {
			ch.Allowed = false
			denied = append(denied, ch)
		} else if ch.Unsure != "" {
			unsure = append(unsure, ch)
		}
		if !ch.Allowed && ch.Denied == "" {
			notAllowed = append(notAllowed, ch)
		}
		v.Commands = append(v.Commands, ch)
	}
	otherwise := rs.Otherwise
	if otherwise == "" {
		otherwise = Ask
	}
	switch {
	case len(denied) > 0:
		v.Decision = Refuse
		v.Reason = fmt.Sprintf("refused: %s matches deny %q", quoteCmd(denied[0]), denied[0].Denied)
	case badDeny != "":
		v.Decision = Ask
		v.Reason = "asked: a deny rule cannot be read (" + badDeny + "), so nothing runs unasked until it is fixed"
	case len(v.Unknown) > 0 && otherwise == Refuse:
		v.Decision = Refuse
		v.Reason = "refused: " + v.Unknown[0] + ", and no rule allows what it cannot see"
	case len(v.Unknown) > 0:
		v.Decision = Ask
		v.Reason = "asked: " + v.Unknown[0]
	case len(unsure) > 0 && otherwise != Refuse:
		v.Decision = Ask
		v.Reason = fmt.Sprintf("asked: %s might match deny %q once its words are known", quoteCmd(unsure[0]), unsure[0].Unsure)
	case len(notAllowed) == 0 && len(unsure) == 0:
		v.Decision = Run
		if by := allowedBy(v.Commands); by != "" {
			v.Reason = "allowed: " + by
		} else {
			// no rule, answer or user allowed it: say what it is
			v.Reason = "not asked: it runs only builtins that change nothing (" + builtinsOf(v.Commands) + ")"
		}
	case otherwise == Run && len(unsure) == 0:
		v.Decision = Run
		v.Reason = fmt.Sprintf("run: %s matches no rule, and otherwise = \"run\"", quoteCmd(notAllowed[0]))
	case otherwise == Refuse:
		v.Decision = Refuse
		first := append(unsure, notAllowed...)[0]
		v.Reason = fmt.Sprintf("refused: %s matches no allow rule, and otherwise = \"refuse\"", quoteCmd(first))
	default:
		v.Decision = Ask
		v.Reason = fmt.Sprintf("asked: %s matches no allow rule", quoteCmd(notAllowed[0]))
	}
	return v
}

func quoteCmd(c Checked) string {
	if c.Text == "" {
		return "a redirection"
	}
	return "`" + c.Text + "`"
}

// allowedBy says which rules allowed the commands, each once.
func allowedBy(cs []Checked) string {
	var parts []string
	seen := map[string]bool{}
	for _, c := range cs {
		if c.By == "a builtin that changes nothing" || seen[c.By] {
			continue
		}
		seen[c.By] = true
		parts = append(parts, c.By)
	}
	return strings.Join(parts, ", ")
}

// builtinsOf names the builtins of a line that runs nothing else.
func builtinsOf(cs []Checked) string {
	var names []string
	seen := map[string]bool{}
	for _, c := range cs {
		if !seen[c.Text] {
			seen[c.Text] = true
			names = append(names, "`"+c.Text+"`")
		}
	}
	return strings.Join(names, ", ")
}
