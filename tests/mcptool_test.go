package tests

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// claudeLike starts an editor whose default agent is tests/node/
// claudelike.mjs (it runs commands through agentrun's MCP terminal tool,
// as Claude Code does), with extra terminal options.
func claudeLike(t *testing.T, terminal string) *editor {
	t.Helper()
	return startClaudeLike(t, terminal, "")
}

// claudeLikeEnv is claudeLike with extra agent environment entries (Lua).
func claudeLikeEnv(t *testing.T, env string) *editor {
	t.Helper()
	return startClaudeLike(t, "", env)
}

func startClaudeLike(t *testing.T, terminal, env string) *editor {
	t.Helper()
	e := claudeLikeEditor(t, terminal, env, "")
	e.startSession()
	return e
}

// claudeLikeArgv is the Claude-like test agent's command: node, script.
func claudeLikeArgv(t *testing.T) (node, script string) {
	t.Helper()
	node, err := exec.LookPath("node")
	if err != nil {
		t.Fatal("node is not installed (scripts/deps.sh installs the test peers' needs)")
	}
	return node, filepath.Join(root, "tests", "node", "claudelike.mjs")
}

// claudeLikeCommand is claudeLikeArgv as a command line.
func claudeLikeCommand(t *testing.T) string {
	node, script := claudeLikeArgv(t)
	return node + " " + script
}

// claudeLikeEditor starts an editor whose default agent is the
// Claude-like test agent, with extra terminal, agent env and chat options
// (Lua), and no session yet. Its default mode ("Ask before edits") asks
// first, so under terminal.approve's default every command would be
// asked: its tests run commands unasked (approve = "run") unless they
// set approve themselves.
func claudeLikeEditor(t *testing.T, terminal, env, chat string) *editor {
	t.Helper()
	node, agent := claudeLikeArgv(t)
	if !strings.Contains(terminal, "approve") {
		terminal = `approve = "run", ` + terminal
	}
	return startEditor(t, fmt.Sprintf(`require("agentrun").setup({
		default_agent = "claudelike",
		agents = { claudelike = { cmd = { %q, %q }, terminals = "agentrun", env = { %s } } },
		terminal = { %s },
		chat = { %s },
	})`, node, agent, env, terminal, chat))
}

// TestMCPToolRunsInOurTerminal: a command the agent runs through the MCP
// tool is a terminal of ours held by the session and the tool call, its
// split shows the output while it runs, and the agent gets the output
// and the exit code; the tool call in the chat names the terminal.
func TestMCPToolRunsInOurTerminal(t *testing.T) {
	e := claudeLike(t, "")
	e.cmd("AgentPrompt meta")
	e.waitChat("TOOLS kill_command,list_commands,read_output,run_command,wait_for_exit ERROR", 20*time.Second)
	line := `for i in 1 2 3 4 5 6; do echo "mcp tick $i"; sleep 0.3; done`
	e.cmd("AgentPrompt run " + line)
	term := e.waitTerminal(line, 20*time.Second)
	text := e.waitBuf(term.Bufnr, 10*time.Second, "mcp tick 2\n")
	if strings.Contains(text, "mcp tick 6") {
		t.Fatal("the split showed nothing before the command ended: not live")
	}
	var claim map[string]any
	e.lua(`for _, t in ipairs(require("agentrun").status().terminals) do if t.id == ... then return t.claim end end`, &claim, term.ID)
	if claim["kind"] != "session" || claim["tool_call_id"] != "toolu_1" {
		t.Errorf("claim %v, want the session's tool call toolu_1", claim)
	}
	e.waitChat("RESULT Terminal "+term.ID+": exited with code 0.\nmcp tick 1", 20*time.Second)
	chat := e.waitChat("▸ terminal "+term.ID, 5*time.Second)
	if !strings.Contains(chat, line+" [execute]") {
		t.Errorf("the tool call block is missing:\n%s", chat)
	}
}

// TestMCPToolStoppedByTheUser: <C-c> in the chat stops the command the
// tool runs; the agent gets the partial output and the signal.
func TestMCPToolStoppedByTheUser(t *testing.T) {
	e := claudeLike(t, "")
	e.cmd("AgentPrompt run echo started; sleep 30; echo never")
	term := e.waitTerminal("echo started; sleep 30; echo never", 20*time.Second)
	e.waitBuf(term.Bufnr, 10*time.Second, "started")
	e.lua(`return require("agentrun").stop_command()`, nil)
	chat := e.waitChat("RESULT Terminal "+term.ID+": stopped by SIGINT", 20*time.Second)
	if report := chat[strings.Index(chat, "RESULT"):]; !strings.Contains(report, "\nstarted") || strings.Contains(report, "\nnever") {
		t.Errorf("the agent's report:\n%s", report)
	}
}

