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
	onceAcrossNeovims(t)
	for _, pkg := range claudePackages {
		t.Run(pkg.version, func(t *testing.T) { testRealClaudeRuns(t, pkg) })
	}
}

func testRealClaudeRuns(t *testing.T, pkg claudePackage) {
	line := `for i in 1 2 3 4 5; do echo "claude tick $i"; sleep 0.4; done`
	fake := startFakeAnthropic(t, line)
	e, backend := realClaude(t, fake, pkg)
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("model API requests:\n%s", fake.log())
		}
	})
	e.stubSelect(1)
	e.startSessionWithin(60 * time.Second)
	*backend = e.backendPid()
	if pkg.version == "0.23.1" {
		// Its default mode asks before acting: so do we (the user runs it).
		defer func() {}()
	} else {
		// Its default mode (auto) and the model it found (configOptions).
		var label string
		e.lua(`return require("agentrun").status().sessions[1].label`, &label)
		if label != "Auto · Default (recommended)" {
			t.Errorf("the session's mode and model read %q, want %q", label, "Auto · Default (recommended)")
		}
	}
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
	// The tool call reads as what it does: the command, in progress.
	if chat := e.chat(); !strings.Contains(strings.ReplaceAll(chat, "\n", ""), "◐ "+line) {
		t.Errorf("while it runs, the chat does not show the command in progress:\n%s", chat)
	}
	chat := e.waitChat("The tool said: Terminal "+term.ID+": exited with code 0.", 60*time.Second)
	// its answer on a line of its own, after any notice Claude Code
	// sends before it without a message id
	if !strings.Contains(chat, "\nThe tool said:") {
		t.Errorf("the answer shares a line with what came before it:\n%s", chat)
	}
	e.idle(60 * time.Second)
	var asked int
	e.lua(`local n = 0; for _, p in ipairs(_G.picked) do if p.kind == "agentrun.approve" then n = n + 1 end end; return n`, &asked)
	if pkg.version == "0.23.1" && (asked != 1 || !strings.Contains(e.chat(), "the agent's mode Default asks first")) {
		t.Errorf("in 0.23's default mode (Default) the command was asked %d times, want once naming the mode; chat:\n%s", asked, e.chat())
	} else if pkg.version != "0.23.1" && asked != 0 {
		t.Errorf("in Auto mode the command was asked %d times, want none", asked)
	}

	// Claude Code keeps the session: stopped (session/close first), it is
	// listed by :AgentSessions and loads with its conversation replayed.
	e.stop()
	if prompt := e.reopen(1, 60*time.Second); prompt != "claude session to load:" {
		t.Errorf("picker prompt %q", prompt)
	}
	chat = e.waitChat("The tool said: Terminal "+term.ID, 30*time.Second)
	// Claude Code 0.23 replays the /model it ran at the start inside the
	// first prompt, as markup: it reads as the command and its answer.
	replay := []string{"> run the ticker", "● ", "claude tick 5", "The tool said: Terminal " + term.ID}
	if pkg.version == "0.23.1" {
		replay = append([]string{"> /model ", "> (Set model to "}, replay...)
	}
	if !inOrder(chat, replay...) {
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
	onceAcrossNeovims(t)
	pkg := claudePackages[0]
	fake := startFakeAnthropic(t, "true")
	e, backend := realClaude(t, fake, pkg)
	e.startSessionWithin(60 * time.Second)
	*backend = e.backendPid()
	e.stubSelect(1)
	e.cmd("AgentLogin")
	var offered []string
	e.lua(`return vim.tbl_map(function(m) return m.name .. "/" .. m.type end, _G.picked[1].items)`, &offered)
	if len(offered) != 1 || offered[0] != "Log in with Claude/terminal" {
		t.Fatalf("offered %q", offered)
	}
	login := e.waitTerminal("sign in: "+claudeBin(t, pkg)+" --cli", 30*time.Second)
	e.waitBuf(login.Bufnr, 60*time.Second, "Welcome to Claude Code", "Choose the text style")
	e.cmd("AgentKill! " + login.ID)
}

