-- A terminal's failures to the quickfix list: its output (the split's
-- text) parsed with the errorformat of the program that ran (Neovim's own
-- :compiler plugins where they exist: go, cargo, gcc, eslint, jest, tsc;
-- Python's tracebacks and pytest's file:line; else the user's
-- 'errorformat'), each path found as gf finds it (from the command's
-- cwd, then below it: `go test` names files of the package's directory).
local gotofile = require("agentrun.ui.gotofile")
local util = require("agentrun.util")

local api = vim.api
local M = {}

-- compilers maps a program to the :compiler plugin whose errorformat
-- reads its output.
local compilers = {
  go = "go", cargo = "cargo", rustc = "rustc", gcc = "gcc", ["g++"] = "gcc", cc = "gcc", ["c++"] = "gcc",
  clang = "gcc", ["clang++"] = "gcc", make = "gcc", eslint = "eslint", jest = "jest", vitest = "jest", tsc = "tsc",
}

-- extra are formats put before the compiler's: what its plugin misses
-- (the indented "file:13: msg" lines of go test), or the whole format.
local extra = {
  go = [[%\s%#%f:%l:%c: %m,%\s%#%f:%l: %m]],
  python = [[%\s%#File "%f"\, line %l%.%#,%f:%l: %m,%-G%.%#]],
}

-- runners are words before the program that only run it.
local runners = { npx = true, pnpm = true, yarn = true, npm = true, bunx = true, exec = true, run = true, env = true, time = true, nice = true, command = true, sudo = true, uv = true, poetry = true }

-- program finds the program of command line: its first word that is not
-- an assignment or a runner ("npx jest" is jest, "python3 -m pytest" is
-- python).
function M.program(line)
  for word in (line or ""):gmatch("%S+") do
    local name = word:gsub("^.*/", "")
    if name:match("^python%d*") or name == "pytest" then
      return "python"
    end
    if not word:find("=") and not runners[name] and not word:match("^%-") then
      return name
    end
  end
end

-- errorformat returns the format for command line and what it is named.
function M.errorformat(line)
  local prog = M.program(line)
  local comp = prog and compilers[prog]
  local efm = vim.o.errorformat
  local name = "your 'errorformat'"
  if comp then
    local buf = api.nvim_create_buf(false, true)
    api.nvim_buf_call(buf, function()
      if pcall(vim.cmd, "compiler " .. comp) then
        efm, name = vim.bo.errorformat, comp
      end
    end)
    api.nvim_buf_delete(buf, { force = true })
  end
  if prog and extra[prog] then
    efm = extra[prog] .. (comp and ("," .. efm) or "")
    name = comp or prog
  end
  return efm, name
end

-- items parses terminal t's output into quickfix items whose files exist.
function M.items(t)
  local lines = api.nvim_buf_get_lines(t.bufnr, 0, -1, false)
  local efm, name = M.errorformat(t.command or t.title)
  local before = {}
  for _, b in ipairs(api.nvim_list_bufs()) do
    before[b] = true
  end
  local parsed = vim.fn.getqflist({ lines = lines, efm = efm }).items or {}
  local items, seen = {}, {}
  for _, it in ipairs(parsed) do
    if it.valid == 1 and it.bufnr > 0 then
      local file = gotofile.resolve_in(vim.fn.bufname(it.bufnr), t.bufnr)
      local key = file and (file .. ":" .. it.lnum .. ":" .. it.text)
      if file and not seen[key] then
        seen[key] = true
        table.insert(items, { filename = file, lnum = it.lnum, col = it.col, text = it.text, type = it.type })
      end
    end
  end
  -- the buffers parsing made for names, which are not the user's
  for _, b in ipairs(api.nvim_list_bufs()) do
    if not before[b] and not api.nvim_buf_is_loaded(b) then
      pcall(api.nvim_buf_delete, b, { force = true })
    end
  end
  return items, name
end

-- load puts terminal t's failures in the quickfix list and, with items,
-- jumps to the first in the editor window (the quickfix window opens
-- below, the cursor stays in the editor: ]q or :cnext goes on).
function M.load(t)
  if not (t.bufnr and api.nvim_buf_is_valid(t.bufnr)) then
    util.notify(string.format("%s has no output here to read; open it first (:AgentTerminals)", t.id))
    return false
  end
  local items, name = M.items(t)
  if #items == 0 then
    util.notify(string.format("%s: no file:line in its output (read with %s)", t.id, name), vim.log.levels.INFO)
    return false
  end
  vim.fn.setqflist({}, " ", { title = "agentrun " .. t.id .. ": " .. (t.command or ""), items = items })
  local w = gotofile.editor_window()
  api.nvim_set_current_win(w)
  vim.cmd("botright copen")
  api.nvim_set_current_win(w)
  if not pcall(vim.cmd, "cfirst") then
    -- the editor window's buffer has unsaved edits ('nohidden'): keep them
    vim.cmd("split")
    pcall(vim.cmd, "cfirst")
  end
  util.notify(string.format("%s: %d in the quickfix list (%s; :cnext goes on)", t.id, #items, name), vim.log.levels.INFO)
  return true
end

return M
