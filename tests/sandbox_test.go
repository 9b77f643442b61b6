package tests

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// statusField returns field of the terminal running command in status().
func (e *editor) statusField(id, field string) string {
	e.t.Helper()
	var v string
	e.lua(`for _, t in ipairs(require("agentrun").status().terminals) do if t.id == ... then return tostring(t[select(2, ...)] or "") end end return ""`, &v, id, field)
	return v
}

// TestSandboxConfinesTheAgentsCommands: with terminal.sandbox = "project"
// an agent's command writes in the session's cwd and nowhere else, the
// split's name and status() say it is sandboxed, and the approval
// question says so before it runs.
func TestSandboxConfinesTheAgentsCommands(t *testing.T) {
	e := startEditor(t, `require("agentrun").setup({ terminal = { sandbox = "project", approve = "always" } })`)
	e.lua(`vim.ui.select = function(items, opts, cb) _G.asked = opts.prompt; cb(items[1], 1) end`, nil)
	e.startSession()
	line := "echo in > inside; echo out > /usr/agentrun-sandbox-x; echo done"
	e.cmd("AgentPrompt " + line)
	term := e.waitTerminal(line, 10*time.Second)
	e.waitBuf(term.Bufnr, 10*time.Second, "Read-only file system", "done", exitMarker(0))
	if b, err := os.ReadFile(filepath.Join(e.cwd(), "inside")); err != nil || string(b) != "in\n" {
		t.Errorf("the file written in the session's cwd: %q %v", b, err)
	}
	if _, err := os.Stat("/usr/agentrun-sandbox-x"); err == nil {
		os.Remove("/usr/agentrun-sandbox-x")
		t.Error("the sandboxed command wrote to /usr")
	}
	if sb := e.statusField(term.ID, "sandbox"); !strings.HasPrefix(sb, "project (no network; writes only in "+e.cwd()) {
		t.Errorf("status().sandbox = %q", sb)
	}
	var name, asked string
	e.lua(`return vim.api.nvim_buf_get_name(...)`, &name, term.Bufnr)
	if !strings.HasSuffix(name, "[sandbox: project]") {
		t.Errorf("split buffer name %q", name)
	}
	e.lua(`return _G.asked`, &asked)
	if !strings.Contains(asked, "sandbox project (no network;") {
		t.Errorf("approval question %q does not name the sandbox", asked)
	}
}

// TestLimitStopsAnAgentsCommand: a memory hog is stopped by
// terminal.limits.memory; its split, status() and what the agent reads
// (the demo agent quotes the output) say which limit stopped it.
func TestLimitStopsAnAgentsCommand(t *testing.T) {
	e := startEditor(t, `require("agentrun").setup({ terminal = { limits = { memory = "64M", processes = 40 } } })`)
	e.startSession()
	line := "head -c 2000000000 /dev/zero | tail > /dev/null"
	e.cmd("AgentPrompt " + line)
	term := e.waitTerminal(line, 10*time.Second)
	e.waitBuf(term.Bufnr, 20*time.Second, "[agentrun: stopped: its memory reached", "(limit 64 MiB)]")
	e.idle(20 * time.Second)
	if got := e.statusField(term.ID, "stopped_by_limit"); !strings.Contains(got, "(limit 64 MiB)") {
		t.Errorf("status().stopped_by_limit = %q", got)
	}
	e.waitChat("(limit 64 MiB)]", 5*time.Second)
}

// TestBadSandboxIsSaidBeforeAnythingRuns: an unknown profile stops the
// session from starting, with a message naming the known ones; nothing
// runs unconfined.
func TestBadSandboxIsSaidBeforeAnythingRuns(t *testing.T) {
	e := startEditor(t, `require("agentrun").setup({ terminal = { sandbox = "projekt" } })`)
	e.cmd("AgentRun")
	n := e.waitNote(`unknown sandbox profile "projekt" (known: project, project-net, strict)`, 10*time.Second)
	if !strings.Contains(n.Msg, "terminal.sandbox") {
		t.Errorf("message %q does not name the option", n.Msg)
	}
	if ts := e.terminals(); len(ts) != 0 {
		t.Errorf("terminals %+v, want none", ts)
	}
}

