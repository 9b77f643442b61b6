package tests

import (
	"strings"
	"testing"
	"time"
)

// TestNoDeprecatedCalls exercises the plugin (setup, a session, a command
// in a split, the terminal list, an edit diff) and then reads
// :checkhealth vim.deprecated, which lists every deprecated function that
// was called and from where: nothing may come from agentrun.
func TestNoDeprecatedCalls(t *testing.T) {
	e := startEditor(t, `require("agentrun").setup({ terminal = { position = "below" } })`)
	var has bool
	e.lua(`return #vim.api.nvim_get_runtime_file("lua/vim/deprecated/health.lua", false) > 0`, &has)
	if !has {
		t.Skipf("%s has no :checkhealth vim.deprecated", nvimVersion())
	}
	e.startSession()
	e.cmd("AgentPrompt echo deprecated-check")
	term := e.waitTerminal("echo deprecated-check", 10*time.Second)
	e.waitBuf(term.Bufnr, 10*time.Second, exitMarker(0))
	e.idle(10 * time.Second)
	e.cmd("AgentTerminals")
	e.cmd("checkhealth vim.deprecated")
	var lines []string
	e.lua(`return vim.api.nvim_buf_get_lines(0, 0, -1, false)`, &lines)
	report := strings.Join(lines, "\n")
	if !strings.Contains(report, "vim.deprecated") {
		t.Fatalf("not a vim.deprecated report:\n%s", report)
	}
	if strings.Contains(report, "agentrun") {
		t.Errorf("deprecated calls from agentrun:\n%s", report)
	}
}