// TestMCPToolKeepsThePolicy: the approval question and the audit see
// commands the tool runs (one question, from us), and a refused command
// is an error the agent reads.
func TestMCPToolKeepsThePolicy(t *testing.T) {
	e := claudeLike(t, `approve = "always"`)
	e.lua(`_G.asked = 0; vim.ui.select = function(items, opts, cb) _G.asked = _G.asked + 1; cb(nil, nil) end`, nil)
	e.cmd("AgentPrompt run echo refused-one")
	chat := e.waitChat("RESULT error the command was not run: the user did not allow the command", 20*time.Second)
	// the question and the answer stand above the tool call they decided
	q, a, call := strings.Index(chat, "? run command"), strings.Index(chat, "  → refused"), strings.Index(chat, "echo refused-one [")
	if q < 0 || a < q || call < a {
		t.Errorf("the question (%d), its answer (%d) and the tool call (%d) out of order:\n%s", q, a, call, chat)
	}
	var asked int
	e.lua(`return _G.asked`, &asked)
	if asked != 1 {
		t.Errorf("asked %d times, want once", asked)
	}
	if ts := e.terminals(); len(ts) != 0 {
		t.Errorf("terminals %+v after a refusal", ts)
	}
}

// TestMCPToolBackgroundAndList: a background command returns at once
// with its terminal id, keeps running, and list_commands shows it.
func TestMCPToolBackgroundAndList(t *testing.T) {
	e := claudeLike(t, "")
	e.cmd("AgentPrompt bg sleep 40")
	e.waitChat("RESULT Started in terminal term-1, running in the background", 20*time.Second)
	e.idle(10 * time.Second)
	e.cmd("AgentPrompt list")
	e.waitChat("term-1  sleep 40  (running)", 20*time.Second)
}

// TestMCPToolTakesBashArguments: a model trained on Claude Code's Bash
// calls run_command with its arguments (description, timeout in ms,
// run_in_background) and others we do not know: the command runs, the
// description titles its split and its line in :AgentTerminals, unknown
// arguments are ignored, and run_in_background returns at once.
func TestMCPToolTakesBashArguments(t *testing.T) {
	e := claudeLike(t, "")
	e.cmd(`AgentPrompt bash {"command":"echo bash-shaped","description":"Say it\nthe Bash way","timeout":30000,"dangerouslyDisableSandbox":false}`)
	chat := e.waitChat("RESULT ", 20*time.Second)
	if !strings.Contains(chat, "RESULT Terminal term-1: exited with code 0.\nbash-shaped") {
		t.Fatalf("the call with Bash-shaped arguments did not run:\n%s", chat)
	}
	term := e.waitTerminal("echo bash-shaped", 10*time.Second)
	var name string
	e.lua(`return vim.api.nvim_buf_get_name(...)`, &name, term.Bufnr)
	if !strings.HasSuffix(name, "term-1 echo bash-shaped") {
		t.Errorf("the split is named %q, want its id and command", name)
	}
	var listed []string
	e.lua(`return vim.tbl_map(function(t) return t.title end, require("agentrun").status().terminals)`, &listed)
	if len(listed) != 1 || listed[0] != "Say it the Bash way" {
		t.Errorf("status() titles %q", listed)
	}
	e.idle(10 * time.Second)
	e.cmd(`AgentPrompt bash {"command":"sleep 40","run_in_background":true,"description":"Wait"}`)
	e.waitChat("RESULT Started in terminal term-2, running in the background", 20*time.Second)
	e.idle(10 * time.Second)
	e.cmd(`AgentPrompt bash {"command":"  ","description":"nothing"}`)
	e.waitChat("RESULT error command is empty: give the shell command line to run", 20*time.Second)
}

