package tests

import (
	"fmt"
	"strings"
	"syscall"
	"testing"
	"time"
)

// The commands here leave the terminal's session (setsid), so its process
// group and session no longer hold them; each ends when the terminal does
// all the same, however it ends.

// escapee runs a command in the agent's terminal that leaves a setsid'd
// `sleep <n>` behind (and keeps the terminal running), and returns it.
func (e *editor) escapee(n int) proc {
	e.t.Helper()
	line := fmt.Sprintf("setsid sh -c 'exec sleep %d' & sleep %d", n, n+1)
	e.cmd("AgentPrompt " + line)
	e.waitTerminal(line, 10*time.Second)
	return e.waitSleep(n, "the setsid'd sleep")
}

// waitSleep waits for a running `sleep n` and returns it; the test kills
// it at its end if it still runs.
func (e *editor) waitSleep(n int, what string) proc {
	e.t.Helper()
	var found proc
	e.waitFor(what, 5*time.Second, func() (bool, string) {
		for _, p := range allProcs() {
			if p.Cmdline == fmt.Sprintf("sleep %d", n) && p.Running() {
				found = p
				return true, p.String()
			}
		}
		return false, "not running"
	})
	e.t.Cleanup(func() {
		if found.Running() {
			_ = syscall.Kill(found.PID, syscall.SIGKILL)
		}
	})
	return found
}

func TestSetsidChildGoneAfterStop(t *testing.T) {
	e := startEditor(t, `require("agentrun").setup({ terminal = { kill_grace_ms = 300 } })`)
	e.startSession()
	p := e.escapee(3501)
	e.cmd("AgentStop")
	waitNoLeftovers(t, "the setsid'd child after :AgentStop", []proc{p}, 10*time.Second)
}

func TestSetsidChildGoneAfterQuit(t *testing.T) {
	e := startEditor(t, `require("agentrun").setup({ terminal = { kill_grace_ms = 300 } })`)
	e.startSession()
	p := e.escapee(3502)
	_ = e.v.Command("qa!") // Neovim exits; the reply may never come
	waitNoLeftovers(t, "the setsid'd child after :qa!", []proc{p}, 10*time.Second)
}

func TestSetsidChildGoneAfterBackendKilled(t *testing.T) {
	e := startEditor(t, "")
	e.startSession()
	p := e.escapee(3503)
	if !strings.HasPrefix(p.Cmdline, "sleep") {
		t.Fatalf("escapee %v", p)
	}
	if err := syscall.Kill(e.backendPid(), syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	// The backend's own cleanup never runs: the guard kills it.
	waitNoLeftovers(t, "the setsid'd child after the backend's SIGKILL", []proc{p}, 10*time.Second)
}

// stubbornAgent starts an "agent" that ignores both its stdin's end and
// SIGTERM (as a hung agent would) and returns its process.
func (e *editor) stubbornAgent(n int) proc {
	e.t.Helper()
	e.cmd("AgentRun stubborn")
	return e.waitSleep(n, "the stubborn agent")
}

func stubbornAgentSetup(n int) string {
	return fmt.Sprintf(`require("agentrun").setup({ agents = { stubborn = { cmd = { "sh", "-c", "trap '' TERM; exec sleep %d" } } } })`, n)
}

// TestStubbornAgentGoneWhenNeovimIsKilled: Neovim SIGKILLed; the backend
// sees its stdin end and stops the agent, which ignores that and SIGTERM:
// it is killed within the grace period (2 s) all the same.
func TestStubbornAgentGoneWhenNeovimIsKilled(t *testing.T) {
	e := startEditor(t, stubbornAgentSetup(3621))
	agent := e.stubbornAgent(3621)
	if err := syscall.Kill(e.nvimPid(), syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	waitNoLeftovers(t, "the agent that ignores EOF and SIGTERM", []proc{agent}, 4*time.Second)
}

// TestStubbornAgentGoneWhenBackendIsStopped: what Neovim does to its jobs
// when it exits without running VimLeavePre: SIGTERM to the backend, then
// SIGKILL 2 s later. The agent gets SIGTERM at once, and what is left when
// the backend dies the guard kills: no agent is orphaned.
func TestStubbornAgentGoneWhenBackendIsStopped(t *testing.T) {
	e := startEditor(t, stubbornAgentSetup(3622))
	agent := e.stubbornAgent(3622)
	backend := e.backendPid()
	if err := syscall.Kill(backend, syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	time.Sleep(2 * time.Second)
	_ = syscall.Kill(backend, syscall.SIGKILL)
	waitNoLeftovers(t, "the agent that ignores EOF and SIGTERM", []proc{agent}, 4*time.Second)
}
