package tests

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
)

// TestLuaRequiresFlowOneWay: the Lua modules under lua/agentrun require
// each other without a cycle, and none requires the public API (init):
// it is the top, and everything else lies below it. Every require counts,
// one at the top of a file as much as one inside a function body or in a
// string run later (a keymap's "<Cmd>lua require(...)", an omnifunc's
// v:lua.require'...'); a require whose name is computed would hide an
// edge, and fails too. No Neovim needed: the files are read as text.
func TestLuaRequiresFlowOneWay(t *testing.T) {
	graph, err := luaRequireGraph(filepath.Join(root, "lua"))
	if err != nil {
		t.Fatal(err)
	}
	// The reader must see the graph, or the checks below pass on nothing.
	if len(graph) < 30 || !contains(graph["agentrun"], "agentrun.config") || !contains(graph["agentrun.ui.chat"], "agentrun.ui.window") {
		t.Fatalf("read only %d modules, or missed a require everybody sees (init → config, ui.chat → ui.window): %v", len(graph), graph)
	}
	for _, mod := range sortedKeys(graph) {
		if contains(graph[mod], "agentrun") {
			t.Errorf("%s requires agentrun (init, the public API): call the module that does the work instead", mod)
		}
	}
	for _, cycle := range luaCycles(graph) {
		t.Errorf("require cycle: %s", strings.Join(cycle, " → "))
	}
	if t.Failed() {
		return
	}
	// The layers, for the report and for a reader of -v output.
	for i, layer := range luaLayers(graph) {
		t.Logf("layer %d: %s", i, strings.Join(layer, ", "))
	}
}

// TestLuaRequireReader: what the reader takes for a require, and what not.
func TestLuaRequireReader(t *testing.T) {
	cases := []struct {
		name, src string
		want      []string
		bad       bool
	}{
		{"top of the file", `local rpc = require("agentrun.rpc")`, []string{"agentrun.rpc"}, false},
		{"no parentheses", `local x = require "agentrun.state" local y = require'agentrun.util'`, []string{"agentrun.state", "agentrun.util"}, false},
		{"inside a function", "local function f()\n  return require('agentrun.ui.term').open()\nend", []string{"agentrun.ui.term"}, false},
		{"init itself", `require("agentrun").status()`, []string{"agentrun"}, false},
		{"in a keymap string", `local k = "<Cmd>lua require('agentrun.ui.userterm').focus(1)<CR>"`, []string{"agentrun.ui.userterm"}, false},
		{"in an omnifunc", `vim.bo.omnifunc = "v:lua.require'agentrun.ui.complete'.omnifunc"`, []string{"agentrun.ui.complete"}, false},
		{"line comment", "-- require(\"agentrun.events\").dispatch\nlocal a = 1", nil, false},
		{"block comment", "--[[ require(\"agentrun.events\") ]] local a = 1", nil, false},
		{"level block comment", "--[==[ ]] require(\"agentrun.events\") ]==] local a = 1", nil, false},
		{"other plugins", `local h = require("health") local t = require("nvim-treesitter")`, nil, false},
		{"a longer name", `ts.language.require_language("go")`, nil, false},
		{"a method of that name", `x.require("agentrun.rpc")`, nil, false},
		{"computed name", `require(to[1])[to[2]](p)`, nil, true},
		{"passed around", `pcall(require, "agentrun.rpc")`, nil, true},
		{"a string that only looks like code", `local s = "-- not a comment" local r = require("agentrun.rpc")`, []string{"agentrun.rpc"}, false},
		{"escaped quote", `local s = "say \"hi\" -- there" local r = require("agentrun.rpc")`, []string{"agentrun.rpc"}, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, bad := luaRequires(c.src)
			if strings.Join(got, " ") != strings.Join(c.want, " ") {
				t.Errorf("requires %q, want %q", got, c.want)
			}
			if (len(bad) > 0) != c.bad {
				t.Errorf("computed requires %q, want some: %v", bad, c.bad)
			}
		})
	}
	cyclic := map[string][]string{"a": {"b"}, "b": {"c"}, "c": {"a", "d"}, "d": nil, "e": {"e2"}, "e2": {"e"}}
	got := luaCycles(cyclic)
	if len(got) != 2 || strings.Join(got[0], " ") != "a b c a" || strings.Join(got[1], " ") != "e e2 e" {
		t.Errorf("cycles of %v: %v", cyclic, got)
	}
	if got := luaCycles(map[string][]string{"a": {"b", "c"}, "b": {"c"}, "c": nil}); len(got) != 0 {
		t.Errorf("a diamond has no cycle, got %v", got)
	}
}

