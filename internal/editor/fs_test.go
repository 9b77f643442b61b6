package editor

import (
	"os"
	"path/filepath"
	"testing"
)

func TestSelectLines(t *testing.T) {
	ptr := func(n int) *int { return &n }
	const text = "one\ntwo\nthree\n"
	tests := []struct {
		name        string
		line, limit *int
		want        string
	}{
		{"whole", nil, nil, text},
		{"from line 2", ptr(2), nil, "two\nthree\n"},
		{"limit 1", nil, ptr(1), "one\n"},
		{"line 2 limit 1", ptr(2), ptr(1), "two\n"},
		{"past the end", ptr(9), nil, ""},
		{"limit 0", ptr(1), ptr(0), ""},
		{"limit beyond", ptr(3), ptr(10), "three\n"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := selectLines(text, tc.line, tc.limit); got != tc.want {
				t.Errorf("selectLines = %q, want %q", got, tc.want)
			}
		})
	}
	if got := selectLines("a\nb", ptr(2), nil); got != "b" {
		t.Errorf("last line without newline: %q", got)
	}
}

func TestWriteFileAtomic(t *testing.T) {
	dir := t.TempDir()
	t.Run("keeps mode, leaves no temp file", func(t *testing.T) {
		path := filepath.Join(dir, "script.sh")
		if err := os.WriteFile(path, []byte("old"), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := writeFileAtomic(path, []byte("new")); err != nil {
			t.Fatal(err)
		}
		data, _ := os.ReadFile(path)
		fi, _ := os.Stat(path)
		if string(data) != "new" || fi.Mode().Perm() != 0o755 {
			t.Errorf("got %q mode %v", data, fi.Mode())
		}
		entries, _ := os.ReadDir(dir)
		if len(entries) != 1 {
			t.Errorf("directory holds %d entries, want 1", len(entries))
		}
	})
	t.Run("writes through a symlink", func(t *testing.T) {
		target := filepath.Join(dir, "target.txt")
		link := filepath.Join(dir, "link.txt")
		if err := os.WriteFile(target, []byte("old"), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(target, link); err != nil {
			t.Fatal(err)
		}
		if err := writeFileAtomic(link, []byte("via link")); err != nil {
			t.Fatal(err)
		}
		data, _ := os.ReadFile(target)
		if fi, _ := os.Lstat(link); fi.Mode()&os.ModeSymlink == 0 || string(data) != "via link" {
			t.Errorf("target %q, link still a symlink: %v", data, fi.Mode()&os.ModeSymlink != 0)
		}
	})
	t.Run("refuses a directory", func(t *testing.T) {
		if err := writeFileAtomic(dir, []byte("x")); err == nil {
			t.Error("wrote over a directory")
		}
	})
}
