package tests

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestChatShowsToolCallStatusChanges watches the chat the way a user
// would: the tool call line first says "in progress", then, in place,
// "completed" (exit 0) or "failed" (exit 1).
func TestChatShowsToolCallStatusChanges(t *testing.T) {
	tests := []struct {
		command string
		final   string
	}{
		{"sleep 0.5; echo ok", "completed"},
		{"sleep 0.5; exit 1", "failed"},
	}
	e := startEditor(t, "")
	e.startSession()
	for _, tc := range tests {
		t.Run(tc.final, func(t *testing.T) {
			e.t = t
			e.cmd("AgentPrompt " + tc.command)
			line := "● " + tc.command + " [execute] · "
			if tc.final == "failed" {
				line = "✗ " + tc.command + " [execute] · "
			}
			running := "◐ " + tc.command + " [execute] · in progress"
			e.waitChat(running, 5*time.Second)
			chat := e.waitChat(line+tc.final, 10*time.Second)
			if strings.Contains(chat, running) {
				t.Errorf("the tool call line still says in progress after it ended:\n%s", chat)
			}
			if n := strings.Count(chat, tc.command+" [execute] · "); n != 1 {
				t.Errorf("want the tool call's line once (updated in place), found it %d times:\n%s", n, chat)
			}
			e.idle(5 * time.Second)
		})
	}
}

// TestChatShowsEveryUpdateKind renders the demo agent's "!updates" (one
// update of each kind) without a Lua error.
func TestChatShowsEveryUpdateKind(t *testing.T) {
	e := startEditor(t, "")
	e.startSession()
	e.cmd("AgentPrompt !updates")
	chat := e.waitChat("Sent one update of each kind.", 10*time.Second)
	for _, want := range []string{"Plan:", "┊ "} {
		if !strings.Contains(chat, want) {
			t.Errorf("chat lacks %q:\n%s", want, chat)
		}
	}
	var notes []struct {
		Msg string `msgpack:"msg"`
	}
	e.lua(`return _G.notes`, &notes)
	for _, n := range notes {
		if strings.Contains(n.Msg, "internal error") {
			t.Errorf("notification %q", n.Msg)
		}
	}
}

// TestChatKeepsUpWithAFloodOfChunks: 10000 tiny message chunks reach the
// chat in seconds (each chunk touches only the end of the transcript), and
// status() never calls the turn over while the chat is still behind it.
func TestChatKeepsUpWithAFloodOfChunks(t *testing.T) {
	e := startEditor(t, "")
	e.startSession()
	start := time.Now()
	e.cmd("AgentPrompt !flood 10000")
	var idleEarly string
	e.waitFor("status() to say the turn is over", 20*time.Second, func() (bool, string) {
		var st struct {
			Busy bool   `msgpack:"busy"`
			Chat string `msgpack:"chat"`
		}
		e.lua(`local s = require("agentrun").status().sessions[1]
			local c = require("agentrun.state").session().chat
			return { busy = s.busy, chat = table.concat(vim.api.nvim_buf_get_lines(c.buf, -8, -1, false), "\n") }`, &st)
		if !st.Busy && !strings.Contains(st.Chat, "Sent 10000 messages.") && idleEarly == "" {
			idleEarly = st.Chat
		}
		return !st.Busy, st.Chat
	})
	if idleEarly != "" {
		t.Errorf("status() said the turn was over while the chat still showed:\n%s", idleEarly)
	}
	chat := e.waitChat("Sent 10000 messages.", 20*time.Second)
	// the turn is over: a cancel now has nothing to cancel, and says so
	e.cmd("AgentCancel")
	e.waitNote("nothing to cancel: session 1 has no turn running", 5*time.Second)
	t.Logf("10000 chunks shown in %v", time.Since(start))
	for _, want := range []string{"\nflood 1\n", "\nflood 5000\n", "\nflood 10000\n"} {
		if !strings.Contains(chat, want) {
			t.Errorf("chat lacks %q", want)
		}
	}
}

// TestAgentThatCannotStartSaysWhy: an agent whose command is missing (not
// in $PATH, no such file) or is no program gets the sentence :checkhealth
// says, in a notification and in its chat, not Go's error chain; the
// session ends.
func TestAgentThatCannotStartSaysWhy(t *testing.T) {
	notExec := filepath.Join(t.TempDir(), "agent-acp")
	if err := os.WriteFile(notExec, []byte("#!/bin/sh\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ name, cmd, why string }{
		{"missing", "no-such-agent-binary", "not found"},
		{"broken", "/nonexistent/agent-acp", "not found"},
		{"plain", notExec, "not executable"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := startEditor(t, fmt.Sprintf(`require("agentrun").setup({ agents = { %s = { cmd = { %q, "acp" } } } })`, tc.name, tc.cmd))
			e.cmd("AgentRun " + tc.name)
			want := fmt.Sprintf(`agent %q: command %q %s; install it, or fix agents.%s.cmd in setup()`, tc.name, tc.cmd, tc.why, tc.name)
			chat := e.waitChat(want, 10*time.Second)
			e.waitHeader("agentrun · " + tc.name + " · ended")
			if n := e.noteText(); n != "(agentrun) "+want {
				t.Errorf("notification %q, want %q", n, "(agentrun) "+want)
			}
			for _, raw := range []string{"exec:", "fork/exec", "start agent"} {
				if strings.Contains(chat, raw) {
					t.Errorf("the chat shows Go's error (%q):\n%s", raw, chat)
				}
			}
			if health := e.checkhealth(); !strings.Contains(health, fmt.Sprintf(`agent %q: command %q %s`, tc.name, tc.cmd, tc.why)) {
				t.Errorf(":checkhealth does not say the same:\n%s", health)
			}
		})
	}
}

