package tests

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

func TestBadSetupOptionsSayWhatIsWrong(t *testing.T) {
	tests := []struct {
		opts string // a Lua table expression
		want []string
	}{
		{`{ terminal = { position = "left" } }`, []string{"terminal.position", `one of "below", "right", "float", "none"`, "left"}},
		{`{ terminal = { scrollback = 0 } }`, []string{"terminal.scrollback", "from 1 to 100000"}},
		{`{ terminal = { live_ended = -1 } }`, []string{"terminal.live_ended", "an integer >= 0"}},
		{`{ terminal = { kept_bytes = 0 } }`, []string{"terminal.kept_bytes", "a positive integer (bytes)", "got 0"}},
		{`{ terminal = { kill_grace_ms = "3s" } }`, []string{"terminal.kill_grace_ms", "positive integer (milliseconds)"}},
		{`{ terminal = { kill_grace_ms = 0, byte_limit = 0 } }`, []string{"terminal.kill_grace_ms", "positive integer (milliseconds)", "got 0"}},
		{`{ keymaps = { kill = 1 } }`, []string{"keymaps.kill", "or false to disable"}},
		{`{ agents = { claude = { cmd = "claude-agent-acp" } } }`, []string{"agents.claude.cmd", "non-empty list of strings"}},
		{`{ agents = { x = { cmd = { "x" }, env = { FOO = 1 } } } }`, []string{"agents.x.env", `NAME = "value"`}},
		{`{ default_agent = "claude" }`, []string{"default_agent", "the name of an agent in `agents`"}},
		{`{ termnal = {} }`, []string{"termnal", "unknown option", "terminal"}},
		{`{ chat = { position = 3 } }`, []string{"chat.position"}},
		{`{ terminal = { postion = "left" } }`, []string{"terminal.postion: unknown option (did you mean `terminal.position`?)"}},
		// Every problem at once, and a clear word that nothing was applied.
		{`{ terminal = { postion = "left", size = 0 }, chat = { size = "wide" }, keymaps = { kil = "K" } }`, []string{
			"4 problems", "did you mean `terminal.position`", "terminal.size: expected a positive integer, got 0",
			`chat.size: expected a positive integer, got "wide"`, "did you mean `keymaps.kill`", "The configuration was not applied"}},
		{`{ terminal = "below" }`, []string{`terminal: expected a table, got "below"`}},
		{`{ remote = { wait_hours = 0 } }`, []string{"remote.wait_hours: expected a number of hours above 0 (at most a year), such as 24 or 0.5, got 0"}},
		{`{ remote = 24 }`, []string{"remote: expected a table, got 24"}},
	}
	e := startEditor(t, "")
	for _, tc := range tests {
		t.Run(tc.opts, func(t *testing.T) {
			e.t = t
			var res struct {
				OK       bool   `msgpack:"ok"`
				Msg      string `msgpack:"msg"`
				Note     string `msgpack:"note"`
				Position string `msgpack:"position"`
			}
			e.lua(`_G.notes = {}
				local ok, msg = require("agentrun").setup(`+tc.opts+`)
				local note = _G.notes[1] and _G.notes[1].msg or ""
				return { ok = ok, msg = msg, note = note, position = require("agentrun.config").get().terminal.position }`, &res)
			if res.OK {
				t.Fatalf("setup(%s) accepted bad options", tc.opts)
			}
			if !strings.HasPrefix(res.Msg, "(agentrun) setup: ") {
				t.Errorf("message %q lacks the (agentrun) setup: prefix", res.Msg)
			}
			for _, w := range tc.want {
				if !strings.Contains(res.Msg, w) {
					t.Errorf("message %q does not mention %q", res.Msg, w)
				}
			}
			if res.Note != res.Msg {
				t.Errorf("the user was notified %q, want %q", res.Note, res.Msg)
			}
			if res.Position != "below" {
				t.Errorf("bad options were applied: terminal.position = %q", res.Position)
			}
		})
	}
	e.t = t
	var ok bool
	e.lua(`return require("agentrun").setup({ agents = { echo = { cmd = { "cat" }, env = { A = "b" } } }, default_agent = "echo", terminal = { position = "float" }, keymaps = { kill = false } })`, &ok)
	if !ok {
		t.Errorf("setup rejected good options")
	}
	// What get() returns is good options too: a config can be changed by
	// a setup() of get() with one option replaced (the defaults included,
	// those that are the backend's).
	var msg string
	e.lua(`local config = require("agentrun.config")
		for _, c in ipairs({ vim.deepcopy(config.defaults), config.get() }) do
			local ok, msg = require("agentrun").setup(c)
			if not ok then return msg end
		end
		return ""`, &msg)
	if msg != "" {
		t.Errorf("setup() of the defaults or of get() was rejected: %s", msg)
	}
}

