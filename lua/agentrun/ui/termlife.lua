-- How a terminal starts and ends, as the backend says it: created (its
-- split opened, tied to its tool call), its exit recorded (every kind of
-- terminal: User AgentRunTerminalExited, told when no window shows it),
-- released, and its machine's link lost or its backend gone. The split
-- itself is ui/term.lua's.
local api = vim.api
local activity = require("agentrun.ui.activity")
local compat = require("agentrun.compat")
local state = require("agentrun.state")
local term = require("agentrun.ui.term")
local termend = require("agentrun.ui.termend")
local window = require("agentrun.ui.window")

local M = {}

local util = require("agentrun.util")
local notify = util.notify

-- created registers a terminal Go created for the agent and opens its
-- split.
---@param p agentrun.event.terminal_created
function M.created(p)
  if p.session then
    require("agentrun.disk").baseline() -- what the command changes is the agent's
  end
  local t = state.add_terminal({
    id = p.id,
    session = p.session,
    session_id = p.session_id,
    command = p.command,
    title = p.title,
    cwd = p.cwd,
    sandbox = p.sandbox ~= "" and p.sandbox or nil,
  })
  if p.user then
    t.user = true
    return -- shell() opens it
  end
  -- At once, not when a tool call embeds it: from the moment Lua knows a
  -- terminal it has its buffer (status() lists it with its bufnr).
  term.open(t.id, { auto = true })
  if p.session then
    M.tie_by_command(p.session)
  end
end

-- yours reports whether t is a command you ran (an R rerun, :AgentShell
-- cmd): its end is told and its failures loaded as the agent's are. Not
-- an interactive shell (:AgentShell alone), whose end you typed.
function M.yours(t)
  return t.user and not t.session and not t.interactive and (t.command or "") ~= "" and true or false
end