// luaRequireGraph maps each module under dir/agentrun ("agentrun",
// "agentrun.ui.term") to the agentrun modules it requires (sorted, no
// repeats, not itself: a keymap string naming its own module is no edge).
func luaRequireGraph(dir string) (map[string][]string, error) {
	graph := map[string][]string{}
	err := filepath.WalkDir(filepath.Join(dir, "agentrun"), func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".lua") {
			return err
		}
		rel, err := filepath.Rel(dir, path)
		if err != nil {
			return err
		}
		mod := strings.ReplaceAll(strings.TrimSuffix(rel, ".lua"), string(filepath.Separator), ".")
		mod = strings.TrimSuffix(mod, ".init")
		src, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		reqs, bad := luaRequires(string(src))
		if len(bad) > 0 {
			return fmt.Errorf("%s: a require with a computed name hides which module it loads: %s", rel, strings.Join(bad, "; "))
		}
		seen := map[string]bool{}
		graph[mod] = []string{}
		for _, r := range reqs {
			if r != mod && !seen[r] {
				seen[r] = true
				graph[mod] = append(graph[mod], r)
			}
		}
		sort.Strings(graph[mod])
		return nil
	})
	return graph, err
}

var (
	// requireInString is a require written in a string that runs later.
	requireInString = regexp.MustCompile(`(?:^|[^\w.:]|v:lua\.)require\s*\(?\s*['"](agentrun(?:\.[\w.]+)?)['"]`)
	longBracket     = regexp.MustCompile(`^\[(=*)\[`)
)

// luaRequires returns the agentrun modules src requires, in order, and
// the requires whose name is no string literal. It reads Lua's tokens
// far enough to skip comments and to tell code from strings.
func luaRequires(src string) (mods, bad []string) {
	type token struct {
		kind string // "name", "string", "other"
		text string
	}
	var toks []token
	i := 0
	for i < len(src) {
		c := src[i]
		switch {
		case strings.HasPrefix(src[i:], "--"):
			i += 2
			if m := longBracket.FindStringSubmatch(src[i:]); m != nil {
				end := strings.Index(src[i:], "]"+m[1]+"]")
				if end < 0 {
					return mods, bad
				}
				i += end + len(m[1]) + 2
			} else if nl := strings.IndexByte(src[i:], '\n'); nl >= 0 {
				i += nl + 1
			} else {
				i = len(src)
			}
		case c == '"' || c == '\'':
			j := i + 1
			var b strings.Builder
			for j < len(src) && src[j] != c {
				if src[j] == '\\' && j+1 < len(src) {
					b.WriteByte(src[j+1])
					j += 2
					continue
				}
				b.WriteByte(src[j])
				j++
			}
			toks = append(toks, token{"string", b.String()})
			i = j + 1
		case c == '[' && longBracket.MatchString(src[i:]):
			m := longBracket.FindStringSubmatch(src[i:])
			start := i + len(m[0])
			end := strings.Index(src[start:], "]"+m[1]+"]")
			if end < 0 {
				end = len(src) - start
			}
			toks = append(toks, token{"string", src[start : start+end]})
			i = start + end + len(m[1]) + 2
		case c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z':
			j := i
			for j < len(src) && (src[j] == '_' || src[j] >= 'a' && src[j] <= 'z' || src[j] >= 'A' && src[j] <= 'Z' || src[j] >= '0' && src[j] <= '9') {
				j++
			}
			toks = append(toks, token{"name", src[i:j]})
			i = j
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
			i++
		default:
			toks = append(toks, token{"other", string(c)})
			i++
		}
	}
	agentrun := func(name string) bool { return name == "agentrun" || strings.HasPrefix(name, "agentrun.") }
	for k, tok := range toks {
		if tok.kind == "string" {
			for _, m := range requireInString.FindAllStringSubmatch(tok.text, -1) {
				mods = append(mods, m[1])
			}
			continue
		}
		if tok.kind != "name" || tok.text != "require" {
			continue
		}
		if k > 0 && toks[k-1].kind == "other" && (toks[k-1].text == "." || toks[k-1].text == ":") {
			continue // a field of another table (x.require)
		}
		next := k + 1
		if next < len(toks) && toks[next].text == "(" && toks[next].kind == "other" {
			next++
		}
		if next < len(toks) && toks[next].kind == "string" && (next == k+1 || next+1 < len(toks) && toks[next+1].text == ")") {
			if agentrun(toks[next].text) {
				mods = append(mods, toks[next].text)
			}
			continue
		}
		var around []string
		for _, x := range toks[max(0, k-2):min(len(toks), k+4)] {
			around = append(around, x.text)
		}
		bad = append(bad, strings.Join(around, " "))
	}
	return mods, bad
}

