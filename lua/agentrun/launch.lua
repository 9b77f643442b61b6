-- Starting a session: the backend's "start" request with the agent's
-- command and the user's limits, the session's state and its chat (which
-- opens). :AgentRun, :AgentPrompt without a session and :AgentSessions
-- start them here.
local config = require("agentrun.config")
local rpc = require("agentrun.rpc")
local state = require("agentrun.state")
local util = require("agentrun.util")

local M = {}

-- env_list turns { NAME = "value" } into sorted "NAME=value" entries.
function M.env_list(env)
  local out = {}
  for k, v in pairs(env or {}) do
    table.insert(out, k .. "=" .. v)
  end
  table.sort(out)
  return out
end

-- live returns the newest running session of agent name (any agent
-- without a name).
function M.live(name)
  for i = #state.session_order, 1, -1 do
    local s = state.sessions[state.session_order[i]]
    if not s.ended and (name == nil or s.agent == name) then
      return s
    end
  end
end

-- start starts a new session with agent name in a new chat; how (extra):
-- { load = id } or { resume = id } opens an earlier session, { continue
-- = true } the cwd's most recent one. Returns the session.
function M.start(name, extra)
  local a = config.agents()[name]
  local args = { agent = name, cmd = a.cmd, env = M.env_list(a.env), cwd = vim.fn.getcwd(), policy = config.policy(), terminals = a.terminals }
  for k, v in pairs(extra or {}) do
    args[k] = v
  end
  local key, msg = rpc.request("start", args)
  if not key then
    util.notify(msg, vim.log.levels.ERROR)
    return nil
  end
  local others = {}
  for _, k in ipairs(state.session_order) do
    local o = state.sessions[k]
    if not o.ended and o.chat then
      table.insert(others, o)
    end
  end
  local s = state.add_session(key, name)
  s.loading = args.load ~= nil or args.resume ~= nil or args.continue or nil
  s.chat = require("agentrun.ui.chat").new(s)
  s.chat:open()
  for _, o in ipairs(others) do
    -- its chat gave this one its windows: say it still runs, and how back
    s.chat:note(string.format("(agentrun) the %s session (%s) still runs in the background; :AgentRun %s shows its chat", o.agent, o.key, o.agent))
  end
  return s
end

return M
