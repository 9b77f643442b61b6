package tests

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

// TestTerminalListOf200 makes 200 finished terminals (each `true`, its
// split closed) and opens :AgentTerminals: all 200 rows show, ordered
// by id, and after refreshes (which rewrite only the rows that changed,
// mostly an age) each row's state still has its one colour. It logs the
// times to open and refresh it (issue 48; bench -only memory prints them
// too, with 500).
func TestTerminalListOf200(t *testing.T) {
	e := startEditor(t, "")
	const n = 200
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
	var marks struct{ Done, Other, Wrong int }
	e.lua(`require("agentrun.ui.terminals").refresh()
local b = vim.api.nvim_get_current_buf()
local ns = vim.api.nvim_get_namespaces().agentrun_terminals
local out = { Done = 0, Other = 0, Wrong = 0 }
for _, m in ipairs(vim.api.nvim_buf_get_extmarks(b, ns, 0, -1, { details = true })) do
  local row, col, d = m[2], m[3], m[4]
  if d.hl_group == "AgentRunToolDone" then
    out.Done = out.Done + 1
    local text = vim.api.nvim_buf_get_lines(b, row, row + 1, false)[1]:sub(col + 1, d.end_col)
    if text ~= "exit 0" then out.Wrong = out.Wrong + 1 end
  else
    out.Other = out.Other + 1
  end
end
return out`, &marks)
	if marks.Done != n || marks.Wrong != 0 || marks.Other != 2 {
		t.Errorf("after refreshes the list's colours are %+v, want each of the %d rows' state coloured once (and the title and header)", marks, n)
	}
	var lines []string
	e.lua(`return vim.api.nvim_buf_get_lines(0, 0, -1, false)`, &lines)
	if len(lines) != n+2 || !strings.HasPrefix(lines[2], "term-1 ") || !strings.HasPrefix(lines[n+1], fmt.Sprintf("term-%d ", n)) {
		t.Errorf("the list has %d lines (want %d), first rows %q, last %q", len(lines), n+2, lines[:3], lines[len(lines)-1])
	}
}