// claudePackage is one of the real claude-agent-acp packages deps.sh
// installs in tests/claude.
type claudePackage struct {
	name, version string
	// wrapped starts it through a script of ours (as npx, bunx or a
	// user's wrapper would): agentrun must know it by its agentInfo.name.
	wrapped bool
}

// claudePackages are the Claude Code ACP agents the tests run: the
// package it moved to and its newest release first, then the last of the
// old name.
var claudePackages = []claudePackage{
	{name: "@zed-industries/claude-agent-acp", version: "0.23.1"},
	{name: "@agentclientprotocol/claude-agent-acp", version: "0.101.0", wrapped: true},
}

// claudeBin is the real claude-agent-acp that deps.sh installs.
func claudeBin(t *testing.T, pkg claudePackage) string {
	t.Helper()
	return npmBin(t, "claude", pkg.name, pkg.version, "claude-agent-acp")
}

// claudeCmd is the command that starts pkg: its bin, or a wrapper
// script that execs it.
func claudeCmd(t *testing.T, pkg claudePackage) string {
	t.Helper()
	bin := claudeBin(t, pkg)
	if !pkg.wrapped {
		return bin
	}
	wrapper := filepath.Join(t.TempDir(), "my-claude")
	if err := os.WriteFile(wrapper, []byte(fmt.Sprintf("#!/bin/sh\nexec %q \"$@\"\n", bin)), 0o755); err != nil {
		t.Fatal(err)
	}
	return wrapper
}

// realClaude starts an editor whose default agent is the real
// claude-agent-acp, offline against fake, with a HOME of its own. The
// caller sets *backend to the backend's pid once it runs: the cleanup
// waits for it (and so Claude Code) to stop before HOME goes.
func realClaude(t *testing.T, fake *fakeAnthropic, pkg claudePackage) (*editor, *int) {
	t.Helper()
	setup, backend := realClaudeSetup(t, fake, pkg)
	e := startEditor(t, setup)
	var logFile string
	e.lua(`return require("agentrun.binary").log_path()`, &logFile)
	t.Cleanup(func() {
		if t.Failed() {
			b, _ := os.ReadFile(logFile)
			t.Logf("agentrun.log:\n%s", b)
		}
	})
	return e, backend
}

// realClaudeSetup is the setup (Lua) of an editor whose default agent is
// the real claude-agent-acp pkg offline against fake, with a HOME of its
// own; the caller sets *backend to the backend's pid once it runs: the
// cleanup waits for it (and so Claude Code) to stop before HOME goes.
func realClaudeSetup(t *testing.T, fake *fakeAnthropic, pkg claudePackage) (string, *int) {
	t.Helper()
	bin := claudeCmd(t, pkg)
	home := t.TempDir()
	backend := backendGoneAtCleanup(t, "Claude Code")
	if err := os.MkdirAll(filepath.Join(home, ".claude", "plugins"), 0o755); err != nil {
		t.Fatal(err)
	}
	blocklist := fmt.Sprintf(`{"fetchedAt": %q, "plugins": []}`, time.Now().UTC().Format(time.RFC3339))
	if err := os.WriteFile(filepath.Join(home, ".claude", "plugins", "blocklist.json"), []byte(blocklist), 0o644); err != nil {
		t.Fatal(err)
	}
	return fmt.Sprintf(`require("agentrun").setup({
		default_agent = "claude",
		agents = { claude = { cmd = { %q }, env = {
			ANTHROPIC_BASE_URL = %q, ANTHROPIC_AUTH_TOKEN = "offline-test", HOME = %q,
			CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC = "1", CLAUDE_CODE_DISABLE_FAST_MODE = "1",
			IS_SANDBOX = "", -- set on this machine; Claude Code must not see it
		} } },
	})`, bin, fake.URL, home), backend
}

