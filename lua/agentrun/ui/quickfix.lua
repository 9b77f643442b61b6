-- A terminal's failures to the quickfix list: its output (the split's
-- text) parsed with the errorformat of the program that ran (Neovim's own
-- :compiler plugins where they exist: go, cargo, gcc, eslint, jest, tsc;
-- Python's tracebacks and pytest's file:line; else the user's
-- 'errorformat'), each path found as gf finds it (from the command's
-- cwd, then below it: `go test` names files of the package's directory).
local boxfile = require("agentrun.ui.boxfile")
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
  go = [[vet: %f:%l:%c: %m,%\s%#%f:%l:%c: %m,%\s%#%f:%l: %m]], -- go vet prefixes "vet: "
  -- pytest's "file:line: message" (tracebacks: M.tracebacks)
  python = [[%f:%l: %m,%-G%.%#]],
}

-- runners are words before the program that only run it.
local runners = {
  npx = true, pnpm = true, yarn = true, npm = true, bunx = true, exec = true, run = true, env = true, time = true,
  nice = true, command = true, sudo = true, uv = true, poetry = true, timeout = true, nohup = true, stdbuf = true,
}

-- program_of finds the program of one simple command: its first word
-- that is not an assignment, a runner, a runner's option or a duration
-- ("timeout 60 go vet" is go).
local function program_of(cmd)
  for word in cmd:gmatch("%S+") do
    local name = word:gsub("^.*/", "")
    if name:match("^python%d*") or name == "pytest" then
      return "python"
    end
    if not word:find("=") and not runners[name] and not word:match("^%-") and not word:match("^%d+%.?%d*[smhd]?$") then
      return name
    end
  end
end

-- program finds the program of command line: of its simple commands
-- (cut at &&, ||, ;, | and newlines: "cd pkg && go test" is go) the
-- first whose output has a format here, else the last; in each, the
-- first word that is not an assignment or a runner ("npx jest" is jest,
-- "python3 -m pytest" is python).
function M.program(line)
  line = line or ""
  -- the simple commands: cut at ; | & and newlines outside quotes
  local cmds, from, quote = {}, 1, nil
  for i = 1, #line do
    local c = line:sub(i, i)
    if quote then
      if c == quote then
        quote = nil
      end
    elseif c == "'" or c == '"' then
      quote = c
    elseif c == ";" or c == "|" or c == "&" or c == "\n" then
      table.insert(cmds, line:sub(from, i - 1))
      from = i + 1
    end
  end
  table.insert(cmds, line:sub(from))
  local last
  for _, cmd in ipairs(cmds) do
    local prog = program_of(cmd)
    if prog and (compilers[prog] or extra[prog]) then
      return prog
    end
    last = prog or last
  end
  return last
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

-- tracebacks reads Python's tracebacks in lines: every frame of each
-- (File "f", line N, in fn), innermost first (where the error is), as
-- { name, lnum, text }, the text the error line after the frames.
function M.tracebacks(lines)
  local out = {}
  local i = 1
  while i <= #lines do
    if lines[i]:match("^%s*Traceback %(most recent call last%):") then
      local frames = {}
      i = i + 1
      while i <= #lines do
        local l = lines[i]
        local f, n = l:match('^%s*File "(.-)", line (%d+)')
        if f then
          table.insert(frames, { f, tonumber(n), l:match(", in (.-)%s*$") })
        elseif l == "" or not l:match("^%s") then
          break -- the error line (or the end)
        end
        i = i + 1 -- (a frame's code line, its ^^^^ marks)
      end
      local msg = vim.trim(lines[i] or "")
      for k = #frames, 1, -1 do
        local fr = frames[k]
        table.insert(out, { name = fr[1], lnum = fr[2], text = fr[3] and (msg .. " (in " .. fr[3] .. ")") or msg })
      end
    else
      i = i + 1
    end
  end
  return out
end

-- items parses terminal t's output into quickfix items whose files exist
-- (where it ran: another machine's are read over the link, into buffers
-- named for it, ui/boxfile.lua); Python's tracebacks give every frame,
-- innermost first. Its third result says why another machine's named
-- files could not be had.
function M.items(t)
  local lines = api.nvim_buf_get_lines(t.bufnr, 0, -1, false)
  local efm, name = M.errorformat(t.command or t.title)
  local before = {}
  for _, b in ipairs(api.nvim_list_bufs()) do
    before[b] = true
  end
  local parsed = {}
  if M.program(t.command or t.title) == "python" then
    parsed = M.tracebacks(lines)
  end
  for _, it in ipairs(vim.fn.getqflist({ lines = lines, efm = efm }).items or {}) do
    if it.valid == 1 and it.bufnr > 0 then
      table.insert(parsed, { name = vim.fn.bufname(it.bufnr), lnum = it.lnum, col = it.col, text = it.text, type = it.type })
    end
  end
  local where = boxfile.of(t.bufnr)
  local found, why
  if where then
    -- it ran on another machine: the files it names are there
    local paths, asked = {}, {}
    for _, it in ipairs(parsed) do
      if not asked[it.name] then
        asked[it.name] = true
        table.insert(paths, it.name)
      end
    end
    if #paths > 0 then
      found, why = boxfile.find(where, paths)
      found = found or {}
    end
  end
  local items, seen = {}, {}
  for _, it in ipairs(parsed) do
    local buf = found and found[it.name]
    local file = not where and gotofile.resolve_in(it.name, t.bufnr) or nil
    local key = (file or buf) and ((file or ("#" .. buf)) .. ":" .. it.lnum .. ":" .. it.text)
    if key and not seen[key] then
      seen[key] = true
      -- a message of several lines (a traceback's) as one
      local text = vim.trim((it.text or ""):gsub("%s*\n%s*", " "))
      table.insert(items, { filename = file, bufnr = buf, lnum = it.lnum, col = it.col, text = text, type = it.type })
    end
  end
  -- the buffers parsing made for names, which are not the user's
  for _, b in ipairs(api.nvim_list_bufs()) do
    if not before[b] and not api.nvim_buf_is_loaded(b) then
      pcall(api.nvim_buf_delete, b, { force = true })
    end
  end
  return items, name, #items == 0 and why or nil
end

-- ns is the namespace of the failures shown as diagnostics; shown_for
-- the program whose failures they are.
local ns = api.nvim_create_namespace("agentrun_failures")
local shown_for
local qf_set -- { id, program }: the quickfix list on_exit filled last

-- diagnose shows items (quickfix items with filenames) as diagnostics on
-- their files' buffers (loaded ones: a file not open shows them when it
-- is), replacing those of the last failure shown; none clears them.
function M.diagnose(items, source, program)
  vim.diagnostic.reset(ns)
  shown_for = #(items or {}) > 0 and program or nil
  local by_buf = {}
  for _, it in ipairs(items or {}) do
    local b = it.bufnr or vim.fn.bufadd(it.filename)
    by_buf[b] = by_buf[b] or {}
    table.insert(by_buf[b], {
      lnum = math.max((it.lnum or 1) - 1, 0),
      col = math.max((it.col or 1) - 1, 0),
      message = it.text ~= "" and it.text or "failed here",
      severity = (it.type == "W" or it.type == "w") and vim.diagnostic.severity.WARN or vim.diagnostic.severity.ERROR,
      source = source,
    })
  end
  for b, list in pairs(by_buf) do
    vim.diagnostic.set(ns, b, list)
  end
end

-- entries says how many quickfix entries n is: "1 entry", "3 entries".
local function entries(n)
  return n == 1 and "1 entry" or string.format("%d entries", n)
end

-- on_exit puts the failures of agent's terminal t, which exited non-zero,
-- where terminal.on_failure says (the quickfix list, diagnostics),
-- without opening a window or moving the cursor; a message says how
-- many and where. The same program succeeding clears the diagnostics.
-- Called once the split shows the end of the output (ui/termend.lua's
-- when_end_shown: the backend's display_ended).
function M.on_exit(t)
  local want = {}
  for _, x in ipairs(require("agentrun.config").get().terminal.on_failure or {}) do
    want[x] = true
  end
  if not (want.quickfix or want.diagnostics) then
    return
  end
  if t.exit_code == 0 then
    -- the same program passing now: its failures are gone
    if want.diagnostics and shown_for and shown_for == M.program(t.command) then
      M.diagnose({})
    end
    -- and the quickfix list it filled, while it is still the current one
    local program = M.program(t.command)
    if want.quickfix and qf_set and qf_set.program == program and vim.fn.getqflist({ id = 0 }).id == qf_set.id then
      vim.fn.setqflist({}, "r", { id = qf_set.id, items = {}, title = "agentrun " .. require("agentrun.state").label(t) .. ": " .. (t.command or "") .. " passed" })
      qf_set = nil
    end
    return
  end
  if not (t.bufnr and api.nvim_buf_is_valid(t.bufnr)) then
    return
  end
  local items, name = M.items(t)
  if #items == 0 then
    return
  end
  local where = {}
  if want.quickfix then
    vim.fn.setqflist({}, " ", { title = "agentrun " .. require("agentrun.state").label(t) .. ": " .. (t.command or ""), items = items })
    qf_set = { id = vim.fn.getqflist({ id = 0 }).id, program = M.program(t.command) }
    table.insert(where, "the quickfix list (:copen)")
  end
  if want.diagnostics then
    M.diagnose(items, "agentrun " .. require("agentrun.state").label(t), M.program(t.command))
    table.insert(where, "diagnostics")
  end
  local head = string.format("%s failed: %s in %s", require("agentrun.state").name_of(t), entries(#items), table.concat(where, " and "))
  local msg = string.format("%s (%s)", head, name)
  -- in its chat too: typing in the prompt, "-- INSERT --" hides the
  -- message line
  local s = t.session and require("agentrun.state").sessions[t.session]
  if s and s.chat then
    s.chat:note(msg, "AgentRunNote")
  end
  -- one line: no Press ENTER while you type
  util.notify({ msg, head, util.fit(head, util.room()) }, vim.log.levels.INFO)
end

-- load puts terminal t's failures in the quickfix list and, with items,
-- jumps to the first in the editor window (the quickfix window opens
-- below, as tall as its items: ui/window.lua's open_quickfix; the cursor
-- stays in the editor: ]q or :cnext goes on).
function M.load(t)
  if not (t.bufnr and api.nvim_buf_is_valid(t.bufnr)) then
    util.notify(string.format("%s has no output here to read; open it first (:AgentTerminals)", require("agentrun.state").label(t)))
    return false
  end
  local items, name, why = M.items(t)
  if #items == 0 then
    local label = require("agentrun.state").label(t)
    -- (a list: the shorter fits 60 columns, util.notify)
    util.notify(why and string.format("%s: %s", label, why) or { string.format("%s: no file:line in its output (read with %s)", label, name), string.format("%s: no file:line in its output", label) }, vim.log.levels.INFO)
    return false
  end
  vim.fn.setqflist({}, " ", { title = "agentrun " .. require("agentrun.state").label(t) .. ": " .. (t.command or ""), items = items })
  if vim.tbl_contains(require("agentrun.config").get().terminal.on_failure or {}, "diagnostics") then
    M.diagnose(items, "agentrun " .. require("agentrun.state").label(t), M.program(t.command))
  end
  local w = gotofile.editor_window()
  api.nvim_set_current_win(w)
  require("agentrun.ui.window").open_quickfix()
  api.nvim_set_current_win(w)
  if not pcall(vim.cmd, "cfirst") then
    -- the editor window's buffer has unsaved edits ('nohidden'): keep them
    vim.cmd("split")
    pcall(vim.cmd, "cfirst")
  end
  -- (:cnext only where there is a next one to go to)
  local head = string.format("%s: %s in the quickfix list", require("agentrun.state").label(t), entries(#items))
  local next = #items > 1 and "; :cnext goes to the next" or ""
  util.notify({ string.format("%s (%s)%s", head, name, next), head .. next, head }, vim.log.levels.INFO)
  return true
end

return M
