//go:build linux

package main

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/neovim/go-client/nvim"
)

// Why this file is long: the benchmarks that drive a real Neovim with the
// plugin (catch-up, lag against Neovim's own terminal, scale, memory)
// share their setup and measuring helpers; each benchmark is a short
// function.

// pluginRun carries the baselines into the plugin measurements.
type pluginRun struct {
	file, last string
	native     displayResult
	floodCmd   string
	flood      time.Duration
}

// agentNvim starts Neovim with the plugin, the demo agent and the given
// terminal split position, and waits for the session.
func agentNvim(position string) (*nvim.Nvim, error) {
	root, err := os.Getwd()
	if err != nil {
		return nil, err
	}
	v, err := startNvim(root)
	if err != nil {
		return nil, err
	}
	if err := startAgent(v, position); err != nil {
		v.Close()
		return nil, err
	}
	return v, nil
}

// startAgent sets the plugin up in v with the demo agent and the given
// terminal split position, and waits for the session.
func startAgent(v *nvim.Nvim, position string) error {
	setup := `require("agentrun").setup({terminal = {position = ...}}); vim.cmd("AgentRun")`
	if err := v.ExecLua(setup, nil, position); err != nil {
		return fmt.Errorf(":AgentRun: %w", err)
	}
	return pollLua(v, `(function() local s = require("agentrun").status().sessions[1]; return s ~= nil and s.id ~= nil and s.id ~= "" and not s.busy end)()`, 30*time.Second)
}

// promptAndWait sends a prompt and waits for the agent's reply line that
// matches re, returning its submatches.
func promptAndWait(v *nvim.Nvim, prompt string, re *regexp.Regexp, timeout time.Duration) ([]string, error) {
	if err := v.ExecLua(`vim.cmd("AgentPrompt " .. ...)`, nil, prompt); err != nil {
		return nil, fmt.Errorf(":AgentPrompt %s: %w", prompt, err)
	}
	return waitChat(v, re, timeout)
}

// waitChat waits until the chat shows a line matching re.
func waitChat(v *nvim.Nvim, re *regexp.Regexp, timeout time.Duration) ([]string, error) {
	deadline := time.Now().Add(timeout)
	for time.Now().Before(deadline) {
		text, err := chatText(v)
		if err != nil {
			return nil, err
		}
		// The chat holds earlier replies too: the newest match counts.
		if all := re.FindAllStringSubmatch(text, -1); len(all) > 0 {
			return all[len(all)-1], nil
		}
		time.Sleep(50 * time.Millisecond)
	}
	text, _ := chatText(v)
	return nil, fmt.Errorf("no reply matching %s within %s; chat ends: %q", re, timeout, tail(text, 400))
}

// waitReply waits until the chat shows the n-th line matching re and
// returns its submatches.
func waitReply(v *nvim.Nvim, re *regexp.Regexp, n int, timeout time.Duration) ([]string, error) {
	deadline := time.Now().Add(timeout)
	for time.Now().Before(deadline) {
		text, err := chatText(v)
		if err != nil {
			return nil, err
		}
		if all := re.FindAllStringSubmatch(text, -1); len(all) >= n {
			return all[n-1], nil
		}
		time.Sleep(20 * time.Millisecond)
	}
	return nil, fmt.Errorf("no reply %d matching %s within %s", n, re, timeout)
}

// chatText returns the chat buffer's text, where the agent's replies show.
func chatText(v *nvim.Nvim) (string, error) {
	var text string
	err := luaValue(v, `(function()
		for _, b in ipairs(vim.api.nvim_list_bufs()) do
			if vim.bo[b].filetype == "agentrun" then -- the chat's transcript
				return table.concat(vim.api.nvim_buf_get_lines(b, 0, -1, false), "\n")
			end
		end
		return ""
	end)()`, &text)
	return text, err
}

func tail(s string, n int) string {
	if len(s) > n {
		return s[len(s)-n:]
	}
	return s
}

