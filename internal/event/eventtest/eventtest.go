// Package eventtest holds what the tests of the backend's parts share
// about events: the events a queue holds as Lua gets them, and the Go and
// Lua declarations of what the two sides exchange.
package eventtest

import (
	"bytes"
	"os"
	"reflect"
	"strings"
	"testing"

	"github.com/agentrun/agentrun.nvim/internal/event"
	"github.com/neovim/go-client/msgpack"
)

// Named returns the payloads of the queued events called name, as
// Lua gets them (through msgpack).
func Named(q *event.Queue, name string) []map[string]any {
	var out []map[string]any
	for _, e := range q.Waiting() {
		if e.Name == name {
			out = append(out, AsLua(e.Payload))
		}
	}
	return out
}

// AsLua is p encoded as the bridge sends it and decoded again.
func AsLua(p event.Payload) map[string]any {
	var buf bytes.Buffer
	if err := msgpack.NewEncoder(&buf).Encode(p); err != nil {
		panic(err)
	}
	var m map[string]any
	if err := msgpack.NewDecoder(&buf).Decode(&m); err != nil {
		panic(err)
	}
	return m
}

// MsgpackFields are a struct's msgpack field names, true when Lua may
// find one absent (omitempty, or a pointer).
func MsgpackFields(typ reflect.Type) map[string]bool {
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

// LuaClasses reads the ---@class blocks of path named prefix+X: X -> field
// -> optional.
func LuaClasses(t *testing.T, path, prefix string) map[string]map[string]bool {
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
