package tests

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// copilotVersion is the GitHub Copilot CLI that deps.sh installs in
// tests/copilot.
const copilotVersion = "1.0.102"

// copilotBin is the real Copilot CLI's entry point (npm-loader.js, which
// runs its platform package's binary, as the `copilot` npm puts on PATH).
func copilotBin(t *testing.T) string {
	t.Helper()
	return npmBin(t, "copilot", "@github/copilot", copilotVersion, "copilot")
}

// realCopilot starts an editor whose default agent is the real Copilot
// CLI (`copilot --acp`, as the README configures it), offline against
// fake: a HOME of its own, COPILOT_OFFLINE (no GitHub sign-in,
// telemetry, web tools or auto-update), the model API from
// COPILOT_PROVIDER_BASE_URL (OpenAI Chat Completions). Its package
// unpacks itself (235 MB) into COPILOT_PKG_CACHE_HOME once, kept beside
// the package rather than in each test's HOME. agentOptions is more of
// the agent's options (`terminals = "agentrun",`). The cleanup waits for
// the backend (and so Copilot) to stop before the home goes.
func realCopilot(t *testing.T, fake *fakeChat, agentOptions string) (*editor, string) {
	t.Helper()
	bin := copilotBin(t)
	home := t.TempDir()
	cache := filepath.Join(root, "tests", "copilot", "node_modules", ".copilot-cache")
	if err := os.MkdirAll(cache, 0o755); err != nil {
		t.Fatal(err)
	}
	backend := backendGoneAtCleanup(t, "Copilot CLI")
	e := startEditor(t, fmt.Sprintf(`vim.env.AGENTRUN_LOG_LEVEL = "debug"
	require("agentrun").setup({
		default_agent = "copilot",
		agents = { copilot = { %s cmd = %s, env = {
			HOME = %q, COPILOT_PKG_CACHE_HOME = %q, COPILOT_OFFLINE = "true", COPILOT_AUTO_UPDATE = "false",
			COPILOT_PROVIDER_BASE_URL = %q, COPILOT_PROVIDER_API_KEY = "offline-test", COPILOT_MODEL = "fake-model",
		} } },
	})`, agentOptions, agentCmd(t, bin, "--acp"), home, cache, fake.URL))
	logFile := e.logOnFailure(fake.log)
	e.startSessionWithin(60 * time.Second)
	*backend = e.backendPid()
	return e, logFile
}

// TestRealCopilotShowsItsCommandLive: the real Copilot CLI runs the
// model's command with its own bash tool after asking (answered by the
// user: Allow once); a display-only split titled with the command (not
// the model's description of it) shows it while it runs (the 2nd line
// before the 5th exists), then its true exit, 3, which Copilot says only
// in its text ("<shellId: 0 completed with exit code 3>", a line the
// split does not show) and calls "completed": the chat says it failed.
// With approve = "ask" the user is asked once (Copilot's question, not
// ours after it), and the split knows the directory it ran in (for gf and
// quickfix), which Copilot says only at its end.
func TestRealCopilotShowsItsCommandLive(t *testing.T) {
	onceAcrossNeovims(t)
	line := `for i in 1 2 3 4 5; do echo "copilot tick $i"; sleep 0.4; done; exit 3`
	fake := startFakeChat(t, line)
	e, _ := realCopilot(t, fake, "")
	e.lua(`require("agentrun").setup({ terminal = { approve = "ask" } })`, nil)
	e.stubSelect(1) // Copilot asks before it: Allow once
	e.cmd("AgentPrompt run the ticker")
	buf := e.waitAgentShownTerminal()
	if text := e.waitBuf(buf, 20*time.Second, "copilot tick 2"); strings.Contains(text, "copilot tick 5") {
		t.Errorf("the split showed nothing before the command ended: not live\n%s", text)
	}
	text := e.waitBuf(buf, 20*time.Second, "copilot tick 5", exitMarker(3))
	if strings.Contains(text, "shellId") || strings.Contains(text, "anew") {
		t.Errorf("the split shows Copilot's note to the model, or the output twice:\n%s", text)
	}
	chat := e.waitChat("✗ "+line+" [execute] · failed (exit 3)", 20*time.Second)
	if strings.Contains(chat, "Runs the command [execute]") {
		t.Errorf("the chat titles the command with the model's description:\n%s", chat)
	}
	e.waitChat("The tool said: copilot tick 1", 20*time.Second)
	ts := e.terminals()
	if len(ts) != 1 || ts[0].Command != line || ts[0].ExitCode == nil || *ts[0].ExitCode != 3 {
		t.Errorf("status() has the terminals %+v, want %q that exited 3", ts, line)
	}
	var name string
	e.lua(`return vim.api.nvim_buf_get_name(...)`, &name, buf)
	// (in words, the command's start: a long one is cut, tab labels stay short)
	if !strings.Contains(name, "for i in 1 2 3 4 5") {
		t.Errorf("the split is named %q, not after its command", name)
	}
	var asked []string // the questions' prompts
	e.lua(`return vim.tbl_map(function(p) return p.prompt end, _G.picked)`, &asked)
	if len(asked) != 1 || !strings.Contains(asked[0], line) {
		t.Errorf("asked %+v, want one question naming the command", asked)
	}
	var cwd, sessionCwd string
	e.lua(`return require("agentrun").status().terminals[1].cwd or ""`, &cwd)
	e.lua(`return vim.fn.getcwd()`, &sessionCwd) // where the session started
	if cwd != sessionCwd {
		t.Errorf("the split's directory is %q, want the session's %q (Copilot's shell_exit cwd)", cwd, sessionCwd)
	}
}

