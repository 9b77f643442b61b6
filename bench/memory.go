//go:build linux

package main

import (
	"fmt"
	"os"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/neovim/go-client/nvim"
)

// The memory part (issue 48): what each finished command costs Neovim
// when every split is kept, as users leave them, against Neovim's own
// :terminal in the same run; and what a long chat costs (memory, redraw)
// with the :AgentTerminals list of all its commands.

// nvimRSS reads Neovim's resident set size (KiB) from /proc.
func nvimRSS(v *nvim.Nvim) (int, error) {
	var pid int
	if err := luaValue(v, `vim.fn.getpid()`, &pid); err != nil {
		return 0, err
	}
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, err
	}
	for _, l := range strings.Split(string(b), "\n") {
		if f := strings.Fields(l); len(f) >= 2 && f[0] == "VmRSS:" {
			return strconv.Atoi(f[1])
		}
	}
	return 0, fmt.Errorf("no VmRSS for Neovim %d", pid)
}

// growth sums up RSS samples (one after each finished command): the
// median growth from one command to the next and the mean slope, both
// after the first quarter (the editor's own start-up).
type growth struct {
	median, slope float64 // KiB per finished command
	first, last   int     // KiB
}

func growthOf(rss []int) growth {
	skip := len(rss) / 4
	var d []int
	for i := skip + 1; i < len(rss); i++ {
		d = append(d, rss[i]-rss[i-1])
	}
	sort.Ints(d)
	g := growth{first: rss[skip], last: rss[len(rss)-1]}
	if len(d) > 0 {
		g.median = float64(d[len(d)/2])
		g.slope = float64(rss[len(rss)-1]-rss[skip]) / float64(len(rss)-1-skip)
	}
	return g
}

// memCommand is the i-th command: lines numbered lines, then its name.
func memCommand(i, lines int) string {
	return fmt.Sprintf("seq 1 %d; echo finished-%d", lines, i)
}

// nativeMemory runs n commands in Neovim's own :terminal, each in a new
// buffer of the same window (the earlier ones kept, hidden), waiting for
// each to end and show its last line, and returns the RSS after each.
func nativeMemory(n, lines int) ([]int, error) {
	v, err := startNvim("")
	if err != nil {
		return nil, err
	}
	defer v.Close()
	var rss []int
	for i := 1; i <= n; i++ {
		start := `_G.bench_done = false
			vim.cmd("enew")
			vim.fn.termopen(..., { on_exit = function() _G.bench_done = true end })`
		if err := v.ExecLua(start, nil, memCommand(i, lines)); err != nil {
			return nil, fmt.Errorf("native :terminal: %w", err)
		}
		want := fmt.Sprintf("finished-%d", i)
		shows := fmt.Sprintf(`_G.bench_done and (function()
			local b = vim.api.nvim_get_current_buf()
			local n = vim.api.nvim_buf_line_count(b)
			return table.concat(vim.api.nvim_buf_get_lines(b, math.max(0, n - 60), n, false), "\n"):find(%q, 1, true) ~= nil
		end)()`, want)
		if err := pollLua(v, shows, 120*time.Second); err != nil {
			return nil, fmt.Errorf("native :terminal, command %d: %w", i, err)
		}
		r, err := nvimRSS(v)
		if err != nil {
			return nil, err
		}
		rss = append(rss, r)
	}
	return rss, nil
}

// ourMemory runs the same n commands through the demo agent, each split
// kept, waiting for each split to show its end, and returns the RSS
// after each.
func ourMemory(n, lines int) ([]int, error) {
	v, err := agentNvim("below")
	if err != nil {
		return nil, err
	}
	defer v.Close()
	var rss []int
	for i := 1; i <= n; i++ {
		if err := v.ExecLua(`vim.cmd("AgentPrompt " .. ...)`, nil, memCommand(i, lines)); err != nil {
			return nil, err
		}
		id := fmt.Sprintf("term-%d", i)
		ended := fmt.Sprintf(`(function()
			local t = require("agentrun.state").terminals[%q]
			if not (t and t.bufnr and vim.api.nvim_buf_is_valid(t.bufnr)) then return false end
			local n = vim.api.nvim_buf_line_count(t.bufnr)
			local text = table.concat(vim.api.nvim_buf_get_lines(t.bufnr, math.max(0, n - 60), n, false), "\n")
			return text:find("finished-%d", 1, true) ~= nil and text:find("[exit 0]", 1, true) ~= nil
				and not require("agentrun").status().sessions[1].busy
		end)()`, id, i)
		if err := pollLua(v, ended, 120*time.Second); err != nil {
			return nil, fmt.Errorf("agentrun, command %d: %w", i, err)
		}
		r, err := nvimRSS(v)
		if err != nil {
			return nil, err
		}
		rss = append(rss, r)
	}
	return rss, nil
}

