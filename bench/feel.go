//go:build linux

package main

import (
	"fmt"
	"os"
	"sort"
	"strconv"
	"time"

	"github.com/neovim/go-client/nvim"
)

// Latency a person feels: how long until a command's first line is in
// its split, and until a typed key's echo is, each against Neovim's own
// :terminal in the same run (alternating blocks, one Neovim each).

const (
	firstCommands = 60 // commands per contender for the first-output figure
	firstBlock    = 10 // alternating in blocks of this many
	echoRounds    = 4  // lines typed per contender for the echo figure
	echoKeys      = 30 // keys per line
	echoGap       = 30 * time.Millisecond
	firstCmd      = "date +FO%s.%N; sleep 0.1" // its first line carries the moment it was printed; it runs on
)

// runFeel measures both figures and prints them with their ratios.
func runFeel() error {
	fmt.Printf("\nlatency a person feels (on %s):\n", hostDesc())
	// Both Neovims have a screen: each runs in a tmux pane.
	natScr, err := startScreenNvim("native", "")
	if err != nil {
		return err
	}
	defer natScr.Close()
	root, err := os.Getwd()
	if err != nil {
		return err
	}
	ourScr, err := startScreenNvim("agentrun", root)
	if err != nil {
		return err
	}
	defer ourScr.Close()
	nat, ours := natScr.Nvim, ourScr.Nvim
	if err := startAgent(ours, "below"); err != nil {
		return err
	}

	natFirst, ourFirst, err := firstOutput(nat, ours)
	if err != nil {
		return err
	}
	var natOpened, ourOpened []float64
	if err := luaValue(nat, `require("probe").opened`, &natOpened); err != nil {
		return err
	}
	if err := luaValue(ours, `require("probe").opened`, &ourOpened); err != nil {
		return err
	}
	natScreen, err := natScr.screenLatencies()
	if err != nil {
		return err
	}
	ourScreen, err := ourScr.screenLatencies()
	if err != nil {
		return err
	}
	np50, np99 := pct(natFirst, 0.5), pct(natFirst, 0.99)
	op50, op99 := pct(ourFirst, 0.5), pct(ourFirst, 0.99)
	fmt.Printf("  first output in the buffer (command prints its first line → the line in the split's buffer; %d commands each, alternating blocks of %d):\n", len(ourFirst), firstBlock)
	fmt.Printf("    native :terminal  p50 %6.2f ms  p99 %6.2f ms\n", np50, np99)
	fmt.Printf("    agentrun          p50 %6.2f ms  p99 %6.2f ms\n", op50, op99)
	fmt.Printf("    ratio ours / native: p50 %.2f×, p99 %.2f×  (target p99 ≤ 20 ms and ≤ native)\n", op50/np50, op99/np99)
	// Neovim shows a terminal buffer's changes when its refresh timer
	// fires, 10 ms after the first change (neovim#3030), and opening the
	// buffer is such a change: what matters is when the buffer opened.
	fmt.Printf("    the buffer opened (TermOpen) relative to the print: native p50 %+.2f ms, agentrun p50 %+.2f ms (p99 %+.2f)\n",
		pct(natOpened, 0.5), pct(ourOpened, 0.5), pct(ourOpened, 0.99))
	np50, np99 = pct(natScreen, 0.5), pct(natScreen, 0.99)
	op50, op99 = pct(ourScreen, 0.5), pct(ourScreen, 0.99)
	fmt.Printf("  first output on the screen (… → Neovim has drawn the line in its tmux pane; %d and %d commands seen):\n", len(natScreen), len(ourScreen))
	fmt.Printf("    native :terminal  p50 %6.2f ms  p99 %6.2f ms\n", np50, np99)
	fmt.Printf("    agentrun          p50 %6.2f ms  p99 %6.2f ms\n", op50, op99)
	fmt.Printf("    ratio ours / native: p50 %.2f×, p99 %.2f×  (target p99 ≤ 20 ms and ≤ native)\n", op50/np50, op99/np99)

	natEcho, ourEcho, err := keyEcho(nat, ours)
	if err != nil {
		return err
	}
	np50, np99 = pct(natEcho, 0.5), pct(natEcho, 0.99)
	op50, op99 = pct(ourEcho, 0.5), pct(ourEcho, 0.99)
	fmt.Printf("  keystroke echo (nvim_input of a key in terminal mode → its echo in the buffer; /bin/sh, %d keys each, %s apart):\n", len(ourEcho), echoGap)
	fmt.Printf("    native :terminal  p50 %6.2f ms  p99 %6.2f ms\n", np50, np99)
	fmt.Printf("    agentrun :AgentShell p50 %6.2f ms  p99 %6.2f ms\n", op50, op99)
	fmt.Printf("    ours − native: p50 %+.2f ms (target ≤ +1 ms); ratio p50 %.2f×, p99 %.2f×\n", op50-np50, op50/np50, op99/np99)
	return nil
}

