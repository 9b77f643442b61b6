package tests

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestNotifyIsGivenNoPrefix: util.notify puts "(agentrun) " before every
// message it shows; a message handed to it (or to a module's warn/err,
// which call it) with the prefix written out again is one more literal
// to keep in step, so none is. (util.notify's own test is every message
// a test asserts: each starts with exactly one prefix.)
func TestNotifyIsGivenNoPrefix(t *testing.T) {
	prefixed := regexp.MustCompile(`\b(?:notify|warn|err)\(\s*(?:string\.format\(\s*)?"\(agentrun\)`)
	n := 0
	walk := func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".lua") {
			return err
		}
		src, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		n++
		for _, loc := range prefixed.FindAllIndex(src, -1) {
			line := 1 + strings.Count(string(src[:loc[0]]), "\n")
			t.Errorf("%s:%d: the message given to notify starts with \"(agentrun)\", which util.notify adds", filepath.Base(path), line)
		}
		return nil
	}
	// (plugin/: the commands' own messages, two of which gave it)
	for _, dir := range []string{filepath.Join(root, "lua", "agentrun"), filepath.Join(root, "plugin")} {
		if err := filepath.WalkDir(dir, walk); err != nil {
			t.Fatal(err)
		}
	}
	if n < 30 {
		t.Fatalf("read only %d Lua files", n)
	}
	if !prefixed.MatchString(`util.notify(string.format("(agentrun) %s", x))`) || !prefixed.MatchString("warn(\n  \"(agentrun) no\")") {
		t.Fatal("the pattern misses a prefixed message")
	}
}