// TestRealClaudeCodeCancelStopsTheCommand: :AgentCancel while the real
// Claude Code's command runs in our terminal stops the command (SIGINT;
// 0.101 also cancels its MCP tool call, 0.23 sends nothing for it), the
// turn ends cancelled, and nothing of the command is left running.
func TestRealClaudeCodeCancelStopsTheCommand(t *testing.T) {
	onceAcrossNeovims(t)
	for _, pkg := range claudePackages {
		t.Run(pkg.version, func(t *testing.T) {
			line := "echo started; sleep 30; echo never"
			fake := startFakeAnthropic(t, line)
			e, backend := realClaude(t, fake, pkg)
			t.Cleanup(func() {
				if t.Failed() {
					t.Logf("model API requests:\n%s", fake.log())
				}
			})
			e.stubSelect(1) // 0.23's default mode asks first: run it
			e.startSessionWithin(60 * time.Second)
			*backend = e.backendPid()
			e.cmd("AgentPrompt run it")
			term := e.waitTerminal(line, 60*time.Second)
			e.waitBuf(term.Bufnr, 20*time.Second, "started")
			pid := e.ahpTerminal(term.ID).Pid
			e.cmd("AgentCancel")
			// SIGINT, or the kill after the grace period when the interrupt
			// did not end it in time (seen once under load on 0.10: the
			// SIGINT's path is still to be understood; see the note).
			var sig string
			e.waitFor("the command to end by SIGINT or the kill", 10*time.Second, func() (bool, string) {
				ts := e.terminals()
				if len(ts) == 1 {
					sig = ts[0].Signal
				}
				return sig == "SIGINT" || sig == "SIGTERM", fmt.Sprintf("%+v", ts)
			})
			eventually(t, "the command's processes to be gone", 5*time.Second, func() (bool, string) { return !alive(pid), "alive" })
			e.waitChat("(turn ended: cancelled)", 30*time.Second)
			if text := e.waitBuf(term.Bufnr, 5*time.Second, signalMarker(sig)); strings.Contains(text, "never") {
				t.Errorf("the command went on after the cancel:\n%s", text)
			}
			e.idle(30 * time.Second)
		})
	}
}

// TestRealClaudeCodeOwnBash: the real Claude Code 2.1 (0.101) running its
// own Bash (terminals = "agent"): its permission question for the
// command is answered by terminal.approve's rules without a question; the
// command is shown in a display-only split with its output once it ended;
// cancelled while it runs, the split reads [cancelled] and not the text
// Claude Code sends the model about it.
func TestRealClaudeCodeOwnBash(t *testing.T) {
	onceAcrossNeovims(t)
	pkg := claudePackages[1]
	cases := []struct {
		name, line string
		cancel     bool
	}{
		// Commands that change something: Claude Code asks before them.
		{"runs", "touch ran.txt; echo own-bash-ran", false},
		{"cancelled", "touch ran.txt; sleep 30; echo never", true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			fake := startFakeAnthropic(t, c.line)
			e, backend := realClaude(t, fake, pkg)
			t.Cleanup(func() {
				if t.Failed() {
					t.Logf("model API requests:\n%s", fake.log())
				}
			})
			e.lua(`local cfg = require("agentrun.config").get()
				cfg.agents.claude.terminals = "agent"
				cfg.terminal.approve = { allow = { "touch ran.txt", "echo *", "sleep *" } }
				require("agentrun").setup(cfg)
				_G.asked = 0; vim.ui.select = function(items, opts, cb) _G.asked = _G.asked + 1; cb(nil, nil) end`, nil)
			e.startSessionWithin(60 * time.Second)
			*backend = e.backendPid()
			e.cmd("AgentMode default") // the mode that asks before Bash
			e.cmd("AgentPrompt run it")
			buf := e.waitAgentShownTerminal()
			e.waitChat(`✓ allowed: allow "touch ran.txt", allow "`, 60*time.Second)
			if c.cancel {
				time.Sleep(500 * time.Millisecond) // it runs
				e.cmd("AgentCancel")
				e.waitChat("(turn ended: cancelled)", 30*time.Second)
				text := e.waitBuf(buf, 10*time.Second, "[cancelled]")
				if strings.Contains(text, "proceed") || strings.Contains(text, "never") || strings.Count(text, "[") != 1 {
					t.Errorf("the cancelled split reads:\n%s", text)
				}
			} else {
				e.waitBuf(buf, 60*time.Second, "own-bash-ran", exitMarker(0))
				e.waitChat("The tool said: ", 60*time.Second)
			}
			e.idle(30 * time.Second)
			var asked int
			e.lua(`return _G.asked`, &asked)
			if asked != 0 {
				t.Errorf("asked %d times for a command the rules allow", asked)
			}
		})
	}
}

