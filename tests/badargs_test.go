package tests

import (
	"strings"
	"testing"
	"time"
)

// tryLua defines _G.agentrun_try(code): it runs code (a command line when
// it starts with ":") with notifications collected, and returns whether it
// raised and what it said.
const tryLua = `_G.agentrun_try = function(code)
  _G.notes = {}
  local ok, err
  if code:sub(1, 1) == ":" then
    ok, err = pcall(vim.cmd, code:sub(2))
  else
    ok, err = pcall(assert(loadstring(code)))
  end
  local said = {}
  for _, n in ipairs(_G.notes) do table.insert(said, n.msg) end
  return { ok = ok, err = ok and "" or tostring(err), said = table.concat(said, "\n") }
end`

// TestEveryCommandAnswersBadArgumentsWithASentence: every
// user command and Lua function, given an unknown id, another host's
// name, an empty or a garbage argument, answers with a sentence from
// agentrun — never a Lua traceback, an error from Neovim's Lua, raw JSON
// or a Go error string — before and during a session, while one of its
// terminals runs; each says "(agentrun) " first and names an agent by
// its name alone ("demo has no options to set").
func TestEveryCommandAnswersBadArgumentsWithASentence(t *testing.T) {
	e := startEditor(t, "")
	e.lua(tryLua, nil)
	cases := []string{
		":AgentRun nosuch-agent",
		`:AgentRun ""`,
		`require("agentrun").run(42)`,
		":AgentPrompt",
		":AgentPrompt    ",
		":AgentKill term-99",
		":AgentKill 99999:term-1",
		":AgentKill !@#$",
		":AgentKill! term-99",
		":AgentTakeover term-99",
		":AgentTakeover 99999:term-1",
		":AgentTakeover ~~~",
		":AgentDetach term-99",
		":AgentDetach 99999:term-1",
		":AgentAttach term-99",
		":AgentAttach 99999:term-1",
		":AgentAttach not a name",
		":AgentAttach ssh://",
		":AgentAttach ssh://dev;box",
		":AgentAttach ssh://-oProxyCommand=x/1:term-1",
		":AgentAttach ssh://devbox/term-4",
		":AgentAttach ssh://devbox:0/1:term-1",
		":AgentKill ssh://devbox/term-4",
		":AgentTakeover ssh://dev;box/1:term-1",
		`require("agentrun").attach("ssh://@devbox")`,
		":AgentMode nosuch-mode",
		":AgentModel nosuch-model",
		":AgentConfig",
		":AgentConfig nosuch-option x",
		":AgentSessions nosuch-agent",
		":AgentSessions demo extra",
		":AgentRun demo extra",
		":AgentKill term-1 term-2",
		":AgentBuild go now",
		":AgentConfig a b c",
		":AgentCancel extra",
		":AgentStop now",
		":AgentTerminals foo",
		":AgentLogin x",
		":AgentDiff a b",
		":AgentQuickfix term-1 term-2",
		":AgentQuickfix term-99",
		`require("agentrun").quickfix(42)`,
		":AgentDiff nosuch-file",
		":AgentDiff", // the current buffer has no file
		`require("agentrun").diff(42)`,
		`require("agentrun").diff("nosuch-file")`,
		`require("agentrun").kill(42)`,
		`require("agentrun").kill({})`,
		`require("agentrun").kill("term-99")`,
		`require("agentrun").interrupt("term-99")`,
		`require("agentrun").interrupt(false)`,
		`require("agentrun").takeover(42)`,
		`require("agentrun").takeover("99999:term-1")`,
		`require("agentrun").detach({})`,
		`require("agentrun").dispose(42)`,
		`require("agentrun").dispose("term-99")`,
		`require("agentrun").input("term-99", "x")`,
		`require("agentrun").input(42, "x")`,
		`require("agentrun").attach(42)`,
		`require("agentrun").attach("term-99")`,
		`require("agentrun").attach("99999:term-1")`,
		`require("agentrun").open_terminal("term-99")`,
		`require("agentrun").open_terminal(42)`,
		`require("agentrun").prompt(42)`,
		`require("agentrun").prompt("echo hi", "nosuch-session")`,
		`require("agentrun").prompt("echo hi", nil, "not a range")`,
		`require("agentrun").cancel("nosuch-session")`,
		`require("agentrun").stop("nosuch-session")`,
		`require("agentrun").stop_command("nosuch-session")`,
		`require("agentrun").run(42)`,
		`require("agentrun").sessions(42)`,
		`require("agentrun").mode(42)`,
		`require("agentrun").model({})`,
		`require("agentrun").config(42, {})`,
		`require("agentrun").setup("garbage")`,
		`require("agentrun").shell(42)`,
		// issue 50: these lacked the prefix, or named the agent otherwise
		":AgentConfig foo bar",
		":AgentBuild bogus",
		":AgentQuickfix term-1 x",
		":AgentReview bogus",
		":AgentMode bogus",
		":AgentDiff nosuchfile",
		":AgentAttach 1:term-1",
	}
	// Without a session these have nothing to act on; during one they act.
	idle := []string{":AgentCancel", ":AgentStop", ":AgentKill", ":AgentTakeover", ":AgentDetach", ":AgentLogin", ":AgentMode", ":AgentModel"}
	check := func(t *testing.T, when string, cases []string) {
		for _, c := range cases {
			var r struct {
				Ok   bool   `msgpack:"ok"`
				Err  string `msgpack:"err"`
				Said string `msgpack:"said"`
			}
			e.lua(`return _G.agentrun_try(...)`, &r, c)
			all := r.Err + "\n" + r.Said
			switch {
			case strings.Contains(all, "traceback") || strings.Contains(all, "attempt to") || strings.Contains(all, ".lua:"):
				t.Errorf("%s: %s answered with a Lua error: %s", when, c, all)
			case strings.Contains(all, `{"`) || strings.Contains(all, "Error invoking") || strings.Contains(all, "msgpack") || strings.Contains(all, "json:"):
				t.Errorf("%s: %s answered with raw JSON or a Go error string: %s", when, c, all)
			case !r.Ok && !strings.Contains(r.Err, "(agentrun)"):
				t.Errorf("%s: %s raised %q; want a sentence from agentrun", when, c, r.Err)
			case r.Ok && !strings.HasPrefix(r.Said, "(agentrun) "):
				t.Errorf("%s: %s said %q; want a sentence from agentrun", when, c, r.Said)
			case strings.Contains(all, "agent demo ") || strings.Contains(all, `agent "demo"`):
				// one way to name the agent: "demo has no mode …"
				t.Errorf("%s: %s names the agent otherwise than by its name alone: %s", when, c, all)
			}
		}
	}
	t.Run("no session", func(t *testing.T) { check(t, "before any session", append(idle, cases...)) })
	e.cmd("AgentPrompt " + devServer) // a session (one of the cases may have started it)
	e.waitTerminal(devServer, 10*time.Second)
	t.Run("a session", func(t *testing.T) { check(t, "during a session", cases) })
}

