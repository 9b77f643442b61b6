package tests

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// claudeAttackLines are issue 47's lines that once walked around the
// rules: each runs a command no rule allows (touch, rm) hidden in bash
// syntax the rules used to misread.
var claudeAttackLines = []string{
	"[[ a || rm == victim ]]",
	": &>/dev/null touch made",
	"echo x | xargs -i touch ls P",
	"x='a[$(touch P)]'; b[x]=1",
}

// TestRealClaudeCodeAttackLinesAreAsked: the real Claude Code 0.101 in
// Manual mode, with rules allowing ls and echo and denying rm, runs
// issue 47's attack lines through its own Bash (our rules answer its
// permission request) and through our MCP tool (run_command): none is
// "allowed" by a rule; the two that bash runs touch for (xargs -i, the
// subscript) are asked, and with the user refusing, victim stays as it
// was and P, made and ls are never made. (In bash, the dialect both run
// in, [[ a || rm == victim ]] and : &>/dev/null touch made run nothing:
// Claude Code runs them without asking, our tool asks the first.)
func TestRealClaudeCodeAttackLinesAreAsked(t *testing.T) {
	onceAcrossNeovims(t)
	pkg := claudePackages[1]
	for _, via := range []string{"mcp", "agent"} {
		t.Run(via, func(t *testing.T) {
			fake := startFakeAnthropic(t, "echo unused")
			e, backend := realClaude(t, fake, pkg)
			t.Cleanup(func() {
				if t.Failed() {
					t.Logf("model API requests:\n%s", fake.log())
				}
			})
			e.lua(`local cfg = require("agentrun.config").get()
				if ... == "agent" then cfg.agents.claude.terminals = "agent" end
				cfg.terminal.approve = { allow = { "ls *", "echo *" }, deny = { "rm *" } }
				require("agentrun").setup(cfg)
				_G.asked = {}; _G.labels = {}; vim.ui.select = function(items, opts, cb)
					table.insert(_G.asked, opts.prompt)
					for i, item in ipairs(items) do -- the user refuses
						local label = opts.format_item and opts.format_item(item) or tostring(item)
						table.insert(_G.labels, label)
						if label:match("[Rr]efuse") or label:match("[Rr]eject") or label:match("[Dd]eny") or label:match("^No") then
							return cb(item, i)
						end
					end
					cb(nil, nil)
				end`, nil, via)
			dir := e.cwd()
			victim := filepath.Join(dir, "victim")
			if err := os.WriteFile(victim, []byte("keep\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			e.startSessionWithin(60 * time.Second)
			*backend = e.backendPid()
			e.cmd("AgentMode default") // Manual: Claude Code asks before Bash
			for i, line := range claudeAttackLines {
				var before []string
				e.lua(`return _G.asked`, &before)
				chat := e.chat()
				since := e.mark()
				e.cmd("AgentPrompt run: " + line)
				e.waitEvent("AgentRunTurnEnd", since, 60*time.Second)
				var after []string
				e.lua(`return _G.asked`, &after)
				c := e.chat()
				added := c[min(len(chat), len(c)):]
				if strings.Contains(added, "✓ allowed") {
					t.Errorf("%s: the chat says a rule allowed it:\n%s", line, added)
				}
				// bash runs touch for these two: asked (and refused by the user)
				if i >= 2 && len(after) == len(before) && !strings.Contains(added, "refused") {
					t.Errorf("%s ran without a question:\n%s", line, added)
				}
			}
			var labels []string
			e.lua(`return _G.labels`, &labels)
			t.Logf("the questions offered %q", labels)
			if b, err := os.ReadFile(victim); err != nil || string(b) != "keep\n" {
				t.Errorf("victim changed: %q %v", b, err)
			}
			for _, f := range []string{"P", "made", "ls"} {
				if _, err := os.Stat(filepath.Join(dir, f)); err == nil {
					t.Errorf("%s was made by a line the user refused", f)
				}
			}
		})
	}
}
