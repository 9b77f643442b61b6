package tests

import (
	"fmt"
	"os"
	"strings"
	"testing"
	"time"
)

func TestEchoShowsInTerminalSplit(t *testing.T) {
	e := startEditor(t, "")
	e.startSession()
	e.cmd("AgentPrompt echo hi")
	term := e.waitTerminal("echo hi", 10*time.Second)
	text := e.waitBuf(term.Bufnr, 10*time.Second, "hi", "[exit 0]", "[released]")
	if lines := strings.Split(text, "\n"); lines[0] != "hi" {
		t.Errorf("first line of the terminal buffer = %q, want %q\n%s", lines[0], "hi", text)
	}
	var bt string
	e.lua(`return vim.bo[...].buftype`, &bt, term.Bufnr)
	if bt != "terminal" {
		t.Errorf("buftype = %q, want terminal", bt)
	}
	e.waitChat("`echo hi` exited with code 0.", 5*time.Second)
}

func TestCtrlCInTerminalSplitInterruptsSleep(t *testing.T) {
	e := startEditor(t, "")
	e.startSession()
	e.cmd("AgentPrompt sleep 30")
	term := e.waitTerminal("sleep 30", 10*time.Second)
	e.waitFor("sleep to be running", 5*time.Second, func() (bool, string) {
		for _, x := range e.terminals() {
			if x.ID == term.ID {
				return x.State == "running", fmt.Sprintf("%+v", x)
			}
		}
		return false, "gone"
	})
	// Enter the split (normal mode) and type <C-c> as a user would.
	e.lua(`vim.api.nvim_set_current_win(vim.fn.bufwinid(...))`, nil, term.Bufnr)
	start := time.Now()
	if _, err := e.v.Input("<C-c>"); err != nil {
		t.Fatal(err)
	}
	text := e.waitFor("the sleep to end", 10*time.Second, func() (bool, string) {
		text := e.bufLines(term.Bufnr)
		return strings.Contains(text, "[signal SIGINT]") || strings.Contains(text, "[exit 130]"), text
	})
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("sleep 30 took %v to stop after <C-c>", d)
	}
	t.Logf("terminal after <C-c>:\n%s", text)
	e.waitChat("· failed", 5*time.Second)
}

func TestDisplayOnlyAgentTerminal(t *testing.T) {
	e := startEditor(t, "")
	e.startSession()
	e.cmd("AgentPrompt !meta printf 'from-the-agent\\n'")
	var buf int
	e.waitFor("a display-only terminal buffer", 10*time.Second, func() (bool, string) {
		var st struct {
			Terminals []struct {
				Bufnr       int  `msgpack:"bufnr"`
				DisplayOnly bool `msgpack:"display_only"`
			} `msgpack:"terminals"`
		}
		e.lua(`return require("agentrun").status()`, &st)
		for _, x := range st.Terminals {
			if x.DisplayOnly && x.Bufnr > 0 {
				buf = x.Bufnr
				return true, ""
			}
		}
		return false, fmt.Sprintf("%+v", st)
	})
	e.waitBuf(buf, 10*time.Second, "from-the-agent", "[exit 0]")
}

// TestQuitKillsTerminals: leaving Neovim leaves no command running.
func TestQuitKillsTerminals(t *testing.T) {
	e := startEditor(t, "")
	e.startSession()
	e.cmd("AgentPrompt sleep 3117")
	e.waitTerminal("sleep 3117", 10*time.Second)
	if pids := findProcesses("sleep 3117"); len(pids) == 0 {
		t.Fatal("sleep 3117 is not running")
	}
	_ = e.v.Command("qa!") // Neovim exits; the reply may never come
	deadline := time.Now().Add(10 * time.Second)
	for len(findProcesses("sleep 3117")) > 0 {
		if time.Now().After(deadline) {
			t.Fatalf("sleep 3117 still running 10s after :qa!: pids %v", findProcesses("sleep 3117"))
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// findProcesses returns the pids whose command line is exactly cmdline.
func findProcesses(cmdline string) []string {
	entries, _ := os.ReadDir("/proc")
	var pids []string
	for _, ent := range entries {
		data, err := os.ReadFile("/proc/" + ent.Name() + "/cmdline")
		if err != nil {
			continue
		}
		if strings.TrimRight(strings.ReplaceAll(string(data), "\x00", " "), " ") == cmdline {
			pids = append(pids, ent.Name())
		}
	}
	return pids
}
