package tests

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// opencodeVersion is the opencode that deps.sh installs in tests/opencode.
const opencodeVersion = "1.18.33"

// opencodeBin is the real opencode: the binary opencode-ai's install put
// in its bin (its platform package's, copied or linked there).
func opencodeBin(t *testing.T) string {
	t.Helper()
	bin := npmBin(t, "opencode", "opencode-ai", opencodeVersion, "opencode")
	if _, err := os.Stat(bin); err != nil {
		t.Fatalf("opencode-ai's install left no binary (its platform package is missing; run scripts/deps.sh): %v", err)
	}
	return bin
}

// realOpencode starts an editor whose default agent is the real opencode
// (`opencode acp`, as the README configures it), offline against fake: a
// HOME and XDG directories of its own, an opencode.json there whose model
// is the fake's (a custom OpenAI-compatible provider), and nothing that
// reaches the network: no models.dev catalogue (opencode fetches
// models.opencode.ai/api.json at every start otherwise), no autoupdate,
// no sharing, no LSP downloads. extraConfig is more of opencode.json's
// top-level fields ("permission": …). The cleanup waits for the backend
// (and so opencode) to stop before the home goes.
func realOpencode(t *testing.T, fake *fakeChat, extraConfig string) *editor {
	t.Helper()
	return realOpencodeWith(t, fake, extraConfig, "")
}

// realOpencodeWith is realOpencode with more of the agent's options
// (`terminals = "agentrun"`).
func realOpencodeWith(t *testing.T, fake *fakeChat, extraConfig, agentOptions string) *editor {
	t.Helper()
	bin := opencodeBin(t)
	home := t.TempDir()
	backend := backendGoneAtCleanup(t, "opencode")
	config := fmt.Sprintf(`{
  "$schema": "https://opencode.ai/config.json",
  "autoupdate": false,
  "share": "disabled",
  "model": "fake/fake-model",
  "small_model": "fake/fake-model",
  "provider": {
    "fake": {
      "npm": "@ai-sdk/openai-compatible",
      "name": "Fake",
      "options": { "baseURL": %q, "apiKey": "offline-test" },
      "models": { "fake-model": { "name": "Fake Model" } }
    }
  }%s
}
`, fake.URL, extraConfig)
	dir := filepath.Join(home, ".config", "opencode")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "opencode.json"), []byte(config), 0o644); err != nil {
		t.Fatal(err)
	}
	e := startEditor(t, fmt.Sprintf(`require("agentrun").setup({
		default_agent = "opencode",
		agents = { opencode = { %s cmd = %s, env = {
			HOME = %q, XDG_CONFIG_HOME = %q, XDG_DATA_HOME = %q, XDG_CACHE_HOME = %q, XDG_STATE_HOME = %q,
			OPENCODE_DISABLE_MODELS_FETCH = "1", OPENCODE_DISABLE_AUTOUPDATE = "1",
			OPENCODE_DISABLE_SHARE = "1", OPENCODE_DISABLE_LSP_DOWNLOAD = "1",
		} } },
	})`, agentOptions, agentCmd(t, bin, "acp"), home, filepath.Join(home, ".config"), filepath.Join(home, ".local", "share"),
		filepath.Join(home, ".cache"), filepath.Join(home, ".local", "state")))
	e.logOnFailure(fake.log)
	e.startSessionWithin(30 * time.Second)
	*backend = e.backendPid()
	return e
}

