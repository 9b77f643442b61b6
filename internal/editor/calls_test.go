package editor

import (
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/agentrun/agentrun.nvim/internal/event/eventtest"
)

// TestCallsAgree: the calls Lua makes and the bridge's handlers, as
// TestEventPayloadsAgree does for events. Every name Lua calls is a
// handler, and every handler is called; Lua passes no more arguments than
// the handler takes (msgpack-rpc drops the extra ones silently); a table
// Lua passes where the handler takes a struct has only that struct's
// fields (msgpack drops unknown ones silently too); and each struct a
// handler takes is declared in types.lua as ---@class
// agentrun.request.<name>, field for field.
func TestCallsAgree(t *testing.T) {
	handlers := (&Bridge{}).handlers()
	calls := luaCalls(t, "../../lua")
	if len(calls) < 40 {
		t.Fatalf("found only %d calls in the Lua code", len(calls))
	}
	called := map[string]bool{}
	for _, c := range calls {
		for _, name := range c.names {
			called[name] = true
			fn, ok := handlers[name]
			if !ok {
				t.Errorf("%s calls %q, which the bridge has no handler for", c.where, name)
				continue
			}
			typ := reflect.TypeOf(fn)
			if !c.more && len(c.args) > typ.NumIn() {
				t.Errorf("%s calls %q with %d arguments; its handler takes %d (%s)", c.where, name, len(c.args), typ.NumIn(), typ)
			}
			for i, arg := range c.args {
				keys := tableKeys(arg)
				if c.annotated {
					i = structParam(typ)
				}
				if keys == nil || i < 0 || i >= typ.NumIn() {
					continue
				}
				in := typ.In(i)
				if in.Kind() != reflect.Struct {
					t.Errorf("%s passes %q a table as argument %d; its handler takes %s", c.where, name, i+1, in)
					continue
				}
				fields := eventtest.MsgpackFields(in)
				for _, k := range keys {
					if _, ok := fields[k]; !ok {
						t.Errorf("%s passes %q a table with .%s, which %s has not", c.where, name, k, in.Name())
					}
				}
			}
		}
	}
	luaTypes := eventtest.LuaClasses(t, "../../lua/agentrun/types.lua", "agentrun.request.")
	for _, name := range mapsKeys(handlers) {
		if !called[name] {
			t.Errorf("the bridge's handler %q is called nowhere in the Lua code", name)
		}
		typ := reflect.TypeOf(handlers[name])
		for i := range typ.NumIn() {
			if typ.In(i).Kind() != reflect.Struct {
				continue
			}
			want := eventtest.MsgpackFields(typ.In(i))
			got := luaTypes[name]
			if got == nil {
				t.Errorf("types.lua has no ---@class agentrun.request.%s (%s)", name, typ.In(i).Name())
				continue
			}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("call %s: types.lua declares %v, the handler takes %v (field: optional)", name, got, want)
			}
		}
	}
	for name := range luaTypes {
		if _, ok := handlers[name]; !ok {
			t.Errorf("types.lua declares agentrun.request.%s; the bridge has no such call", name)
		}
	}
}

// structParam is the index of the struct fn type typ takes, else -1.
func structParam(typ reflect.Type) int {
	for i := range typ.NumIn() {
		if typ.In(i).Kind() == reflect.Struct {
			return i
		}
	}
	return -1
}

func mapsKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// luaCall is one place Lua calls the backend.
type luaCall struct {
	where string   // file:line
	names []string // the method (both of t.remote and "remote_x" or "x")
	args  []string // the arguments after the method, as written
	more  bool     // the arguments end with ... (their number is not known here)
	// annotated: a table made apart from the call, args its only one
	// (the handler's one struct)
	annotated bool
}

var luaAnnotated = regexp.MustCompile(`(?m)^\s*---@(?:type|return) agentrun\.request\.(\w+)\s*$`)

// luaCallers are what calls the backend, and where the method is among
// the arguments (0-based): rpc's functions (request_at's first argument is
// the machine), vim.rpcrequest/rpcnotify called through pcall, and
// conversation.lua's request_running, which passes the key on.
var luaCallers = []struct {
	re     *regexp.Regexp
	method int
	args   []string // what the call passes on, when not its own arguments
}{
	{re: regexp.MustCompile(`(?:\brpc|require\("agentrun\.rpc"\))\.(?:request|notify|notify_all)\(`), method: 0},
	{re: regexp.MustCompile(`(?:\brpc|require\("agentrun\.rpc"\))\.request_at\(`), method: 1},
	{re: regexp.MustCompile(`\bpcall\(\s*vim\.rpc(?:request|notify)\s*,`), method: 1},
	{re: regexp.MustCompile(`\brequest_running\(`), method: 1, args: []string{"s.key"}},
}

