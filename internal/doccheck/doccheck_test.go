package doccheck

import (
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// skipDirs are not walked, at any depth: git's and npm's.
var skipDirs = map[string]bool{".git": true, "node_modules": true}

// inputDir holds test inputs, at any depth (some are other projects'
// files, whose comments name their own files): what is in it counts as
// there for a comment to name, but its comments are not checked.
const inputDir = "testdata"

// fileName matches a name ending in .go or .lua, with the directories
// before it if any: main.go, internal/editor/linger.go, lua/agentrun/init.lua.
var fileName = regexp.MustCompile(`[A-Za-z0-9_][A-Za-z0-9_.\-]*(?:/[A-Za-z0-9_][A-Za-z0-9_.\-]*)*\.(?:go|lua)`)

// url matches a URL, whose path is another site's, not a file here.
var url = regexp.MustCompile(`[a-z][a-z0-9+.\-]*://\S*`)

// TestCommentsNameFilesThatExist fails for every comment in a Go or Lua
// file that names a .go or .lua file the repository does not have.
func TestCommentsNameFilesThatExist(t *testing.T) {
	root := moduleRoot(t)
	var sources []string       // the .go and .lua files, relative to root
	bases := map[string]bool{} // the base name of every file
	paths := map[string]bool{} // every file, relative to root
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if p != root && skipDirs[d.Name()] {
				return filepath.SkipDir
			}
			return nil
		}
		rel, err := filepath.Rel(root, p)
		if err != nil {
			return err
		}
		rel = filepath.ToSlash(rel)
		paths[rel] = true
		bases[d.Name()] = true
		input := strings.HasPrefix(rel, inputDir+"/") || strings.Contains(rel, "/"+inputDir+"/")
		if !input && (strings.HasSuffix(rel, ".go") || strings.HasSuffix(rel, ".lua")) {
			sources = append(sources, rel)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(sources) == 0 {
		t.Fatalf("no .go or .lua file under %s", root)
	}
	exists := func(name string) bool {
		if !strings.Contains(name, "/") {
			return bases[name]
		}
		// With directories: a file at that path from the root, or
		// one whose path ends in it (client/client.go names
		// ahp/client/client.go).
		if paths[name] {
			return true
		}
		for p := range paths {
			if strings.HasSuffix(p, "/"+name) {
				return true
			}
		}
		return false
	}
	for _, rel := range sources {
		src, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(rel)))
		if err != nil {
			t.Fatal(err)
		}
		var comments []comment
		if strings.HasSuffix(rel, ".go") {
			comments, err = goComments(rel, src)
		} else {
			comments = luaComments(src)
		}
		if err != nil {
			t.Errorf("%s: %v", rel, err)
			continue
		}
		for _, c := range comments {
			for _, name := range namedFiles(c.text) {
				if !exists(name) {
					t.Errorf("%s:%d: the comment names %s, which the repository does not have", rel, c.line, name)
				}
			}
		}
	}
}

// moduleRoot is the nearest directory at or above the test's with a
// go.mod: the repository's root.
func moduleRoot(t *testing.T) string {
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("no go.mod above the test's directory")
		}
		dir = parent
	}
}

// comment is the text of one comment line and its line number.
type comment struct {
	line int
	text string
}

// goComments returns the comments of a Go file, a line each (// and
// /* */ alike: what is in a string is no comment).
func goComments(name string, src []byte) ([]comment, error) {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, name, src, parser.ParseComments|parser.SkipObjectResolution)
	if err != nil {
		return nil, err
	}
	var out []comment
	for _, g := range f.Comments {
		for _, c := range g.List {
			line := fset.Position(c.Pos()).Line
			if text, ok := strings.CutPrefix(c.Text, "//"); ok {
				out = append(out, comment{line, text})
				continue
			}
			text := strings.TrimSuffix(strings.TrimPrefix(c.Text, "/*"), "*/")
			for k, l := range strings.Split(text, "\n") {
				out = append(out, comment{line + k, l})
			}
		}
	}
	return out, nil
}

