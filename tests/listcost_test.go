package tests

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

// TestTerminalListOf500 makes 500 finished terminals (each `true`, its
// split closed) and opens :AgentTerminals: all 500 rows show, ordered
// by id; its refresh redraws them without rebuilding what did not change.
func TestTerminalListOf500(t *testing.T) {
	e := startEditor(t, "")
	const n = 500
	e.lua(`for i = 1, ... do require("agentrun").shell("true") vim.cmd("close") end`, nil, n)
	e.waitFor(fmt.Sprintf("%d terminals ended", n), 120*time.Second, func() (bool, string) {
		var ended int
		e.lua(`local c = 0 for _, t in pairs(require("agentrun.state").terminals) do if t.state ~= "running" then c = c + 1 end end return c`, &ended)
		return ended == n, fmt.Sprintf("%d ended", ended)
	})
	var ms struct{ Open, Refresh float64 }
	e.lua(`local u = vim.loop
local t0 = u.hrtime() vim.cmd("AgentTerminals") vim.cmd("redraw") local open = (u.hrtime() - t0) / 1e6
local best
for _ = 1, 5 do local t1 = u.hrtime() require("agentrun.ui.terminals").refresh() vim.cmd("redraw") local d = (u.hrtime() - t1) / 1e6 best = best and math.min(best, d) or d end
return { Open = open, Refresh = best }`, &ms)
	t.Logf("open %.1f ms, refresh %.1f ms", ms.Open, ms.Refresh)
	var lines []string
	e.lua(`return vim.api.nvim_buf_get_lines(0, 0, -1, false)`, &lines)
	if len(lines) != n+2 || !strings.HasPrefix(lines[2], "term-1 ") || !strings.HasPrefix(lines[n+1], fmt.Sprintf("term-%d ", n)) {
		t.Errorf("the list has %d lines (want %d), first rows %q, last %q", len(lines), n+2, lines[:3], lines[len(lines)-1])
	}
}
