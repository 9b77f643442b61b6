-- file:line under the cursor in a terminal split or the chat (a compiler
-- error, a failing test, a stack trace) opens in the editor window you
-- came from, never inside the split: gf, gF and <CR>. The path is found
-- relative to the command's cwd (then the session's, then Neovim's, then
-- below them: `go test` names a file of the package's directory).
local state = require("agentrun.state")
local util = require("agentrun.util")

local api = vim.api
local M = {}

-- ours says whether window w shows a buffer of agentrun's (a split, the
-- chat, the prompt, the list) or a special one.
local function ours(w)
  local b = api.nvim_win_get_buf(w)
  return api.nvim_buf_get_name(b):match("^agentrun://") ~= nil or vim.bo[b].buftype ~= ""
end

-- last is the last editor window the user was in.
local last

local group = api.nvim_create_augroup("agentrun_gotofile", { clear = true })
api.nvim_create_autocmd("WinLeave", {
  group = group,
  desc = "agentrun: the editor window a file:line opens in",
  callback = function()
    local w = api.nvim_get_current_win()
    if not ours(w) then
      last = w
    end
  end,
})

-- editor_window returns the window a file opens in: the last editor
-- window of this tab page, else another one of it, else a new window
-- above the current one.
function M.editor_window()
  local tab = api.nvim_get_current_tabpage()
  if last and api.nvim_win_is_valid(last) and api.nvim_win_get_tabpage(last) == tab and not ours(last) then
    return last
  end
  for _, w in ipairs(api.nvim_tabpage_list_wins(tab)) do
    if not ours(w) and api.nvim_win_get_config(w).relative == "" then
      return w
    end
  end
  vim.cmd("aboveleft new")
  return api.nvim_get_current_win()
end

-- parse reads "path:line[:col]" (or a bare path) out of text, with what
-- compilers and test runners put around it taken off.
function M.parse(text)
  text = text:gsub("^[%(%[\"'<`]+", ""):gsub("[%)%]\"'>`,;%.]+$", "")
  text = text:gsub("^file://", "")
  local path, line, col = text:match("^(.-):(%d+):(%d+)")
  if not path then
    path, line = text:match("^(.-):(%d+)")
  end
  if not path then
    path = text:match('^File "(.-)", line') -- Python's tracebacks
  end
  path = path or text:gsub(":$", "")
  if path == "" then
    return nil
  end
  return path, tonumber(line), tonumber(col)
end

-- resolve finds path in dirs, then below them (a bounded search).
local function resolve(path, dirs)
  if path == "" then
    return nil
  end
  if path:sub(1, 1) == "/" or path:sub(1, 1) == "~" then
    local p = vim.fn.expand(path)
    return vim.fn.filereadable(p) == 1 and p or nil
  end
  for _, d in ipairs(dirs) do
    local p = d .. "/" .. path
    if vim.fn.filereadable(p) == 1 then
      return vim.fn.fnamemodify(p, ":p")
    end
  end
  for _, d in ipairs(dirs) do
    local found = vim.fn.findfile(path, d .. "/**4")
    if found ~= "" then
      return vim.fn.fnamemodify(found, ":p")
    end
  end
end

-- dirs is where a path in buf is looked for.
local function dirs(buf)
  local out = {}
  local function add(d)
    if type(d) == "string" and d ~= "" then
      table.insert(out, d)
    end
  end
  for _, t in pairs(state.terminals) do
    if t.bufnr == buf then
      add(t.cwd)
      local s = state.sessions[t.session or ""]
      add(s and s.cwd)
    end
  end
  for _, s in pairs(state.sessions) do
    if s.chat and (s.chat.buf == buf) then
      add(s.cwd)
    end
  end
  add(vim.fn.getcwd())
  return out
end

-- resolve_in finds path as gf would in buf (a terminal's or the chat's).
function M.resolve_in(path, buf)
  return resolve(path, dirs(buf))
end

-- candidates are the paths under the cursor, with their lines and
-- columns, best first.
local function candidates()
  local line = api.nvim_get_current_line()
  local words = { vim.fn.expand("<cWORD>") }
  -- Python: File "x.py", line 3 — the words around the cursor's
  local py = line:match('File "[^"]+", line %d+')
  if py then
    table.insert(words, 1, (py:gsub('^File "([^"]+)", line (%d+)', "%1:%2")))
  end
  local out = {}
  for _, c in ipairs(words) do
    local path, lnum, col = M.parse(c)
    if path then
      table.insert(out, { path = path, lnum = lnum, col = col })
    end
  end
  return out
end

-- target returns what to open for the file:line under the cursor: {
-- file } (here) or { buf } (another machine's file, read over the link),
-- its line and column; nil and, for another machine's output, why not.
function M.target()
  local buf = api.nvim_get_current_buf()
  local where = require("agentrun.ui.boxfile").of(buf)
  local cands = candidates()
  if where then
    -- it ran on another machine: its files are there, never the ones
    -- here at the same paths
    local paths = {}
    for _, c in ipairs(cands) do
      if c.path:find("/", 1, true) or c.path:match("%.%w+$") then -- a file's name
        table.insert(paths, c.path)
      end
    end
    if #paths == 0 then
      return nil
    end
    local found, why = require("agentrun.ui.boxfile").find(where, paths)
    for _, c in ipairs(cands) do
      if found and found[c.path] then
        return { buf = found[c.path] }, c.lnum, c.col
      end
    end
    return nil, why
  end
  for _, c in ipairs(cands) do
    local file = resolve(c.path, dirs(buf))
    if file then
      return { file = file }, c.lnum, c.col
    end
  end
end

-- open opens the file:line under the cursor in the editor window; false
-- when there is none under it (and, for another machine's output, why).
function M.open()
  local what, lnum, col = M.target()
  if not what then
    return false, lnum
  end
  local w = M.editor_window()
  api.nvim_set_current_win(w)
  local cmd = what.buf and ("buffer " .. what.buf) or ("edit " .. vim.fn.fnameescape(what.file))
  if not pcall(vim.cmd, cmd) then
    -- its buffer has unsaved edits ('nohidden'): keep them, open beside
    vim.cmd(what.buf and ("sbuffer " .. what.buf) or ("split " .. vim.fn.fnameescape(what.file)))
    w = api.nvim_get_current_win()
  end
  if lnum then
    pcall(api.nvim_win_set_cursor, w, { lnum, math.max((col or 1) - 1, 0) })
    vim.cmd("normal! zv")
  end
  return true
end

-- key is what gf and gF do in our buffers: open the file there, or say
-- that there is none.
function M.key()
  local opened, why = M.open()
  if opened then
    return
  end
  local word = vim.fn.expand("<cWORD>")
  local path = M.parse(word)
  if path and (path:find("/", 1, true) or path:match("%.%w+$")) then
    if why then
      util.notify(why, vim.log.levels.INFO)
      return
    end
    -- a file's name, but no such file where the command ran
    local where = dirs(vim.api.nvim_get_current_buf())[1]
    util.notify(string.format("%s is not a file in %s or below it (the command may have run elsewhere)", path, vim.fn.fnamemodify(where, ":~")), vim.log.levels.INFO)
    return
  end
  word = util.fit(word, 30)
  util.notify(string.format("no file:line under the cursor (%s); put it on one, like calc_test.go:13", word), vim.log.levels.INFO)
end

-- map maps gf and gF in buf.
function M.map(buf)
  local compat = require("agentrun.compat")
  for _, k in ipairs({ "gf", "gF" }) do
    compat.map(buf, k, M.key, "agentrun: open the file:line under the cursor in the editor window")
  end
end

return M
