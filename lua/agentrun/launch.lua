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
-- without a name); with host, only one on that machine ("" or nil: any).
function M.live(name, host)
  for i = #state.session_order, 1, -1 do
    local s = state.sessions[state.session_order[i]]
    if not s.ended and (name == nil or s.agent == name) and (host == nil or host == "" or (s.host or "") == rpc.machine(host)) then
      return s
    end
  end
end

-- where says where agent name runs and how: the machine (nil: here),
-- the directory there ("" on another machine without one: the home
-- there) and the command (the demo agent is the agentrun there).
function M.where(name, host)
  local a = config.agents()[name]
  host = host or a.host
  if not host then
    return nil, vim.fn.getcwd(), a.cmd
  end
  local dir = host:match("^ssh://[^/]*(/.*)$") or ""
  local cmd = a.cmd
  if name == "demo" and not config.get().agents.demo then
    cmd = { "agentrun", "demo-agent" }
  end
  return host, dir, cmd
end

-- start starts a new session with agent name in a new chat; how (extra):
-- { load = id } or { resume = id } opens an earlier session, { continue
-- = true } the cwd's most recent one, { host = "ssh://…" } runs it on
-- that machine (else agents.<name>.host's). Returns the session.
function M.start(name, extra)
  local a = config.agents()[name]
  extra = vim.deepcopy(extra or {})
  local host, cwd, cmd = M.where(name, extra.host)
  extra.host = nil
  ---@type agentrun.request.start
  local args = { agent = name, cmd = cmd, env = M.env_list(a.env), cwd = cwd, policy = config.policy(), terminals = a.terminals }
  for k, v in pairs(extra) do
    args[k] = v
  end
  local key, msg = rpc.request_at(host, "start", args)
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
  s.host = host and rpc.machine(host) or nil
  s.loading = args.load ~= nil or args.resume ~= nil or args.continue or nil
  s.chat = require("agentrun.ui.chat").new(s)
  s.chat:open()
  for _, o in ipairs(others) do
    -- its chat gave this one its windows: say it still runs, and how back
    s.chat:note(string.format("(agentrun) the %s session (%s) still runs in the background; :AgentRun %s%s shows its chat", o.agent, o.key, o.host and (o.host .. " ") or "", o.agent))
  end
  return s
end

-- adopt shows the sessions a link took up on site's machine (its link
-- had dropped; they went on there, res lists them): each gets its chat
-- back (the same one, emptied, when this Neovim had it), shown again from
-- its first event as the backend replays them, and its commands' splits.
local function adopt(site, res)
  -- The commands' splits of the link that dropped: the replay shows
  -- each again, from its first line, in a new buffer.
  local live = {}
  for _, r in ipairs(res.sessions) do
    live[r.key] = true
  end
  for _, id in ipairs(vim.deepcopy(state.terminal_order)) do
    local t = state.terminals[id]
    -- (a session that ended meanwhile keeps its ended splits)
    if t and not t.remote and state.site_of(t.id) == site and (live[t.session] or t.session == nil) then
      if t.bufnr and vim.api.nvim_buf_is_valid(t.bufnr) then
        pcall(vim.api.nvim_buf_delete, t.bufnr, { force = true })
      end
      state.remove_terminal(id)
    end
  end
  for _, r in ipairs(res.sessions) do
    local s = state.sessions[r.key]
    if s then
      -- this Neovim's, ended when the link dropped: the same chat again
      s.ended, s.busy, s.starting, s.tool_calls, s.queue, s.link_dropped = false, false, true, {}, {}, nil
      s.chat:reset()
      s.noted = nil -- the records of its questions come again (chat_note)
    else
      s = state.add_session(r.key, r.agent)
      s.host = rpc.site_url(site)
      s.chat = require("agentrun.ui.chat").new(s)
    end
    s.cwd = r.cwd
  end
  if #res.sessions > 0 then
    util.notify(string.format("took up %d session%s of %s", #res.sessions, #res.sessions == 1 and "" or "s", rpc.site_url(site)))
  end
end
table.insert(rpc.on_resume, adopt)

-- connect reaches host's machine if need be (taking up what waited there,
-- see adopt); returns true, or nil and the message.
-- A third result lists the sessions that waited there and are gone.
function M.connect(host)
  local site, msg, gone = rpc.ensure_site(host)
  return site ~= nil, msg, gone or {}
end

return M