-- ended_unseen tells, once, that the agent's command t ended while no
-- window of this tab page shows it, though one did (its split was closed,
-- or taken by another command, or you went to another tab page; with
-- terminal.position "none" you chose not to see them): how it ended and
-- its last line, with vim.notify (so nvim-notify, noice and fidget show
-- it too). Not once the session ended or Neovim quits.
function M.ended_unseen(t, last)
  local s = state.sessions[t.session or ""]
  -- (a command of yours, an R rerun or :AgentShell cmd, as the agent's)
  if t.end_noticed or t.restarting or not (s or M.yours(t)) or (s and s.ended) or vim.v.exiting ~= vim.NIL then
    return
  end
  if not (t.bufnr and api.nvim_buf_is_valid(t.bufnr) and vim.b[t.bufnr].agentrun_was_shown) then
    return
  end
  local tab = api.nvim_get_current_tabpage()
  for _, w in ipairs(t.bufnr and vim.fn.win_findbuf(t.bufnr) or {}) do
    if api.nvim_win_get_tabpage(w) == tab then
      return
    end
  end
  t.end_noticed = true
  local how = state.how_ended(t) or "ended"
  -- its last line first: a long command line is what gets cut
  local msg = string.format("%s ended (%s): ", state.name_of(t), how)
  if last and last ~= "" then
    msg = msg .. last .. " — "
  end
  msg = msg .. (t.command or "")
  msg = util.fit(msg, math.max(util.room(), 20)) -- one line, no Press ENTER
  notify(msg, t.exit_code == 0 and vim.log.levels.INFO or vim.log.levels.WARN)
end

-- record_exit records that terminal t ended, every kind of terminal (ours,
-- another host's, an agent's own command): p has exit_code or signal, and
-- ran_ms when known; ended_by (an agent's command) why its display ended
-- without them. Said once to whoever listens: User AgentRunTerminalExited.
function M.record_exit(t, p)
  local was = t.state
  if t.state == "running" then
    t.state = "exited"
    t.waiting, t.ports = false, {}
  end
  t.exit_code, t.signal, t.ended_by = p.exit_code, p.signal, p.ended_by
  for _, w in ipairs(t.bufnr and vim.fn.win_findbuf(t.bufnr) or {}) do
    window.set_statusline(w) -- "· exit 1"
  end
  t.last_line = p.last_line or t.last_line
  if t.wait_note then
    activity.wait_over(t, "it ended: " .. (state.how_ended(t) or "ended"))
  end
  t.ran_ms = p.ran_ms or (t.started_ms and (vim.loop.now() - t.started_ms)) or nil
  if was == "running" or not t.exit_said then
    t.exit_said = true
    local d = state.describe_terminal(t)
    compat.user_event("AgentRunTerminalExited", { id = d.id, key = d.key, exit_code = d.exit_code, signal = d.signal, ran_ms = d.ran_ms, how = d.how })
  end
end

-- exited records a terminal's exit (Go writes "[exit N]" in its buffer).
---@param p agentrun.event.terminal_exit
function M.exited(p)
  local t = state.terminals[p.id]
  if not t then
    return
  end
  M.record_exit(t, p)
  require("agentrun.portforward").ended(t.id) -- its ports no longer forwarded here
  if t.session or M.yours(t) then
    -- a command ended: the files it changed show as they are
    require("agentrun.disk").refresh()
    M.ended_unseen(t, p.last_line)
    if not t.restarting then
      -- terminal.on_failure, once the split shows all of the output
      termend.when_end_shown(t, function()
        require("agentrun.ui.quickfix").on_exit(t)
      end)
    end
  end
  -- The command is gone: a user typing into its split in terminal mode
  -- would only feed a dead pty. Back to normal mode, where q, X and
  -- scrolling work.
  if t.bufnr and api.nvim_get_current_buf() == t.bufnr and api.nvim_get_mode().mode == "t" then
    vim.cmd("stopinsert")
  end
  term.changed(t)
end

-- link_dropped says in the splits of url's machine that its link dropped
-- (their commands go on there; the splits stop until it is taken up).
function M.link_dropped(url)
  for _, t in pairs(state.terminals) do
    if t.link_dropped == url and t.chan then
      pcall(api.nvim_chan_send, t.chan, term.guard .. term.reset .. string.format("\r\n[agentrun: link lost; it goes on there: :AgentRun %s]", url))
    end
  end
  term.changed()
end

-- backend_gone ends the splits of the commands of the sessions gone
-- (they waited on url's machine, site, and a new link did not find
-- them): they read as ended, not as lost. gone nil: the link said its
-- backend died (killed, or failed); every running command of site ends.
function M.backend_gone(site, url, gone, backend_found)
  local host = url:gsub("^ssh://", "")
  local of = {}
  for _, s in ipairs(gone or {}) do
    of[s.key] = true
  end
  for _, t in pairs(state.terminals) do
    -- gone == nil: the link said the backend died; its running ones end
    local mine = gone == nil and not t.remote and t.state == "running" or (t.link_dropped == url and of[t.session])
    if mine and state.site_of(t.id) == site then
      t.link_dropped = nil
      M.record_exit(t, { ended_by = backend_found and "its session ended" or "backend gone" })
      local why = backend_found and "ended there while the link was down" or string.format("ended: the backend on %s is gone", host)
      if t.chan then
        pcall(api.nvim_chan_send, t.chan, term.guard .. term.reset .. string.format("\r\n[agentrun: %s]", why))
      end
      term.changed(t)
    end
  end
  term.changed()
end

-- released records that the agent released a terminal.
---@param p agentrun.event.terminal_released
function M.released(p)
  local t = state.terminals[p.id]
  if not t then
    return
  end
  t.state = "released"
  require("agentrun.portforward").ended(t.id)
  term.changed(t)
end

-- tool_terminal shows a terminal our MCP tool ran for a tool call in that
-- tool call's place in the chat (the agent's tool_call does not name it).
---@param p agentrun.event.tool_terminal
function M.tool_terminal(p)
  local t = state.terminals[p.id or ""]
  local s = state.sessions[p.key or ""]
  if t then
    t.tool_call = p.tool_call
  end
  if s and s.chat then
    s.chat:tool_terminal(p.tool_call, p.id)
  end
end

-- ties_by_command tells whether a tool call's title names our MCP
-- run_command tool as an agent names it that does not say in the MCP call
-- which tool call it is (opencode: "agentrun_run_command"; Claude Code's
-- "mcp__agentrun__run_command" comes with its id, tool_terminal).
function M.ties_by_command(title)
  return title == "agentrun_run_command"
end

-- tie_by_command gives session key's newest terminal of ours that no tool
-- call claims to each open tool call of our run_command tool (as
-- ties_by_command names it) that runs the same command line, in
-- whichever order the two came: the tool call's updates may reach us
-- after its command ended.
function M.tie_by_command(key)
  local s = state.sessions[key or ""]
  if not (s and s.chat and s.tool_calls) then
    return
  end
  for id, tc in pairs(s.tool_calls) do
    local input = type(tc.rawInput) == "table" and tc.rawInput or {}
    if not tc.agentrun_terminals and M.ties_by_command(tc.title) and type(input.command) == "string" then
      for i = #state.terminal_order, 1, -1 do
        local t = state.terminals[state.terminal_order[i]]
        if t and t.session == key and not t.display_only and not t.user and not t.tool_call and t.command == input.command then
          M.tool_terminal({ key = key, tool_call = id, id = t.id })
          break
        end
      end
    end
  end
end

return M
