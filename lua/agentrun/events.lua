-- Events from Go. The bridge calls dispatch() with nvim_exec_lua from one
-- ordered queue; dispatch returns at once and handles the event on the
-- main loop (vim.schedule keeps the order), so Go never waits on the UI.
local state = require("agentrun.state")

local M = {}

local function chat_of(p)
  local s = state.sessions[p.key or ""]
  return s, s and s.chat
end

local handlers = {}

function handlers.session_started(p)
  local s, chat = chat_of(p)
  if not s then
    return
  end
  s.id = p.session_id
  s.terminals = p.terminals -- where its commands run, as the backend decided
  s.cwd = p.cwd -- the project: "always allow" answers are kept per cwd (agentrun.policy)
  local signed_in = s.signin
  s.starting, s.signin = false, nil
  require("agentrun.modes").started(s, p)
  if chat then
    chat:render_header()
    if signed_in then
      chat:note("(agentrun) signed in; the session has started")
    end
    if p.note then
      chat:note("(agentrun) " .. p.note)
    end
  end
  if not p.replaying then
    require("agentrun.conversation").flush(s)
  end -- else once the history has come (history_replayed)
end

function handlers.history_replayed(p)
  local s = chat_of(p)
  if s then
    require("agentrun.conversation").flush(s)
  end
end

function handlers.session_failed(p)
  local s, chat = chat_of(p)
  if not s then
    return
  end
  s.starting, s.ended, s.queue = false, true, {}
  if chat then
    chat:render_header()
    chat:note("(agentrun) could not start the agent: " .. tostring(p.error), "AgentRunError")
  end
  require("agentrun.util").notify("(agentrun) could not start agent " .. s.agent .. ": " .. tostring(p.error), vim.log.levels.ERROR)
end

function handlers.session_update(p)
  local s, chat = chat_of(p)
  if s and type(p.update) == "table" and p.update.sessionUpdate == "available_commands_update" then
    require("agentrun.ui.complete").commands(s, p.update.availableCommands)
    return
  end
  if s and type(p.update) == "table" and require("agentrun.modes").update(s, p.update) then
    if chat then
      chat:render_header()
    end
    return
  end
  if chat and type(p.update) == "table" then
    chat:update(p.update)
  end
end

function handlers.turn_end(p)
  local s, chat = chat_of(p)
  if not s then
    return
  end
  s.busy = false
  if chat then
    chat:end_message() -- the next turn's answer starts a line of its own
    if s.interrupted_note then
      chat:remove(s.interrupted_note) -- its "<C-c> again" no longer holds
      s.interrupted_note = nil
    end
  end
  local why = p.stop_reason == "cancelled" and "cancelled" or "unfinished"
  s.turn_ended_by = why == "unfinished" and "ended with the turn" or why
  require("agentrun.ui.agentterm").settle(s.key, s.turn_ended_by)
  if chat then
    chat:settle(why)
    chat:render_header()
    if p.error and p.error ~= "" and s.ended then
      -- the session ended under the turn; its note already says why
    elseif p.error and p.error ~= "" then
      chat:note("(agentrun) the turn failed: " .. p.error, "AgentRunError")
    elseif p.stop_reason and p.stop_reason ~= "end_turn" then
      chat:note("(turn ended: " .. p.stop_reason .. ")")
    end
  end
  require("agentrun.conversation").flush(s)
end

function handlers.session_ended(p)
  local s, chat = chat_of(p)
  if not s then
    return
  end
  s.ended, s.busy, s.starting = true, false, false
  require("agentrun.ui.agentterm").settle(s.key, "stopped")
  if chat then
    chat:settle("stopped")
  end
  if p.reason and p.reason ~= "" then
    -- the agent ended on its own (crashed, exited, closed its stdout)
    local msg = string.format("(agentrun) the agent stopped: %s. Its terminals were killed. :AgentRun starts a new session (details in %s)", p.reason, require("agentrun.rpc").log_path())
    if chat then
      chat:render_header()
      chat:note(msg, "AgentRunError")
    end
    require("agentrun.util").notify(msg, vim.log.levels.ERROR)
  elseif chat then
    chat:render_header()
    chat:note("(agentrun) session ended; :AgentRun starts a new one")
  end
