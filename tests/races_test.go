package tests

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

// TestTakeoverRightAwayThenCancel: :AgentTakeover as soon as the agent's
// terminal exists, then :AgentCancel at once: the terminal is the user's,
// so cancelling the turn does not kill it.
func TestTakeoverRightAwayThenCancel(t *testing.T) {
	e := startEditor(t, `require("agentrun").setup({ terminal = { kill_grace_ms = 300 } })`)
	e.startSession()
	e.cmd("AgentPrompt sleep 3307")
	var id string
	e.waitFor("the terminal to exist", 10*time.Second, func() (bool, string) {
		e.lua(`return next(require("agentrun.state").terminals) or ""`, &id)
		return id != "", "none"
	})
	e.cmd("AgentTakeover " + id)
	e.cmd("AgentCancel")
	e.idle(10 * time.Second)
	time.Sleep(600 * time.Millisecond) // past the kill grace: a kill would have landed
	info := e.ahpTerminal(id)
	if info.State != "running" || info.Claim["kind"] != "client" || !alive(info.Pid) {
		t.Fatalf("after takeover and cancel: %+v (alive %v); notes: %s", info, alive(info.Pid), e.noteText())
	}
}

// TestPromptAfterTurnIsNeverRefused: a prompt sent the moment the agent's
// last message shows (its turn_end may not have reached Lua yet), and one
// sent while a turn runs, are queued and run in order; none is refused.
func TestPromptAfterTurnIsNeverRefused(t *testing.T) {
	e := startEditor(t, "")
	e.startSession()
	for i := range 5 {
		cmd := fmt.Sprintf("echo turn-%d", i)
		var ok bool
		e.lua(`return require("agentrun").prompt(...)`, &ok, cmd)
		if !ok {
			t.Fatalf("prompt %q refused: %s", cmd, e.noteText())
		}
		e.waitChat("`"+cmd+"` exited with code 0.", 10*time.Second) // then at once the next
	}
	e.cmd("AgentPrompt sleep 1")
	e.cmd("AgentPrompt echo queued-behind-sleep")
	e.waitChat("(queued: echo queued", 5*time.Second) // cut to the chat's width
	text := e.waitChat("`echo queued-behind-sleep` exited with code 0.", 10*time.Second)
	if i, j := strings.Index(text, "`sleep 1` exited"), strings.Index(text, "`echo queued-behind-sleep` exited"); i < 0 || j < i {
		t.Errorf("the queued prompt did not run after the turn it waited for:\n%s", text)
	}
	if strings.Contains(e.noteText(), "still working") {
		t.Errorf("a prompt was refused: %s", e.noteText())
	}
}

// TestNothingShowsRunningAfterStop: :AgentStop while a command runs in our
// terminal and another in the agent's own (display-only) one: the agent
// never finishes its tool calls, so the chat and the split give them a
// final state instead of "in progress" forever.
func TestNothingShowsRunningAfterStop(t *testing.T) {
	e := startEditor(t, "")
	e.startSession()
	e.cmd("AgentPrompt !meta sleep 3411")
	e.waitChat("sleep 3411 [execute] · in progress", 10*time.Second)
	buf := e.waitAgentShownTerminal()
	e.cmd("AgentStop")
	text := e.waitChat("sleep 3411 [execute] · stopped with the session", 10*time.Second)
	if strings.Contains(text, "in progress") {
		t.Errorf("a tool call still shows as in progress:\n%s", text)
	}
	e.waitBuf(buf, 5*time.Second, "[stopped]")
	var st string
	e.lua(`for _, t in pairs(require("agentrun.state").terminals) do if t.display_only then return t.state end end return ""`, &st)
	if st == "running" {
		t.Errorf("the agent's terminal is still %q after :AgentStop", st)
	}
}
