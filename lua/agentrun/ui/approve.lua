-- Command approval (terminal.approve): before a command the agent asked
-- for runs, Go sends "approve" with the exact command line. The policy
-- (agentrun.policy: rules, a function, remembered answers) decides; "ask"
-- shows vim.ui.select with the command line and its cwd. Closing the
-- picker refuses; the agent then gets an error saying the user did not
-- allow it. "Always allow" remembers the line for the project.
local ask = require("agentrun.ui.ask")
local policy = require("agentrun.policy")
local state = require("agentrun.state")

local M = {}

local function reply(allowed)
  return allowed and "run" or ""
end

local note = ask.note

-- ask handles one request from Go: { token, key, session_id, line, argv, cwd }.
function M.ask(p)
  local s = state.sessions[p.key or ""]
  local cmd = { line = p.line, argv = p.argv, cwd = p.cwd, session = p.session_id, agent = s and s.agent, sandbox = p.sandbox ~= "" and p.sandbox or nil }
  local project = s and s.cwd or vim.fn.getcwd()
  cmd.project = project
  local v = policy.verdict(cmd)
  if v ~= "ask" then
    if not v then
      note(s, "✗ refused by terminal.approve: $ " .. p.line)
    end
    ask.answer(p.token, reply(v))
    return
  end
  local where = p.cwd
  if p.sandbox and p.sandbox ~= "" then
    where = where .. ", sandbox " .. p.sandbox
  end
  note(s, string.format("? run command (in %s): $ %s", where, p.line))
  ask.select(p.token, { "Run it", "Refuse", "Always allow it in this project" }, {
    prompt = string.format("(agentrun) %s wants to run (in %s):  $ %s", cmd.agent or "the agent", where, p.line),
    kind = "agentrun.approve",
  }, function(_, idx)
    if idx == 3 then
      policy.remember(project, p.line)
      note(s, "  → run, and always allowed in this project (" .. policy.file(project) .. ")")
      return reply(true)
    end
    note(s, idx == 1 and "  → run" or "  → refused")
    return reply(idx == 1)
  end)
end

return M