// parallelRe matches the demo agent's reply to "!parallel n ...".
func parallelRe(n int) *regexp.Regexp {
	return regexp.MustCompile(`parallel n=(` + strconv.Itoa(n) + `) exit0=(\d+) identical=(\d+) sha256=([0-9a-f]+) bytes=(\d+) elapsed_ms=(\d+)`)
}

// runPlugin measures agentrun on the same output, alternating with the
// baselines, and prints the ratios.
func runPlugin(p pluginRun) error {
	v, err := agentNvim("below")
	if err != nil {
		return err
	}
	defer v.Close()

	var raws, agents, completes, fromStarts, nvimCPUs, backendCPUs, rawCPUs []time.Duration
	var last string
	for r := 0; r < rounds; r++ {
		cpu0 := processCPU()
		raw, n, err := rawDrain([]string{"cat", p.file})
		if err != nil {
			return err
		}
		rawCPUs = append(rawCPUs, processCPU()-cpu0)
		if n == 0 {
			return fmt.Errorf("raw drain of %s read nothing", p.file)
		}
		raws = append(raws, raw)
		agent, shown, err := agentRound(v, p)
		if err != nil {
			return err
		}
		agents = append(agents, agent)
		completes = append(completes, shown.Complete)
		fromStarts = append(fromStarts, shown.FromStart)
		nvimCPUs, backendCPUs = append(nvimCPUs, shown.NvimCPU), append(backendCPUs, shown.BackendCPU)
		last = shown.LastSeen
		if shown.Complete == 0 {
			break
		}
	}
	headless, err := agentPathHeadless(p.file)
	if err != nil {
		return err
	}
	floors, err := catchUpFloor(v, p)
	if err != nil {
		return err
	}
	floor := median(floors)
	raw, agent, complete, fromStart := median(raws), median(agents), median(completes), median(fromStarts)
	fmt.Printf("(a) raw pty drain:               %8.0f ms  (median of %s)\n", ms(raw), list(raws))
	fmt.Printf("(b) native :terminal complete:   %s  (last line shown: %q, want %q)\n", showComplete(p.native), p.native.LastSeen, p.last)
	fmt.Printf("    native :terminal finished:   %8.0f ms  (on_exit: all it will ever draw is drawn)\n", ms(p.native.Finished))
	fmt.Printf("(c) agentrun agent path:         %8.0f ms  (create → exit, display running; median of %s)\n", ms(agent), list(agents))
	fmt.Printf("    CPU from the prompt to the reply: Neovim %s ms, backend %s ms (the raw drain's reader: %s ms); the command and these share the cores\n",
		listMs(nvimCPUs), listMs(backendCPUs), listMs(rawCPUs))
	fmt.Printf("    … without any display:       %8.0f ms  (in-process acp client, no Neovim)\n", ms(headless))
	if complete == 0 || last != p.last {
		fmt.Printf("    agentrun display complete:      never      (last line shown: %q)\n", last)
	} else {
		fmt.Printf("    agentrun display complete:   %8.0f ms  (last line shown: %q; from the prompt, median of %s)\n", ms(complete), last, list(completes))
		fmt.Printf("    … from the command's start:  %8.0f ms  (from its split's opening, ≈ the start; median of %s)\n", ms(fromStart), list(fromStarts))
		fmt.Printf("    … after the command's exit:  %8.0f ms  (from the start − the agent path)\n", ms(fromStart-agent))
	}
	fmt.Printf("    Neovim's own catch-up:       %8.0f ms  (the file's last 'scrollback' lines fed to a terminal buffer of the split's size inside this Neovim: no RPC, no pump; median of %s)\n", ms(floor), list(floors))

	natLag, ourLag, err := lagRatio(v, p)
	if err != nil {
		return err
	}
	fmt.Printf("\nratios (against their targets):\n")
	fmt.Printf("  agent path / raw pty drain            %5.2f×  (target ≤ 1.05×, median of 3 runs)\n", ratio(agent, raw))
	switch {
	case complete == 0:
		fmt.Printf("  display complete                      never   (target ≤ 0.5× native)\n")
	case p.native.Complete > 0:
		fmt.Printf("  display complete / native :terminal   %5.2f×  (target ≤ 0.5×)\n", ratio(complete, p.native.Complete))
	default:
		fmt.Printf("  display complete / native finished    %5.2f×  (target ≤ 0.5×; native never showed the last line, it stopped at %s)\n",
			ratio(complete, p.native.Finished), p.native.LastSeen)
	}
	if complete > 0 {
		fmt.Printf("  display from the start / raw drain    %5.2f×  (target ≤ 1.2×: the drain is the floor, nothing shows the last line before it is printed; from the prompt %.2f×)\n", ratio(fromStart, raw), ratio(complete, raw))
		fmt.Printf("  … this Neovim's floor for it          %5.2f×  ((raw drain + Neovim's own catch-up) / raw drain: a display that cannot know where the output ends has to hand the split its last 'scrollback' lines after it)\n", ratio(raw+floor, raw))
	}
	fmt.Printf("  lag p99 ours / native                 %5.2f×  (target ≤ 1×: %.1f ms vs %.1f ms)\n", ratio(ourLag, natLag), ms(ourLag), ms(natLag))
	return nil
}

