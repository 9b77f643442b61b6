package tests

import (
	"os"
	"regexp"
	"testing"

	"github.com/agentrun/agentrun.nvim/internal/vtsafe"
)

// TestLuaResetAndGuardAreGos keeps the bytes Lua writes before its own
// lines and at the start of each write (ui/term.lua) equal to Go's
// vtsafe.Reset and vtsafe.Guard.
func TestLuaResetAndGuardAreGos(t *testing.T) {
	src, err := os.ReadFile("../lua/agentrun/ui/term.lua")
	if err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]string{"reset": vtsafe.Reset, "guard": vtsafe.Guard} {
		m := regexp.MustCompile(`(?m)^M\.` + name + ` = "([^"]*)"$`).FindSubmatch(src)
		if m == nil {
			t.Fatalf("ui/term.lua defines no M.%s", name)
		}
		if got := luaUnescape(string(m[1])); got != want {
			t.Errorf("ui/term.lua M.%s = %q, Go's is %q", name, got, want)
		}
	}
}

// luaUnescape reads a Lua string literal's decimal escapes (\27).
func luaUnescape(s string) string {
	return regexp.MustCompile(`\\[0-9]{1,3}`).ReplaceAllStringFunc(s, func(e string) string {
		n := 0
		for _, c := range e[1:] {
			n = n*10 + int(c-'0')
		}
		return string(rune(n))
	})
}