// TestRealClaudeCodeModeIsAPromise: the real Claude Code 2.1 (0.101) runs
// its commands through our tool, which it lets run without its own
// question; agentrun asks instead when the mode the user chose asks
// before acting. Under the default terminal.approve ("agent"): in Auto
// and Accept edits a command runs unasked, in Manual it is asked (named
// with the mode), and a refusal keeps it from running. With rules set,
// the rules decide in every mode: an allowed command runs unasked in
// Manual, a denied one riding along on an allowed one is refused.
func TestRealClaudeCodeModeIsAPromise(t *testing.T) {
	onceAcrossNeovims(t)
	pkg := claudePackages[1]
	fake := startFakeAnthropic(t, "echo unused")
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("model API requests:\n%s", fake.log())
		}
	})
	e, backend := realClaude(t, fake, pkg)
	e.lua(`_G.asked = {}; _G.pick = 2; vim.ui.select = function(items, opts, cb)
		table.insert(_G.asked, opts.prompt)
		cb(items[_G.pick], _G.pick)
	end`, nil)
	asked := func() []string {
		var a []string
		e.lua(`return _G.asked`, &a)
		return a
	}
	dir := e.cwd()
	step := func(mode, line, want string, ask bool) {
		t.Helper()
		before := len(asked())
		if mode != "" {
			e.cmd("AgentMode " + mode)
		}
		e.cmd("AgentPrompt run: " + line)
		e.waitChat(want, 60*time.Second)
		e.idle(60 * time.Second)
		a := asked()
		if got := len(a) > before; got != ask {
			t.Errorf("%s in mode %q: asked %v (%q), want %v", line, mode, got, a[before:], ask)
		}
	}
	e.startSessionWithin(60 * time.Second)
	*backend = e.backendPid()
	step("", "echo auto-ran", "auto-ran", false) // Auto, Claude's default
	step("acceptEdits", "echo accept-ran", "accept-ran", false)
	e.lua(`_G.pick = 1`, nil)
	step("default", "echo manual-ran", "manual-ran", true)
	if a := asked(); !strings.Contains(e.chat(), "the agent's mode Manual asks first") || !strings.Contains(a[len(a)-1], "$ echo manual-ran") {
		t.Errorf("the question does not name the command and the mode: %q\n%s", a, e.chat())
	}
	e.lua(`_G.pick = 2`, nil)
	step("", "touch manual-refused", "the user did not allow the command", true)
	if _, err := os.Stat(filepath.Join(dir, "manual-refused")); err == nil {
		t.Errorf("a command the user refused in Manual mode ran")
	}
	step("plan", "touch plan-refused", "the user did not allow the command", true)
	e.stop()

	// With rules, in every mode.
	if err := os.MkdirAll(filepath.Join(dir, "victim"), 0o755); err != nil {
		t.Fatal(err)
	}
	e.lua(`local cfg = require("agentrun.config").get()
		cfg.terminal.approve = { allow = { "git status*", "echo *" }, deny = { "rm -rf *" } }
		require("agentrun").setup(cfg)`, nil)
	e.startSessionWithin(60 * time.Second)
	*backend = e.backendPid()
	step("default", "echo rules-ran", "rules-ran", false)
	step("", "git status --short; rm -rf victim", "matches deny", false)
	step("auto", "echo hi && touch rules-made", "the user did not allow the command", true)
	if _, err := os.Stat(filepath.Join(dir, "victim")); err != nil {
		t.Errorf("victim is gone: %v", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "rules-made")); err == nil {
		t.Errorf("rules-made was made by a refused line")
	}
}