// firstOutput runs firstCmd firstCommands times in each contender and
// returns the latencies in ms.
func firstOutput(nat, ours *nvim.Nvim) (natMs, ourMs []float64, err error) {
	for _, v := range []*nvim.Nvim{nat, ours} {
		if err := v.ExecLua(`require("probe").first_start()`, nil); err != nil {
			return nil, nil, err
		}
	}
	idle := `(function() local s = require("agentrun").status().sessions[1]; return s ~= nil and not s.busy end)()`
	for done := 0; done < firstCommands; done += firstBlock {
		for i := done; i < done+firstBlock; i++ {
			if err := nat.ExecLua(`local old = vim.api.nvim_get_current_buf()
				require("probe").native_start({"sh", "-c", ...})
				if vim.bo[old].buftype == "terminal" then vim.api.nvim_buf_delete(old, {force = true}) end`, nil, firstCmd); err != nil {
				return nil, nil, err
			}
			if err := pollLua(nat, `#require("probe").first >= `+strconv.Itoa(i+1), 10*time.Second); err != nil {
				return nil, nil, fmt.Errorf("native first output: %w", err)
			}
		}
		for i := done; i < done+firstBlock; i++ {
			if err := ours.ExecLua(`vim.cmd("AgentPrompt " .. ...)`, nil, firstCmd); err != nil {
				return nil, nil, err
			}
			if err := pollLua(ours, `#require("probe").first >= `+strconv.Itoa(i+1), 10*time.Second); err != nil {
				return nil, nil, fmt.Errorf("agentrun first output: %w", err)
			}
			if err := pollLua(ours, idle, 10*time.Second); err != nil {
				return nil, nil, err
			}
		}
	}
	if err := luaValue(nat, `require("probe").first`, &natMs); err != nil {
		return nil, nil, err
	}
	if err := luaValue(ours, `require("probe").first`, &ourMs); err != nil {
		return nil, nil, err
	}
	return natMs, ourMs, nil
}

// keyEcho types echoRounds lines of echoKeys keys into a shell in each
// contender, alternating lines, and returns the echo latencies in ms.
func keyEcho(nat, ours *nvim.Nvim) (natMs, ourMs []float64, err error) {
	if err := nat.ExecLua(`require("probe").native_start({"/bin/sh"}); vim.cmd("startinsert")`, nil); err != nil {
		return nil, nil, err
	}
	if err := ours.ExecLua(`vim.env.SHELL = "/bin/sh"; vim.cmd("AgentShell")`, nil); err != nil {
		return nil, nil, err
	}
	for _, v := range []*nvim.Nvim{nat, ours} {
		if err := pollLua(v, `vim.api.nvim_get_mode().mode == "t"`, 10*time.Second); err != nil {
			return nil, nil, err
		}
		// The buffer typed into is the one in terminal mode.
		if err := v.ExecLua(`require("probe").echo_attach(vim.api.nvim_get_current_buf())`, nil); err != nil {
			return nil, nil, err
		}
	}
	time.Sleep(300 * time.Millisecond) // the shells' prompts
	for r := 0; r < echoRounds; r++ {
		for _, v := range []*nvim.Nvim{nat, ours} {
			prefix := "#r" + strconv.Itoa(r) + ":"
			if err := typeWait(v, prefix, prefix, 0, true); err != nil {
				return nil, nil, err
			}
			for k := 1; k <= echoKeys; k++ {
				time.Sleep(echoGap)
				if err := typeWait(v, "x", prefix, k, false); err != nil {
					return nil, nil, err
				}
			}
			if _, err := v.Input("<CR>"); err != nil {
				return nil, nil, err
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
	if err := luaValue(nat, `require("probe").echo`, &natMs); err != nil {
		return nil, nil, err
	}
	if err := luaValue(ours, `require("probe").echo`, &ourMs); err != nil {
		return nil, nil, err
	}
	return natMs, ourMs, nil
}

// typeWait types keys and waits until the buffer shows prefix and n x's.
func typeWait(v *nvim.Nvim, keys, prefix string, n int, untimed bool) error {
	if err := v.ExecLua(`require("probe").echo_key(...)`, nil, keys, prefix, n, untimed); err != nil {
		return err
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		time.Sleep(2 * time.Millisecond)
		var waiting bool
		if err := luaValue(v, `require("probe").echo_waiting()`, &waiting); err != nil {
			return err
		}
		if !waiting {
			return nil
		}
		if time.Now().After(deadline) {
			var lines string
			_ = luaValue(v, `table.concat(vim.api.nvim_buf_get_lines(0, 0, -1, false), "\\n")`, &lines)
			return fmt.Errorf("typed %q: no echo of %q and %d x's within 5 s; buffer: %q", keys, prefix, n, lines)
		}
	}
}

// pct returns the p-th quantile of samples (ms).
func pct(samples []float64, p float64) float64 {
	if len(samples) == 0 {
		return 0
	}
	s := append([]float64(nil), samples...)
	sort.Float64s(s)
	return s[int(float64(len(s)-1)*p)]
}