// agentRound runs cat of the file through the demo agent with the split
// showing it: the agent path (create → last exit) and when the split
// shows the last line.
func agentRound(v *nvim.Nvim, p pluginRun) (time.Duration, displayResult, error) {
	var shown displayResult
	var before int
	if err := luaValue(v, `#require("agentrun").status().terminals`, &before); err != nil {
		return 0, shown, err
	}
	text, err := chatText(v)
	if err != nil {
		return 0, shown, err
	}
	replies := len(parallelRe(1).FindAllString(text, -1))
	var nvimPid, backendPid int
	if err := luaValue(v, `{vim.fn.getpid(), vim.fn.jobpid(require("agentrun.rpc").channel())}`, &[]*int{&nvimPid, &backendPid}); err != nil {
		return 0, shown, err
	}
	nvimCPU0, backendCPU0 := procCPU(nvimPid), procCPU(backendPid)
	// The split's buffer opens when Neovim hears of the terminal, within
	// about a millisecond of the command's start (see runFeel): the clock
	// of "display from the start" starts there.
	open := `_G.bench_open = nil
		vim.api.nvim_create_autocmd("TermOpen", {once = true, callback = function() _G.bench_open = vim.loop.hrtime() end})
		_G.bench_t0 = vim.loop.hrtime(); vim.cmd("AgentPrompt " .. ...)`
	if err := v.ExecLua(open, nil, "!parallel 1 cat "+p.file); err != nil {
		return 0, shown, err
	}
	watch := fmt.Sprintf(`(function() local t = require("agentrun").status().terminals[%d]; if t and t.bufnr then require("probe").watch(t.bufnr, %q, _G.bench_t0); _G.bench_buf = t.bufnr; return true end return false end)()`, before+1, p.last)
	if err := pollLua(v, watch, 30*time.Second); err != nil {
		return 0, shown, err
	}
	m, err := waitReply(v, parallelRe(1), replies+1, 60*time.Second)
	if err != nil {
		return 0, shown, err
	}
	agentPath, _ := strconv.Atoi(m[6])
	nvimCPU, backendCPU := procCPU(nvimPid)-nvimCPU0, procCPU(backendPid)-backendCPU0
	if err := luaValue(v, `(function() vim.wait(10000, function() return require("probe").found ~= nil end, 10); return true end)()`, nil); err != nil {
		return 0, shown, err
	}
	var buf int
	if err := luaValue(v, `_G.bench_buf`, &buf); err != nil {
		return 0, shown, err
	}
	if shown, err = readDisplay(v, buf); err != nil {
		return 0, shown, err
	}
	var opened float64
	if err := luaValue(v, `(_G.bench_open - _G.bench_t0) / 1e6`, &opened); err != nil {
		return 0, shown, err
	}
	if shown.Complete > 0 {
		shown.FromStart = shown.Complete - time.Duration(opened*float64(time.Millisecond))
	}
	shown.NvimCPU, shown.BackendCPU = nvimCPU, backendCPU
	return time.Duration(agentPath) * time.Millisecond, shown, nil
}

