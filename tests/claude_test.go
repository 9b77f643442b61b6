package tests

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestRealClaudeCodeRunsInOurTerminal: the real claude-agent-acp (from the
// npm registry, tests/claude), offline against a fake model API that calls
// the tool it is offered: the model's command runs in one of our ptys, a
// terminal of agentrun's in status(), live in its split, and the model
// reads its output. Then the session, stopped, is listed and loaded again
// with its conversation.
func TestRealClaudeCodeRunsInOurTerminal(t *testing.T) {
	line := `for i in 1 2 3 4 5; do echo "claude tick $i"; sleep 0.4; done`
	fake := startFakeAnthropic(t, line)
	e, backend := realClaude(t, fake)
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("model API requests:\n%s", fake.log())
		}
	})
	e.startSessionWithin(60 * time.Second)
	*backend = e.backendPid()
	e.cmd("AgentPrompt run the ticker")
	term := e.waitTerminal(line, 60*time.Second)
	var owner string
	e.lua(`for _, t in ipairs(require("agentrun").status().terminals) do if t.id == ... then return t.owner end end return ""`, &owner, term.ID)
	if owner != "agentrun" {
		t.Errorf("the command's terminal is owned by %q, want agentrun (our pty)", owner)
	}
	text := e.waitBuf(term.Bufnr, 20*time.Second, "claude tick 2")
	if strings.Contains(text, "claude tick 5") {
		t.Error("the split showed nothing before the command ended: not live")
	}
	e.waitChat("The tool said: Terminal "+term.ID+": exited with code 0.", 60*time.Second)
	e.idle(60 * time.Second)

	// Claude Code keeps the session: stopped (session/close first), it is
	// listed by :AgentSessions and loads with its conversation replayed.
	e.stop()
	if prompt := e.reopen(1, 60*time.Second); prompt != "claude session to load:" {
		t.Errorf("picker prompt %q", prompt)
	}
	chat := e.waitChat("The tool said: Terminal "+term.ID, 30*time.Second)
	// Claude Code replays the /model it ran at the start inside the first
	// prompt, as markup: it reads as the command and its answer.
	if !inOrder(chat, "> /model ", "> (Set model to ", "> run the ticker", "● mcp__agentrun__run_command", "claude tick 5", "The tool said: Terminal "+term.ID) {
		t.Errorf("the loaded session does not replay the conversation in order:\n%s", chat)
	}
	if strings.Contains(chat, "<command-name>") || strings.Contains(chat, "<local-command-stdout>") {
		t.Errorf("Claude Code's markup shows in the replayed prompt:\n%s", chat)
	}
}

// TestRealClaudeCodeLoginRunsInOurTerminal: the real claude-agent-acp
// offers its terminal sign-in ("Log in with Claude") because we can run
// it; picked with :AgentLogin, Claude Code's own login and onboarding
// runs in one of our terminals, for the user to go through.
func TestRealClaudeCodeLoginRunsInOurTerminal(t *testing.T) {
	fake := startFakeAnthropic(t, "true")
	e, backend := realClaude(t, fake)
	e.startSessionWithin(60 * time.Second)
	*backend = e.backendPid()
	e.stubSelect(1)
	e.cmd("AgentLogin")
	var offered []string
	e.lua(`return vim.tbl_map(function(m) return m.name .. "/" .. m.type end, _G.picked[1].items)`, &offered)
	if len(offered) != 1 || offered[0] != "Log in with Claude/terminal" {
		t.Fatalf("offered %q", offered)
	}
	login := e.waitTerminal("sign in: "+claudeBin(t)+" --cli", 30*time.Second)
	e.waitBuf(login.Bufnr, 60*time.Second, "Welcome to Claude Code", "Choose the text style")
	e.cmd("AgentKill! " + login.ID)
}

// claudeBin is the real claude-agent-acp that deps.sh installs.
func claudeBin(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(root, "tests", "claude", "node_modules", ".bin", "claude-agent-acp")
	if _, err := os.Stat(bin); err != nil {
		t.Fatalf("claude-agent-acp is not installed in tests/claude (scripts/deps.sh installs it): %v", err)
	}
	return bin
}

// realClaude starts an editor whose default agent is the real
// claude-agent-acp, offline against fake, with a HOME of its own. The
// caller sets *backend to the backend's pid once it runs: the cleanup
// waits for it (and so Claude Code) to stop before HOME goes.
func realClaude(t *testing.T, fake *fakeAnthropic) (*editor, *int) {
	t.Helper()
	bin := claudeBin(t)
	home := t.TempDir()
	backend := new(int)
	t.Cleanup(func() {
		if *backend > 0 {
			eventually(t, "the backend (and so Claude Code) to stop", 10*time.Second, func() (bool, string) { return !alive(*backend), "alive" })
		}
	})
	if err := os.MkdirAll(filepath.Join(home, ".claude", "plugins"), 0o755); err != nil {
		t.Fatal(err)
	}
	blocklist := fmt.Sprintf(`{"fetchedAt": %q, "plugins": []}`, time.Now().UTC().Format(time.RFC3339))
	if err := os.WriteFile(filepath.Join(home, ".claude", "plugins", "blocklist.json"), []byte(blocklist), 0o644); err != nil {
		t.Fatal(err)
	}
	e := startEditor(t, fmt.Sprintf(`require("agentrun").setup({
		default_agent = "claude",
		agents = { claude = { cmd = { %q }, env = {
			ANTHROPIC_BASE_URL = %q, ANTHROPIC_AUTH_TOKEN = "offline-test", HOME = %q,
			CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC = "1", CLAUDE_CODE_DISABLE_FAST_MODE = "1",
			IS_SANDBOX = "", -- set on this machine; Claude Code must not see it
		} } },
	})`, bin, fake.URL, home))
	var logFile string
	e.lua(`return require("agentrun.rpc").log_path()`, &logFile)
	t.Cleanup(func() {
		if t.Failed() {
			b, _ := os.ReadFile(logFile)
			t.Logf("agentrun.log:\n%s", b)
		}
	})
	return e, backend
}