// luaComments returns the comments of a Lua file, a line each: -- to the
// end of the line, and --[[ ]] (--[==[ ]==]) over several. What is in a
// string is no comment: "…", '…' and [[…]] ([==[…]==]) are skipped.
func luaComments(src []byte) []comment {
	var out []comment
	s := string(src)
	line := 1
	// longClose returns the closing bracket of the long bracket at s[i:]
	// ("[[", "[==["), or "" when there is none.
	longClose := func(i int) string {
		if i >= len(s) || s[i] != '[' {
			return ""
		}
		j := i + 1
		for j < len(s) && s[j] == '=' {
			j++
		}
		if j < len(s) && s[j] == '[' {
			return "]" + strings.Repeat("=", j-i-1) + "]"
		}
		return ""
	}
	// skipLong skips the long bracket at s[i:] that closes with end,
	// returning the index after it and the lines it spans, a line each.
	skipLong := func(i int, end string) (int, []string) {
		open := len(end)
		body := s[i+open:]
		n := strings.Index(body, end)
		if n < 0 {
			n = len(body)
		}
		text := body[:n]
		return i + open + n + len(end), strings.Split(text, "\n")
	}
	for i := 0; i < len(s); {
		switch c := s[i]; {
		case c == '\n':
			line++
			i++
		case c == '-' && strings.HasPrefix(s[i:], "--"):
			if end := longClose(i + 2); end != "" {
				next, lines := skipLong(i+2, end)
				for k, l := range lines {
					out = append(out, comment{line + k, l})
				}
				line += len(lines) - 1
				i = min(next, len(s))
				continue
			}
			j := strings.IndexByte(s[i:], '\n')
			if j < 0 {
				j = len(s) - i
			}
			out = append(out, comment{line, s[i+2 : i+j]})
			i += j
		case c == '"' || c == '\'':
			for i++; i < len(s) && s[i] != c && s[i] != '\n'; i++ {
				if s[i] == '\\' && i+1 < len(s) {
					i++
					if s[i] == '\n' {
						line++
					}
				}
			}
			i++
		case c == '[':
			if end := longClose(i); end != "" {
				next, lines := skipLong(i, end)
				line += len(lines) - 1
				i = min(next, len(s))
				continue
			}
			i++
		default:
			i++
		}
	}
	return out
}

// namedFiles returns the .go and .lua files text names. Left out: URLs'
// paths, patterns (*.go, *_test.go, %s.go, and a suffix on its own, as
// in "its _test.go" or "the _linux.go files") and what only starts as
// such a name (x.gopher, x.go.orig).
func namedFiles(text string) []string {
	text = url.ReplaceAllString(text, " ")
	var names []string
	for _, m := range fileName.FindAllStringIndex(text, -1) {
		before, after := byte(' '), text[m[1]:]
		if m[0] > 0 {
			before = text[m[0]-1]
		}
		if before == '*' || before == '$' || before == '<' || before == '{' || before == '%' {
			continue // a pattern, not a name: *_test.go, $NAME.go, %s.go
		}
		if len(after) > 0 && (nameChar(after[0]) || after[0] == '.' && len(after) > 1 && nameChar(after[1])) {
			continue
		}
		if text[m[0]] == '_' {
			continue // a suffix, not a name: _test.go
		}
		names = append(names, text[m[0]:m[1]])
	}
	return names
}

func nameChar(b byte) bool {
	return b == '_' || b == '-' || '0' <= b && b <= '9' || 'a' <= b && b <= 'z' || 'A' <= b && b <= 'Z'
}

// TestNamedFiles pins which mentions count as naming a file.
func TestNamedFiles(t *testing.T) {
	for text, want := range map[string][]string{
		" the pump (pump.go), then internal/editor/linger.go.": {"pump.go", "internal/editor/linger.go"},
		" handlers.lua and ui/window.lua":                      {"handlers.lua", "ui/window.lua"},
		" go.mod's go line, go.sum":                            nil,
		" https://example.com/x/y.go, ssh://h/a.lua":           nil,
		" every *.go and *_test.go, $NAME.go, %s.go":           nil,
		" each is tested alone (its _test.go)":                 nil,
		" x.gopher, x.go.orig, vim.lsp":                        nil,
	} {
		if got := namedFiles(text); !slices.Equal(got, want) {
			t.Errorf("namedFiles(%q) = %q, want %q", text, got, want)
		}
	}
}

// TestLuaComments: what is in a string is no comment, and a long
// comment's lines keep their numbers.
func TestLuaComments(t *testing.T) {
	src := `local a = '-- a.lua' -- b.lua
local b = [[
-- c.lua
]] --[==[ d.lua
e.lua ]==]
local c = "\" -- f.lua" -- g.lua
`
	var got []comment
	for _, c := range luaComments([]byte(src)) {
		for _, name := range namedFiles(c.text) {
			got = append(got, comment{c.line, name})
		}
	}
	want := []comment{{1, "b.lua"}, {4, "d.lua"}, {5, "e.lua"}, {6, "g.lua"}}
	if !slices.Equal(got, want) {
		t.Errorf("got %v, want %v", got, want)
	}
}
