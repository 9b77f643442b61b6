package shquote

import (
	"os/exec"
	"testing"
)

// TestJoinRunsBack: what Join writes, a shell reads back as the same
// words.
func TestJoinRunsBack(t *testing.T) {
	cases := []struct {
		argv []string
		line string
	}{
		{[]string{"go", "test", "./..."}, "go test ./..."},
		{[]string{"echo", "a b"}, "echo 'a b'"},
		{[]string{"echo", "it's"}, `echo 'it'\''s'`},
		{[]string{"echo", ""}, "echo ''"},
		{[]string{"printf", "%s\n", "$HOME", "*"}, `printf '%s` + "\n" + `' '$HOME' '*'`},
	}
	for _, c := range cases {
		line := Join(c.argv)
		if line != c.line {
			t.Errorf("Join(%q) = %q, want %q", c.argv, line, c.line)
		}
		want := ""
		for _, w := range c.argv[1:] {
			want += "[" + w + "]"
		}
		back, err := exec.Command("/bin/sh", "-c", "set -- "+Join(c.argv[1:])+`; for w in "$@"; do printf '[%s]' "$w"; done`).Output()
		if err != nil {
			t.Fatalf("sh -c %q: %v", Join(c.argv[1:]), err)
		}
		if string(back) != want {
			t.Errorf("%q read back as %s, want %s", line, back, want)
		}
	}
}
