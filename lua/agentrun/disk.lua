-- Buffers stay true to the files the agent changes. When one of the
-- agent's commands ends, and when a turn ends, every buffer whose file
-- changed on disk is reloaded if it has no unsaved changes (as 'autoread'
-- with :checktime would, without the user turning them on); a buffer with
-- unsaved changes is never touched: the user is told which file changed
-- under their edits, with :AgentDiff to compare them. A turn also
-- records which files changed while it ran (what `git status` newly
-- shows, or changed contents of files that were already dirty; outside a
-- git work tree, the files of loaded buffers), so its end can list them,
-- each with its diff against how it was before the turn.
local compat = require("agentrun.compat")
local state = require("agentrun.state")
local util = require("agentrun.util")

local api = vim.api
local M = {}

-- seen[bufnr] is the file's stat ("mtime:size") when the buffer last
-- matched it (read, written, reloaded): what an unsaved buffer is
-- compared with. noticed[bufnr] is the stat it was last told about.
local seen, noticed = {}, {}

local function stat(name)
  local st = name ~= "" and compat.uv.fs_stat(name)
  if not st or st.type ~= "file" then
    return nil
  end
  return string.format("%d.%09d:%d", st.mtime.sec, st.mtime.nsec or 0, st.size)
end

-- file_buffers lists the loaded buffers that edit a file.
local function file_buffers()
  local out = {}
  for _, b in ipairs(api.nvim_list_bufs()) do
    if api.nvim_buf_is_loaded(b) and vim.bo[b].buftype == "" then
      local name = api.nvim_buf_get_name(b)
      if name ~= "" and not name:match("^%a[%w+.-]*://") then
        table.insert(out, { buf = b, name = name })
      end
    end
  end
  return out
end

local watching = false

-- watch starts following what each buffer last read or wrote (once).
local function watch()
  if watching then
    return
  end
  watching = true
  local group = api.nvim_create_augroup("agentrun_disk", { clear = true })
  api.nvim_create_autocmd({ "BufReadPost", "BufWritePost", "FileChangedShellPost" }, {
    group = group,
    desc = "agentrun: the file as this buffer last matched it",
    callback = function(a)
      seen[a.buf] = stat(api.nvim_buf_get_name(a.buf))
      noticed[a.buf] = nil
    end,
  })
  api.nvim_create_autocmd("BufWipeout", {
    group = group,
    callback = function(a)
      seen[a.buf], noticed[a.buf] = nil, nil
    end,
  })
end

