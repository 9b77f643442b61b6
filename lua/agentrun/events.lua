-- Events from Go. The bridge calls dispatch() with nvim_exec_lua from one
-- ordered queue; dispatch returns at once and handles the event on the
-- main loop (vim.schedule keeps the order), so Go never waits on the UI.
-- Which module handles which event is registered with on() (handlers.lua
-- does it), so this module needs none of them.
local binary = require("agentrun.binary")
local compat = require("agentrun.compat")
local rpc = require("agentrun.rpc")
local util = require("agentrun.util")

local M = {}

-- names lists every event Go sends (internal/event/names.go has the same).
M.names = {
  "agent_terminal",
  "approve",
  "approve_cancelled",
  "auth_required",
  "chat_note",
  "display_ended",
  "elicitation",
  "elicitation_complete",
  "elicitation_withdrawn",
  "history_replayed",
  "message",
  "our_tool",
  "permission",
  "permission_cancelled",
  "prompt_sent",
  "remote_claimed",
  "session_ended",
  "session_failed",
  "session_list",
  "session_quiet",
  "session_started",
  "session_update",
  "ssh_connected",
  "terminal_activity",
  "terminal_created",
  "terminal_exit",
  "terminal_released",
  "tool_terminal",
  "turn_end",
}

local known = {}
for _, name in ipairs(M.names) do
  known[name] = true
end

-- name -> function(payload), as registered with on()
local handlers = {}

-- on makes fn(payload) the handler of event name (one of names).
function M.on(name, fn)
  assert(known[name], "agentrun.events: no event " .. tostring(name))
  handlers[name] = fn
end

-- check raises an error naming every event without a handler.
function M.check()
  local missing = {}
  for _, name in ipairs(M.names) do
    if not handlers[name] then
      table.insert(missing, name)
    end
  end
  assert(#missing == 0, "agentrun.events: no handler for " .. table.concat(missing, ", "))
end

-- User autocommands fired once an event was handled (the UI shows it):
-- for statuslines and scripts, and for tests to wait on.
local user_events = {
  session_started = "AgentRunSessionStarted",
  session_ended = "AgentRunSessionEnded",
  turn_end = "AgentRunTurnEnd",
  terminal_created = "AgentRunTerminalCreated",
  terminal_released = "AgentRunTerminalReleased",
  terminal_activity = "AgentRunTerminalActivity",
}

local function handle(name, p)
  local h = handlers[name]
  if not h then
    if not known[name] then
      rpc.log("warn", "no such event " .. tostring(name))
    end
    return
  end
  p = p or {}
  local ok, err = xpcall(h, debug.traceback, p)
  if not ok then
    rpc.log("error", string.format("handler %s: %s", name, err))
    util.notify(string.format("internal error handling %s (details in %s)", name, binary.log_path()), vim.log.levels.ERROR)
  end
  if user_events[name] then
    compat.user_event(user_events[name], {
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
