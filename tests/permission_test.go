package tests

import (
	"strings"
	"testing"
	"time"
)

// TestPermissionThroughUiSelect answers the demo agent's permission
// request through a stubbed vim.ui.select (the one UI part that needs a
// person) and checks what the picker showed and what the agent did; the
// chat shows the question and the answer above the tool call.
func TestPermissionThroughUiSelect(t *testing.T) {
	tests := []struct {
		name   string
		choose string // option id to pick; "" closes the picker
		want   string // what the agent then says in the chat
	}{
		{"allow", "allow", "`echo permitted` exited with code 0."},
		{"reject", "reject", "Permission denied: not running `echo permitted`."},
		{"cancel", "", "Permission request cancelled."},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e := startEditor(t, "")
			// The stub picks the option with id want (nil = the user closed it).
			e.lua(`local want = ...
				vim.ui.select = function(items, opts, cb)
					local shown = {}
					for _, it in ipairs(items) do table.insert(shown, opts.format_item(it)) end
					_G.picked = { prompt = opts.prompt, items = shown }
					for _, it in ipairs(items) do
						if it.optionId == want then return cb(it) end
					end
					cb(nil)
				end`, nil, tc.choose)
			e.startSession()
			e.cmd("AgentPrompt !permission echo permitted")
			chat := e.waitChat(tc.want, 10*time.Second)
			// the question and its answer stand above the tool call they
			// decided
			q, a, call := strings.Index(chat, "? permission: "), strings.Index(chat, "  → "), strings.Index(chat, "[execute]")
			if q < 0 || a < q || call < a {
				t.Errorf("the question (%d), its answer (%d) and the tool call (%d) out of order:\n%s", q, a, call, chat)
			}
			var picked struct {
				Prompt string   `msgpack:"prompt"`
				Items  []string `msgpack:"items"`
			}
			e.lua(`return _G.picked`, &picked)
			if !strings.Contains(picked.Prompt, "echo permitted") {
				t.Errorf("picker prompt %q does not show the command line", picked.Prompt)
			}
			if got := strings.Join(picked.Items, " | "); got != "Allow — this time | Reject — this time" {
				t.Errorf("picker items = %q", got)
			}
		})
	}
}
