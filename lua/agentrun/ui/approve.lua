-- Command approval (terminal.approve): before a command the agent asked
-- for runs, Go sends "approve" with the exact command line. A function in
-- terminal.approve decides (true, false or "ask"); "always" and "ask" show
-- vim.ui.select with the command line and its cwd. Closing the picker
-- refuses; the agent then gets an error saying the user did not allow it.
local ask = require("agentrun.ui.ask")
local config = require("agentrun.config")
local state = require("agentrun.state")

local M = {}

local function reply(allowed)
  return allowed and "run" or ""
end

local note = ask.note

-- verdict asks terminal.approve when it is a function: true, false or
-- "ask". A function that fails or answers something else refuses.
local function verdict(cmd)
  local approve = config.get().terminal.approve
  if type(approve) ~= "function" then
    return "ask"
  end
  local ok, res = pcall(approve, vim.deepcopy(cmd))
  if not ok then
    require("agentrun.util").notify("(agentrun) terminal.approve failed, so the command was refused: " .. tostring(res), vim.log.levels.ERROR)
    return false
  end
  if res == true or res == false or res == "ask" then
    return res
  end
  require("agentrun.util").notify(string.format("(agentrun) terminal.approve must return true, false or \"ask\", not %s; the command was refused", vim.inspect(res)), vim.log.levels.ERROR)
  return false
end

-- ask handles one request from Go: { token, key, session_id, line, argv, cwd }.
function M.ask(p)
  local s = state.sessions[p.key or ""]
  local cmd = { line = p.line, argv = p.argv, cwd = p.cwd, session = p.session_id, agent = s and s.agent, sandbox = p.sandbox ~= "" and p.sandbox or nil }
  local v = verdict(cmd)
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
  ask.select(p.token, { "Run it", "Refuse" }, {
    prompt = string.format("(agentrun) %s wants to run (in %s):  $ %s", cmd.agent or "the agent", where, p.line),
    kind = "agentrun.approve",
  }, function(_, idx)
    note(s, idx == 1 and "  → run" or "  → refused")
    return reply(idx == 1)
  end)
end

return M
