-- Signing in to an agent (ACP authenticate). When an agent answers a new
-- session with auth_required, or the user runs :AgentLogin, the agent's
-- ways to sign in are offered with vim.ui.select (the agent's ask, unasked
-- by the user, through ui/ask.lua: never answered by keys typed before). A "terminal" way runs
-- the agent's own login in one of our terminals, focused for typing; the
-- session starts once it succeeds.
local rpc = require("agentrun.rpc")
local state = require("agentrun.state")
local util = require("agentrun.util")

local M = {}

local function describe(m)
  local kind = ({ terminal = " (in a terminal)", env_var = " (environment variables)" })[m.type] or ""
  local desc = m.description and m.description ~= "" and (" — " .. m.description) or ""
  return (m.name or m.id) .. kind .. desc
end

-- login signs session s's agent in with method m.
function M.login(s, m)
  local res, err = rpc.request("login", s.key, m.id)
  if not res then
    s.chat:note(err, "AgentRunError")
    util.notify(err, vim.log.levels.ERROR)
    return false
  end
  if type(res) == "table" and res.id then
    s.chat:note(string.format("(agentrun) signing in with %s in terminal %s: follow its instructions there", m.name or m.id, res.id))
    require("agentrun.ui.userterm").open_user(res, "sign_in")
  else
    s.chat:note(string.format("(agentrun) signing in with %s…", m.name or m.id))
  end
  return true
end

-- choose asks which of methods to sign s in with; cancelled(s) runs when
-- the user picks none. unasked (the agent asked for it, not :AgentLogin):
-- through ui/ask.lua, so that keys typed before it appeared cannot answer
-- it (it waits until the user stops typing).
local function choose(s, methods, cancelled, unasked)
  local opts = {
    prompt = string.format("Sign in to %s with:", s.agent),
    format_item = describe,
  }
  local function picked(m)
    if m then
      M.login(s, m)
    elseif cancelled then
      cancelled(s)
    end
  end
  if unasked then
    require("agentrun.ui.ask").pick(methods, opts, picked, "signin:" .. s.key, s)
  else
    vim.ui.select(methods, opts, picked)
  end
end

-- required handles "auth_required": a session that is not open yet waits
-- until the user signs in (picking no way, or an agent offering none,
-- stops it); a running one goes on.
---@param p agentrun.event.auth_required
function M.required(p)
  local s = state.sessions[p.key or ""]
  if not s or s.ended then
    return
  end
  -- a session not open yet waits for it; a running one (the agent asked
  -- at a prompt) takes the prompt again once signed in
  s.signin = s.starting or nil
  local why = p.error and p.error ~= "" and (": " .. p.error) or ""
  local after = s.starting and "" or "; then send your prompt again"
  s.chat:note(string.format("(agentrun) %s asks you to sign in%s%s", s.agent, why, after), "AgentRunError")
  s.chat:render_header()
  -- the picker may block the screen (inputlist): show the chat's state first
  vim.cmd("redraw")
  local methods = type(p.methods) == "table" and p.methods or {}
  if #methods == 0 then
    if s.starting then
      -- nothing here can get it past this: stop it, so that :AgentRun
      -- starts it afresh once the user signed in elsewhere
      rpc.request("stop", s.key)
    end
    s.chat:note("(agentrun) it offers no way to sign in from here: sign in with its own command in a shell, then :AgentRun again", "AgentRunError")
    return
  end
  if not s.starting then
    choose(s, methods, nil, true) -- nothing waits: picking none leaves things as they are
    return
  end
  choose(s, methods, function()
    s.chat:note("(agentrun) sign-in cancelled; the agent was stopped. :AgentRun starts it again, and it asks again")
    rpc.request("stop", s.key)
  end, true)
end

-- ask offers the current session's ways to sign in (:AgentLogin).
function M.ask()
  local s = state.session()
  if not s or s.ended then
    util.notify("no session to sign in for; :AgentRun starts one")
    return false
  end
  local methods, err = rpc.request("auth_methods", s.key)
  if not methods then
    util.notify(err)
    return false
  end
  if type(methods) ~= "table" or #methods == 0 then
    -- (a list: the shorter fits 60 columns, util.notify)
    util.notify({ string.format("%s offers no way to sign in from here; sign in with its own command", s.agent), string.format("%s offers no way to sign in from here", s.agent), string.format("%s has no sign-in here", s.agent) }, vim.log.levels.INFO)
    return false
  end
  choose(s, methods)
  return true
end

return M
