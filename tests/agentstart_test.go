package tests

import (
	"fmt"
	"os"
	"strings"
	"testing"
	"time"
)

// TestJourneyAgentThatNeverStarts: an agent that never answers initialize
// (`sleep`), as a new user meets it on the screen. A prompt sent meanwhile
// waits marked as waiting for the start; after some seconds the chat says,
// once, that the agent has not answered and how to stop it (and its status
// line too); :AgentCancel, and <C-c> in the prompt, drop the waiting prompt; :AgentStop stops the agent (the session ends
// saying you stopped it, the prompt waiting then is dropped) and nothing is
// left running.
func TestJourneyAgentThatNeverStarts(t *testing.T) {
	secs := fmt.Sprintf("1000.%d", os.Getpid()%100000) // this test's own sleep
	s := startScreen(t, 120, 30, fmt.Sprintf(`require("agentrun").setup({ agents = { silent = { cmd = { "sleep", %q } } } })`, secs))
	s.keys(":AgentRun silent", "Enter")
	s.waitShows(10*time.Second, "agentrun · silent · starting…")
	eventually(t, "the agent to run", 10*time.Second, func() (bool, string) {
		pids := findProcesses("sleep " + secs)
		return len(pids) == 1, fmt.Sprintf("pids %v", pids)
	})
	s.prompt("echo hi")
	s.waitShows(5*time.Second, "(queued: echo hi — sent once the agent has started)", "agentrun · silent · starting… · 1 queued")
	if sc := s.capture(); strings.Contains(sc, "> echo hi") {
		t.Errorf("the waiting prompt shows as sent:\n%s", sc)
	}

	s.waitShows(20*time.Second, `(agentrun) no answer from agent "silent" yet (10s);`, ":AgentStop stops it (details in", "agentrun · silent · starting… (no answer yet) · 1 queued")
	if sc := s.capture(); strings.Contains(sc, "Press ENTER") {
		t.Errorf("the note stops the screen:\n%s", sc)
	}
	var messages string
	s.luaValue(`vim.fn.execute("messages")`, &messages)
	if n := strings.Count(messages, `(agentrun) no answer from agent "silent" yet (10s); :AgentStop stops it`); n != 1 {
		t.Errorf("the notification shows %d times:\n%s", n, messages)
	}
	s.keys("Escape", ":AgentCancel", "Enter")
	s.waitShows(5*time.Second, "(dropped 1 queued prompt: echo hi)")
	s.waitFor("the header without a queue", 5*time.Second, func(sc string) bool {
		return strings.Contains(sc, "agentrun · silent · starting… (no answer yet)") && !strings.Contains(sc, "· 1 queued")
	})

	s.keys("i")
	s.prompt("echo dropped")
	s.waitShows(5*time.Second, "(queued: echo dropped — sent once the agent has started)")
	s.keys("C-c") // in the prompt, as :AgentCancel
	s.waitShows(5*time.Second, "(dropped 1 queued prompt: echo dropped)")
	s.prompt("echo again")
	s.waitShows(5*time.Second, "(queued: echo again — sent once the agent has started)")
	s.keys("Escape", ":AgentStop", "Enter")
	s.waitShows(10*time.Second, "agentrun · silent · ended", "you stopped this session (:AgentStop)")
	eventually(t, "the agent to be gone", 10*time.Second, func() (bool, string) {
		pids := findProcesses("sleep " + secs)
		return len(pids) == 0, fmt.Sprintf("pids %v", pids)
	})

	chat := s.chatText()
	for _, want := range []string{
		`(agentrun) no answer from agent "silent" yet (10s);`, // the chat wraps notes
		":AgentStop stops it (details in ",
		"(dropped 1 queued prompt: echo hi)",
		"(dropped 1 queued prompt: echo again)",
		"(agentrun) you stopped this session (:AgentStop); its terminals were killed. :AgentRun starts a new one",
	} {
		if !strings.Contains(chat, want) {
			t.Errorf("the chat lacks %q:\n%s", want, chat)
		}
	}
	if n := strings.Count(chat, "no answer from agent"); n != 1 {
		t.Errorf("the chat says %d times that the agent has not answered:\n%s", n, chat)
	}
	for _, not := range []string{"still starting", "could not start", "> echo hi", "> echo dropped", "> echo again"} {
		if strings.Contains(chat, not) {
			t.Errorf("the chat says %q:\n%s", not, chat)
		}
	}
}