// luaCycles returns one cycle (first module repeated at the end) for each
// strongly connected group of modules that has one, each starting at its
// smallest name, in name order.
func luaCycles(graph map[string][]string) [][]string {
	index, low := map[string]int{}, map[string]int{}
	onStack := map[string]bool{}
	var stack []string
	var groups [][]string
	var visit func(string)
	visit = func(v string) {
		index[v], low[v] = len(index), len(index)
		stack = append(stack, v)
		onStack[v] = true
		for _, w := range graph[v] {
			if _, seen := index[w]; !seen {
				visit(w)
				low[v] = min(low[v], low[w])
			} else if onStack[w] {
				low[v] = min(low[v], index[w])
			}
		}
		if low[v] == index[v] {
			var group []string
			for {
				w := stack[len(stack)-1]
				stack = stack[:len(stack)-1]
				onStack[w] = false
				group = append(group, w)
				if w == v {
					break
				}
			}
			if len(group) > 1 || contains(graph[v], v) {
				groups = append(groups, group)
			}
		}
	}
	for _, v := range sortedKeys(graph) {
		if _, seen := index[v]; !seen {
			visit(v)
		}
	}
	var cycles [][]string
	for _, group := range groups {
		in := map[string]bool{}
		for _, v := range group {
			in[v] = true
		}
		sort.Strings(group)
		cycles = append(cycles, cycleFrom(graph, in, group[0]))
	}
	sort.Slice(cycles, func(a, b int) bool { return cycles[a][0] < cycles[b][0] })
	return cycles
}

// cycleFrom finds a shortest path from start back to start within in.
func cycleFrom(graph map[string][]string, in map[string]bool, start string) []string {
	prev := map[string]string{}
	queue := []string{start}
	for len(queue) > 0 {
		v := queue[0]
		queue = queue[1:]
		for _, w := range graph[v] {
			if !in[w] {
				continue
			}
			if w == start {
				path := []string{start}
				for x := v; x != start; x = prev[x] {
					path = append([]string{x}, path...)
				}
				return append([]string{start}, path...)
			}
			if _, seen := prev[w]; !seen {
				prev[w] = v
				queue = append(queue, w)
			}
		}
	}
	return []string{start, "?", start}
}

// luaLayers groups an acyclic graph by height: layer 0 requires no
// agentrun module, layer n only modules of lower layers.
func luaLayers(graph map[string][]string) [][]string {
	height := map[string]int{}
	var h func(string) int
	h = func(v string) int {
		if x, ok := height[v]; ok {
			return x
		}
		height[v] = 0
		best := 0
		for _, w := range graph[v] {
			best = max(best, h(w)+1)
		}
		height[v] = best
		return best
	}
	var layers [][]string
	for _, v := range sortedKeys(graph) {
		n := h(v)
		for len(layers) <= n {
			layers = append(layers, nil)
		}
		layers[n] = append(layers[n], v)
	}
	return layers
}

func sortedKeys(m map[string][]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