// TestRealOpencodeShowsItsCommandLive: the real opencode runs the model's
// command with its own bash tool; the command shows in a display-only
// split while it runs (the 2nd line before the 5th exists), ends with its
// exit, and the model reads what it printed.
func TestRealOpencodeShowsItsCommandLive(t *testing.T) {
	onceAcrossNeovims(t)
	line := `for i in 1 2 3 4 5; do echo "opencode tick $i"; sleep 0.4; done`
	fake := startFakeChat(t, line)
	e := realOpencode(t, fake, "")
	e.cmd("AgentPrompt run the ticker")
	buf := e.waitAgentShownTerminal()
	if text := e.waitBuf(buf, 20*time.Second, "opencode tick 2"); strings.Contains(text, "opencode tick 5") {
		t.Errorf("the split showed nothing before the command ended: not live\n%s", text)
	}
	e.waitBuf(buf, 20*time.Second, "opencode tick 5", exitMarker(0))
	e.waitChat("The tool said: opencode tick 1", 20*time.Second)
	e.waitChat(line+" [execute] · completed", 5*time.Second)
	var name string
	e.lua(`return vim.api.nvim_buf_get_name(...)`, &name, buf)
	// (in words, the command's start: a long one is cut, tab labels stay short)
	if !strings.Contains(name, "for i in 1 2 3 4 5") {
		t.Errorf("the split is named %q, not after its command", name)
	}
}

// TestRealOpencodeFailedCommand: a command that exits 3 shows [exit 3] in
// its split, and the chat says it failed (opencode calls its tool call
// "completed" and puts the exit code only in rawOutput.metadata.exit).
func TestRealOpencodeFailedCommand(t *testing.T) {
	onceAcrossNeovims(t)
	line := `echo about to fail; exit 3`
	fake := startFakeChat(t, line)
	e := realOpencode(t, fake, "")
	e.cmd("AgentPrompt run it")
	buf := e.waitAgentShownTerminal()
	e.waitBuf(buf, 20*time.Second, "about to fail", exitMarker(3))
	chat := e.waitChat(line+" [execute] · failed (exit 3)", 20*time.Second)
	if strings.Contains(chat, "· completed") {
		t.Errorf("the chat calls the failed command completed:\n%s", chat)
	}
	ts := e.terminals()
	if len(ts) != 1 || ts[0].ExitCode == nil || *ts[0].ExitCode != 3 {
		t.Errorf("status() has the terminals %+v, want one that exited 3", ts)
	}
	e.waitChat("The tool said: about to fail", 20*time.Second)
}

// TestRealOpencodeCancelStopsTheCommand: :AgentCancel while opencode runs
// a long command: the turn ends cancelled, the command's processes are
// gone, and its split says it ended without running to its end.
func TestRealOpencodeCancelStopsTheCommand(t *testing.T) {
	onceAcrossNeovims(t)
	line := `echo started; sleep 29.5; echo finished`
	fake := startFakeChat(t, line)
	e := realOpencode(t, fake, "")
	e.cmd("AgentPrompt run it")
	buf := e.waitAgentShownTerminal()
	e.waitBuf(buf, 20*time.Second, "started")
	var procs []proc
	for _, p := range allProcs() {
		if strings.Contains(p.Cmdline, "sleep 29.5") {
			procs = append(procs, p)
		}
	}
	e.cmd("AgentCancel")
	e.waitChat("(turn ended: cancelled)", 20*time.Second)
	waitNoLeftovers(t, "the cancelled command", procs, 10*time.Second)
	text := e.waitFor("the split to mark the command's end", 10*time.Second, func() (bool, string) {
		ts := e.terminals()
		return len(ts) == 1 && ts[0].State != "running", fmt.Sprintf("%+v\n%s", ts, e.bufLines(buf))
	})
	split := e.bufLines(buf)
	if strings.Contains(split, "finished") || strings.Contains(split, exitMarker(0)) {
		t.Errorf("the cancelled command ran to its end: %s", text)
	}
	// opencode's note to the model ("User aborted the command") is not
	// the command's output; the split says it was cancelled.
	if !strings.HasSuffix(split, "[cancelled]") || strings.Contains(split, "shell_metadata") {
		t.Errorf("the split after the cancel reads:\n%s", split)
	}
	e.waitChat(line+" [execute] · cancelled", 5*time.Second)
}