end

function handlers.message(p)
  local msg = "(agentrun) " .. tostring(p.text)
  local _, chat = chat_of(p)
  if chat then
    chat:note(msg, p.level == "error" and "AgentRunError" or "AgentRunNote")
  end
  local level = ({ error = vim.log.levels.ERROR, info = vim.log.levels.INFO })[p.level] or vim.log.levels.WARN
  require("agentrun.util").notify(msg, level)
end

-- Events a UI module handles whole: name -> { module, function }. The
-- module loads on the first such event.
local delegated = {
  terminal_created = { "agentrun.ui.term", "created" },
  terminal_exit = { "agentrun.ui.term", "exited" },
  terminal_released = { "agentrun.ui.term", "released" },
  agent_terminal = { "agentrun.ui.agentterm", "agent_terminal" },
  remote_claimed = { "agentrun.ui.term", "remote_claimed" },
  tool_terminal = { "agentrun.ui.term", "tool_terminal" },
  auth_required = { "agentrun.ui.signin", "required" },
  session_list = { "agentrun.earlier_sessions", "listed" },
  permission = { "agentrun.ui.permission", "ask" },
  permission_cancelled = { "agentrun.ui.ask", "cancelled" },
  approve = { "agentrun.ui.approve", "ask" },
  approve_cancelled = { "agentrun.ui.ask", "cancelled" },
}
for name, to in pairs(delegated) do
  handlers[name] = function(p)
    require(to[1])[to[2]](p)
  end
end

-- names lists every event Go sends (editor/eventnames.go has the same).
M.names = vim.tbl_keys(handlers)
table.sort(M.names)

-- User autocommands fired once an event was handled (the UI shows it):
-- for statuslines and scripts, and for tests to wait on.
local user_events = {
  session_started = "AgentRunSessionStarted",
  session_ended = "AgentRunSessionEnded",
  turn_end = "AgentRunTurnEnd",
  terminal_created = "AgentRunTerminalCreated",
  terminal_exit = "AgentRunTerminalExited",
  terminal_released = "AgentRunTerminalReleased",
}

local function handle(name, p)
  local h = handlers[name]
  if not h then
    return
  end
  p = p or {}
  local ok, err = xpcall(h, debug.traceback, p)
  if not ok then
    require("agentrun.rpc").notify("log", "error", string.format("lua handler %s: %s", name, err))
    require("agentrun.util").notify(string.format("(agentrun) internal error handling %s (details in %s)", name, require("agentrun.rpc").log_path()), vim.log.levels.ERROR)
  end
  if user_events[name] then
    require("agentrun.compat").user_event(user_events[name], {
      key = p.key,
      id = p.id,
      exit_code = p.exit_code,
      signal = p.signal,
      stop_reason = p.stop_reason,
    })
  end
end

local function text_chunk(e)
  if e[1] ~= "session_update" or type(e[2]) ~= "table" then
    return nil
  end
  local u = e[2].update
  if type(u) ~= "table" or (u.sessionUpdate ~= "agent_message_chunk" and u.sessionUpdate ~= "agent_thought_chunk") then
    return nil
  end
  if type(u.content) ~= "table" or u.content.type ~= "text" or type(u.content.text) ~= "string" then
    return nil
  end
  return u
end

-- coalesce joins runs of text chunks of the same kind and session, so a
-- flood of tiny chunks costs one buffer update per batch.
local function coalesce(events)
  local out = {}
  for _, e in ipairs(events) do
    local prev = out[#out]
    local a, b = prev and text_chunk(prev), text_chunk(e)
    if a and b and a.sessionUpdate == b.sessionUpdate and prev[2].key == e[2].key and a.messageId == b.messageId then
      a.content.text = a.content.text .. b.content.text
    else
      table.insert(out, e)
    end
  end
  return out
end

-- dispatch queues events (a list of { name, payload }) for the main loop,
-- in order.
function M.dispatch(events)
  vim.schedule(function()
    if vim.v.exiting ~= vim.NIL then
      return -- Neovim is quitting: the backend is being shut down, nothing is shown
    end
    for _, e in ipairs(coalesce(events)) do
      handle(e[1], e[2])
    end
  end)
end

return M