// TestPromptToAgentThatCannotStartIsDropped: :AgentPrompt starts the
// default agent, whose command is missing: the prompt, waiting for the
// start, is dropped with the session (said in the chat), not left marked
// as waiting.
func TestPromptToAgentThatCannotStartIsDropped(t *testing.T) {
	e := startEditor(t, `require("agentrun").setup({ default_agent = "missing", agents = { missing = { cmd = { "no-such-agent-binary" } } } })`)
	e.cmd("AgentPrompt echo hi")
	chat := e.waitChat(`command "no-such-agent-binary" not found`, 10*time.Second)
	if !strings.Contains(chat, "(dropped 1 queued prompt: echo hi)") || strings.Contains(chat, "(queued: echo hi") {
		t.Errorf("the prompt waiting for the start is not dropped:\n%s", chat)
	}
}

// TestPromptWithoutSessionStartsTheDefaultAgent: :AgentPrompt first starts
// the default agent and sends the prompt once the session is ready.
func TestPromptWithoutSessionStartsTheDefaultAgent(t *testing.T) {
	e := startEditor(t, "")
	e.cmd("AgentPrompt echo queued")
	term := e.waitTerminal("echo queued", 10*time.Second)
	e.waitBuf(term.Bufnr, 10*time.Second, "queued", exitMarker(0))
}

// TestUnsentTextOutlivesAnEndedSession: text typed in a stopped session's
// prompt, refused there, starts the next session's prompt.
func TestUnsentTextOutlivesAnEndedSession(t *testing.T) {
	e := startEditor(t, "")
	e.startSession()
	e.stop()
	e.lua(`local s = require("agentrun.state").session(); vim.api.nvim_buf_set_lines(s.chat.prompt_buf, 0, -1, false, {"echo after stop"}); s.chat:send()`, nil)
	e.waitChat("this session has ended", 5*time.Second)
	e.startSession()
	var lines []string
	e.lua(`return vim.api.nvim_buf_get_lines(require("agentrun.state").session().chat.prompt_buf, 0, -1, false)`, &lines)
	if strings.Join(lines, "\n") != "echo after stop" {
		t.Errorf("the new session's prompt holds %q, want the unsent text", lines)
	}
}

// TestPromptQueuedWithTheChatClosedIsSaid: :AgentPrompt while the agent
// is busy and its chat is closed says the prompt is queued (the chat's
// note would go unseen).
func TestPromptQueuedWithTheChatClosedIsSaid(t *testing.T) {
	e := startEditor(t, "")
	e.startSession()
	e.cmd("AgentPrompt sleep 5")
	e.waitTerminal("sleep 5", 10*time.Second)
	e.lua(`require("agentrun.state").session().chat:close()`, nil)
	e.cmd("AgentPrompt echo via-prompt")
	e.waitFor("the queued note", 5*time.Second, func() (bool, string) {
		n := e.noteText()
		return strings.Contains(n, "(agentrun) queued: echo via-prompt — sent after this turn"), n
	})
}

// TestChatPauseAfterASentenceStartsAMessage: an agent that sends no
// message ids (the TypeScript SDK agent, as Claude Code's usage notice
// and then its answer): a pause after a finished sentence starts the next
// message on a line of its own; a pause mid-word does not break the word.
func TestChatPauseAfterASentenceStartsAMessage(t *testing.T) {
	e := askAgent(t)
	e.cmd("AgentPrompt notice")
	chat := e.waitChat("The answer is 42.", 10*time.Second)
	if strings.Contains(chat, "limit.The answer") {
		t.Errorf("two messages share a line:\n%s", chat)
	}
	e.idle(10 * time.Second)
	e.cmd("AgentPrompt slow")
	chat = e.waitFor("the slow sentence to end", 10*time.Second, func() (bool, string) {
		c := e.chat()
		_, after, _ := strings.Cut(c, "> slow")
		return strings.Contains(after, "wer is 42."), c
	})
	if _, after, _ := strings.Cut(chat, "> slow"); !strings.Contains(after, "The answer is 42.") {
		t.Errorf("a sentence paused mid-word was broken:\n%s", chat)
	}
}

// TestChatFollowsInAnotherTab: what a turn says while the user is in
// another tab page is at the chat's end when they come back, in view.
func TestChatFollowsInAnotherTab(t *testing.T) {
	e := startEditor(t, "")
	e.startSession()
	e.cmd("AgentPrompt sleep 1; echo came-late")
	e.cmd("tabnew")
	e.waitChat("exited with code 0.", 20*time.Second)
	e.cmd("tabclose")
	var view struct {
		Bottom int `msgpack:"bottom"`
		Last   int `msgpack:"last"`
	}
	e.lua(`local s = require("agentrun.state").session()
		for _, w in ipairs(vim.api.nvim_tabpage_list_wins(0)) do
			if vim.api.nvim_win_get_buf(w) == s.chat.buf then
				return { bottom = vim.api.nvim_win_call(w, function() return vim.fn.line("w$") end), last = vim.api.nvim_buf_line_count(s.chat.buf) }
			end
		end
		return { bottom = -1, last = 0 }`, &view)
	if view.Bottom < view.Last-1 {
		t.Errorf("back in its tab, the chat shows up to line %d of %d: the turn's end is out of view", view.Bottom, view.Last)
	}
}