// TestRealClaudeCodeAsksThroughElicitation: the real claude-agent-acp
// 0.101, offered elicitation forms, turns the model's AskUserQuestion into
// one: the question appears as a picker with the model's options, and
// the answer picked reaches the model (the fake sees it in the tool
// result).
func TestRealClaudeCodeAsksThroughElicitation(t *testing.T) {
	onceAcrossNeovims(t)
	fake := startFakeAnthropic(t, "true")
	e, backend := realClaude(t, fake, claudePackages[1])
	e.startSessionWithin(60 * time.Second)
	*backend = e.backendPid()
	e.lua(`_G.shown = {}
		vim.ui.select = function(items, opts, cb)
			local labels = {}
			for _, it in ipairs(items) do table.insert(labels, opts.format_item and opts.format_item(it) or tostring(it)) end
			table.insert(_G.shown, { prompt = opts.prompt, items = labels })
			for i, l in ipairs(labels) do
				if l:find("Green", 1, true) then return cb(items[i], i) end
			end
			cb(nil, nil)
		end
		vim.ui.input = function(opts, cb)
			table.insert(_G.shown, { prompt = opts.prompt, items = {} })
			cb("")
		end`, nil)
	e.cmd("AgentPrompt ask me which colour")
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("model API requests:\n%s", fake.log())
		}
	})
	chat := e.waitChat("The user said:", 25*time.Second)
	var shown []shownPicker
	e.lua(`return _G.shown`, &shown)
	if len(shown) == 0 || !strings.Contains(strings.Join(shown[0].Items, "|"), "Red") {
		t.Fatalf("the pickers shown: %+v\nmodel API requests:\n%s\nchat:\n%s", shown, fake.log(), chat)
	}
	fake.mu.Lock()
	told := strings.Join(fake.results, "\n")
	fake.mu.Unlock()
	if !strings.Contains(told, "Green") || !strings.Contains(chat, "Green") {
		t.Errorf("the model was told %q, want the answer Green; chat:\n%s", told, chat)
	}
	// its free-text "other" field comes after the choice, and may stay empty
	if len(shown) != 2 || !strings.Contains(shown[1].Prompt, "Other") {
		t.Errorf("asked: %+v, want the choice, then its optional other", shown)
	}
}

// TestRealClaudeCodeToolCallReadsOnScreen: on the screen, a command the real
// Claude Code 0.101 runs through our tool reads as what it is: the
// command line, in progress while it runs (its split live below), then
// completed — never the tool's own name.
func TestRealClaudeCodeToolCallReadsOnScreen(t *testing.T) {
	onceAcrossNeovims(t)
	line := `for i in 1 2 3 4 5 6; do echo "screen tick $i"; sleep 1; done`
	fake := startFakeAnthropic(t, line)
	setup, backend := realClaudeSetup(t, fake, claudePackages[1])
	// (60 rows: Claude Code 0.101 adds a 9-line warning about its auto
	// mode behind a gateway (the fake model API) after the command: at
	// 40 the tool call's line scrolled out of sight)
	s := startScreen(t, 140, 60, setup)
	s.keys(":AgentRun", "Enter")
	s.waitShows(60*time.Second, "agentrun · claude · ready")
	s.luaValue(`vim.fn.jobpid(require("agentrun.rpc").channel())`, backend)
	s.keys("i")
	s.prompt("run the ticker")
	// (the chat is 70 columns: "in progress" may wrap after "in")
	sc := s.waitShows(60*time.Second, "◐ for i in 1 2 3 4 5 6", "progress", "screen tick 2")
	if strings.Contains(sc, "screen tick 6") {
		t.Errorf("the command ended before it was seen running:\n%s", sc)
	}
	sc = s.waitShows(60*time.Second, "● for i in 1 2 3 4 5 6", "completed", "screen tick 6")
	if strings.Contains(sc, "mcp__agentrun") {
		t.Errorf("the chat names the tool, not the command:\n%s", sc)
	}
}
