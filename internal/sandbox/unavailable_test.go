package sandbox

import (
	"strings"
	"testing"
)

// TestUnavailableSaysWhereAndWhatToDo: outside Linux the sandbox refuses
// with a sentence naming the platform and the way out.
func TestUnavailableSaysWhereAndWhatToDo(t *testing.T) {
	for goos, name := range map[string]string{"darwin": "macOS", "freebsd": "FreeBSD", "plan9": "plan9"} {
		msg := unavailable(goos).Error()
		if !strings.Contains(msg, "the sandbox (terminal.sandbox) is not available on "+name+":") || !strings.Contains(msg, "terminal.sandbox = false") {
			t.Errorf("unavailable(%q) = %q", goos, msg)
		}
	}
}
