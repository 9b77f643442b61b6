-- What a running terminal does, as the backend sees it every second
-- (internal/terminals/activity.go): whether it waits for input (said once,
-- in its chat and with vim.notify; the chat's note rewritten once it no
-- longer waits) and the ports it listens on (browse opens one).
local api = vim.api
local state = require("agentrun.state")
local term = require("agentrun.ui.term")
local window = require("agentrun.ui.window")

local M = {}

local util = require("agentrun.util")
local notify = util.notify

-- ports_text is how terminal t's listening ports read: ":8000 :5173"
-- ("" for none).
function M.ports_text(t)
  local out = {}
  for _, p in ipairs(t.ports or {}) do
    table.insert(out, ":" .. tostring(p))
  end
  return table.concat(out, " ")
end

-- shown_in_current reports whether the current window shows terminal t.
local function shown_in_current(t)
  return t.bufnr ~= nil and api.nvim_get_current_buf() == t.bufnr
end

-- wait_over rewrites the chat's note that terminal t waits for input once
-- it no longer does (how: "answered", or how it ended), so that it does
-- not stand there as if it still waited.
function M.wait_over(t, how)
  local n = t.wait_note
  t.wait_note = nil
  if not (n and n.chat.buf and api.nvim_buf_is_valid(n.chat.buf)) then
    return
  end
  local asked = n.asked and n.asked ~= "" and (": " .. n.asked) or ""
  n.block.text = string.format("%s waited for input%s (%s)", state.label(t), asked, how)
  n.chat:put_note(n.block)
end

-- activity records what the backend saw of a running terminal: whether
-- it waits for input (an agent's command), the ports it listens on. A
-- command that starts waiting is said once, in its chat and (unless you
-- are in its window already) with vim.notify — :AgentType, which takes
-- you there to type, and its last line (what it asks, most often).
---@param p agentrun.event.terminal_activity
function M.activity(p)
  local t = state.terminals[p.id]
  if not t then
    return
  end
  local was = t.waiting
  t.waiting = p.waiting and true or false
  t.ports = p.ports or {}
  if t.waiting and not was and vim.v.exiting == vim.NIL then
    -- what it asked last: a long one is what gets cut
    local msg = string.format("%s waits for input (:AgentType types into it)", state.label(t))
    if p.last_line and p.last_line ~= "" then
      msg = msg .. ": " .. p.last_line
    end
    -- in the chat (whole), also when you are in its split: the chat keeps
    -- what the turn waited on (typing in the prompt, in Insert mode, the
    -- message line shows "-- INSERT --" over the message)
    local chat = term.chat_of(t)
    if chat then
      t.wait_note = { chat = chat, block = chat:note(msg, "AgentRunNote"), asked = p.last_line }
    end
    if not shown_in_current(t) then
      msg = util.fit(msg, math.max(util.room(), 20)) -- one line, no Press ENTER
      notify(msg, vim.log.levels.WARN)
    end
  elseif was and not t.waiting then
    M.wait_over(t, "answered")
  end
  for _, w in ipairs(t.bufnr and vim.fn.win_findbuf(t.bufnr) or {}) do
    window.set_statusline(w)
  end
  term.changed(t)
end

-- browse opens http://localhost:PORT of a port terminal t listens on
-- (asking which when several). For a command on another machine (an
-- agent's there, or one attached with :AgentAttach ssh://…) the port is
-- forwarded here first (agentrun.portforward).
function M.browse(t)
  local function open(port)
    -- the URL it printed for that port, with its path (/docs/, /app/)
    local path = ""
    for _, l in ipairs(t.bufnr and api.nvim_buf_is_valid(t.bufnr) and api.nvim_buf_get_lines(t.bufnr, 0, -1, false) or {}) do
      local p = l:match("https?://[%w.%-%[%]:]-:" .. tostring(port) .. "(/[^%s\"'<>`]*)")
      if p then
        path = p:gsub("[.,;:!?)%]}]+$", ""):gsub("^/$", "")
        break
      end
    end
    local url = "http://localhost:" .. tostring(port) .. path
    if state.site_of(t.id) or tostring(t.id):match("^ssh://") then
      local u, err = require("agentrun.portforward").url(t, port)
      if not u then
        notify(err)
        return
      end
      url = u:gsub("/$", "") .. path
    end
    util.open_url(url)
  end
  local ports = t.ports or {}
  if #ports == 1 then
    open(ports[1])
    return true
  end
  vim.ui.select(ports, { prompt = t.id .. " listens on:", format_item = function(p)
    return "http://localhost:" .. tostring(p)
  end }, function(p)
    if p then
      open(p)
    end
  end)
  return true
end

return M
