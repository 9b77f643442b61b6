package tests

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestReadmeNamesGoModsGoVersion: the Go version the README asks for to
// build is go.mod's go line (an older go would fetch a toolchain).
func TestReadmeNamesGoModsGoVersion(t *testing.T) {
	mod, err := os.ReadFile(filepath.Join(root, "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^go (\S+)$`).FindSubmatch(mod)
	if m == nil {
		t.Fatal("go.mod has no go line")
	}
	readme, err := os.ReadFile(filepath.Join(root, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	want := "Go " + string(m[1]) + " or newer (go.mod's `go` line"
	if !strings.Contains(string(readme), want) {
		t.Errorf("README does not say %q", want)
	}
	if regexp.MustCompile(`Go ≥ ?\d`).Match(readme) {
		t.Errorf("README still names another Go version (Go ≥ …)")
	}
}

// TestReadmeCodeMapMatchesTree: the README's code map lists every Go
// package and every Lua module of the tree, and nothing that is gone.
// Each map line starts with a path (a folder ends in /); a Lua folder's
// line names each of its modules.
func TestReadmeCodeMapMatchesTree(t *testing.T) {
	readme, err := os.ReadFile(filepath.Join(root, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, after, ok := strings.Cut(string(readme), "## Code map")
	if !ok {
		t.Fatal("README has no ## Code map")
	}
	_, block, ok := strings.Cut(after, "```\n")
	if ok {
		block, _, ok = strings.Cut(block, "```")
	}
	if !ok {
		t.Fatal("README's code map has no fenced block")
	}
	mapped := map[string]string{} // path → what the line says
	for _, line := range strings.Split(strings.TrimSpace(block), "\n") {
		path, says, _ := strings.Cut(line, " ")
		mapped[path] = says
		if _, err := os.Stat(filepath.Join(root, path)); err != nil {
			t.Errorf("the code map names %s, which is not in the tree", path)
		}
	}
	// Every folder with Go code (tests, testdata and npm folders aside).
	err = filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		if d.IsDir() {
			switch d.Name() {
			case "node_modules", "testdata", ".git", "bin", "release":
				return filepath.SkipDir
			}
			if rel == "tests" || strings.HasPrefix(rel, "tests"+string(filepath.Separator)) {
				return filepath.SkipDir
			}
			return nil
		}
		if strings.HasSuffix(p, ".go") && !strings.HasSuffix(p, "_test.go") {
			dir := filepath.ToSlash(filepath.Dir(rel)) + "/"
			if dir == "./" {
				return nil // main.go: named on its own line
			}
			if _, ok := mapped[dir]; !ok {
				t.Errorf("the code map does not list the Go package %s", dir)
				mapped[dir] = "" // once
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	// Every Lua module, on its folder's line.
	for _, dir := range []string{"lua/agentrun/", "lua/agentrun/ui/"} {
		says, ok := mapped[dir]
		if !ok {
			t.Errorf("the code map has no line for %s", dir)
			continue
		}
		files, _ := filepath.Glob(filepath.Join(root, dir, "*.lua"))
		for _, f := range files {
			name := strings.TrimSuffix(filepath.Base(f), ".lua")
			if !regexp.MustCompile(`(^|[^\w.])` + regexp.QuoteMeta(name) + `([^\w]|$)`).MatchString(says) {
				t.Errorf("the code map's %s line does not name the module %s", dir, name)
			}
		}
	}
}
