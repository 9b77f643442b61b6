package display

import (
	"os"
	"regexp"
	"strconv"
	"testing"
)

// TestScrollbackDefaultIsLuas: terminal.scrollback has one default, the
// one config.lua gives; Go's fallback for a caller that sends none is it.
func TestScrollbackDefaultIsLuas(t *testing.T) {
	src, err := os.ReadFile("../../lua/agentrun/config.lua")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^\s*scrollback = (\d+),`).FindSubmatch(src)
	if m == nil {
		t.Fatal("config.lua has no terminal.scrollback default")
	}
	if got := string(m[1]); got != strconv.Itoa(DefaultScrollback) {
		t.Errorf("config.lua's scrollback default is %s, Go's DefaultScrollback %d", got, DefaultScrollback)
	}
}
