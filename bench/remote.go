//go:build linux

package main

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"time"

	"github.com/agentrun/agentrun.nvim/internal/sshtest"
	"github.com/neovim/go-client/nvim"
)

// The agent on another machine (issue 29): the sshd fixture of the tests
// (package sshtest: a real OpenSSH server on 127.0.0.1, a second local
// user as the remote, this build of agentrun there), a Neovim with the
// demo agent here and one with the demo agent there, each in a tmux
// pane as in runFeel. Both sides are this machine, so the figures are
// what the SSH hop and the remote backend add, not a network's latency.
const (
	remoteFirst      = 40      // first-output commands per contender
	remoteFloodLines = 1000000 // lines of the flood (as the display part's)
	remoteRounds     = 3       // floods per contender (the median counts)
)

// runRemote measures first output of a remote command against a local
// one, and the split's last line of a flood there against `ssh host cat`
// of the same bytes, in the same run.
func runRemote() (err error) {
	fmt.Printf("\nan agent on another machine (ssh to 127.0.0.1 as a second local user; on %s):\n", hostDesc())
	if os.Getuid() != 0 {
		fmt.Println("  skipped: it runs sshd and adds a local user, which needs root")
		return nil
	}
	bin, err := filepath.Abs("bin/agentrun")
	if err != nil {
		return err
	}
	run := &sshtest.Run{}
	defer run.Close()
	defer run.Recover(&err)
	r := sshtest.Start(run, bin)
	root, err := os.Getwd()
	if err != nil {
		return err
	}
	localScr, err := startScreenNvim("local", root)
	if err != nil {
		return err
	}
	defer localScr.Close()
	remoteScr, err := startScreenNvim("remote", root)
	if err != nil {
		return err
	}
	defer remoteScr.Close()
	local, remote := localScr.Nvim, remoteScr.Nvim
	if err := startAgent(local, "below"); err != nil {
		return err
	}
	start := `vim.env.AGENTRUN_SSH_CONFIG = ...
		require("agentrun").setup({terminal = {position = "below"}})
		vim.cmd("AgentRun " .. select(2, ...) .. " demo")`
	if err := remote.ExecLua(start, nil, r.Config, r.URL()); err != nil {
		return fmt.Errorf(":AgentRun %s demo: %w", r.URL(), err)
	}
	if err := pollLua(remote, agentIdle, 30*time.Second); err != nil {
		return fmt.Errorf("the demo agent on %s: %w", r.URL(), err)
	}

	// First output: the same command, alternating blocks of 10.
	for _, v := range []*nvim.Nvim{local, remote} {
		if err := v.ExecLua(`require("probe").first_start()`, nil); err != nil {
			return err
		}
	}
	for done := 0; done < remoteFirst; done += firstBlock {
		for _, v := range []*nvim.Nvim{local, remote} {
			if err := agentFirstOutputs(v, done, firstBlock); err != nil {
				return err
			}
		}
	}
	var localMs, remoteMs []float64
	if err := luaValue(local, `require("probe").first`, &localMs); err != nil {
		return err
	}
	if err := luaValue(remote, `require("probe").first`, &remoteMs); err != nil {
		return err
	}
	localScreen, err := localScr.screenLatencies()
	if err != nil {
		return err
	}
	remoteScreen, err := remoteScr.screenLatencies()
	if err != nil {
		return err
	}
	lp50, lp99, rp50, rp99 := pct(localMs, 0.5), pct(localMs, 0.99), pct(remoteMs, 0.5), pct(remoteMs, 0.99)
	fmt.Printf("  first output in the buffer (the command prints its first line → the line in the split's buffer; %d commands each, alternating blocks of %d):\n", len(remoteMs), firstBlock)
	fmt.Printf("    agent here        p50 %6.2f ms  p99 %6.2f ms\n", lp50, lp99)
	fmt.Printf("    agent over ssh    p50 %6.2f ms  p99 %6.2f ms\n", rp50, rp99)
	fmt.Printf("    ratio there / here: p50 %.2f×, p99 %.2f×\n", rp50/lp50, rp99/lp99)
	lp50, lp99, rp50, rp99 = pct(localScreen, 0.5), pct(localScreen, 0.99), pct(remoteScreen, 0.5), pct(remoteScreen, 0.99)
	fmt.Printf("  first output on the screen (… → Neovim has drawn the line in its tmux pane; %d and %d seen):\n", len(localScreen), len(remoteScreen))
	fmt.Printf("    agent here        p50 %6.2f ms  p99 %6.2f ms\n", lp50, lp99)
	fmt.Printf("    agent over ssh    p50 %6.2f ms  p99 %6.2f ms\n", rp50, rp99)
	fmt.Printf("    ratio there / here: p50 %.2f×, p99 %.2f×\n", rp50/lp50, rp99/lp99)

	// A flood there: the split's last line against ssh's own copy of the
	// same bytes.
	flood := filepath.Join(r.Home, "flood.txt")
	if err := writeLines(flood, remoteFloodLines); err != nil {
		return err
	}
	if err := os.Chown(flood, r.UID, -1); err != nil {
		return err
	}
	dir, localFlood, err := linesFile("agentrun-remote", remoteFloodLines)
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	var sshTrue, sshCat, shown, shownHere []time.Duration
	for range remoteRounds {
		t0 := time.Now()
		if err := r.SSH("true").Run(); err != nil {
			return fmt.Errorf("ssh true: %w", err)
		}
		sshTrue = append(sshTrue, time.Since(t0))
		t0 = time.Now()
		cat := r.SSH("cat", flood)
		cat.Stdout = nil // os.DevNull: ssh still moves every byte
		if err := cat.Run(); err != nil {
			return fmt.Errorf("ssh cat: %w", err)
		}
		sshCat = append(sshCat, time.Since(t0))
		d, err := remoteFlood(remote, "cat "+flood, strconv.Itoa(remoteFloodLines))
		if err != nil {
			return err
		}
		shown = append(shown, d)
		if d, err = remoteFlood(local, "cat "+localFlood, strconv.Itoa(remoteFloodLines)); err != nil {
			return err
		}
		shownHere = append(shownHere, d)
	}
	slices.Sort(sshTrue)
	slices.Sort(sshCat)
	slices.Sort(shown)
	slices.Sort(shownHere)
	c, s, t, h := sshCat[len(sshCat)/2], shown[len(shown)/2], sshTrue[len(sshTrue)/2], shownHere[len(shownHere)/2]
	fmt.Printf("  a flood there (%d lines, %s; medians of %d):\n", remoteFloodLines, sizeOf(flood), remoteRounds)
	fmt.Printf("    ssh host cat of the same bytes          %6.0f ms  (of which connecting: ssh host true %.0f ms)\n", ms(c), ms(t))
	fmt.Printf("    the split's last line, agent here       %6.0f ms  (from the prompt)\n", ms(h))
	fmt.Printf("    the split's last line, agent over ssh   %6.0f ms  (from the prompt; the link is up already)\n", ms(s))
	fmt.Printf("    ratio over ssh / here: %.2f×; over ssh / ssh cat: %.2f×\n", float64(s)/float64(h), float64(s)/float64(c))
	return nil
}