// TestSandboxFunctionChoosesPerCommand: terminal.sandbox as a function
// picks a profile for each command (here: the network only for one that
// says so); a function that fails refuses the command.
func TestSandboxFunctionChoosesPerCommand(t *testing.T) {
	e := startEditor(t, `require("agentrun").setup({ terminal = { sandbox = function(cmd)
		if cmd.line:find("boom") then error("no profile for boom") end
		return cmd.line:find("net") and "project-net" or "strict"
	end } })`)
	e.startSession()
	e.cmd("AgentPrompt echo net")
	net := e.waitTerminal("echo net", 10*time.Second)
	e.idle(10 * time.Second)
	e.cmd("AgentPrompt echo plain")
	plain := e.waitTerminal("echo plain", 10*time.Second)
	e.idle(10 * time.Second)
	if sb := e.statusField(net.ID, "sandbox"); !strings.HasPrefix(sb, "project-net (writes only in") {
		t.Errorf("echo net: sandbox %q", sb)
	}
	if sb := e.statusField(plain.ID, "sandbox"); !strings.HasPrefix(sb, "strict (no network; home hidden;") {
		t.Errorf("echo plain: sandbox %q", sb)
	}
	e.cmd("AgentPrompt echo boom")
	e.waitChat("Could not run `echo boom`: not run, because terminal.sandbox cannot confine it: its function failed: [string \"<nvim>\"]:2: no profile for boom", 10*time.Second)
	for _, x := range e.terminals() {
		if x.Command == "echo boom" {
			t.Errorf("echo boom ran: %+v", x)
		}
	}
}

// TestHealthSaysWhetherTheSandboxWorks: :checkhealth agentrun reports the
// sandbox setting and whether bubblewrap works here, and the limits.
func TestHealthSaysWhetherTheSandboxWorks(t *testing.T) {
	e := startEditor(t, `require("agentrun").setup({ terminal = { sandbox = "strict", limits = { memory = "1G" } } })`)
	e.cmd("checkhealth agentrun")
	var lines []string
	e.lua(`return vim.api.nvim_buf_get_lines(0, 0, -1, false)`, &lines)
	report := strings.Join(lines, "\n")
	for _, want := range []string{"terminal.sandbox is profile strict: bubblewrap works here: ", "terminal.limits: memory = 1G"} {
		if !strings.Contains(report, want) {
			t.Errorf("the report lacks %q:\n%s", want, report)
		}
	}
}

// TestHealthSaysWhereCommandsRun: :checkhealth agentrun says, per agent,
// whether its commands run in our terminals.
func TestHealthSaysWhereCommandsRun(t *testing.T) {
	e := startEditor(t, `require("agentrun").setup({ agents = {
		mine = { cmd = { "sh" }, terminals = "agentrun" },
		theirs = { cmd = { "sh" }, terminals = "agent" },
		unsaid = { cmd = { "sh" } },
	} })`)
	e.cmd("checkhealth agentrun")
	var lines []string
	e.lua(`return vim.api.nvim_buf_get_lines(0, 0, -1, false)`, &lines)
	report := strings.Join(lines, "\n")
	for _, want := range []string{`agent "mine": `, `its commands run in agentrun's terminals (the MCP terminal tool)`, `agent "theirs": `, `it runs its commands itself`,
		`agent "unsaid": `, `decided when it starts: Claude Code (claude-agent-acp) and Gemini CLI get agentrun's terminal tool (Gemini's own shell left out where Gemini allows it); any other agent runs commands its own way, and those it asks for with terminal/create run in agentrun's terminals`} {
		if !strings.Contains(report, want) {
			t.Errorf("the report lacks %q:\n%s", want, report)
		}
	}
}