// catchUpFloor measures, in v, Neovim's own time to take what a split
// takes at the end of a flood: the last 'scrollback' lines of the file,
// into a terminal buffer of the split's size (the split of the last
// agent round), 8 KiB at a time, three times.
func catchUpFloor(v *nvim.Nvim, p pluginRun) ([]time.Duration, error) {
	var size struct {
		Cols       int `msgpack:"cols"`
		Rows       int `msgpack:"rows"`
		Scrollback int `msgpack:"scrollback"`
	}
	err := luaValue(v, `(function() local b = _G.bench_buf; local w = vim.fn.bufwinid(b)
		if w == -1 then return {cols = 120, rows = 20, scrollback = vim.bo[b].scrollback} end
		return {cols = vim.api.nvim_win_get_width(w), rows = vim.api.nvim_win_get_height(w), scrollback = vim.bo[b].scrollback} end)()`, &size)
	if err != nil {
		return nil, err
	}
	data, err := os.ReadFile(p.file)
	if err != nil {
		return nil, err
	}
	lines := strings.Split(strings.TrimSuffix(string(data), "\n"), "\n")
	lines = lines[max(0, len(lines)-size.Scrollback):]
	text := strings.Join(lines, "\r\n") + "\r\n"
	var floors []time.Duration
	for r := 0; r < rounds; r++ {
		var took float64
		if err := luaValue(v, `require("probe").catch_up(...)`, &took, text, size.Cols, size.Rows, size.Scrollback, p.last, 8192); err != nil {
			return nil, err
		}
		floors = append(floors, time.Duration(took*float64(time.Millisecond)))
	}
	return floors, nil
}

// lagRatio measures the event-loop lag while a flood streams in, native
// and ours in turn, prints both and returns their p99s. A p99 rests on
// its few worst samples, which on a shared VM come and go with the host:
// more floods than the other rounds, and each flood's own p99 listed, so
// the spread is in sight.
func lagRatio(v *nvim.Nvim, p pluginRun) (native, ours time.Duration, err error) {
	var natLags, ourLags []float64
	var natEach, ourEach []time.Duration
	for r := 0; r < lagRounds; r++ {
		l, err := nativeLag(p.floodCmd, p.flood)
		if err != nil {
			return 0, 0, err
		}
		natLags, natEach = append(natLags, l...), append(natEach, p99ms(l))
		if l, err = ourLag(v, p); err != nil {
			return 0, 0, err
		}
		ourLags, ourEach = append(ourLags, l...), append(ourEach, p99ms(l))
	}
	native, ours = p99ms(natLags), p99ms(ourLags)
	fmt.Printf("    lag p99, native :terminal:   %8.1f ms  (5 ms timer, %d samples in %d floods of %s; each flood's p99 %s)\n",
		ms(native), len(natLags), lagRounds, p.flood, listTenths(natEach))
	fmt.Printf("    lag p99, agentrun:           %8.1f ms  (%d samples in %d floods; each flood's p99 %s)\n",
		ms(ours), len(ourLags), lagRounds, listTenths(ourEach))
	return native, ours, nil
}

// runLag measures only the lag under a flood, native and ours (-only lag).
func runLag(flood time.Duration) error {
	v, err := agentNvim("below")
	if err != nil {
		return err
	}
	defer v.Close()
	fmt.Printf("lag under a flood on %s\n", hostDesc())
	nat, ours, err := lagRatio(v, pluginRun{floodCmd: floodCommand(flood), flood: flood})
	if err != nil {
		return err
	}
	fmt.Printf("  lag p99 ours / native                 %5.2f×  (target ≤ 1×: %.1f ms vs %.1f ms)\n", ratio(ours, nat), ms(ours), ms(nat))
	return nil
}

