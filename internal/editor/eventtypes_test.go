package editor

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// everyPayload is one value of each event's payload type.
var everyPayload = []payload{
	sessionStartedEvent{}, sessionFailedEvent{}, sessionEndedEvent{}, sessionQuietEvent{},
	&sessionUpdateEvent{}, historyReplayedEvent{}, ourToolEvent{}, turnEndEvent{}, promptSentEvent{}, messageEvent{},
	chatNoteEvent{}, terminalCreatedEvent{}, terminalExitEvent{}, terminalReleasedEvent{}, terminalActivityEvent{},
	displayEndedEvent{}, &agentTerminalEvent{}, toolTerminalEvent{}, permissionEvent{},
	elicitationEvent{}, elicitationCompleteEvent{}, approveEvent{},
	questionWithdrawnEvent{name: evPermissionCancelled}, questionWithdrawnEvent{name: evApproveCancelled},
	questionWithdrawnEvent{name: evElicitationWithdrawn},
	authRequiredEvent{}, sessionListEvent{}, remoteClaimedEvent{}, sshConnectedEvent{},
}

// TestEventPayloadsAgree: every event Go sends has one payload struct;
// Lua declares the same fields (---@class agentrun.event.<name> in
// types.lua, ? where Go may leave one out); and each handler reads no
// field of its payload that Go does not send.
func TestEventPayloadsAgree(t *testing.T) {
	goFields := map[string]map[string]bool{} // event -> msgpack name -> optional
	for _, p := range everyPayload {
		goFields[p.eventName()] = msgpackFields(reflect.TypeOf(p))
	}
	var names []string
	for _, n := range eventConstants(t) {
		names = append(names, n)
		if goFields[n] == nil {
			t.Errorf("event %q has no payload type in everyPayload", n)
		}
	}
	for n := range goFields {
		if !slices.Contains(names, n) {
			t.Errorf("payload of %q is no event of eventnames.go", n)
		}
	}

	luaFields := luaClasses(t, "../../lua/agentrun/types.lua", "agentrun.event.")
	for _, n := range names {
		got, want := luaFields[n], goFields[n]
		if got == nil {
			t.Errorf("types.lua has no ---@class agentrun.event.%s", n)
			continue
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("event %s: types.lua declares %v, Go sends %v (field: optional)", n, got, want)
		}
	}

	for n, reads := range handlerReads(t) {
		for _, f := range reads {
			if _, ok := goFields[n][f]; !ok {
				t.Errorf("the handler of %s reads .%s, which Go never sends", n, f)
			}
		}
	}
}

// msgpackFields are a struct's msgpack field names, true when Lua may
// find one absent (omitempty, or a pointer).
func msgpackFields(typ reflect.Type) map[string]bool {
	if typ.Kind() == reflect.Pointer {
		typ = typ.Elem()
	}
	out := map[string]bool{}
	for f := range typ.Fields() {
		tag, opts, _ := strings.Cut(f.Tag.Get("msgpack"), ",")
		if tag == "" || !f.IsExported() {
			continue
		}
		out[tag] = opts == "omitempty" || f.Type.Kind() == reflect.Pointer
	}
	return out
}

// eventConstants are the event names of eventnames.go.
func eventConstants(t *testing.T) []string {
	t.Helper()
	f, err := parser.ParseFile(token.NewFileSet(), "eventnames.go", nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	ast.Inspect(f, func(n ast.Node) bool {
		if vs, ok := n.(*ast.ValueSpec); ok && len(vs.Values) == 1 && strings.HasPrefix(vs.Names[0].Name, "ev") {
			if lit, ok := vs.Values[0].(*ast.BasicLit); ok {
				s, _ := strconv.Unquote(lit.Value)
				out = append(out, s)
			}
		}
		return true
	})
	return out
}

// luaClasses reads the ---@class blocks of path named prefix+X: X -> field
// -> optional.
func luaClasses(t *testing.T, path, prefix string) map[string]map[string]bool {
	t.Helper()
	src, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]map[string]bool{}
	var cur map[string]bool
	for line := range strings.Lines(string(src)) {
		if rest, ok := strings.CutPrefix(line, "---@class "+prefix); ok {
			cur = map[string]bool{}
			out[strings.Fields(rest)[0]] = cur
			continue
		}
		if rest, ok := strings.CutPrefix(line, "---@field "); ok && cur != nil {
			name := strings.Fields(rest)[0]
			opt := strings.HasSuffix(name, "?")
			cur[strings.TrimSuffix(name, "?")] = opt
			continue
		}
		cur = nil
	}
	return out
}

var (
	luaRequire    = regexp.MustCompile(`(?m)^local (\w+) = require\("(agentrun[\w.]*)"\)`)
	luaHandlerFn  = regexp.MustCompile(`(?m)^function handlers\.(\w+)\((\w+)`)
	luaHandlerRef = regexp.MustCompile(`(?m)^handlers\.(\w+) = (?:(\w+)|require\("(agentrun[\w.]*)"\))\.(\w+)$`)
)

// handlerReads is, per event, the fields of its payload its handler
// reads (handlers.lua's own functions, and the module functions it
// registers): param.field in the function's body.
func handlerReads(t *testing.T) map[string][]string {
	t.Helper()
	const dir = "../../lua"
	read := func(module string) string {
		src, err := os.ReadFile(filepath.Join(dir, strings.ReplaceAll(module, ".", "/")+".lua"))
		if err != nil {
			t.Fatal(err)
		}
		return string(src)
	}
	handlers := read("agentrun.handlers")
	modules := map[string]string{}
	for _, m := range luaRequire.FindAllStringSubmatch(handlers, -1) {
		modules[m[1]] = m[2]
	}
	out := map[string][]string{}
	for _, m := range luaHandlerFn.FindAllStringSubmatchIndex(handlers, -1) {
		ev, param := handlers[m[2]:m[3]], handlers[m[4]:m[5]]
		out[ev] = fieldsRead(functionBody(handlers[m[0]:]), param)
	}
	for _, m := range luaHandlerRef.FindAllStringSubmatch(handlers, -1) {
		ev, module, fn := m[1], modules[m[2]], m[4]
		if m[3] != "" {
			module = m[3]
		}
		if module == "" {
			t.Errorf("handlers.%s: cannot tell which module %q is", ev, m[2])
			continue
		}
		src := read(module)
		def := regexp.MustCompile(`(?m)^function M\.` + fn + `\((\w+)`).FindStringSubmatchIndex(src)
		if def == nil {
			t.Errorf("handlers.%s: %s has no function M.%s", ev, module, fn)
			continue
		}
		out[ev] = fieldsRead(functionBody(src[def[0]:]), src[def[2]:def[3]])
	}
	if len(out) < 20 {
		t.Fatalf("found the handlers of only %d events in handlers.lua", len(out))
	}
	return out
}

// functionBody is src up to the first line that is "end" alone (the end
// of a top-level function).
func functionBody(src string) string {
	if i := strings.Index(src, "\nend\n"); i >= 0 {
		return src[:i]
	}
	return src
}

// fieldsRead are the distinct names param.name reads in body.
func fieldsRead(body, param string) []string {
	var out []string
	for _, m := range regexp.MustCompile(`\b`+param+`\.(\w+)`).FindAllStringSubmatch(body, -1) {
		if !slices.Contains(out, m[1]) {
			out = append(out, m[1])
		}
	}
	return out
}