// TestRealCopilotCancelStopsTheCommand: :AgentCancel while Copilot runs a
// long command: the turn ends cancelled, the command's processes are
// gone, and its split and the chat say it was cancelled.
func TestRealCopilotCancelStopsTheCommand(t *testing.T) {
	onceAcrossNeovims(t)
	line := `echo started; sleep 29.5; echo finished`
	fake := startFakeChat(t, line)
	e, _ := realCopilot(t, fake, "")
	e.stubSelect(1)
	e.cmd("AgentPrompt run it")
	buf := e.waitAgentShownTerminal()
	e.waitBuf(buf, 20*time.Second, "started")
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
	text := e.waitBuf(buf, 10*time.Second, "[cancelled]")
	if strings.Contains(text, "finished") || strings.Contains(text, exitMarker(0)) {
		t.Errorf("the split of the cancelled command reads:\n%s", text)
	}
	e.waitChat("⊘ "+line+" [execute] · cancelled", 5*time.Second)
}

// TestRealCopilotModes: :AgentMode lists Copilot's modes (Agent, Plan,
// Autopilot: a config option of category mode) and switches; status()
// and the header follow.
func TestRealCopilotModes(t *testing.T) {
	onceAcrossNeovims(t)
	fake := startFakeChat(t, "echo planning")
	e, logFile := realCopilot(t, fake, "")
	e.waitHeader("· Agent")
	var modes []string
	e.lua(`return vim.fn.getcompletion("AgentMode ", "cmdline")`, &modes)
	if !strings.Contains(strings.Join(modes, ","), "Agent,Plan,Autopilot") {
		t.Errorf(":AgentMode completes %q, want Copilot's Agent, Plan and Autopilot", modes)
	}
	e.cmd("AgentMode Plan")
	e.waitHeader("· Plan")
	var mode string
	e.lua(`return require("agentrun").status().sessions[1].mode`, &mode)
	if !strings.HasSuffix(mode, "#plan") {
		t.Errorf("status().mode %q, want Copilot's plan mode", mode)
	}
	if b, _ := os.ReadFile(logFile); strings.Contains(string(b), "level=ERROR") {
		t.Errorf("the log has errors:\n%s", b)
	}
}

