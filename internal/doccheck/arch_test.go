package doccheck

import (
	"go/build/constraint"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// archs are the CPU names Go's build constraints and file names know.
var archs = regexp.MustCompile(`^(386|amd64|arm|arm64|loong64|mips|mips64|mips64le|mipsle|ppc64|ppc64le|riscv64|s390x|wasm)$`)

// TestNoArchSpecificFiles: no Go file of ours depends on the CPU (no
// _amd64.go name, no GOARCH build constraint), which is why make cross
// vets each OS once rather than each platform.
func TestNoArchSpecificFiles(t *testing.T) {
	root := moduleRoot(t)
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if skipDirs[d.Name()] {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(p, ".go") {
			return nil
		}
		rel, _ := filepath.Rel(root, p)
		parts := strings.Split(strings.TrimSuffix(d.Name(), ".go"), "_")
		for _, part := range parts[1:] {
			if archs.MatchString(part) {
				t.Errorf("%s is for one CPU (%s): make cross vets one platform per OS", rel, part)
			}
		}
		src, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		for _, line := range strings.Split(string(src), "\n") {
			if !constraint.IsGoBuild(line) {
				continue
			}
			expr, err := constraint.Parse(line)
			if err != nil {
				continue
			}
			expr.Eval(func(tag string) bool {
				if archs.MatchString(tag) {
					t.Errorf("%s has a build constraint on the CPU (%s): make cross vets one platform per OS", rel, tag)
				}
				return true
			})
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