-- baseline takes the file of each buffer that has none yet, as it is
-- now, for what the buffer matched (a turn or a command is starting: what
-- changes from here on is the agent's).
local function baseline()
  watch()
  for _, f in ipairs(file_buffers()) do
    seen[f.buf] = seen[f.buf] or stat(f.name)
  end
end
M.baseline = baseline

-- conflicts lists the buffers with unsaved changes whose file changed on
-- disk since they last matched it: { buf, name }.
function M.conflicts()
  local out = {}
  for _, f in ipairs(file_buffers()) do
    local now = stat(f.name)
    if vim.bo[f.buf].modified and seen[f.buf] and now and now ~= seen[f.buf] then
      table.insert(out, f)
    end
  end
  return out
end

-- refresh reloads every unmodified buffer whose file changed on disk,
-- and tells the user (once per change) of each modified one whose file
-- changed under it. It returns the names reloaded and those in conflict.
function M.refresh()
  watch()
  local reloaded, conflicted = {}, {}
  for _, f in ipairs(file_buffers()) do
    local now = stat(f.name)
    if now and not vim.bo[f.buf].modified then
      if seen[f.buf] ~= now then
        local tick = api.nvim_buf_get_changedtick(f.buf)
        api.nvim_buf_call(f.buf, function()
          -- 'autoread' for this buffer only, as long as the check takes
          vim.cmd("setlocal autoread")
          vim.cmd("silent! checktime " .. f.buf)
          vim.cmd("setlocal autoread<")
        end)
        if api.nvim_buf_get_changedtick(f.buf) ~= tick then
          table.insert(reloaded, f.name)
        end
        seen[f.buf] = now
      end
    elseif now and seen[f.buf] and now ~= seen[f.buf] and noticed[f.buf] ~= now then
      noticed[f.buf] = now
      table.insert(conflicted, f.name)
      util.notify(string.format("%s changed on disk under your edits: :AgentDiff", vim.fn.fnamemodify(f.name, ":~:.")), vim.log.levels.WARN)
    end
  end
  return reloaded, conflicted
end

-- git runs git in dir and returns its output lines, or nil. (No input:
-- one given is written to git's stdin, which fails once git has exited.)
local function git(dir, args)
  local out = vim.fn.systemlist(vim.list_extend({ "git", "-C", dir }, args))
  if vim.v.shell_error ~= 0 then
    return nil
  end
  return out
end

local function read(path)
  local f = io.open(path, "rb")
  if not f then
    return nil
  end
  local text = f:read("*a")
  f:close()
  return text
end

-- status is `git status` of the work tree at top: path -> XY code (a
-- renamed file under its new name; names git quotes, with their quotes
-- taken off).
local function status(top)
  local lines = git(top, { "status", "--porcelain=v1", "--untracked-files=all" })
  if not lines then
    return nil
  end
  local out = {}
  for _, l in ipairs(lines) do
    if #l > 3 then
      local code, path = l:sub(1, 2), l:sub(4)
      path = path:match(" %-> (.*)$") or path
      path = path:match('^"(.*)"$') or path
      out[path] = code
    end
  end
  return out
end

-- turns[key] is what session key's turn started from.
local turns = {}

-- most dirty files whose contents a turn keeps, and their largest size
local keep_files, keep_bytes = 200, 1024 * 1024

-- turn_start records the project of session s as its turn starts.
function M.turn_start(s)
  baseline()
  if not s or state.site_of(s.key) then
    return -- a session on another machine: its files are there
  end
  local t = { bufs = {} }
  local top = git(s.cwd or vim.fn.getcwd(), { "rev-parse", "--show-toplevel" })
  if not (top and top[1]) then
    -- no git: the files of loaded buffers, as they are now
    for _, f in ipairs(file_buffers()) do
      local st = compat.uv.fs_stat(f.name)
      if st and st.size <= keep_bytes then
        t.bufs[f.name] = { stat = stat(f.name), text = read(f.name) }
      end
    end
  else
    t.top = top[1]
    t.head = (git(t.top, { "rev-parse", "-q", "--verify", "HEAD" }) or {})[1]
    t.status = status(t.top)
    t.before = {}
    local n = 0
    for path in pairs(t.status or {}) do
      n = n + 1
      if n > keep_files then
        break
      end
      local full = t.top .. "/" .. path
      local st = compat.uv.fs_stat(full)
      if st and st.type == "file" and st.size <= keep_bytes then
        t.before[path] = read(full)
      end
    end
  end
  turns[s.key] = t
end

-- before_text returns the text of path (relative to the work tree) as it
-- was when turn t started (nil: it did not exist).
local function before_text(t, path)
  if t.before and t.before[path] ~= nil then
    return t.before[path]
  end
  if t.status and t.status[path] == "??" or not t.head then
    return nil
  end
  local out = vim.fn.system({ "git", "-C", t.top, "show", t.head .. ":" .. path })
  return vim.v.shell_error == 0 and out or nil
end

-- turn_end returns what changed on disk while session s's turn ran:
-- { { path (absolute), name (as shown), before = function() -> text|nil,
-- conflict = buffer with unsaved edits } }, and forgets the turn.
function M.turn_end(s)
  local t = s and turns[s.key]
  if not t then
    return {}
  end
  turns[s.key] = nil
  local found, seen_path = {}, {}
  local function add(full, before)
    if seen_path[full] then
      return
    end
    seen_path[full] = true
    table.insert(found, { path = full, name = vim.fn.fnamemodify(full, ":~:."), before = before })
  end
  if t.top and t.status then
    local now = status(t.top) or {}
    for path in pairs(now) do
      local was = t.status[path]
      local full = t.top .. "/" .. path
      if was == nil then
        add(full, function()
          return before_text(t, path)
        end)
      elseif t.before[path] ~= nil and read(full) ~= t.before[path] then
        add(full, function()
          return t.before[path]
        end)
      end
    end
    for path in pairs(t.status) do
      if now[path] == nil and t.before[path] ~= nil and read(t.top .. "/" .. path) ~= t.before[path] then
        add(t.top .. "/" .. path, function()
          return t.before[path]
        end)
      end
    end
    local head = (git(t.top, { "rev-parse", "-q", "--verify", "HEAD" }) or {})[1]
    if t.head and head and head ~= t.head then
      for _, path in ipairs(git(t.top, { "diff", "--name-only", t.head, head }) or {}) do
        add(t.top .. "/" .. path, function()
          return before_text(t, path)
        end)
      end
    end
  else
    for name, b in pairs(t.bufs) do
      if stat(name) ~= b.stat then
        add(name, function()
          return b.text
        end)
      end
    end
  end
  table.sort(found, function(a, b)
    return a.name < b.name
  end)
  local conflicts = {}
  for _, f in ipairs(M.conflicts()) do
    conflicts[f.name] = f.buf
  end
  for _, f in ipairs(found) do
    f.conflict = conflicts[f.path]
  end
  return found
end

-- diff_disk opens buffer buf's unsaved text beside its file on disk.
function M.diff_disk(buf)
  local name = api.nvim_buf_get_name(buf)
  require("agentrun.ui.toolcall").open_diff({
    path = name,
    oldText = read(name) or "",
    newText = table.concat(api.nvim_buf_get_lines(buf, 0, -1, false), "\n"),
    old_label = "on disk",
    new_label = "your unsaved edits",
  })
end

-- diff_change opens change c (of turn_end) beside how it was before.
function M.diff_change(c)
  if c.conflict and api.nvim_buf_is_valid(c.conflict) then
    return M.diff_disk(c.conflict)
  end
  require("agentrun.ui.toolcall").open_diff({
    path = c.path,
    oldText = c.before() or "",
    newText = read(c.path) or "",
    old_label = "before the turn",
    new_label = "now",
  })
end

return M
