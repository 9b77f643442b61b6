-- util: small helpers the UI modules share.
local api = vim.api

local M = {}

local prefix = "(agentrun) "

-- width is s's width in display columns: its length when it is printable
-- ASCII, else Neovim's measure (strdisplaywidth with a tab), remembered:
-- a list of hundreds of rows measures every cell on each refresh, most
-- of them the same ("—", "released (exit 0)").
local widths, nwidths = {}, 0
function M.width(s)
  if not s:find("[^\32-\126]") then
    return #s
  end
  local w = widths[s]
  if w then
    return w
  end
  w = s:find("\t") and vim.fn.strdisplaywidth(s) or api.nvim_strwidth(s)
  if nwidths > 4096 then
    widths, nwidths = {}, 0
  end
  widths[s], nwidths = w, nwidths + 1
  return w
end

-- fit cuts s to at most width display columns, ending in "…" when it was
-- wider.
function M.fit(s, width)
  if M.width(s) <= width then
    return s
  end
  if not s:find("[^\32-\126]") then
    return s:sub(1, math.max(width - 1, 0)) .. "…"
  end
  local out, used = {}, 0
  for _, ch in ipairs(vim.fn.split(s, "\\zs")) do
    local w = vim.fn.strdisplaywidth(ch)
    if used + w > width - 1 then
      break
    end
    table.insert(out, ch)
    used = used + w
  end
  return table.concat(out) .. "…"
end

-- fit_parts fits a line of parts joined by " · " (a status line) in
-- width display columns without cutting a word: first without its
-- remarks in parentheses ("Default (recommended)" → "Default"), then
-- without its last parts (keeping keep of them, default 3), and only then
-- cut with "…".
function M.fit_parts(s, width, keep)
  if vim.fn.strdisplaywidth(s) <= width then
    return s
  end
  s = s:gsub(" %b()", "")
  local parts = vim.split(s, " · ", { plain = true })
  while #parts > (keep or 3) and vim.fn.strdisplaywidth(table.concat(parts, " · ")) > width do
    table.remove(parts)
  end
  return M.fit(table.concat(parts, " · "), width)
end

-- room is how many columns a message has after "(agentrun) " before
-- Neovim stops the screen at "Press ENTER": a message that reaches the
-- columns 'showcmd' and 'ruler' keep on the last line (v:echospace) asks
-- for it even when it fits 'columns', one that wraps beyond 'cmdheight'
-- does too.
function M.room()
  return vim.v.echospace + math.max(vim.o.cmdheight - 1, 0) * vim.o.columns - #prefix
end