// healthError matches an ERROR item of a :checkhealth report (0.7: "- ERROR:",
// 0.10: "- ERROR", 0.12: "- ❌ ERROR").
var healthError = regexp.MustCompile(`(?m)^\s*- (❌ )?ERROR`)

// healthOK reports whether report has an OK item starting with text, in
// any version's format (0.7: "- OK: text", 0.10: "- OK text", 0.12:
// "- ✅ OK text").
func healthOK(report, text string) bool {
	return regexp.MustCompile(`(?m)^\s*- (✅ )?OK:? ` + regexp.QuoteMeta(text)).MatchString(report)
}

// checkhealth runs :checkhealth agentrun and returns the report.
func (e *editor) checkhealth() string {
	e.t.Helper()
	e.cmd("checkhealth agentrun")
	var lines []string
	e.lua(`return vim.api.nvim_buf_get_lines(0, 0, -1, false)`, &lines)
	return strings.Join(lines, "\n")
}

func TestCheckhealth(t *testing.T) {
	t.Run("correct setup", func(t *testing.T) {
		e := startEditor(t, "")
		report := e.checkhealth()
		if healthError.MatchString(report) {
			t.Errorf("checkhealth reports an ERROR:\n%s", report)
		}
		version := strings.TrimPrefix(nvimVersion(), "NVIM v")
		for _, ok := range []string{"Neovim " + version, "backend " + binary + " runs, version"} {
			if !healthOK(report, ok) {
				t.Errorf("report lacks an OK item %q:\n%s", ok, report)
			}
		}
		for _, want := range []string{"agentrun.log", `agent "demo"`} {
			if !strings.Contains(report, want) {
				t.Errorf("report lacks %q:\n%s", want, report)
			}
		}
		// How code in the chat is coloured: Lua has a tree-sitter parser
		// from 0.9 on, Python a syntax file everywhere.
		var ts bool
		e.lua(`return vim.fn.has("nvim-0.9") == 1`, &ts)
		luaBy := "syntax file"
		if ts {
			luaBy = "tree-sitter"
		}
		if !regexp.MustCompile(`coloured by `+luaBy+`: [a-z, ]*\blua\b`).MatchString(report) || !regexp.MustCompile(`coloured by syntax file: [a-z, ]*\bpython\b`).MatchString(report) {
			t.Errorf("report does not say how code is coloured (lua by %s, python by syntax file):\n%s", luaBy, report)
		}
	})
	t.Run("missing binary is an ERROR saying how to fix it", func(t *testing.T) {
		e := startEditor(t, `vim.g.agentrun_bin = "/nonexistent/agentrun"`)
		report := e.checkhealth()
		if !healthError.MatchString(report) || !strings.Contains(report, ":AgentBuild") {
			t.Errorf("report does not flag the missing binary:\n%s", report)
		}
	})
}

func TestMissingOrStaleBinaryTellsHowToBuild(t *testing.T) {
	stale := filepath.Join(t.TempDir(), "agentrun")
	if err := os.WriteFile(stale, []byte("#!/bin/sh\necho 0.0.0-old\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, bin, want string
	}{
		{"missing", "/nonexistent/agentrun", "the backend binary /nonexistent/agentrun is missing: :AgentBuild installs it (the release binary, or built with Go; or run `make build` in " + root + ")"},
		{"stale", stale, "the backend binary is stale (version 0.0.0-old, plugin "},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e := startEditor(t, "")
			e.lua(`vim.g.agentrun_bin = ...`, nil, tc.bin)
			e.cmd("AgentRun")
			e.waitFor("a notification", 5*time.Second, func() (bool, string) {
				var msg string
				e.lua(`return _G.notes[1] and _G.notes[1].msg or ""`, &msg)
				return strings.Contains(msg, tc.want) && strings.Contains(msg, ":AgentBuild"), msg
			})
		})
	}
}