// forwarders are the calls whose method is a parameter: rpc.lua's own
// request/notify and request_running's body; their callers are checked.
var forwardedMethod = regexp.MustCompile(`^(method|\.\.\.)$`)

// luaCalls finds every call of the backend in the Lua files under dir.
func luaCalls(t *testing.T, dir string) []luaCall {
	t.Helper()
	var out []luaCall
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".lua") {
			return err
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		src := stripLuaComments(string(b))
		for _, caller := range luaCallers {
			for _, m := range caller.re.FindAllStringIndex(src, -1) {
				where := filepath.Base(path) + ":" + strconv.Itoa(1+strings.Count(src[:m[0]], "\n"))
				args := luaArgs(src[m[1]:])
				if len(args) <= caller.method {
					t.Errorf("%s: cannot read the method of the call", where)
					continue
				}
				method := args[caller.method]
				if forwardedMethod.MatchString(method) {
					continue
				}
				c := luaCall{where: where, args: args[caller.method+1:]}
				for _, s := range regexp.MustCompile(`"([a-z_]+)"`).FindAllStringSubmatch(method, -1) {
					c.names = append(c.names, s[1])
				}
				if len(c.names) == 0 {
					t.Errorf("%s: the method %q names no call (a computed name hides it from this test)", where, method)
				}
				if caller.args != nil {
					c.args = caller.args
				}
				if n := len(c.args); n > 0 && c.args[n-1] == "..." {
					c.more, c.args = true, c.args[:n-1]
				}
				out = append(out, c)
			}
		}
		// A table made apart from the call says what it is for:
		// ---@type agentrun.request.X before "local x = {", or ---@return
		// agentrun.request.X before the function that returns it.
		for _, m := range luaAnnotated.FindAllStringSubmatchIndex(string(b), -1) {
			name, rest := string(b)[m[2]:m[3]], string(b)[m[1]:]
			where := filepath.Base(path) + ":" + strconv.Itoa(1+strings.Count(string(b)[:m[0]], "\n"))
			open := regexp.MustCompile(`(?m)^\s*(?:local \w+ =|return) \{`).FindStringIndex(rest)
			if open == nil {
				t.Errorf("%s: no table follows the annotation", where)
				continue
			}
			items := luaArgs(stripLuaComments(rest[open[1]:])) // up to its closing }
			table := "{" + strings.Join(items, ", ") + "}"
			out = append(out, luaCall{where: where, names: []string{name}, args: []string{table}, annotated: true})
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// stripLuaComments blanks Lua's -- comments (not inside strings), so a
// call in a comment is none; newlines stay, for line numbers.
func stripLuaComments(src string) string {
	var b strings.Builder
	for line := range strings.Lines(src) {
		var quote byte
		cut := len(line)
		for i := 0; i < len(line); i++ {
			c := line[i]
			switch {
			case quote != 0 && c == '\\':
				i++
			case quote != 0 && c == quote:
				quote = 0
			case quote == 0 && (c == '"' || c == '\''):
				quote = c
			case quote == 0 && c == '-' && strings.HasPrefix(line[i:], "--"):
				cut = i
				i = len(line)
			}
		}
		b.WriteString(line[:cut])
		if cut < len(line) && strings.HasSuffix(line, "\n") {
			b.WriteByte('\n')
		}
	}
	return b.String()
}

// luaArgs splits the argument list that src starts with (just after its
// "(") at its top-level commas.
func luaArgs(src string) []string {
	var args []string
	depth, start := 0, 0
	var quote byte
	for i := 0; i < len(src); i++ {
		c := src[i]
		switch {
		case quote != 0:
			if c == '\\' {
				i++
			} else if c == quote {
				quote = 0
			}
		case c == '"' || c == '\'':
			quote = c
		case c == '(' || c == '{' || c == '[':
			depth++
		case c == ')' || c == '}' || c == ']':
			if depth == 0 {
				if a := strings.TrimSpace(src[start:i]); a != "" {
					args = append(args, a)
				}
				return args
			}
			depth--
		case c == ',' && depth == 0:
			args = append(args, strings.TrimSpace(src[start:i]))
			start = i + 1
		}
	}
	return args
}

// tableKeys are the keys of a table constructor ({ a = 1, b = x }), nil
// when arg is not one.
func tableKeys(arg string) []string {
	if !strings.HasPrefix(arg, "{") || !strings.HasSuffix(arg, "}") {
		return nil
	}
	keys := []string{}
	for _, item := range luaArgs(arg[1:len(arg)-1] + ")") {
		if m := regexp.MustCompile(`^([A-Za-z_]\w*)\s*=[^=]`).FindStringSubmatch(item); m != nil {
			keys = append(keys, m[1])
		}
	}
	return keys
}