// TestStatusListsOnlyWhatCommandsAccept: every terminal status() lists is
// one the commands know (its id works at once), also in the moment after
// the backend created it and before the editor handled that: checked in
// one go on the main loop, many times while commands start and end.
func TestStatusListsOnlyWhatCommandsAccept(t *testing.T) {
	e := startEditor(t, "")
	e.startSession()
	for i := 0; i < 6; i++ {
		e.cmd("AgentPrompt echo quick-" + strings.Repeat("x", i))
	}
	check := `local state = require("agentrun.state")
local bad = {}
for _, t in ipairs(require("agentrun").status().terminals) do
  if not state.terminals[t.id] then table.insert(bad, t.id .. " is unknown to the commands") end
  -- (a finished split out of sight may be wiped: made again when opened)
  if not t.bufnr and t.state == "running" then table.insert(bad, t.id .. " (" .. tostring(t.state) .. ") has no buffer") end
end
return { n = #require("agentrun").status().terminals, bad = table.concat(bad, "; ") }`
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		var r struct {
			N   int    `msgpack:"n"`
			Bad string `msgpack:"bad"`
		}
		e.lua(check, &r)
		if r.Bad != "" {
			t.Fatalf("status() lists: %s", r.Bad)
		}
		if r.N == 6 {
			break
		}
		time.Sleep(5 * time.Millisecond)
	}
	e.waitChat("quick-xxxxx` exited with code 0.", 20*time.Second)
}
