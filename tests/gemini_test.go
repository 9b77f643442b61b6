package tests

import (
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// Why this file is long: every journey of the real Gemini CLI (its own
// shell, cancel, rules, models, our tool where it works, its shell left
// out) shares one way of starting it offline, kept in one place here.

// geminiVersion is the Gemini CLI that deps.sh installs in tests/gemini.
const geminiVersion = "0.61.0"

// geminiBin is the real Gemini CLI's entry point.
func geminiBin(t *testing.T) string {
	t.Helper()
	return npmBin(t, "gemini", "@google/gemini-cli", geminiVersion, "gemini")
}

// realGemini starts an editor whose default agent is the real Gemini CLI
// (`gemini --acp`, as the README configures it), offline against fake: a
// HOME of its own whose ~/.gemini/settings.json picks the API key sign-in
// (the key comes from GEMINI_API_KEY) and turns off usage statistics,
// telemetry and the update check, and GOOGLE_GEMINI_BASE_URL pointing at
// the fake. The caller sets *backend to the backend's pid once it runs:
// the cleanup waits for it (and so Gemini) to stop before HOME goes.
func realGemini(t *testing.T, fake *fakeGemini, terminal ...string) (*editor, *int) {
	t.Helper()
	return realGeminiAgent(t, fake, "", "", terminal...)
}

// realGeminiAgent is realGemini with more in agents.gemini (agent, Lua
// fields) and in its env (env, Lua fields).
func realGeminiAgent(t *testing.T, fake *fakeGemini, agent, env string, terminal ...string) (*editor, *int) {
	t.Helper()
	return realGeminiHome(t, fake, agent, env, "", nil, terminal...)
}

// realGeminiHome is realGeminiAgent with the user's own Gemini settings:
// settings (JSON fields) added to ~/.gemini/settings.json, and files
// (paths under HOME) written there.
func realGeminiHome(t *testing.T, fake *fakeGemini, agent, env, settings string, files map[string]string, terminal ...string) (*editor, *int) {
	t.Helper()
	bin := geminiBin(t)
	home := t.TempDir()
	if err := os.MkdirAll(filepath.Join(home, ".gemini"), 0o755); err != nil {
		t.Fatal(err)
	}
	settings = `{
  "security": { "auth": { "selectedType": "gemini-api-key" } },
  "privacy": { "usageStatisticsEnabled": false },
  "telemetry": { "enabled": false },
  ` + settings + `
  "general": { "disableAutoUpdate": true, "disableUpdateNag": true }
}
`
	files = maps.Clone(files)
	if files == nil {
		files = map[string]string{}
	}
	files[".gemini/settings.json"] = settings
	for name, text := range files {
		path := filepath.Join(home, name)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	backend := backendGoneAtCleanup(t, "Gemini")
	e := startEditor(t, fmt.Sprintf(`require("agentrun").setup({
		default_agent = "gemini",
		agents = { gemini = { cmd = { %q, "--acp" }, env = {
			HOME = %q, GEMINI_API_KEY = "offline-test", GOOGLE_GEMINI_BASE_URL = %q, %s
		}, %s } },
		terminal = { %s },
	})`, bin, home, fake.URL, env, agent, strings.Join(terminal, ", ")))
	e.logOnFailure(fake.log)
	return e, backend
}

// TestRealGeminiShowsItsCommand: the real Gemini CLI in a folder it does
// not trust (so it starts no MCP server: its own shell is kept) runs the
// model's command itself after asking; the question goes to the user (here a
// stubbed vim.ui.select picking "Allow for this session"), and the command
// is shown in a display-only split that says Gemini sent neither its output
// nor its exit code; the chat does not call the failed command completed.
func TestRealGeminiShowsItsCommand(t *testing.T) {
	onceAcrossNeovims(t)
	line := `echo from-gemini; exit 3`
	fake := startFakeGemini(t, line)
	e, backend := realGemini(t, fake)
	e.stubSelect(1)
	e.startSessionWithin(60 * time.Second)
	*backend = e.backendPid()
	e.cmd("AgentPrompt run it")
	// The model reads what the command printed and its exit, from Gemini.
	e.waitChat("The tool said: <untrusted_context> Output: from-gemini Exit Code: 3", 30*time.Second)
	e.idle(30 * time.Second)
	var asked []struct {
		Prompt string `msgpack:"prompt"`
		Kind   string `msgpack:"kind"`
		Items  []struct {
			Name string `msgpack:"name"`
		} `msgpack:"items"`
	}
	e.lua(`return _G.picked`, &asked)
	if len(asked) != 1 || asked[0].Prompt != "(agentrun) gemini asks permission: "+line || len(asked[0].Items) == 0 || asked[0].Items[0].Name != "Allow for this session" {
		t.Errorf("the user was asked %+v, want once, for the command, with Gemini's options", asked)
	}
	buf := e.waitAgentShownTerminal()
	text := e.waitBuf(buf, 10*time.Second, "the agent sent no output for this command", "[ended; the agent did not say its exit code]")
	if strings.Contains(text, exitMarker(0)) {
		t.Errorf("the split says the failed command exited 0:\n%s", text)
	}
	// and why agentrun kept Gemini's shell (the session's first such
	// split: here the folder is not trusted, so Gemini starts no MCP
	// server) and how to change that (the line wraps)
	joined := strings.ReplaceAll(text, "\n", "")
	for _, how := range []string{"agentrun kept its shell for this session", "in a folder it does not trust", `GEMINI_CLI_TRUST_WORKSPACE = "true" in agents.gemini.env`} {
		if !strings.Contains(joined, how) {
			t.Errorf("the split does not say why its shell was kept and how to see the output (%q):\n%s", how, text)
		}
	}
	var shell string
	e.lua(`return require("agentrun").status().sessions[1].own_shell or ""`, &shell)
	if !strings.HasPrefix(shell, "kept: Gemini CLI starts no MCP server") {
		t.Errorf("status() says its own shell is %q, want kept, and why", shell)
	}
	if report := e.healthReport(); !strings.Contains(report, "(gemini): its own shell kept: Gemini CLI starts no MCP server") {
		t.Errorf(":checkhealth does not say why Gemini's shell was kept:\n%s", report)
	}
	ts := e.terminals()
	if len(ts) != 1 || ts[0].Command != line || ts[0].ExitCode != nil || ts[0].State != "exited" {
		t.Errorf("status().terminals = %+v, want the command, exited, with no exit code", ts)
	}
	chat := e.waitChat("● "+line+" [execute] · ended; the agent did not say its exit code", 10*time.Second)
	if strings.Contains(chat, "· completed") {
		t.Errorf("the chat calls the command completed:\n%s", chat)
	}
}

// TestRealGeminiCancelStopsTheCommand: :AgentCancel while the real Gemini
// CLI runs a long command: Gemini kills it (the process is gone), the turn
// ends cancelled, and the split shows what it printed and [cancelled].
func TestRealGeminiCancelStopsTheCommand(t *testing.T) {
	onceAcrossNeovims(t)
	// a sleep no other process runs, to find it by
	naps := fmt.Sprintf("%d.%03d", 40+os.Getpid()%50, time.Now().Nanosecond()/1e6)
	line := "echo started; sleep " + naps + "; echo never"
	fake := startFakeGemini(t, line)
	e, backend := realGemini(t, fake)
	e.stubSelect(2) // "Allow" (once)
	e.startSessionWithin(60 * time.Second)
	*backend = e.backendPid()
	e.cmd("AgentPrompt run it")
	var pids []int
	e.waitFor("the command to run", 30*time.Second, func() (bool, string) {
		pids = processesRunning("sleep " + naps)
		return len(pids) > 0, e.chat()
	})
	// its split is open while it runs (Gemini names it only in the
	// permission request, and says nothing more until it ended)
	running := e.waitAgentShownTerminal()
	e.waitBuf(running, 10*time.Second, "the agent runs this command itself")
	e.cmd("AgentCancel")
	e.waitChat("(turn ended: cancelled)", 30*time.Second)
	e.waitFor("the command's processes to be gone", 10*time.Second, func() (bool, string) {
		left := processesRunning("sleep " + naps)
		return len(left) == 0, fmt.Sprintf("still running: %v", left)
	})
	buf := e.waitAgentShownTerminal()
	if buf != running {
		t.Errorf("the end shows in buffer %d, the running command in %d: want one split", buf, running)
	}
	text := e.waitBuf(buf, 10*time.Second, "started", "[cancelled]")
	if strings.Contains(text, "never") || strings.Contains(text, "Command cancelled by user") {
		t.Errorf("the cancelled split reads:\n%s", text)
	}
	chat := e.waitChat("⊘ "+line+" [execute] · cancelled", 10*time.Second)
	if strings.Contains(chat, "· completed") {
		t.Errorf("the chat calls the cancelled command completed:\n%s", chat)
	}
}

// processesRunning returns the pids of the live processes whose command
// line holds args (as ps lists them).
func processesRunning(args string) []int {
	out, _ := exec.Command("ps", "-eo", "pid=,stat=,args=").Output()
	var pids []int
	for _, l := range strings.Split(string(out), "\n") {
		f := strings.Fields(l)
		if len(f) < 3 || strings.HasPrefix(f[1], "Z") || !strings.Contains(strings.Join(f[2:], " "), args) {
			continue
		}
		if pid, err := strconv.Atoi(f[0]); err == nil {
			pids = append(pids, pid)
		}
	}
	return pids
}

// TestRealGeminiRulesHoldForItsCommand: Gemini asks about its command with
// the command only as the tool call's title (no rawInput). A deny rule
// holds for it: refused without a picker, and the command never runs; an
// allow rule does not run it unasked (the title is the agent's word, not
// the command we would run), so the user is asked.
func TestRealGeminiRulesHoldForItsCommand(t *testing.T) {
	onceAcrossNeovims(t)
	line := `echo from-gemini; exit 3`
	t.Run("deny", func(t *testing.T) {
		fake := startFakeGemini(t, line)
		e, backend := realGemini(t, fake, `approve = { deny = { "echo *" } }`)
		e.stubSelect(1)
		e.startSessionWithin(60 * time.Second)
		*backend = e.backendPid()
		e.cmd("AgentPrompt run it")
		chat := e.waitChat("(the command as the agent names it)", 30*time.Second)
		if !strings.Contains(chat, "✗") || !strings.Contains(chat, line) {
			t.Errorf("the chat does not say the rule refused it:\n%s", chat)
		}
		chat = e.waitChat("The tool said:", 30*time.Second)
		if strings.Contains(chat, "Output: from-gemini") {
			t.Errorf("the refused command ran:\n%s", chat)
		}
		var n int
		e.lua(`return #_G.picked`, &n)
		if n != 0 {
			t.Errorf("the user was asked %d times; the deny rule decides", n)
		}
	})
	t.Run("allow asks all the same", func(t *testing.T) {
		fake := startFakeGemini(t, line)
		e, backend := realGemini(t, fake, `approve = { allow = { "echo *", "exit *" } }`)
		e.stubSelect(1)
		e.startSessionWithin(60 * time.Second)
		*backend = e.backendPid()
		e.cmd("AgentPrompt run it")
		e.waitChat("The tool said:", 30*time.Second)
		var n int
		e.lua(`return #_G.picked`, &n)
		if n != 1 {
			t.Errorf("the user was asked %d times, want once (an allow rule does not run the agent's word unasked)", n)
		}
		// the question says why it is asked (the chat's note too)
		var prompt string
		e.lua(`return _G.picked[1] and _G.picked[1].prompt or ""`, &prompt)
		why := "(asked though your rules allow it: gemini names the command only in a title, which agentrun does not run unasked)"
		if !strings.Contains(prompt, why) {
			t.Errorf("the question %q does not say why an allowed command is asked", prompt)
		}
		if chat := e.chat(); !strings.Contains(strings.Join(strings.Fields(chat), " "), why) {
			t.Errorf("the chat's note of the question does not say why:\n%s", chat)
		}
	})
}

// TestRealGeminiModels: Gemini offers its models only in session/new's
// older "models" field; :AgentModel completes them, switches with
// session/set_model (the next turn goes to that model), and status()
// and the status line name it.
func TestRealGeminiModels(t *testing.T) {
	onceAcrossNeovims(t)
	fake := startFakeGemini(t, "echo hi")
	e, backend := realGemini(t, fake)
	e.stubSelect(1)
	e.startSessionWithin(60 * time.Second)
	*backend = e.backendPid()
	var models []string
	e.lua(`return vim.fn.getcompletion("AgentModel gemini-2.5", "cmdline")`, &models)
	if !strings.Contains(strings.Join(models, ","), "gemini-2.5-pro") {
		t.Fatalf(":AgentModel completes %q, want gemini-2.5-pro among them", models)
	}
	e.cmd("AgentModel gemini-2.5-pro")
	e.waitFor("status() to name the model", 10*time.Second, func() (bool, string) {
		var m string
		e.lua(`return require("agentrun").status().sessions[1].model or ""`, &m)
		return m == "gemini-2.5-pro", m
	})
	e.cmd("AgentPrompt run it")
	e.waitChat("The tool said:", 30*time.Second)
	got := fake.streamedModels()
	if len(got) == 0 || got[len(got)-1] != "gemini-2.5-pro" {
		t.Errorf("the turns went to %v, want gemini-2.5-pro after :AgentModel", got)
	}
	if sl := e.statusLine(); !strings.Contains(sl, "2.5 Pro") && !strings.Contains(sl, "gemini-2.5-pro") {
		t.Errorf("the chat's status line %q does not name the model", sl)
	}
}

// TestRealGeminiOurToolWhereItWorks: with terminals = "agentrun", the real
// Gemini CLI in a folder it trusts (GEMINI_CLI_TRUST_WORKSPACE, set in the
// agent's env as the chat advises) takes agentrun's terminal tool: the
// model's command runs in our pty, live, with its exit code, and status()
// says the tool was used. In a folder it does not trust it starts no MCP
// server: the chat says so once the turn ended, and how to trust it, and
// the command ran Gemini's own way.
func TestRealGeminiOurToolWhereItWorks(t *testing.T) {
	onceAcrossNeovims(t)
	line := `echo from-our-pty; exit 3`
	t.Run("trusted", func(t *testing.T) {
		fake := startFakeGemini(t, line)
		e, backend := realGeminiAgent(t, fake, `terminals = "agentrun"`, `GEMINI_CLI_TRUST_WORKSPACE = "true",`, `approve = "run"`)
		e.stubSelect(1)
		e.startSessionWithin(60 * time.Second)
		*backend = e.backendPid()
		e.cmd("AgentPrompt run it")
		term := e.waitTerminal(line, 30*time.Second)
		if term.DisplayOnly {
			t.Fatalf("the command ran Gemini's own way (a display-only split), not in our pty:\n%s\n%s", e.chat(), fake.log())
		}
		e.waitBuf(term.Bufnr, 10*time.Second, "from-our-pty", exitMarker(3))
		e.waitFor("status() to say our tool was used", 20*time.Second, func() (bool, string) {
			var tool string
			e.lua(`return require("agentrun").status().sessions[1].our_tool or ""`, &tool)
			return tool == "used", tool
		})
	})
	t.Run("untrusted", func(t *testing.T) {
		fake := startFakeGemini(t, line)
		e, backend := realGeminiAgent(t, fake, `terminals = "agentrun"`, "", `approve = "run"`)
		e.stubSelect(1)
		e.startSessionWithin(60 * time.Second)
		*backend = e.backendPid()
		e.cmd("AgentPrompt run it")
		chat := e.waitChat("Gemini CLI starts no MCP server in a folder it does not trust", 30*time.Second)
		if !strings.Contains(chat, "GEMINI_CLI_TRUST_WORKSPACE") {
			t.Errorf("the chat does not say how to trust the folder:\n%s", chat)
		}
		var tool string
		e.lua(`return require("agentrun").status().sessions[1].our_tool or ""`, &tool)
		if tool != "not listed" {
			t.Errorf("status() says our tool is %q, want \"not listed\"", tool)
		}
	})
}

// TestRealGeminiLeavesItsShellOut: with no terminals option, the real
// Gemini CLI in a folder it trusts is offered agentrun's terminal tool and
// its own shell is left out of the session (a policy file of agentrun's
// own, not the user's settings): the model is offered run_command and no
// run_shell_command, the command runs in our pty with its output and
// exit, and status() says where. The user's own excludes (settings.json's
// tools.exclude) and policies (~/.gemini/policies) still apply, and
// Gemini does not ask about our tool's calls (agentrun's rules do). With
// terminals = "agent", its shell stays and our tool is not offered.
func TestRealGeminiLeavesItsShellOut(t *testing.T) {
	onceAcrossNeovims(t)
	line := `echo from-our-pty; exit 3`
	trust := `GEMINI_CLI_TRUST_WORKSPACE = "true",`
	mine := map[string]string{".gemini/policies/mine.toml": "[[rule]]\ntoolName = \"web_fetch\"\ndecision = \"deny\"\npriority = 100\n"}
	for _, c := range []struct {
		name, agent, settings string
		files                 map[string]string
		offered, notOffered   []string
		shell                 string
	}{
		{name: "by default", offered: []string{"run_command", "web_fetch", "glob"}, notOffered: []string{"run_shell_command"}, shell: "left out for this session"},
		{name: "your excludes stay", settings: `"tools": { "exclude": ["glob"] },`, files: mine,
			offered: []string{"run_command", "read_file"}, notOffered: []string{"run_shell_command", "glob", "web_fetch"}, shell: "left out for this session"},
		{name: "terminals agent", agent: `terminals = "agent"`, offered: []string{"run_shell_command"}, notOffered: []string{"run_command"},
			shell: `kept: you set agents.gemini.terminals = "agent"`},
		// trusted, but the user's settings let Gemini start no MCP server
		// of ours: Gemini's answer (it never listed our tool) wins, and its
		// shell is back before the first prompt
		{name: "your MCP allow-list leaves ours out", settings: `"mcp": { "allowed": ["github"] },`, offered: []string{"run_shell_command"}, notOffered: []string{"run_command"},
			shell: "kept: Gemini CLI did not start agentrun's terminal tool"},
	} {
		t.Run(c.name, func(t *testing.T) {
			fake := startFakeGemini(t, line)
			e, backend := realGeminiHome(t, fake, c.agent, trust, c.settings, c.files, `approve = "run"`)
			e.stubSelect(1)
			e.startSessionWithin(60 * time.Second)
			*backend = e.backendPid()
			e.cmd("AgentPrompt run it")
			e.waitChat("The tool said:", 30*time.Second)
			turns := fake.offeredTools()
			if len(turns) == 0 {
				t.Fatalf("the model was asked nothing:\n%s", fake.log())
			}
			for i, tools := range turns {
				has := func(name string) bool {
					for _, tool := range tools {
						if tool == name || strings.HasSuffix(tool, "__"+name) || strings.HasSuffix(tool, "_agentrun_"+name) {
							return true
						}
					}
					return false
				}
				for _, name := range c.offered {
					if !has(name) {
						t.Errorf("turn %d offered the model %v: no %s", i, tools, name)
					}
				}
				for _, name := range c.notOffered {
					if has(name) {
						t.Errorf("turn %d offered the model %v: %s among them", i, tools, name)
					}
				}
			}
			var shell string
			e.lua(`return require("agentrun").status().sessions[1].own_shell or ""`, &shell)
			if !strings.HasPrefix(shell, c.shell) {
				t.Errorf("status() says its own shell is %q, want %q", shell, c.shell)
			}
			if c.shell != "left out for this session" {
				return
			}
			term := e.waitTerminal(line, 10*time.Second)
			if term.DisplayOnly {
				t.Fatalf("the command ran Gemini's own way (a display-only split), not in our pty:\n%s", e.chat())
			}
			e.waitBuf(term.Bufnr, 10*time.Second, "from-our-pty", exitMarker(3))
			// agentrun's rules decided (approve = "run"): Gemini did not ask
			// about our tool's call as well
			var asked int
			e.lua(`return #_G.picked`, &asked)
			if asked != 0 {
				t.Errorf("the user was asked %d times; agentrun's rules decide on our tool's commands", asked)
			}
			if report := e.healthReport(); !strings.Contains(report, "(gemini): its own shell left out for this session") {
				t.Errorf(":checkhealth does not say Gemini's shell was left out:\n%s", report)
			}
		})
	}
}

// healthReport is what :checkhealth agentrun shows (its buffer is left
// current).
func (e *editor) healthReport() string {
	e.t.Helper()
	e.cmd("checkhealth agentrun")
	var lines []string
	e.lua(`return vim.api.nvim_buf_get_lines(0, 0, -1, false)`, &lines)
	return strings.Join(lines, "\n")
}