// runMemory prints the growth per finished command of both, and its
// ratio, then the chat's cost.
func runMemory(n, lines, turns int) error {
	fmt.Printf("memory: %d commands × `seq 1 %d`, every finished split kept, on %s\n", n, lines, strings.TrimSpace(hostDesc()))
	nat, err := nativeMemory(n, lines)
	if err != nil {
		return err
	}
	ours, err := ourMemory(n, lines)
	if err != nil {
		return err
	}
	if os.Getenv("AGENTRUN_BENCH_SAMPLES") != "" {
		fmt.Println("  samples (KiB), native:", nat, "\n  ours:", ours)
	}
	gn, go_ := growthOf(nat), growthOf(ours)
	fmt.Printf("  native :terminal: RSS %6.1f MB after %d commands, %6.1f MB after %d: %6.0f KiB per finished command (median %6.0f)\n",
		float64(gn.first)/1024, n/4+1, float64(gn.last)/1024, n, gn.slope, gn.median)
	fmt.Printf("  agentrun:         RSS %6.1f MB after %d commands, %6.1f MB after %d: %6.0f KiB per finished command (median %6.0f)\n",
		float64(go_.first)/1024, n/4+1, float64(go_.last)/1024, n, go_.slope, go_.median)
	fmt.Printf("  ratio ours / native, per finished command: %.3f× (median: %.3f×; target ≤ 0.05×, ≤ 1 MiB a command)\n\n",
		go_.slope/gn.slope, go_.median/gn.median)
	return runChatCost(turns)
}

// runChatCost runs turns short turns (each an `echo` in a split) and
// prints Neovim's memory per turn, the time to redraw the chat (a UI
// attached: the grid drawn and sent), and to open and redraw
// :AgentTerminals listing every one of them.
func runChatCost(turns int) error {
	v, err := agentNvim("below")
	if err != nil {
		return err
	}
	defer v.Close()
	v.RegisterHandler("redraw", func(...any) {})
	if err := v.AttachUI(120, 40, map[string]any{"ext_linegrid": true, "rgb": true}); err != nil {
		return fmt.Errorf("attach a UI: %w", err)
	}
	before, err := nvimRSS(v)
	if err != nil {
		return err
	}
	start := time.Now()
	for i := 1; i <= turns; i++ {
		if err := v.ExecLua(`vim.cmd("AgentPrompt " .. ...)`, nil, fmt.Sprintf("echo turn-%d", i)); err != nil {
			return err
		}
		if err := pollLua(v, fmt.Sprintf(`require("agentrun.state").terminals["term-%d"] ~= nil and require("agentrun.state").terminals["term-%d"].state ~= "running" and not require("agentrun").status().sessions[1].busy`, i, i), 60*time.Second); err != nil {
			return fmt.Errorf("chat, turn %d: %w", i, err)
		}
	}
	took := time.Since(start)
	after, err := nvimRSS(v)
	if err != nil {
		return err
	}
	var chatLines int
	if err := luaValue(v, `(function() for _, b in ipairs(vim.api.nvim_list_bufs()) do if vim.bo[b].filetype == "agentrun" then return vim.api.nvim_buf_line_count(b) end end return 0 end)()`, &chatLines); err != nil {
		return err
	}
	timeIt := func(lua string) (time.Duration, error) {
		var best time.Duration
		for r := 0; r < 5; r++ {
			t0 := time.Now()
			if err := v.ExecLua(lua, nil); err != nil {
				return 0, err
			}
			if d := time.Since(t0); r == 0 || d < best {
				best = d
			}
		}
		return best, nil
	}
	redraw, err := timeIt(`vim.cmd("redraw!")`)
	if err != nil {
		return err
	}
	scroll, err := timeIt(`local w = -1 for _, b in ipairs(vim.api.nvim_list_bufs()) do if vim.bo[b].filetype == "agentrun" then w = vim.fn.bufwinid(b) end end if w ~= -1 then vim.api.nvim_win_call(w, function() vim.cmd("normal! gg") vim.cmd("redraw") vim.cmd("normal! G") vim.cmd("redraw") end) end`)
	if err != nil {
		return err
	}
	t0 := time.Now()
	if err := v.ExecLua(`vim.cmd("AgentTerminals") vim.cmd("redraw")`, nil); err != nil {
		return err
	}
	openList := time.Since(t0)
	var listed int
	if err := luaValue(v, `vim.api.nvim_buf_line_count(0)`, &listed); err != nil {
		return err
	}
	refresh, err := timeIt(`require("agentrun.ui.terminals").refresh() vim.cmd("redraw")`)
	if err != nil {
		return err
	}
	listRedraw, err := timeIt(`vim.cmd("redraw!")`)
	if err != nil {
		return err
	}
	fmt.Printf("chat: %d turns (an `echo` each, in %.0f s), %d chat lines, a UI of 120×40 attached\n", turns, took.Seconds(), chatLines)
	fmt.Printf("  Neovim RSS %.1f MB before, %.1f MB after: %.0f KiB per turn\n", float64(before)/1024, float64(after)/1024, float64(after-before)/float64(turns))
	fmt.Printf("  redraw! of the screen with the chat:     %6.2f ms (best of 5)\n", ms(redraw))
	fmt.Printf("  chat to its top and back, redrawn:       %6.2f ms (best of 5)\n", ms(scroll))
	fmt.Printf("  :AgentTerminals open with %d rows:      %6.2f ms\n", listed, ms(openList))
	fmt.Printf("  its refresh, redrawn:                    %6.2f ms (best of 5; it refreshes every second while open)\n", ms(refresh))
	fmt.Printf("  redraw! with the list open:              %6.2f ms (best of 5)\n", ms(listRedraw))
	return nil
}