// TestRealOpencodeModes: opencode offers its agents build and plan as a
// config option of category mode; :AgentMode lists them and switches,
// and opencode then works in plan (it tells the model so with the next
// prompt).
func TestRealOpencodeModes(t *testing.T) {
	onceAcrossNeovims(t)
	fake := startFakeChat(t, "echo planning")
	e := realOpencode(t, fake, "")
	e.waitHeader("· build · Fake/Fake Model")
	var modes []string
	e.lua(`return vim.fn.getcompletion("AgentMode ", "cmdline")`, &modes)
	if strings.Join(modes, ",") != "build,plan" {
		t.Errorf(":AgentMode completes %q, want build and plan", modes)
	}
	e.stubSelect(2)
	e.cmd("AgentMode")
	e.waitHeader("· plan · Fake/Fake Model")
	var offered string
	e.lua(`return vim.inspect(_G.picked)`, &offered)
	if !strings.Contains(offered, "build") || !strings.Contains(offered, "plan") {
		t.Errorf(":AgentMode offered %s, want build and plan", offered)
	}
	var mode string
	e.lua(`return require("agentrun").status().sessions[1].mode`, &mode)
	if mode != "plan" {
		t.Errorf("status().mode %q, want plan", mode)
	}
	e.cmd("AgentPrompt plan it")
	e.idle(30 * time.Second)
	if !fake.sent("Plan mode ACTIVE") {
		t.Errorf("opencode did not tell the model it is in plan mode; its requests:\n%s", fake.log())
	}
}

// TestRealOpencodeAsksBeforeItsCommand: opencode configured to ask before
// a command ("permission": {"bash": "ask"}) asks through ACP; the
// question reaches the user with the command in it (vim.ui.select) and
// their answer decides, and terminal.approve's rules decide without a
// question, as for every agent's commands.
func TestRealOpencodeAsksBeforeItsCommand(t *testing.T) {
	onceAcrossNeovims(t)
	// picked: 1 Allow once, 3 Reject; 0 none expected
	askCases(t, "echo from-opencode > ran.txt", func(t *testing.T, fake *fakeChat) *editor {
		return realOpencode(t, fake, `,
  "permission": { "bash": "ask" }`)
	}, []askCase{
		{"the user allows", "", 1, true, "→ Allow once"},
		{"the user refuses", "", 3, false, "→ Reject"},
		{"a rule refuses", `{ deny = { "echo *" } }`, 0, false, "✗ refused: `echo from-opencode >ran.txt` matches deny"},
	})
}

// TestRealOpencodeRunsInOurTerminal: with `terminals = "agentrun"`
// opencode is offered our MCP terminal tool beside its bash; the model's
// command then runs in our pty: live in its split, its exit code ours,
// its tool call in the chat tied to it (opencode does not say in the MCP
// call which tool call it is: the command line ties them), and
// :AgentCancel stops it (SIGINT).
func TestRealOpencodeRunsInOurTerminal(t *testing.T) {
	onceAcrossNeovims(t)
	line := `for i in 1 2 3 4 5; do echo "our tick $i"; sleep 0.4; done; exit 3`
	fake := startFakeChat(t, line)
	e := realOpencodeWith(t, fake, "", `terminals = "agentrun",`)
	e.cmd("AgentPrompt run the ticker")
	term := e.waitTerminal(line, 20*time.Second)
	if text := e.waitBuf(term.Bufnr, 20*time.Second, "our tick 2"); strings.Contains(text, "our tick 5") {
		t.Errorf("the split showed nothing before the command ended: not live\n%s", text)
	}
	e.waitBuf(term.Bufnr, 20*time.Second, "our tick 5", exitMarker(3))
	e.waitChat("The tool said: Terminal term-1: exited with code 3.", 20*time.Second)
	// its tool call reads as the command it ran, and how it ended
	e.waitChat("✗ "+line+" · failed (exit 3)", 5*time.Second)
	if log := fake.log(); !strings.Contains(log, "agentrun_run_command") {
		t.Errorf("opencode did not offer the model our tool:\n%s", log)
	}

	// :AgentCancel while our tool runs its next command stops it.
	second := cancelOurToolsNext(t, e, fake)
	e.waitChat("⊘ "+second+" · interrupted", 5*time.Second)
}