// TestTerminalToolByAgentIdentity: where an agent's commands run is
// decided by the name it gives itself in initialize, not by the command
// that starts it: Claude Code started through a wrapper script (as npx,
// bunx or a user's script start it) gets our terminal tool and loses its
// Bash; another agent keeps its own; the terminals option overrides.
func TestTerminalToolByAgentIdentity(t *testing.T) {
	node, script := claudeLikeArgv(t)
	wrapper := filepath.Join(t.TempDir(), "my-agent-wrapper")
	if err := os.WriteFile(wrapper, []byte(fmt.Sprintf("#!/bin/sh\nexec %q %q \"$@\"\n", node, script)), 0o755); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name, agentName, option string
		want                    string // where its commands run
		meta                    string // what "meta" answers
		tool                    string // what status() says the agent did with our tool
	}{
		{"Claude Code through a wrapper", "@agentclientprotocol/claude-agent-acp", "", "agentrun",
			`META {"claudeCode":{"options":{"allowedTools":["mcp__agentrun__run_command",`, "listed"},
		{"the older Claude Code package", "@zed-industries/claude-agent-acp", "", "agentrun", `"disallowedTools":["Bash"]}}} TOOLS kill_command,list_commands,read_output,run_command,wait_for_exit ERROR`, "listed"},
		{"Claude Code told to use its own", "@agentclientprotocol/claude-agent-acp", `terminals = "agent",`, "agent", "NO TOOL", ""},
		{"another agent", "@agentclientprotocol/codex-acp", "", "agent", "NO TOOL", ""},
		{"another agent told to use ours", "@agentclientprotocol/codex-acp", `terminals = "agentrun",`, "agentrun", "META null TOOLS kill_command", "listed"},
		// an agent that never starts our server: said, not taken for granted
		{"an agent that refuses our tool", "some-agent", `terminals = "agentrun",`, "agentrun",
			"(agentrun) wrapped did not take agentrun's terminal tool (offered over stdio): it never listed it", "not listed"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			refuse := ""
			if c.tool == "not listed" {
				refuse = "1"
			}
			e := startEditor(t, fmt.Sprintf(`require("agentrun").setup({
				default_agent = "wrapped",
				agents = { wrapped = { cmd = { %q }, %s env = { AGENTRUN_TEST_AGENT_NAME = %q, AGENTRUN_TEST_REFUSE_MCP = %q } } },
			})`, wrapper, c.option, c.agentName, refuse))
			e.startSession()
			var where string
			e.lua(`return require("agentrun").status().sessions[1].terminals`, &where)
			if where != c.want {
				t.Errorf("status() says its commands run in %q, want %q", where, c.want)
			}
			e.cmd("AgentPrompt meta")
			if c.want == "agent" {
				e.cmd("AgentPrompt run echo hi")
			}
			e.waitChat(c.meta, 20*time.Second)
			var tool string
			e.lua(`return require("agentrun").status().sessions[1].our_tool or ""`, &tool)
			if tool != c.tool {
				t.Errorf("status().our_tool %q, want %q", tool, c.tool)
			}
			if c.tool == "not listed" && !strings.Contains(e.checkhealth(), "agentrun's terminal tool not listed: the agent never listed it") {
				t.Errorf(":checkhealth does not warn that the agent never listed our tool")
			}
		})
	}
}

// TestCancelStopsTheToolsCommand: :AgentCancel stops the command the
// turn runs through our MCP tool (SIGINT, then the kill after the grace
// for one that ignores it), whether the agent cancels its tool call (as
// claude-agent-acp 0.101 does, notifications/cancelled) or sends nothing
// for it (as 0.18–0.23 did); the turn ends cancelled and nothing of the
// command is left running.
func TestCancelStopsTheToolsCommand(t *testing.T) {
	cases := []struct {
		name, env, line, signal, chat string
	}{
		{"the agent cancels its tool call", "", "echo started; sleep 30; echo never", "SIGINT", "(turn ended: cancelled)"},
		{"the agent keeps its tool call", `AGENTRUN_TEST_CANCEL_KEEPS_TOOL = "1"`, "echo started; sleep 30; echo never", "SIGINT",
			"CANCELLED AFTER Terminal term-1: stopped by SIGINT"},
		{"a command that ignores SIGINT", "", "trap '' INT; echo started; sleep 30 & wait; echo never", "SIGTERM", "(turn ended: cancelled)"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			e := claudeLikeEditor(t, "kill_grace_ms = 400", c.env, "")
			e.startSession()
			e.cmd("AgentPrompt run " + c.line)
			term := e.waitTerminal(c.line, 20*time.Second)
			e.waitBuf(term.Bufnr, 10*time.Second, "started")
			pid := e.ahpTerminal(term.ID).Pid
			start := time.Now()
			e.cmd("AgentCancel")
			e.waitChat(c.chat, 20*time.Second)
			e.waitFor("the command to end by "+c.signal, 10*time.Second, func() (bool, string) {
				ts := e.terminals()
				return len(ts) == 1 && ts[0].Signal == c.signal, fmt.Sprintf("%+v", ts)
			})
			if c.signal == "SIGTERM" && time.Since(start) < 400*time.Millisecond {
				t.Errorf("killed %v after the cancel, before the 400 ms grace", time.Since(start))
			}
			eventually(t, "the command's processes to be gone", 5*time.Second, func() (bool, string) { return !alive(pid), "alive" })
			if text := e.waitBuf(term.Bufnr, 5*time.Second, signalMarker(c.signal)); strings.Contains(text, "never") {
				t.Errorf("the command went on after the cancel:\n%s", text)
			}
			e.idle(10 * time.Second)
		})
	}
}