-- form is what notify says of msg: msg, or the form of a list it picks.
function M.form(msg)
  if type(msg) ~= "table" then
    return tostring(msg)
  end
  if not M.builtin_notify() then
    return tostring(msg[1])
  end
  local room = M.room()
  for _, f in ipairs(msg) do
    if M.width((tostring(f):gsub("^%(agentrun%) ", ""))) <= room then
      return tostring(f)
    end
  end
  return tostring(msg[#msg])
end

-- notify tells the user msg, with the "(agentrun) " prefix (added when
-- msg lacks it), at level (default WARN): the plugin's one way to speak.
-- Each line it adds stops the screen at "Press ENTER" when an action says
-- two things: an action says one (see about). msg may be a list of ways
-- to say it, longest first: the first that fits the room (M.room) is
-- said, else the last; to another vim.notify (nvim-notify's, noice's),
-- where no room stops the screen, the first.
-- in_command counts the agentrun commands running (plugin/agentrun.lua).
M.in_command = 0

function M.notify(msg, level)
  msg = M.form(msg)
  if msg:sub(1, #prefix) ~= prefix then
    msg = prefix .. msg
  end
  local a = M._about
  if a and not a.said then
    local at = msg:find(a.id, 1, true)
    if at then
      a.said = true
      local after = at + #a.id
      msg = msg:sub(1, after - 1) .. " (" .. a.note .. ")" .. msg:sub(after)
    end
  end
  level = level or vim.log.levels.WARN
  msg = M.cut(msg)
  if level == vim.log.levels.ERROR and M.in_command > 0 and M.builtin_notify() then
    -- Neovim's own vim.notify says an ERROR as an error message, which a
    -- command run through vim.cmd (lazy.nvim's stand-in for a command it
    -- loads the plugin for, a mapping's pcall) turns into a Lua error: our
    -- sentence in a stack traceback. The same red line, as a message. (Not
    -- outside a command: a message from a callback is cleared by the next
    -- redraw, where an error message stays.)
    vim.api.nvim_echo({ { msg, "ErrorMsg" } }, true, {})
    return
  end
  vim.notify(msg, level)
end

-- cut makes a one-line msg that would stop the screen at "Press ENTER"
-- only because it reaches the columns 'showcmd' and 'ruler' keep (it is
-- wider than the room, M.room, but fits the screen's width) fit in one
-- line: cut to it, ending in "…", the "(agentrun) " prefix kept, so every
-- message reads alike (it dropped the prefix where that was enough: the
-- same message had it at 60 columns and not at 80). A message from a
-- callback or a mapping stops the screen at once, even if a redraw
-- follows, so its whole text cannot be kept in :messages without the
-- prompt. A message wider than the screen is said whole (an error with
-- its reason and fix: it wraps, and asks for Enter, nothing of it lost);
-- the messages of ours that matter are worded to fit 60 columns, or give
-- shorter forms (notify). To another vim.notify, and for a message of
-- several lines, msg as is.
function M.cut(msg)
  if msg:find("\n") or not M.builtin_notify() then
    return msg
  end
  local room = M.room() + #prefix
  local w = M.width(msg)
  if w <= room or w > vim.o.columns * math.max(vim.o.cmdheight, 1) - 1 then
    return msg
  end
  return M.fit(msg, math.max(room, #prefix + 2))
end

-- builtin_notify tells whether vim.notify is still Neovim's own (not
-- nvim-notify's, noice's or a test's): its source is Neovim's vim._editor module,
-- or "?" where Neovim's Lua is built in stripped (0.12).
function M.builtin_notify()
  local ok, info = pcall(debug.getinfo, vim.notify, "S")
  return ok and info and (info.source == "?" or info.source == "@vim/_editor.lua") or false
end

-- about runs fn, whose message names id, with note about id: the note
-- goes into that message after the id ("term-12 (newest running) is
-- detached: …"), one line, not two. When fn says nothing that names id,
-- the note is said alone (fallback, "kill: term-12, the newest running
-- terminal"). Returns what fn returned.
function M.about(id, note, fallback, fn)
  local outer = M._about
  M._about = { id = id, note = note }
  local ok, res = pcall(fn)
  local said = M._about.said
  M._about = outer
  if not said then
    M.notify(fallback, vim.log.levels.INFO)
  end
  if not ok then
    error(res, 0)
  end
  return res
end

-- set_win_opts gives a window of ours the plain look (no numbers, sign or
-- fold column), plus extra window options.
-- lines_of returns lines made fit for nvim_buf_set_lines: a line break
-- inside one (a multi-line command in a title) becomes a space, byte for
-- byte, so highlight columns computed on the line stay right.
function M.lines_of(lines)
  for i, l in ipairs(lines) do
    if type(l) == "string" and l:find("[\r\n]") then
      lines[i] = l:gsub("[\r\n]", " ")
    end
  end
  return lines
end

function M.set_win_opts(win, extra)
  local opts = { number = false, relativenumber = false, signcolumn = "no", foldcolumn = "0" }
  for k, v in pairs(extra or {}) do
    opts[k] = v
  end
  for k, v in pairs(opts) do
    pcall(function()
      vim.wo[win][k] = v
    end)
  end
end

-- close_window closes the current window (unless it is the last one) and
-- returns to the window the user came from (wincmd p), not to whichever
-- one Neovim would pick.
function M.close_window()
  if #api.nvim_tabpage_list_wins(0) <= 1 then
    return
  end
  local prev = vim.fn.win_getid(vim.fn.winnr("#"))
  api.nvim_win_close(0, false)
  if prev ~= 0 and api.nvim_win_is_valid(prev) then
    api.nvim_set_current_win(prev)
  end
end

-- url_at_cursor returns the URL under the cursor in the current window
-- (scheme://…, without the punctuation that ends a sentence), or nil.
function M.url_at_cursor()
  local line = vim.api.nvim_get_current_line()
  local col = vim.api.nvim_win_get_cursor(0)[2] + 1
  local from = 1
  while true do
    local s, e = line:find("%a[%w+.-]*://[^%s<>\"'`]+", from)
    if not s then
      return nil
    end
    if col >= s and col <= e then
      local url = line:sub(s, e):gsub("[.,;:!?)%]}]+$", "")
      return url
    end
    from = e + 1
  end
end

-- open_url_at_cursor opens the URL under the cursor (else the file name
-- there, as Neovim's gx) with the system's browser, and says in our words
-- when nothing can (Neovim's gx shows vim.ui.open's own error text).
function M.open_url_at_cursor()
  local url = M.url_at_cursor() or vim.fn.expand("<cfile>")
  if url == "" then
    return M.notify("no URL under the cursor", vim.log.levels.INFO)
  end
  M.open_url(url)
end

-- open_url opens url with the system's browser (compat.open_url) and
-- says in our words when nothing can, in one line: with no browser, the
-- URL it would open named (at 60 columns without its scheme, cut to fit
-- the room, M.room, if need be: "set $BROWSER to open localhost:8000").
function M.open_url(url)
  local ok, err, short = require("agentrun.compat").open_url(url)
  if ok then
    return true
  end
  local forms = { err }
  if short == "no browser found: set $BROWSER" then
    table.insert(forms, string.format("no browser for %s; set $BROWSER", url))
    local lead = "set $BROWSER to open "
    local room = M.room() - #lead
    if room >= 8 then
      table.insert(forms, lead .. M.fit((url:gsub("^%a[%w+.-]*://", "")), room))
    end
  end
  table.insert(forms, short)
  M.notify(forms)
  return false
end

return M