// TestRealCopilotRunsInOurTerminal: with terminals = "agentrun", Copilot
// (which refuses stdio MCP servers) is offered our terminal tool over
// HTTP on 127.0.0.1 with the session's secret; it lists it, the model
// calls it, and the command runs in our pty: live in a split of ours,
// its exit code ours, its tool call in the chat tied to it (Copilot does
// not say in the MCP call which tool call it is: the command line ties
// them); status(), the chat and :checkhealth say what Copilot did with
// the tool, not what was configured; the backend listens on 127.0.0.1
// only; :AgentCancel stops our tool's next command, and the session's end
// the tool's server.
func TestRealCopilotRunsInOurTerminal(t *testing.T) {
	onceAcrossNeovims(t)
	line := `for i in 1 2 3 4 5; do echo "our tick $i"; sleep 0.4; done; exit 3`
	fake := startFakeChat(t, line)
	e, _ := realCopilot(t, fake, `terminals = "agentrun",`)
	e.stubSelect(1) // should Copilot ask before our tool: Allow once
	e.cmd("AgentPrompt run the ticker")
	term := e.waitTerminal(line, 30*time.Second)
	if !strings.HasPrefix(term.ID, "term-") {
		t.Errorf("the command ran in a display-only split, not our pty: %+v", term)
	}
	if text := e.waitBuf(term.Bufnr, 20*time.Second, "our tick 2"); strings.Contains(text, "our tick 5") {
		t.Errorf("the split showed nothing before the command ended: not live\n%s", text)
	}
	e.waitBuf(term.Bufnr, 20*time.Second, "our tick 5", exitMarker(3))
	e.waitChat("The tool said: Terminal term-1: exited with code 3.", 20*time.Second)
	// Copilot's tool call (titled with the model's description, kind
	// execute, as its own shell's) reads as the command, with our split
	// in its place and no display-only split beside it
	e.waitChat("✗ "+line+" [execute] · failed (exit 3)", 5*time.Second)
	e.waitChat("▸ terminal term-1 · ", 5*time.Second)
	if ts := e.terminals(); len(ts) != 1 {
		t.Errorf("status() has the terminals %+v, want ours only", ts)
	}
	e.waitChat("(agentrun) the agent took agentrun's terminal tool (offered over HTTP)", 5*time.Second)
	var tool string
	e.lua(`return require("agentrun").status().sessions[1].our_tool`, &tool)
	if tool != "used" {
		t.Errorf("status().our_tool %q, want used", tool)
	}
	if report := e.checkhealth(); !healthOK(report, "session 1 (copilot): agentrun's terminal tool used") {
		t.Errorf(":checkhealth does not say Copilot used our tool:\n%s", report)
	}
	// the backend serves the tool on one port of 127.0.0.1, nothing else
	backend := e.backendPid()
	if ls := tcpListens(t, backend); len(ls) != 1 || !strings.HasPrefix(ls[0], "127.0.0.1:") {
		t.Errorf("the backend listens on %v, want one port of 127.0.0.1 (our tool)", ls)
	}

	// :AgentCancel while our tool runs its next command stops it.
	cancelOurToolsNext(t, e, fake)

	// the session's end stops the tool's server
	e.cmd("AgentStop")
	e.waitFor("the tool's port to close with the session", 10*time.Second, func() (bool, string) {
		ls := tcpListens(t, backend)
		return len(ls) == 0, fmt.Sprint("the backend listens on ", ls)
	})
}

// tcpListens lists the TCP addresses (IPv4 "a.b.c.d:port", IPv6 "[…]:port")
// process pid listens on, from its sockets in /proc.
func tcpListens(t *testing.T, pid int) []string {
	t.Helper()
	inodes := map[string]bool{}
	fds, _ := os.ReadDir(fmt.Sprintf("/proc/%d/fd", pid))
	for _, fd := range fds {
		if l, err := os.Readlink(fmt.Sprintf("/proc/%d/fd/%s", pid, fd.Name())); err == nil && strings.HasPrefix(l, "socket:[") {
			inodes[strings.TrimSuffix(strings.TrimPrefix(l, "socket:["), "]")] = true
		}
	}
	var out []string
	for _, table := range []string{"tcp", "tcp6"} {
		raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/net/%s", pid, table))
		if err != nil {
			continue
		}
		for _, line := range strings.Split(string(raw), "\n")[1:] {
			f := strings.Fields(line)
			if len(f) < 10 || f[3] != "0A" || !inodes[f[9]] { // 0A: LISTEN
				continue
			}
			out = append(out, procNetAddr(f[1]))
		}
	}
	return out
}

// procNetAddr reads /proc/net/tcp's "0100007F:1F90" as "127.0.0.1:8080"
// (IPv6 addresses as their hex, bracketed).
func procNetAddr(s string) string {
	host, port, _ := strings.Cut(s, ":")
	var p int
	fmt.Sscanf(port, "%X", &p)
	if len(host) == 8 {
		var b [4]int
		for i := 0; i < 4; i++ {
			fmt.Sscanf(host[2*(3-i):2*(3-i)+2], "%X", &b[i])
		}
		return fmt.Sprintf("%d.%d.%d.%d:%d", b[0], b[1], b[2], b[3], p)
	}
	return fmt.Sprintf("[%s]:%d", host, p)
}
