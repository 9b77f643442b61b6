-- Terminals the agent runs itself and only shows (Claude Code's, Codex's,
-- the ACP v2 draft's): Go decodes what the agent says of them into typed
-- agent_terminal events (acp/agentterm/decode.go); this module shows them in
-- display-only splits, fed from here, and gives them a final state when
-- the turn or session ends without the agent saying so.
local api = vim.api
local state = require("agentrun.state")

local M = {}

local term = require("agentrun.ui.term")
local termlife = require("agentrun.ui.termlife")

-- local_id is the id this editor gives terminal id of session's agent: the
-- agent chooses its ids, and another agent may use the same one, so an id
-- another session already has gets the session key after it ("call_1@2").
local function local_id(session, id)
  local t = state.terminals[id]
  if t and t.session ~= session.key then
    return id .. "@" .. session.key
  end
  return id
end

local function display_only(session, id, tc)
  id = local_id(session, id)
  local t = state.terminals[id]
  if not t then
    t = state.add_terminal({
      id = id,
      session = session.key,
      session_id = session.id,
      command = tc and tc.title or id,
      display_only = true,
      started_ms = vim.loop.now(), -- for how long it ran
    })
  end
  return t
end

-- from_tool_call opens the splits of the terminals a tool call embeds
-- (what agents say of terminals they run themselves arrives decoded, as
-- agent_terminal events).
function M.from_tool_call(session, tc, u)
  for _, c in ipairs(type(u.content) == "table" and u.content or {}) do
    if c.type == "terminal" and c.terminalId then
      local t = state.terminals[local_id(session, c.terminalId)]
      if t and t.session == session.key then
        t.tool_call = tc.toolCallId
        if not t.bufnr then
          term.open(t.id, { auto = true })
        end
      end
    end
  end
end

-- waiting_note is what an agent-owned split shows until output arrives:
-- agents such as Claude Code show a command's output only when it ended.
local waiting_note = "\27[2m(the agent runs this command itself; it shows the output here when it has it)\27[0m\r\n"

-- replace_display gives t a fresh terminal buffer in the windows that
-- showed the old one (an agent replaced the whole output).
local function replace_display(t)
  local old = t.bufnr
  local wins = old and vim.fn.win_findbuf(old) or {}
  t.bufnr, t.chan = nil, nil
  term.open(t.id, { auto = true })
  for _, w in ipairs(wins) do
    if api.nvim_win_is_valid(w) and t.bufnr then
      api.nvim_win_set_buf(w, t.bufnr)
    end
  end
  if old and api.nvim_buf_is_valid(old) then
    pcall(api.nvim_buf_delete, old, { force = true })
  end
end

-- agent_terminal shows what the agent said of a terminal it runs itself
-- (decoded in Go: acp/agentterm/decode.go): it appears, its title follows the
-- command line, output is appended (or replaces what was shown), and its
-- end is marked as for our own terminals.
---@param p agentrun.event.agent_terminal
function M.agent_terminal(p)
  local session = state.sessions[p.key or ""]
  if not session then
    return
  end
  local t = display_only(session, p.id, { title = p.title or p.id })
  t.tool_call = p.tool_call or t.tool_call
  local tc = t.tool_call and session.tool_calls and session.tool_calls[t.tool_call]
  if tc then
    tc.shown_by = t.id -- the chat says how it ended (ui/toolcall.lua)
  end
  t.cwd = p.cwd or t.cwd
  t.keeps_reporting = t.keeps_reporting or p.keeps_reporting
  if p.title and p.title ~= t.command then
    t.command = p.title
    term.changed(t)
    term.name_buffer(t)
  end
  if p.replace and t.bufnr then
    replace_display(t)
  elseif not t.bufnr then
    term.open(t.id, { auto = true })
  end
  local late = not session.busy and not session.starting -- its turn is over
  if p.started and not p.data and not p.exited and t.state == "running" and not late then
    term.feed(t, waiting_note)
  end
  if p.data and p.data ~= "" then
    term.feed(t, p.data)
  end
  if p.exited and t.state == "running" then
    termlife.record_exit(t, { exit_code = p.exit_code, signal = p.signal, ended_by = p.ended_by })
    term.feed(t, term.reset .. "\r\n" .. (p.end_line or "[failed]") .. "\r\n")
    term.changed(t)
    require("agentrun.disk").refresh() -- the files it changed show as they are
    if not p.not_run then
      termlife.ended_unseen(t, p.last_line)
    end
  end
  if t.state == "running" and late then
    -- Said of after its turn ended (Claude Code sends a cancelled
    -- command's tool call after the turn's end): nothing more comes for
    -- it, so it ends now, as the turn's other commands did.
    M.settle(session.key, session.turn_ended_by or "ended with the turn")
  end
end

-- settle ends the display of every agent-shown terminal of session key
-- that is still open (the turn or session ended; agents such as Claude
-- Code send nothing for a cancelled command) with a marker saying why.
-- One whose agent goes on reporting it (codex-acp: the command goes on
-- after a cancel) stays as the agent last said until it reports the end,
-- unless the session itself ended (why "stopped").
function M.settle(key, why)
  for _, t in pairs(state.terminals) do
    if t.display_only and t.session == key and t.state == "running" and not (t.keeps_reporting and why ~= "stopped") then
      termlife.record_exit(t, { ended_by = why })
      term.feed(t, term.reset .. string.format("\r\n[%s]\r\n", why))
      term.changed(t)
    end
  end
end

return M
