package tests

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestScreenQuestionWaitsWhileTyping: a question that comes while the
// user types a prompt (digits and Enter among the keys, which Neovim's
// own picker would take as an answer) waits, said in the chat; the
// typed text stays in the prompt; the question opens when the user
// leaves Insert mode, and only a choice's key answers it.
func TestScreenQuestionWaitsWhileTyping(t *testing.T) {
	s := startScreen(t, 100, 30, `require("agentrun").setup({ terminal = { approve = "ask" } })`)
	s.keys(":AgentRun", "Enter")
	s.waitShows(10*time.Second, "agentrun · demo · ready", "-- INSERT --")
	s.prompt("echo asked-1")
	// the user goes on typing their next prompt, Enter and digits in it
	s.typeText("next 1")
	s.keys("Enter")
	s.typeText("2")
	s.keys("Enter")
	s.typeText("q x")
	s.waitShows(10*time.Second, "? run command", "the question waits while you type")
	sc := s.waitShows(5*time.Second, "next 1", "q x")
	if strings.Contains(sc, "→ run") || strings.Contains(sc, "→ refused") || strings.Contains(sc, "asked-1 exited") {
		t.Fatalf("keys typed for the prompt answered the question:\n%s", sc)
	}
	// leaving Insert mode opens it; a key that is no choice does nothing
	s.keys("Escape")
	s.waitShows(5*time.Second, "1  Run it", "2  Refuse")
	s.keys("x")
	s.keys("1")
	sc = s.waitShows(10*time.Second, "echo asked-1 exited with code 0.")
	if !strings.Contains(sc, "next 1") || !strings.Contains(sc, "q x") {
		t.Errorf("the prompt the user typed is gone:\n%s", sc)
	}
}

