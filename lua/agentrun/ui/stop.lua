-- Stopping terminals: one interrupted, killed or disposed of (the split's
-- keys, :AgentKill), and a session's running command from wherever the
-- user is: <C-c> and X in the chat and the prompt,
-- require("agentrun").stop_command().
-- The session's newest running terminal gets SIGINT (or is killed);
-- <C-c> again on the same command in the same turn, or with no command
-- running, cancels the turn.
local api = vim.api
local compat = require("agentrun.compat")
local config = require("agentrun.config")
local conversation = require("agentrun.conversation")
local rpc = require("agentrun.rpc")
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
    -- kill: also your R rerun of this session's command (the list shows
    -- it in the session's rows)
    local row = t and t.row_of and state.terminals[t.row_of]
    if t and t.state == "running" and ((t.session == s.key and not t.user) or (kill and row and row.session == s.key)) then
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
    -- said in the chat too (once: a later press moves it down): from
    -- the prompt in insert mode "-- INSERT --" hides a message at once
    local what = kill and "nothing to kill: no command of this session runs" or "no turn to cancel: nothing runs in this session"
    warn(what)
    if s.chat then
      if s.idle_note then
        s.chat:remove(s.idle_note)
      end
      s.idle_note = s.chat:note(kill and "(nothing to kill: no command runs)" or "(no turn to cancel: nothing runs)")
    end
    return false
  end
  if kill then
    M.kill(newest.id, false)
  else
    s.interrupted = { id = newest.id, at = now }
    M.interrupt(newest.id)
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

-- dispose kills terminal id if it runs, releases it and wipes its buffer
-- (another host's: shown here, its split goes; its host killed it).
function M.dispose(id)
  local t = state.terminals[id]
  if not t then
    return false
  end
  if not t.display_only and not t.remote and rpc.running(id) then
    -- Go only fails for an id it does not know: nothing runs there then.
    local _, err = rpc.request("dispose", id)
    if err then
      util.notify(err)
    end
  end
  if t.bufnr and api.nvim_buf_is_valid(t.bufnr) then
    pcall(api.nvim_buf_delete, t.bufnr, { force = true })
  end
  local chat = term.chat_of(t)
  state.remove_terminal(id)
  -- what the chat says of it from now on (its record is gone)
  state.disposed[id] = { command = t.command, was = t.state == "running" and "killed and disposed of (dd)" or "disposed of (dd)" }
  if chat then
    chat:terminal_changed(id)
  end
  term.changed()
  return true
end

local function cancel_turn(t)
  conversation.cancel(t.session)
end

-- interrupt sends SIGINT to terminal id's process group (display-only
-- terminals: cancels the turn).
function M.interrupt(id)
  local t = state.terminals[id]
  if t and t.display_only then
    return cancel_turn(t)
  end
  if t and t.remote then
    return rpc.notify("remote_input", id, "\3") -- Ctrl-C, as typed (if you hold it)
  end
  local _, err = rpc.request("interrupt", id)
  if err then
    util.notify(err)
  end
end

-- kill kills terminal id's process group: SIGTERM then SIGKILL after the
-- grace period, or SIGKILL at once when force is set; a message says so
-- when no split in sight shows its end. remote: id is
-- another host's (PID:term-N), shown here or not: its host kills it, as
-- `agentrun kill` does; false when it could not.
function M.kill(id, force, remote)
  local t = state.terminals[id]
  if t and t.display_only then
    return cancel_turn(t)
  end
  if remote or (t and t.remote) then
    local _, err = rpc.request("remote_dispose", id) -- its host kills it
    if err then
      util.notify(err)
      return false
    end
    if not (t and t.bufnr and api.nvim_buf_is_valid(t.bufnr)) then
      -- no split here shows its end
      util.notify(string.format("killed %s", id), vim.log.levels.INFO)
    end
    return true
  end
  local res, err = rpc.request("kill", id, force and true or false)
  if err then
    util.notify(err)
    return false
  end
  if t and t.state == "running" then
    t.killed = true -- its end is yours: "killed", not a failure
  end
  if not (t and t.bufnr and vim.fn.bufwinid(t.bufnr) ~= -1) then
    -- no split in sight shows its end: say what was done (short: with
    -- "(agentrun) " and "(newest running)" it fits 80 columns)
    local grace = type(res) == "table" and tonumber(res.grace_ms) or 0
    if force or grace <= 0 then
      util.notify(string.format("%s is killed (SIGKILL)", t and state.label(t) or id), vim.log.levels.INFO)
    else
      util.notify(string.format("%s: SIGTERM sent; SIGKILL in %g s", t and state.label(t) or id, grace / 1000), vim.log.levels.INFO)
    end
  end
  return true
end

return M
