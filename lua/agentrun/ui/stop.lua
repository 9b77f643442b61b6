-- Stopping a session's running command from wherever the user is: <C-c>
-- and X in the chat and the prompt, require("agentrun").stop_command().
-- The session's newest running terminal gets SIGINT (or is killed);
-- <C-c> again on the same command in the same turn, or with no command
-- running, cancels the turn.
local compat = require("agentrun.compat")
local config = require("agentrun.config")
local conversation = require("agentrun.conversation")
local state = require("agentrun.state")
local term = require("agentrun.ui.term")
local util = require("agentrun.util")

local M = {}

local function warn(msg)
  util.notify(msg, vim.log.levels.WARN)
end

-- command(key, kill) stops the running command of a session (default:
-- the current one) from wherever the user is: its newest running terminal
-- gets SIGINT (kill: killed). <C-c> again on the same command in the same
-- turn, or with no command running, cancels the turn.
function M.command(key, kill)
  local s = state.session(key)
  if s and s.link_dropped then
    conversation.say_link_dropped(s) -- not "no running session": it runs there
    return false
  end
  if not s or s.ended then
    warn("no running session")
    return false
  end
  local newest
  for i = #state.terminal_order, 1, -1 do
    local t = state.terminals[state.terminal_order[i]]
    if t and t.session == s.key and t.state == "running" and not t.user then
      newest = t
      break
    end
  end
  local now = compat.uv.now()
  -- again on the command it interrupted in this turn, however late: the
  -- hint said it cancels the turn
  local again = newest and s.busy and s.interrupted and s.interrupted.id == newest.id
  if not newest or (again and not kill) then
    if s.busy or (s.starting and #s.queue > 0) then
      return conversation.cancel(s.key) -- starting: drops what waits for it
    end
    warn("nothing is running in this session")
    return false
  end
  if kill then
    term.kill(newest.id, false)
  else
    s.interrupted = { id = newest.id, at = now }
    term.interrupt(newest.id)
    if not newest.display_only and not s.busy then
      -- no turn runs (a command the agent left running): none to cancel
      s.chat:note(string.format("(interrupted `%s`)", newest.command or newest.id))
    elseif not newest.display_only then
      if s.interrupted_note then
        s.chat:remove(s.interrupted_note)
      end
      -- Queued prompts go back to the prompt when this turn ends
      -- (conversation.hold_queue); a second <C-c> drops them.
      local queued = #(s.queue or {}) > 0 and string.format(" and drops the %d queued prompt%s", #s.queue, #s.queue == 1 and "" or "s") or ""
      s.interrupted_note = s.chat:note(string.format("(interrupted `%s`; %s again cancels the turn%s)", newest.command or newest.id, config.get().keymaps.interrupt or "<C-c>", queued))
    end
  end
  return true
end

return M
