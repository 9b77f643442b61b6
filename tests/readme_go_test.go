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