// TestMCPToolCallCancelledByTheAgent: an agent that cancels its own
// run_command call (MCP notifications/cancelled, as Claude Code does)
// without the turn being cancelled: the tool stops the command (SIGINT)
// and releases its terminal; the turn goes on.
func TestMCPToolCallCancelledByTheAgent(t *testing.T) {
	e := claudeLike(t, "kill_grace_ms = 400")
	line := "echo started; sleep 30; echo never"
	e.cmd("AgentPrompt runabort 1500 " + line)
	term := e.waitTerminal(line, 20*time.Second)
	e.waitBuf(term.Bufnr, 10*time.Second, "started")
	pid := e.ahpTerminal(term.ID).Pid
	e.waitChat("ABORTED the tool call", 20*time.Second)
	text := e.waitBuf(term.Bufnr, 10*time.Second, interruptedMarker, "[released]")
	if strings.Contains(text, "never") {
		t.Errorf("the command went on after its call was cancelled:\n%s", text)
	}
	eventually(t, "the command's processes to be gone", 5*time.Second, func() (bool, string) { return !alive(pid), "alive" })
	e.idle(10 * time.Second)
	if chat := e.chat(); strings.Contains(chat, "(turn ended: cancelled)") {
		t.Errorf("the turn was cancelled:\n%s", chat)
	}
}

// TestScreenBashShapedCommandCancelled: on the screen, a command the
// model sends with Claude Code's Bash arguments runs in our split, titled
// by its description; :AgentCancel stops it (SIGINT) and the chat says the
// turn was cancelled.
func TestScreenBashShapedCommandCancelled(t *testing.T) {
	s := claudeLikeScreenEnv(t, 120, 34, "")
	s.keys(":AgentRun", "Enter")
	s.waitShows(20*time.Second, "agentrun · claudelike · ready")
	s.prompt(`bash {"command":"echo started; sleep 30; echo never","description":"Wait for it","timeout":60000}`)
	s.waitShows(20*time.Second, "started", splitOf("term-1", "running · agent's · echo started; sleep 30; echo never · Wait for it"))
	s.keys("Escape")
	s.typeText(":AgentCancel")
	s.keys("Enter")
	sc := s.waitShows(20*time.Second, interruptedMarker, "(turn ended: cancelled)")
	for _, l := range strings.Split(sc, "\n") {
		if strings.TrimSpace(l) == "never" {
			t.Errorf("the command went on after the cancel:\n%s", sc)
		}
	}
}

// TestMCPToolTellsOfATakeover: a command the tool waits on that the user
// takes over (T) ends the wait at once, and the model reads that the user
// took it over, with the real time, and that it is no longer its to kill
// — not that it is "still running after 120 s", nor an invitation to
// kill_command.
func TestMCPToolTellsOfATakeover(t *testing.T) {
	e := claudeLike(t, "")
	e.cmd("AgentPrompt run echo started; sleep 300")
	term := e.waitTerminal("echo started; sleep 300", 20*time.Second)
	e.waitBuf(term.Bufnr, 10*time.Second, "started")
	var ok bool
	e.lua(`return require("agentrun").takeover(...)`, &ok, term.ID)
	if !ok {
		t.Fatalf("takeover failed: %s", e.noteText())
	}
	// the agent's report (the tool call's block may show the text first)
	chat := e.waitChat("RESULT After ", 20*time.Second)
	report := chat[strings.Index(chat, "RESULT After "):]
	if !regexp.MustCompile(`RESULT After \d+s the user took`).MatchString(report) || !strings.Contains(report, "no longer yours to wait for or kill") || strings.Contains(report, "120 s") {
		t.Errorf("the model read:\n%s", report)
	}
	if !strings.Contains(report, "kill; read_output still reads it.\nTerminal "+term.ID+": still running.") {
		t.Errorf("the parts are not one text, a line apart:\n%s", report)
	}
}
