package tests

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// codexVersion is the codex-acp that deps.sh installs in tests/codex
// (it drives `codex app-server` from @openai/codex, installed beside it).
const codexVersion = "2.6.0"

// codexBin is the real codex-acp's entry point.
func codexBin(t *testing.T) string {
	t.Helper()
	return npmBin(t, "codex", "@agentclientprotocol/codex-acp", codexVersion, "codex-acp")
}

// realCodex starts an editor whose default agent is the real codex-acp,
// offline against fake: CODEX_HOME of its own (outside /tmp, which Codex
// treats as a place for scratch files, not its home) with a config.toml
// whose only model provider is the fake, the plugins feature off (it
// would fetch plugins from github.com at every start), and commands run
// without Codex's own sandbox or questions. The caller sets *backend to
// the backend's pid once it runs: the cleanup waits for it (and so
// Codex) to stop before CODEX_HOME goes.
func realCodex(t *testing.T, fake *fakeOpenAI, extraConfig string) (*editor, *int) {
	t.Helper()
	bin := codexBin(t)
	base := filepath.Join(root, "tests", "codex")
	if tmp, err := filepath.EvalSymlinks(os.TempDir()); err == nil && (strings.HasPrefix(base, tmp+string(filepath.Separator)) || strings.HasPrefix(base, os.TempDir()+string(filepath.Separator))) {
		// A clone under /tmp (a CI's scratch directory): Codex would not
		// take a home there, so it gets one in the user's cache.
		cache, err := os.UserCacheDir()
		if err != nil {
			t.Fatal(err)
		}
		base = filepath.Join(cache, "agentrun", "codex-test")
		if err := os.MkdirAll(base, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	home, err := os.MkdirTemp(base, "home-")
	if err != nil {
		t.Fatal(err)
	}
	backend := new(int)
	t.Cleanup(func() {
		if *backend > 0 {
			eventually(t, "the backend (and so Codex) to stop", 10*time.Second, func() (bool, string) { return !alive(*backend), "alive" })
		}
		os.RemoveAll(home)
	})
	codexHome := filepath.Join(home, ".codex")
	if err := os.MkdirAll(codexHome, 0o755); err != nil {
		t.Fatal(err)
	}
	approval, sandboxMode := `approval_policy = "never"`, `sandbox_mode = "danger-full-access"`
	if strings.Contains(extraConfig, "approval_policy") {
		approval, sandboxMode = "", `sandbox_mode = "workspace-write"`
	}
	config := fmt.Sprintf(`model = "gpt-fake"
model_provider = "fake"
%s
%s
check_for_update_on_startup = false
%s

[model_providers.fake]
name = "fake"
base_url = %q
wire_api = "responses"
env_key = "OPENAI_API_KEY"

[features]
plugins = false

[analytics]
enabled = false
`, approval, sandboxMode, extraConfig, fake.URL)
	if err := os.WriteFile(filepath.Join(codexHome, "config.toml"), []byte(config), 0o644); err != nil {
		t.Fatal(err)
	}
	e := startEditor(t, fmt.Sprintf(`require("agentrun").setup({
		default_agent = "codex",
		agents = { codex = { cmd = { %q }, env = {
			CODEX_HOME = %q, HOME = %q, OPENAI_API_KEY = "offline-test",
		} } },
	})`, bin, codexHome, home))
	e.logOnFailure(fake.log)
	return e, backend
}

// TestRealCodexShowsItsCommand: the real codex-acp runs the model's
// command itself; its terminal is shown live in a display-only split, with
// its exit, and the model reads the output.
func TestRealCodexShowsItsCommand(t *testing.T) {
	onceAcrossNeovims(t)
	line := `for i in 1 2 3 4 5; do echo "codex tick $i"; sleep 0.4; done`
	fake := startFakeOpenAI(t, line)
	e, backend := realCodex(t, fake, "")
	e.startSessionWithin(60 * time.Second)
	*backend = e.backendPid()
	var label string
	e.lua(`return require("agentrun").status().sessions[1].label`, &label)
	if label != "Auto review · Fake" {
		t.Errorf("the session's mode and model read %q, want %q", label, "Auto review · Fake")
	}
	e.cmd("AgentPrompt run the ticker")
	buf := e.waitAgentShownTerminal()
	if text := e.waitBuf(buf, 60*time.Second, "codex tick 2"); strings.Contains(text, "codex tick 5") {
		t.Errorf("the split showed nothing before the command ended: not live\n%s", text)
	}
	e.waitBuf(buf, 60*time.Second, "codex tick 5", exitMarker(0))
	e.waitChat("The tool said: ", 60*time.Second)
	e.idle(60 * time.Second)
}

// TestRealCodexCancelledCommandGoesOn: :AgentCancel while Codex runs a
// command of its own: Codex ends the turn but the command goes on, and
// Codex goes on reporting it; its split shows what Codex reports (still
// running, then its output and real exit), never a cancel marker beside
// them.
func TestRealCodexCancelledCommandGoesOn(t *testing.T) {
	onceAcrossNeovims(t)
	line := `sleep 1; echo started; sleep 3; echo finished`
	fake := startFakeOpenAI(t, line)
	e, backend := realCodex(t, fake, "")
	e.startSessionWithin(60 * time.Second)
	*backend = e.backendPid()
	e.cmd("AgentPrompt run it")
	buf := e.waitAgentShownTerminal()
	e.waitBuf(buf, 60*time.Second, "started")
	e.cmd("AgentCancel")
	e.waitChat("(turn ended: cancelled)", 30*time.Second)
	var st struct {
		Terminals []struct {
			State string `msgpack:"state"`
		} `msgpack:"terminals"`
	}
	e.lua(`return require("agentrun").status()`, &st)
	chat := e.chat()
	if text := e.bufLines(buf); !strings.Contains(text, "finished") {
		// Codex still runs it: the split and the chat say so.
		if strings.Contains(text, "[cancelled]") || len(st.Terminals) != 1 || st.Terminals[0].State != "running" {
			t.Errorf("after the cancel, with the command still running, the split reads (state %+v):\n%s", st.Terminals, text)
		}
		if !strings.Contains(chat, line+" [execute] · in progress") {
			t.Errorf("after the cancel the chat does not show the command as Codex does (in progress):\n%s", chat)
		}
	}
	text := e.waitBuf(buf, 30*time.Second, "finished", exitMarker(0))
	if strings.Contains(text, "[cancelled]") {
		t.Errorf("the split shows a cancel beside the command's real end:\n%s", text)
	}
	e.waitChat(line+" [execute] · completed", 10*time.Second)
}

// TestRealCodexAsksUnderOurRules: Codex asking before it runs a command
// (approval_policy "on-request", the model asking to leave the sandbox) is
// answered by terminal.approve's rules,
// as our terminals are: an allowed command runs without a question, a
// denied one does not run.
func TestRealCodexAsksUnderOurRules(t *testing.T) {
	onceAcrossNeovims(t)
	cases := []struct {
		name, rules, want string
		ran               bool
	}{
		// a rule allows the redirection that writes ran.txt too
		{"allowed", `{ allow = { "echo * > ran.txt" } }`, `✓ allowed: allow "echo * > ran.txt"`, true},
		{"denied", `{ deny = { "echo *" } }`, "✗ refused: `echo from-codex >ran.txt` matches deny", false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			fake := startFakeOpenAI(t, "echo from-codex > ran.txt")
			// The model asks to run it outside Codex's sandbox, which Codex
			// asks the user about under on-request.
			fake.extra = map[string]any{"sandbox_permissions": "require_escalated", "justification": "write a file"}
			e, backend := realCodex(t, fake, `approval_policy = "on-request"`)
			e.lua(`require("agentrun").setup(vim.tbl_deep_extend("force", require("agentrun.config").get(), { terminal = { approve = `+c.rules+` } }))
				_G.asked = 0; vim.ui.select = function(items, opts, cb) _G.asked = _G.asked + 1; cb(nil, nil) end`, nil)
			e.startSessionWithin(60 * time.Second)
			*backend = e.backendPid()
			// The mode whose questions go to the user (its default has a
			// model review them).
			e.cmd("AgentMode workspace-write")
			e.waitFor("the mode to be Workspace access", 30*time.Second, func() (bool, string) {
				var label string
				e.lua(`return require("agentrun").status().sessions[1].label`, &label)
				return strings.HasPrefix(label, "Workspace access"), label
			})
			e.cmd("AgentPrompt run it")
			e.waitChat(c.want, 60*time.Second)
			e.idle(60 * time.Second)
			var asked int
			e.lua(`return _G.asked`, &asked)
			if asked != 0 {
				t.Errorf("asked %d times for a command the rules decide", asked)
			}
			_, err := os.Stat(filepath.Join(e.cwd(), "ran.txt"))
			if ran := err == nil; ran != c.ran {
				t.Errorf("the command ran: %v, want %v\n%s", ran, c.ran, e.chat())
			}
		})
	}
}
