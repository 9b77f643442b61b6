package event_test

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

	"github.com/agentrun/agentrun.nvim/internal/event"
	"github.com/agentrun/agentrun.nvim/internal/event/eventtest"
)

// everyPayload is one value of each event's payload type.
var everyPayload = []event.Payload{
	event.SessionStarted{}, event.SessionFailed{}, event.SessionEnded{}, event.SessionQuiet{},
	&event.SessionUpdate{}, event.HistoryReplayed{}, event.OurTool{}, event.TurnEnd{}, event.PromptSent{}, event.Message{},
	event.ChatNote{}, event.TerminalCreated{}, event.TerminalExit{}, event.TerminalReleased{}, event.TerminalActivity{},
	event.DisplayEnded{}, &event.AgentTerminal{}, event.ToolTerminal{}, event.Permission{},
	event.Elicitation{}, event.ElicitationComplete{}, event.Approve{},
	event.PermissionQuestion.Withdrawn("", ""), event.ApproveQuestion.Withdrawn("", ""),
	event.ElicitQuestion.Withdrawn("", ""),
	event.AuthRequired{}, event.SessionList{}, event.RemoteClaimed{}, event.SSHConnected{},
}

// TestEventPayloadsAgree: every event Go sends has one payload struct;
// Lua declares the same fields (---@class agentrun.event.<name> in
// types.lua, ? where Go may leave one out); and each handler reads no
// field of its payload that Go does not send.
func TestEventPayloadsAgree(t *testing.T) {
	goFields := map[string]map[string]bool{} // event -> msgpack name -> optional
	for _, p := range everyPayload {
		goFields[p.EventName()] = eventtest.MsgpackFields(reflect.TypeOf(p))
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
			t.Errorf("payload of %q is no event of names.go", n)
		}
	}

	luaFields := eventtest.LuaClasses(t, "../../lua/agentrun/types.lua", "agentrun.event.")
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

// eventConstants are the event names of names.go.
func eventConstants(t *testing.T) []string {
	t.Helper()
	f, err := parser.ParseFile(token.NewFileSet(), "names.go", nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	ast.Inspect(f, func(n ast.Node) bool {
		if vs, ok := n.(*ast.ValueSpec); ok && len(vs.Values) == 1 && strings.HasPrefix(vs.Names[0].Name, "Name") {
			if lit, ok := vs.Values[0].(*ast.BasicLit); ok {
				s, _ := strconv.Unquote(lit.Value)
				out = append(out, s)
			}
		}
		return true
	})
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