// TestScreenAgentWriteBesideUnsavedEdits: the agent writes a file the
// user has unsaved edits in: their buffer keeps their text, they are told,
// and once they stop typing both versions show side by side.
func TestScreenAgentWriteBesideUnsavedEdits(t *testing.T) {
	s := startScreen(t, 120, 30, "")
	path := filepath.Join(s.dir, "notes.txt")
	if err := os.WriteFile(path, []byte("first line\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	s.keys(":e notes.txt", "Enter", "G", "o")
	s.typeText("added by me")
	s.keys("Escape")
	s.keys(":AgentRun demo", "Enter")
	s.waitShows(10*time.Second, "agentrun · demo · ready", "-- INSERT --")
	s.prompt(`!write ` + path + ` first line\nadded by the agent\n`)
	s.waitShows(10*time.Second, "Could not write")
	s.keys("Escape")
	sc := s.waitShows(5*time.Second, "agentrun://agent-version/notes.txt", "added by me", "added by the agent")
	// side by side: one row holds the user's line on the left and the
	// agent's on the right
	side := false
	for _, l := range strings.Split(sc, "\n") {
		if i, j := strings.Index(l, "added by me"), strings.Index(l, "added by the agent"); i >= 0 && j > i {
			side = true
		}
	}
	if !side {
		t.Errorf("the two versions are not side by side:\n%s", sc)
	}
	if disk, _ := os.ReadFile(path); string(disk) != "first line\n" {
		t.Errorf("the file = %q, want it untouched", disk)
	}
	s.keys("q")
	s.keys(":messages", "Enter")
	s.waitShows(5*time.Second, "notes.txt: your unsaved edits kept; <Esc> shows")
}

// TestPickerPluginWaitsWhileTheUserTypes: a picker plugin (any
// vim.ui.select replacement) is not called while the user is in Insert
// mode, so keys typed for the prompt cannot reach it; the question waits,
// said in the chat, and is handed over once the user leaves Insert mode.
func TestPickerPluginWaitsWhileTheUserTypes(t *testing.T) {
	e := startEditor(t, `require("agentrun").setup({ terminal = { approve = "ask" } })`)
	e.stubSelect(1)
	e.startSession()
	if _, err := e.v.Input("i"); err != nil { // the user types in the prompt
		t.Fatal(err)
	}
	e.waitFor("insert mode", 2*time.Second, func() (bool, string) {
		var mode string
		e.lua(`return vim.api.nvim_get_mode().mode`, &mode)
		return mode == "i", "mode " + mode
	})
	e.cmd("AgentPrompt echo waited")
	e.waitChat("the question waits while you type", 10*time.Second)
	if p := e.picked(); len(p) != 0 {
		t.Fatalf("the picker was called while the user typed: %+v", p)
	}
	e.normalKeys("")
	e.waitChat("`echo waited` exited with code 0.", 10*time.Second)
	if p := e.picked(); len(p) != 1 || !strings.Contains(p[0].Prompt, "$ echo waited") {
		t.Errorf("picker calls %+v, want one for the command", p)
	}
}

// TestScreenParallelCommandsOneQuestion (issue 50): three commands the
// agent runs at once come as one question naming each (five identical
// pop-ups came one after another); "Always allow" keeps them all, and the
// chat says each answer with its command.
func TestScreenParallelCommandsOneQuestion(t *testing.T) {
	s := startScreen(t, 200, 50, `require("agentrun").setup({ terminal = { approve = { allow = { "ls*" } } } })`)
	s.keys(":AgentRun demo", "Enter")
	s.waitShows(10*time.Second, "agentrun · demo · ready", "-- INSERT --")
	s.prompt("!parallel 3 echo p{i}")
	s.waitShows(10*time.Second, "the question waits while you type")
	s.keys("Escape")
	s.waitShows(5*time.Second, "demo wants to run 3 commands", "1. $ echo p", "2. $ echo p", "3. $ echo p", "1  Run all 3", "2  Refuse all 3", ", and run all 3", "4  One by one")
	s.keys("3")
	s.waitShows(10*time.Second, "→ run: $ echo p1", "→ run: $ echo p2", "→ run: $ echo p3", "(always allowed here:", "parallel n=3 exit0=3")
}

// TestScreenParallelPermissionsOneByOne (issue 50): two of the agent's
// own commands asked at the same moment come as one question naming
// both; "One by one" asks each on its own with the agent's options, and
// each answer reaches its own command.
func TestScreenParallelPermissionsOneByOne(t *testing.T) {
	node, agent := claudeLikeArgv(t)
	s := startScreen(t, 160, 40, fmt.Sprintf(`require("agentrun").setup({ default_agent = "claudelike",
		agents = { claudelike = { cmd = { %q, %q }, terminals = "agentrun" } }, terminal = { approve = { allow = { "ls*" } } } })`, node, agent))
	s.keys(":AgentRun", "Enter")
	s.waitShows(10*time.Second, "agentrun · claudelike", "-- INSERT --")
	s.prompt("askrunmany make a ;; make b")
	s.waitShows(10*time.Second, "the question waits while you type")
	s.keys("Escape")
	s.waitShows(5*time.Second, "claudelike asks permission for 2 commands:", "1. $ make ", "2. $ make ", "1  Allow all 2", "2  Refuse all 2", "4  One by one")
	s.keys("4")
	s.waitShows(5*time.Second, "1  Always Allow", "2  Allow — this time", "3  Reject — this time")
	s.keys("2")
	s.waitShows(5*time.Second, "→ Allow")
	s.waitShows(5*time.Second, "3  Reject — this time")
	s.keys("3")
	sc := s.waitShows(10*time.Second, "→ Reject", "PERMISSIONS make a: ")
	if !strings.Contains(sc, ": allow | make b: reject") && !strings.Contains(sc, ": reject | make b: allow") {
		t.Errorf("want one command allowed and the other refused:\n%s", sc)
	}
}

// TestScreenQuestionWaitsAtSixtyColumns: on a 60-column screen the
// message that a question waits fits one line (it wrapped, and the
// screen stopped at "Press ENTER" while the user typed), and <Esc> opens
// the question.
func TestScreenQuestionWaitsAtSixtyColumns(t *testing.T) {
	s := startScreen(t, 60, 15, `require("agentrun").setup({ terminal = { approve = "ask" } })`)
	s.keys(":AgentRun demo", "Enter")
	s.waitShows(10*time.Second, "agentrun · demo", "-- INSERT --")
	s.prompt("echo asked")
	// (the message comes before the chat's note; Insert mode's
	// "-- INSERT --" may hide it)
	sc := s.waitShows(10*time.Second, "(the question waits while")
	if strings.Contains(sc, "Press ENTER") {
		t.Fatalf("the message stops the screen:\n%s", sc)
	}
	s.keys("Escape")
	s.waitShows(5*time.Second, "1  Run it")
}