// agentIdle is true once the first session has started and is not busy.
const agentIdle = `(function() local s = require("agentrun").status().sessions[1]; return s ~= nil and s.id ~= nil and s.id ~= "" and not s.busy end)()`

// agentFirstOutputs runs firstCmd n times through v's agent, each once
// the last has ended; done commands' outputs were counted before.
func agentFirstOutputs(v *nvim.Nvim, done, n int) error {
	for i := done; i < done+n; i++ {
		if err := v.ExecLua(`vim.cmd("AgentPrompt " .. ...)`, nil, firstCmd); err != nil {
			return err
		}
		if err := pollLua(v, `#require("probe").first >= `+strconv.Itoa(i+1), 15*time.Second); err != nil {
			return fmt.Errorf("first output: %w", err)
		}
		if err := pollLua(v, agentIdle, 15*time.Second); err != nil {
			return err
		}
	}
	return nil
}

// remoteFlood prompts cmd (a flood) in v and returns when the new split showed last,
// counted from the prompt.
func remoteFlood(v *nvim.Nvim, cmd, last string) (time.Duration, error) {
	var before int
	if err := luaValue(v, `#require("agentrun").status().terminals`, &before); err != nil {
		return 0, err
	}
	if err := v.ExecLua(`_G.bench_t0 = vim.loop.hrtime(); vim.cmd("AgentPrompt " .. ...)`, nil, cmd); err != nil {
		return 0, err
	}
	watch := fmt.Sprintf(`(function() local t = require("agentrun").status().terminals[%d]; if t and t.bufnr then require("probe").watch(t.bufnr, %q, _G.bench_t0); return true end return false end)()`, before+1, last)
	if err := pollLua(v, watch, 30*time.Second); err != nil {
		return 0, err
	}
	if err := pollLua(v, `require("probe").found ~= nil`, 60*time.Second); err != nil {
		return 0, err
	}
	var found float64
	if err := luaValue(v, `require("probe").found`, &found); err != nil {
		return 0, err
	}
	if err := pollLua(v, agentIdle, 30*time.Second); err != nil {
		return 0, err
	}
	return time.Duration(found * float64(time.Millisecond)), nil
}
