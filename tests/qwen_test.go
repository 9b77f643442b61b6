package tests

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// qwenVersion is the Qwen Code that deps.sh installs in tests/qwen.
const qwenVersion = "0.24.4"

// qwenBin is the real Qwen Code's entry point.
func qwenBin(t *testing.T) string {
	t.Helper()
	return npmBin(t, "qwen", "@qwen-code/qwen-code", qwenVersion, "qwen")
}

// realQwen starts an editor whose default agent is the real Qwen Code
// (`qwen --acp`), offline against fake: a HOME of its own whose
// .qwen/settings.json picks the OpenAI-compatible provider (its base URL,
// key and model from OPENAI_BASE_URL, OPENAI_API_KEY, OPENAI_MODEL),
// approval mode "default" (it asks before a command that is not read
// only), and turns off what would reach the network or ask the model on
// its own: update checks, usage statistics, telemetry, the memory agents
// that run after a turn. The cleanup waits for the backend (and so Qwen
// Code) to stop before the home goes.
func realQwen(t *testing.T, fake *fakeChat) (*editor, string) {
	t.Helper()
	return realQwenWith(t, fake, `"approvalMode": "default"`, "")
}

// realQwenWith is realQwen with tools as the settings' "tools" fields and
// agent as more Lua fields of agents.qwen.
func realQwenWith(t *testing.T, fake *fakeChat, tools, agent string) (*editor, string) {
	t.Helper()
	bin := qwenBin(t)
	home := t.TempDir()
	backend := backendGoneAtCleanup(t, "Qwen Code")
	settings := `{
  "security": { "auth": { "selectedType": "openai" } },
  "model": { "name": "fake-model" },
  "tools": { ` + tools + ` },
  "memory": { "enableManagedAutoMemory": false, "enableManagedAutoDream": false, "enableAutoSkill": false },
  "general": { "disableAutoUpdate": true, "disableUpdateNag": true },
  "privacy": { "usageStatisticsEnabled": false },
  "telemetry": { "enabled": false }
}
`
	if err := os.MkdirAll(filepath.Join(home, ".qwen"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(home, ".qwen", "settings.json"), []byte(settings), 0o644); err != nil {
		t.Fatal(err)
	}
	e := startEditor(t, fmt.Sprintf(`vim.env.AGENTRUN_LOG_LEVEL = "debug"
	require("agentrun").setup({
		default_agent = "qwen",
		agents = { qwen = { cmd = %s, env = {
			HOME = %q, OPENAI_BASE_URL = %q, OPENAI_API_KEY = "offline-test", OPENAI_MODEL = "fake-model",
		}, %s } },
	})`, agentCmd(t, bin, "--acp"), home, fake.URL, agent))
	logFile := e.logOnFailure(fake.log)
	e.startSessionWithin(30 * time.Second)
	*backend = e.backendPid()
	return e, logFile
}

// TestRealQwenShowsItsCommand: the real Qwen Code runs the model's command
// with its own shell tool, which reports nothing until the command ended:
// then a display-only split titled with the command shows its output
// (not Qwen's summary for the model) and its true exit, and the chat says
// it failed.
func TestRealQwenShowsItsCommand(t *testing.T) {
	onceAcrossNeovims(t)
	line := `for i in 1 2 3; do echo "qwen tick $i"; sleep 0.2; done; exit 3`
	fake := startFakeChat(t, line)
	e, _ := realQwen(t, fake)
	e.stubSelect(3) // Qwen asks before it: Allow
	e.cmd("AgentPrompt run the ticker")
	buf := e.waitAgentShownTerminal()
	text := e.waitBuf(buf, 20*time.Second, "qwen tick 1", "qwen tick 3", exitMarker(3))
	if strings.Contains(text, "Exit Code:") || strings.Contains(text, "Process Group") {
		t.Errorf("the split shows Qwen's text for the model, not the output:\n%s", text)
	}
	// the tool call keeps its title ("Shell"); its text names the command
	e.waitChat("✗ Shell [execute] · failed (exit 3)", 10*time.Second)
	e.waitChat("The tool said: ", 20*time.Second)
	ts := e.terminals()
	if len(ts) != 1 || ts[0].Command != line || ts[0].ExitCode == nil || *ts[0].ExitCode != 3 {
		t.Errorf("status() has the terminals %+v, want %q that exited 3", ts, line)
	}
}

// TestRealQwenCancelStopsTheCommand: :AgentCancel while Qwen Code runs a
// long command: the turn ends cancelled, the command's processes are
// gone, and its split and the chat say it was cancelled (Qwen reports
// exit code 0 beside signal 15 and "its output was discarded").
func TestRealQwenCancelStopsTheCommand(t *testing.T) {
	onceAcrossNeovims(t)
	line := `echo started; sleep 29.5; echo finished`
	fake := startFakeChat(t, line)
	e, _ := realQwen(t, fake)
	e.stubSelect(3) // should Qwen ask before it: Allow
	e.cmd("AgentPrompt run it")
	var procs []proc
	e.waitFor("the command to run", 20*time.Second, func() (bool, string) {
		procs = nil
		for _, p := range allProcs() {
			if strings.Contains(p.Cmdline, "sleep 29.5") {
				procs = append(procs, p)
			}
		}
		return len(procs) > 0, e.chat()
	})
	e.cmd("AgentCancel")
	e.waitChat("(turn ended: cancelled)", 20*time.Second)
	waitNoLeftovers(t, "the cancelled command", procs, 10*time.Second)
	buf := e.waitAgentShownTerminal()
	text := e.waitBuf(buf, 10*time.Second, "[cancelled]")
	if strings.Contains(text, "finished") || strings.Contains(text, exitMarker(0)) || strings.Contains(text, "discarded") {
		t.Errorf("the split of the cancelled command reads:\n%s", text)
	}
	e.waitChat("⊘ Shell [execute] · cancelled", 5*time.Second)
	// the command is named in Qwen's question before it, and only there
	if ts := e.terminals(); len(ts) != 1 || ts[0].Command != line {
		t.Errorf("status() has the terminals %+v, want one titled %q", ts, line)
	}
}

// TestRealQwenAsksBeforeItsCommand: Qwen Code asks before a command that
// writes; the question reaches the user with the command in it and their
// answer decides, and terminal.approve's rules decide without a question.
func TestRealQwenAsksBeforeItsCommand(t *testing.T) {
	onceAcrossNeovims(t)
	// picked, of: Always in project, Always for user, Allow, Reject
	askCases(t, "echo from-qwen > ran.txt", func(t *testing.T, fake *fakeChat) *editor { e, _ := realQwen(t, fake); return e }, []askCase{
		{"the user allows", "", 3, true, "→ Allow"},
		{"the user refuses", "", 4, false, "→ Reject"},
		{"a rule refuses", `{ deny = { "echo *" } }`, 0, false, "✗ refused: `echo from-qwen >ran.txt` matches deny"},
	})
}

// TestRealQwenModes: :AgentMode lists Qwen Code's approval modes and
// switches; what Qwen then sends of it (its own qwen/notify/...
// notification among them) leaves no error in the log.
func TestRealQwenModes(t *testing.T) {
	onceAcrossNeovims(t)
	fake := startFakeChat(t, "echo planning")
	e, logFile := realQwen(t, fake)
	e.waitHeader("· Default ·")
	var modes []string
	e.lua(`return vim.fn.getcompletion("AgentMode ", "cmdline")`, &modes)
	if strings.Join(modes, ",") != "Plan,Default,Auto Edit,Auto,YOLO" {
		t.Errorf(":AgentMode completes %q, want Qwen's five approval modes, each once", modes)
	}
	e.switchMode("Plan", "· Plan ·", "plan")
	e.cmd("AgentPrompt plan it")
	e.idle(30 * time.Second)
	b, _ := os.ReadFile(logFile)
	if strings.Contains(string(b), "level=ERROR") || !strings.Contains(string(b), "method=qwen/notify/session/mode-update") {
		t.Errorf("the log has errors, or not Qwen's mode-update notification (at debug):\n%s", b)
	}
}

// TestRealQwenOurToolWhereItWorks: with terminals = "agentrun" the real
// Qwen Code takes agentrun's terminal tool, but defers MCP tools behind its
// tool_search: listed in its settings' tools.visible (as the docs say),
// the model is offered it directly, and the command runs in our pty with
// its exit code; status() says the tool was used.
func TestRealQwenOurToolWhereItWorks(t *testing.T) {
	onceAcrossNeovims(t)
	line := `echo from-our-pty; exit 3`
	fake := startFakeChat(t, line)
	e, _ := realQwenWith(t, fake, `"approvalMode": "default", "visible": ["mcp__agentrun__run_command"]`, `terminals = "agentrun"`)
	e.stubSelect(1)
	// Qwen connects to MCP servers after session/new answered: the tool is
	// the model's once Qwen listed it
	e.waitFor("Qwen to list our tool", 30*time.Second, func() (bool, string) {
		var tool string
		e.lua(`return require("agentrun").status().sessions[1].our_tool or ""`, &tool)
		return tool == "listed", tool
	})
	e.cmd("AgentPrompt run it")
	term := e.waitTerminal(line, 30*time.Second)
	if term.DisplayOnly {
		t.Fatalf("the command ran in Qwen's own shell (a display-only split), not in our pty:\n%s\n%s", e.chat(), fake.log())
	}
	e.waitBuf(term.Bufnr, 10*time.Second, "from-our-pty", exitMarker(3))
	e.waitFor("status() to say our tool was used", 20*time.Second, func() (bool, string) {
		var tool string
		e.lua(`return require("agentrun").status().sessions[1].our_tool or ""`, &tool)
		return tool == "used", tool
	})
}