// ourLag measures the event-loop lag samples while a flood streams into
// the split.
func ourLag(v *nvim.Nvim, p pluginRun) ([]float64, error) {
	if err := v.ExecLua(`require("probe").lag_start(); vim.cmd("AgentPrompt " .. ...)`, nil, p.floodCmd); err != nil {
		return nil, err
	}
	time.Sleep(p.flood)
	var lags []float64
	if err := luaValue(v, `require("probe").lag_stop()`, &lags); err != nil {
		return nil, err
	}
	// Let the flood's turn end before the next one starts.
	time.Sleep(time.Second)
	return lags, nil
}

// runScale measures memory, output latency and many terminals, with the
// splits off (position "none") so 64 windows do not fight for the screen.
func runScale() error {
	v, err := agentNvim("none")
	if err != nil {
		return err
	}
	defer v.Close()
	fmt.Printf("\nscale:\n")

	line := strings.Repeat("0123456789", 7)
	cmd := fmt.Sprintf("!parallel 8 yes %s | head -c 100000000", line)
	m, err := promptAndWait(v, cmd, parallelRe(8), 5*time.Minute)
	if err != nil {
		return err
	}
	rss, hwm, err := binaryRSS(v)
	if err != nil {
		return err
	}
	fmt.Printf("  8 terminals × 100 MB, 1 MiB limit: exit0=%s/8, RSS after %.1f MB, peak %.1f MB (target ≤ 64 MB)\n",
		m[2], float64(rss)/1024, float64(hwm)/1024)

	if err := printOutputLatency(line); err != nil {
		return err
	}

	want := seqSum(20000)
	m, err = promptAndWait(v, "!parallel 64 seq 1 20000", parallelRe(64), 3*time.Minute)
	if err != nil {
		return err
	}
	exact := m[3] == "64" && m[4] == want
	fmt.Printf("  64 concurrent terminals (seq 1 20000): exit0=%s/64, identical=%s, output exact=%v, %s ms\n", m[2], m[3], exact, m[6])
	if !exact {
		return fmt.Errorf("64 terminals: outputs not exact (sha %s, want %s)", m[4], want)
	}
	return nil
}

// procCPU is the CPU time (user and system) process pid has used so far.
func procCPU(pid int) time.Duration {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0
	}
	// The fields after the command name (which may hold spaces).
	f := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+1:]))
	if len(f) < 13 {
		return 0
	}
	ut, _ := strconv.Atoi(f[11])
	st, _ := strconv.Atoi(f[12])
	return time.Duration(ut+st) * 10 * time.Millisecond // USER_HZ is 100 on Linux
}

// listMs formats ds in ms: "450 454 470".
func listMs(ds []time.Duration) string {
	parts := make([]string, len(ds))
	for i, d := range ds {
		parts[i] = fmt.Sprintf("%.0f", ms(d))
	}
	return strings.Join(parts, " ")
}

// seqSum is the digest the demo agent reports for `seq 1 n`'s output.
func seqSum(n int) string {
	var b strings.Builder
	for i := 1; i <= n; i++ {
		b.WriteString(strconv.Itoa(i))
		b.WriteByte('\n')
	}
	sum := sha256.Sum256([]byte(b.String()))
	return hex.EncodeToString(sum[:8])
}

// binaryRSS reads the agentrun process's current and peak RSS (kB).
func binaryRSS(v *nvim.Nvim) (rss, hwm int, err error) {
	var pid int
	if err := luaValue(v, `vim.fn.jobpid(require("agentrun.rpc").channel())`, &pid); err != nil {
		return 0, 0, err
	}
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, 0, err
	}
	for _, l := range strings.Split(string(b), "\n") {
		f := strings.Fields(l)
		if len(f) >= 2 && f[0] == "VmRSS:" {
			rss, _ = strconv.Atoi(f[1])
		}
		if len(f) >= 2 && f[0] == "VmHWM:" {
			hwm, _ = strconv.Atoi(f[1])
		}
	}
	return rss, hwm, nil
}
