-- Terminal splits: the split itself. Lua creates each terminal buffer
-- with nvim_open_term (it needs a Lua on_input callback) and hands the
-- channel to Go, whose display pump feeds it with nvim_chan_send.
-- Keystrokes go back with rpcnotify("input"). Display-only agent
-- terminals (the agent ran the command itself and streams it in _meta)
-- are fed from here instead (feed). Its end marker, kept in sight, is
-- ui/termend.lua's; how terminals start and end ui/termlife.lua's; the
-- user's terminals and who holds one ui/userterm.lua's; what a running
-- one does ui/activity.lua's; stopping one ui/stop.lua's; the windows it
-- opens in ui/window.lua's.
local api = vim.api
local cmdwin = require("agentrun.ui.cmdwin")
local compat = require("agentrun.compat")
local config = require("agentrun.config")
local rpc = require("agentrun.rpc")
local state = require("agentrun.state")
local window = require("agentrun.ui.window")

local M = {}

local notify = require("agentrun.util").notify

-- chat_of returns the chat of terminal t's session (nil for none).
function M.chat_of(t)
  local s = state.sessions[t.session or ""]
  return s and s.chat
end

-- on_change lists functions called whenever a terminal started, ended,
-- changed hands or went (the terminal list refreshes there).
M.on_change = {}

-- changed tells that terminal t changed (started, ended, changed hands):
-- its chat's line of it, and the terminal list (M.on_change). With no
-- t, the list alone (a terminal went, or several changed).
function M.changed(t)
  -- its split's status line says how it stands and who holds it
  for _, w in ipairs(t and t.bufnr and vim.fn.win_findbuf(t.bufnr) or {}) do
    window.set_statusline(w)
  end
  -- a rerun (R) has a line of its own in its first run's chat, where it
  -- happened
  local first = t and t.row_of and state.terminals[t.row_of] or t
  local chat = first and M.chat_of(first)
  if chat and first ~= t then
    chat:rerun_changed(t)
  elseif chat then
    chat:terminal_changed(first.id)
  elseif not t then
    -- a terminal went: a rerun's line may say it was disposed of
    for _, s in pairs(state.sessions) do
      if s.chat and s.chat.reruns then
        s.chat:refresh_reruns()
      end
    end
  end
  for _, fn in ipairs(M.on_change) do
    fn()
  end
end

-- on_buffer lists functions called with a terminal once its split's
-- buffer exists (ui/actions.lua maps the split's keys there), so that
-- this module needs none of the modules above it.
M.on_buffer = {}

-- feed writes data into terminal t's split (an agent-shown terminal's
-- output, a marker), or keeps it until the split has its buffer.
function M.feed(t, data)
  if t.chan then
    pcall(api.nvim_chan_send, t.chan, M.guard .. data)
  else
    t.pending = t.pending or {}
    table.insert(t.pending, data)
  end
end

