-- Earlier sessions (:AgentSessions): an agent's sessions of the cwd
-- (ACP session/list), picked with vim.ui.select and opened again in a new
-- chat: loaded (the agent replays the conversation into it) when the
-- agent can, else resumed. Listing may start the agent, so the answer
-- comes back as an event ("session_list").
local config = require("agentrun.config")
local launch = require("agentrun.launch")
local rpc = require("agentrun.rpc")
local util = require("agentrun.util")

local M = {}

-- pending: list token -> callback(p)
local pending = {}

-- live returns the running session of this Neovim that agent name (any
-- agent when nil) knows as ACP id id: an id is only its agent's (another
-- agent may give one of its sessions the same id).
local function live(id, name)
  for _, s in pairs(require("agentrun.state").sessions) do
    if s.id == id and not s.ended and (name == nil or s.agent == name) then
      return s
    end
  end
end

-- label is how a session reads in the picker: "title · 2026-11-22 14:03"
-- (and " · open here" when agent name's session runs in this Neovim).
local function label(si, name)
  local title = si.title and si.title ~= "" and si.title or si.session_id
  local when = type(si.updated_at) == "string" and si.updated_at:gsub("T", " "):gsub("%.%d+", ""):gsub("Z$", ""):sub(1, 16) or nil
  local text = when and (title .. " · " .. when) or title
  return live(si.session_id, name) and (text .. " · open here") or text
end
M._label = label

-- list asks agent name for its sessions of the cwd and calls done(p) with
-- the answer ({ sessions, load, resume } or { error }).
function M.list(name, done)
  local a = config.agents()[name]
  local host, cwd, cmd = launch.where(name)
  local token, msg = rpc.request_at(host, "list_sessions", { agent = name, cmd = cmd, env = launch.env_list(a.env), cwd = cwd })
  if not token then
    util.notify(msg, vim.log.levels.ERROR)
    return false
  end
  pending[token] = done
  return true
end

-- listed handles "session_list".
---@param p agentrun.event.session_list
function M.listed(p)
  local done = pending[p.token]
  pending[p.token] = nil
  if done then
    done(p)
  end
end

-- open opens earlier session si of agent name in a new chat; one that
-- runs here already gets its chat opened instead (two agent processes
-- must not work on one session).
function M.open(name, si, can_load)
  local running = live(si.session_id, name)
  if running then
    require("agentrun.state").current = running.key
    running.chat:open()
    return running
  end
  local s = launch.start(name, can_load and { load = si.session_id } or { resume = si.session_id })
  if s then
    s.chat:note(string.format("(agentrun) %s %s", can_load and "loading" or "resuming (its history stays with the agent)", label(si, name)))
  end
  return s
end

-- pick lists agent name's sessions of the cwd and opens the one chosen.
function M.pick(name)
  name = name or (require("agentrun.state").session() or {}).agent or config.get().default_agent
  if not config.agents()[name] then
    util.notify(config.unknown_agent(name))
    return false
  end
  util.notify(string.format("asking %s for its sessions in %s…", name, vim.fn.fnamemodify(vim.fn.getcwd(), ":~")), vim.log.levels.INFO)
  return M.list(name, function(p)
    if p.error then
      -- (the backend's "agent X does not list its sessions" said as is,
      -- short; another reason left out only where it would not fit)
      if tostring(p.error):find("^agent %b\"\" does not list its sessions$") then
        util.notify(string.format("%s does not list its sessions", name), vim.log.levels.ERROR)
      else
        util.notify({ string.format("could not list %s's sessions: %s", name, p.error), string.format("could not list %s's sessions", name) }, vim.log.levels.ERROR)
      end
      return
    end
    local list = type(p.sessions) == "table" and p.sessions or {}
    if #list == 0 then
      util.notify(string.format("%s has no earlier session in %s; :AgentRun starts one", name, vim.fn.fnamemodify(vim.fn.getcwd(), ":~")), vim.log.levels.INFO)
      return
    end
    if not p.load and not p.resume then
      util.notify(string.format("%s lists its sessions but cannot reopen them", name))
      return
    end
    vim.ui.select(list, {
      prompt = string.format("%s session to %s:", name, p.load and "load" or "resume"),
      format_item = function(si)
        return label(si, name)
      end,
    }, function(si)
      if si then
        M.open(name, si, p.load)
      end
    end)
  end)
end

return M