-- open shows terminal id. opts.focus enters its window (and opens one even
-- when terminal.position is "none"); opts.auto opens it only if it has no
-- buffer yet (a tool call embedded it).
function M.open(id, opts)
  opts = opts or {}
  local t = state.terminals[id]
  if not t then
    notify(state.unknown_text(id))
    return
  end
  window.watch()
  local position = config.get().terminal.position
  if opts.focus and position == "none" then
    position = "below"
  end
  local prev = api.nvim_get_current_win()
  if t.bufnr and api.nvim_buf_is_valid(t.bufnr) then
    if opts.auto then
      return
    end
    local w = vim.fn.bufwinid(t.bufnr)
    if w == -1 then
      w = window.place(t.bufnr, position)
    end
    api.nvim_set_current_win(w)
    return
  end
  local buf = api.nvim_create_buf(false, true)
  local win, restore
  if position ~= "none" and cmdwin.open() then
    -- The command-line window (q:) forbids opening or entering another:
    -- the terminal starts without a window; its split shows once q: closed.
    cmdwin.after(function()
      if api.nvim_buf_is_valid(buf) and vim.fn.bufwinid(buf) == -1 then
        local back = api.nvim_get_current_win()
        local w = window.place(buf, position)
        if opts.focus then
          api.nvim_set_current_win(w)
        elseif api.nvim_win_is_valid(back) then
          api.nvim_set_current_win(back)
        end
      end
    end)
  elseif position ~= "none" then
    -- what our terminal window shows now: a refused attach puts it back
    local shown_before = {}
    for _, w in ipairs(api.nvim_tabpage_list_wins(0)) do
      if vim.w[w].agentrun_terminal_window == position then
        shown_before[w] = api.nvim_win_get_buf(w)
      end
    end
    win = window.place(buf, position)
    restore = { win = win, buf = shown_before[win], prev = prev }
  end
  local function open_term()
    return compat.open_term(buf, function(_, _, _, data)
      M.input(t, data)
    end)
  end
  local chan
  if win and t.state ~= "running" then
    -- An ended split made again gets its whole output at once: its
    -- terminal must start at its window's size (Neovim makes it the
    -- current window's, then resizes it: 0.7 and 0.10 resized under a
    -- flood put blank lines at its top and the colours off by as many).
    chan = api.nvim_win_call(win, open_term)
  else
    chan = open_term()
  end
  -- a new buffer: its end is shown once the backend wrote it there
  t.bufnr, t.chan, t.end_shown, t.end_lines = buf, chan, nil, nil
  if win then
    window.set_statusline(win) -- "· running · agent's": placed before it was t's
  end
  require("agentrun.ui.follow").attach(buf)
  vim.bo[buf].scrollback = config.get().terminal.scrollback
  M.name_buffer(t)
  api.nvim_buf_set_var(buf, "agentrun_terminal", id)
  for _, fn in ipairs(M.on_buffer) do
    fn(t)
  end
  if t.display_only then
    for _, d in ipairs(t.pending or {}) do
      M.feed(t, d)
    end
    t.pending = nil
  else
    local cols, rows = 80, 24
    if win then
      cols, rows = window.size(win)
    end
    t.cols, t.rows = cols, rows
    local res, err = rpc.request(t.remote and "remote_attach" or "attach", id, chan, { cols = cols, rows = rows, scrollback = vim.bo[buf].scrollback })
    if err and t.remote and not t.shown then
      -- no such terminal of another host: nothing of it stays (the
      -- backend's sentence, or its short form at 60 columns)
      local pid = tostring(err):gsub("^%(agentrun%) ", ""):match("^no agentrun host (%d+) is running; see :AgentTerminals$")
      notify(pid and { err, string.format("no host %s (:AgentTerminals)", pid) } or err)
      t.bufnr, t.chan = nil, nil
      -- Nothing on screen changes: the terminal window shows again what
      -- it showed (deleting the buffer would close it), focus goes back.
      local r = restore
      if r and r.buf and api.nvim_win_is_valid(r.win) and api.nvim_buf_is_valid(r.buf) then
        api.nvim_win_set_buf(r.win, r.buf)
        require("agentrun.ui.follow").reset(r.win)
      end
      pcall(api.nvim_buf_delete, buf, { force = true })
      if r and api.nvim_win_is_valid(r.prev) then
        api.nvim_set_current_win(r.prev)
      end
      state.remove_terminal(id)
      return false
    elseif err then
      notify(err)
    elseif t.remote and type(res) == "table" then
      t.claim, t.user, t.command, t.claim_seq = res.claim, res.mine, res.title, res.seq
      -- nobody's once its Neovim quit: that Neovim never comes back
      t.was_detached = t.was_detached or (type(res.claim) == "table" and res.claim.client_id == "detached")
      M.name_buffer(t)
      if win then
        window.set_statusline(win) -- whose it is: another Neovim's, or yours
      end
      if t.user then
        window.resize_terminal(t) -- ours already (taken over before): our size
      end
    end
  end
  if win and not opts.focus and api.nvim_win_is_valid(prev) then
    api.nvim_set_current_win(prev)
  elseif win then
    api.nvim_set_current_win(win)
  end
end

-- words makes command text fit a buffer name the tab line shows whole:
-- Neovim shortens a name at each "/" there (agentrun://terminal/term-2
-- read "a//t/term-2"), so a slash is written "∕" (U+2215), spaces one;
-- and it cuts a long label from its left (the id went first), so the
-- text is cut to 20 characters ("…" says so; the status line has it all).
-- (a tab page's label is cut from its start when it is wider than the
-- tab line gives it: 26 cells each for two tab pages at 60 columns.
-- A name of at most 24 keeps its id there.)
local name_cells = 24

local function words(text, cells)
  return require("agentrun.util").fit((text:gsub("%s+", " "):gsub("/", "∕")), cells)
end

-- name_buffer names t's buffer in words, as the tab line shows it: its
-- name (term-N, what the commands take; a rerun's, its first run's id,
-- as the list shows it) and its command ("term-1 go test .∕..."); an
-- earlier run of a command R ran again says its run ("term-1 run 1 go
-- test .∕..."). A command the agent runs itself is named by its command
-- alone: the agent's id for it (run_shell_command__call_1) means nothing
-- to the user; its id comes back only to tell two of the same command
-- apart. The split's status line says the rest (ui/window.lua); the
-- splits are found by their buffer variable (agentrun_terminal), never
-- by name.
function M.name_buffer(t)
  if t.bufnr and api.nvim_buf_is_valid(t.bufnr) then
    vim.b[t.bufnr].agentrun_terminal = t.id
    local label = state.label(t)
    if t.rerun_as then
      label = label .. " run " .. tostring(t.runs or 1) -- R ran it again: an earlier run
    end
    -- (the description the agent gave it, when it gave no command: the
    -- status line says both)
    local what = t.command and t.command ~= "" and t.command ~= t.id and t.command or t.title or ""
    -- (another machine's attached terminal: ssh://devbox/PID:term-N)
    label = label:gsub("/", "∕")
    local name = label .. (what ~= "" and (" " .. words(what, math.max(8, name_cells - vim.fn.strchars(label) - 1))) or "")
    local short = t.display_only and what ~= "" and words(what, name_cells)
    local sandbox = t.sandbox and t.sandbox ~= "" and (" [sandbox: " .. t.sandbox:match("^%S+") .. "]") or ""
    if not (short and pcall(api.nvim_buf_set_name, t.bufnr, short .. sandbox)) then
      pcall(api.nvim_buf_set_name, t.bufnr, name .. sandbox)
    end
  end
end

-- reset goes before a line the plugin writes into a terminal (a marker such
-- as "[cancelled]"), so it reads right whatever the command left on; guard
-- starts every write, as Neovim may have resized the terminal since the
-- last. The same bytes as Go's vtsafe.Reset and vtsafe.Guard
-- (internal/vtsafe/vtsafe.go says why; TestLuaResetAndGuardAreGos keeps
-- them equal).
M.reset = "\24\0277\27[?6l\27[r\0278\27[0m\27(B\27)B\27*B\27+B\15\27[4l\27[?7h\27[?69l\27[?5l"
M.guard = "\27[?0h"

-- input forwards terminal-mode keystrokes to the pty.
function M.input(t, data)
  if t.display_only then
    return
  end
  rpc.notify(t.remote and "remote_input" or "input", t.id, data)
end

return M
