-- Buffers stay true to the files the agent changes. When one of the
-- agent's commands ends, and when a turn ends, every buffer whose file
-- changed on disk is reloaded if it has no unsaved changes (as 'autoread'
-- with :checktime would, without the user turning them on); a buffer with
-- unsaved changes is never touched: the user is told which file changed
-- under their edits, with :AgentDiff to compare them. A turn also
-- records which files changed while it ran, whichever way (our fs
-- writes, the agent's own edit tools, its commands): by a checkpoint of
-- its folder before and after it (checkpoint.lua: in a git work tree or
-- not, on the machine the session runs on), else (none could be taken)
-- the files of loaded buffers; its end lists them, each with its diff
-- against how it was before the turn, and :AgentRewind puts them back.
local checkpoint = require("agentrun.checkpoint")
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

local read = checkpoint.read

-- turns[key] is what session key's turn started from; done[key] the
-- turns it finished, oldest first (at most keep_turns), for :AgentRewind.
-- rewound counts, per session key, the turns :AgentRewind put back.
local turns, done, rewound = {}, {}, {}
local keep_turns = 20

-- why_not[key] says why session key's last turn has no checkpoint
local why_not = {}

-- the largest file whose text a turn without a checkpoint keeps
local keep_bytes = 1024 * 1024

-- turn_start records the folder of session s as its turn starts: a
-- checkpoint of it (checkpoint.lua; on the machine the session runs on),
-- else (no git on this machine, a folder too big for the copies) the
-- files of loaded buffers, as they are now.
function M.turn_start(s)
  baseline()
  if not s then
    return
  end
  local t = { bufs = {}, key = s.key, remote = state.site_of(s.key) ~= nil }
  t.place, t.why = checkpoint.snapshot(s.key, s.cwd or vim.fn.getcwd())
  why_not[s.key] = not t.place and (t.why or "no checkpoint could be taken") or nil
  if t.place then
    t.top, t.tree = t.place.top, t.place.tree
    if t.place.fresh and done[s.key] then
      -- the folder's copies were over checkpoint.copies_bytes and were
      -- removed: its earlier turns cannot be reviewed or put back
      for i = #done[s.key], 1, -1 do
        if done[s.key][i].place.store == t.place.store then
          table.remove(done[s.key], i)
        end
      end
    end
  elseif not t.remote then
    for _, f in ipairs(file_buffers()) do
      local st = compat.uv.fs_stat(f.name)
      if st and st.size <= keep_bytes then
        t.bufs[f.name] = { stat = stat(f.name), text = read(f.name) }
      end
    end
  end
  turns[s.key] = t
end

-- turn_end returns what changed on disk while session s's turn ran:
-- { { path (absolute), name (as shown), before = function() -> text|nil,
-- now = function() -> text|nil, conflict = buffer with unsaved edits } },
-- and keeps the turn for :AgentRewind and :AgentReview.
function M.turn_end(s)
  local t = s and turns[s.key]
  if not t then
    return {}
  end
  turns[s.key] = nil
  local found = {}
  local function add(full, before, now)
    table.insert(found, { path = full, name = t.remote and full or vim.fn.fnamemodify(full, ":~:."), before = before, now = now })
  end
  if t.tree then
    local after = checkpoint.snapshot(s.key, t.top)
    t.after = after and after.tree
    t.files = t.after and checkpoint.changed(s.key, t.place, t.tree, t.after) or {}
    for _, c in ipairs(t.files) do
      add(t.top .. "/" .. c.path, function()
        if c.status == "A" then
          return nil
        end
        return checkpoint.text(s.key, t.place, t.tree, c.path)
      end, function()
        return checkpoint.now(s.key, t.place, c.path)
      end)
    end
    if #t.files > 0 then
      done[s.key] = done[s.key] or {}
      table.insert(done[s.key], t)
      if #done[s.key] > keep_turns then
        table.remove(done[s.key], 1)
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
  if t.remote then
    return found -- this Neovim's buffers are not that machine's files
  end
  local conflicts = {}
  for _, f in ipairs(M.conflicts()) do
    conflicts[f.name] = f.buf
  end
  for _, f in ipairs(found) do
    f.conflict = conflicts[f.path]
  end
  return found
end

-- turns_of returns the turns of session key that changed files, oldest
-- first: { place (checkpoint.lua's), top, tree (before), after, files =
-- { { path, status } }, remote (on another machine) }.
function M.turns_of(key)
  return done[key] or {}
end

-- rewound_turns returns how many turns of session key :AgentRewind put
-- back (0: none).
function M.rewound_turns(key)
  return rewound[key] or 0
end

-- nothing says why session key has no turn to review or rewind (what:
-- "review", "rewind"): none changed a file, or, when its last turn has
-- no checkpoint, why not.
function M.nothing(key, what)
  local why = why_not[key]
  if why then
    return string.format("nothing to %s: agentrun kept no copy of this session's turns (last turn: %s)", what, why)
  end
  return { string.format("nothing to %s: no turn of this session changed a file", what), string.format("nothing to %s: no file changed", what) }
end

-- buffer_of returns the loaded buffer that edits path, or nil.
function M.buffer_of(path)
  for _, f in ipairs(file_buffers()) do
    if f.name == path then
      return f.buf
    end
  end
end

-- rewind puts the files of session s's last turn that changed (and was
-- not rewound yet) back as they were before it. A file the user changed
-- since the turn ended is kept unless ask(name) returns true; one whose
-- buffer has unsaved edits is kept (told), and the turn stays the one
-- the next rewind puts back; else that is the turn before. Returns a list of sentences
-- saying what was done, or nil and why not (for util.notify: a sentence,
-- or ways to say it, longest first).
function M.rewind(s, ask)
  local list = s and done[s.key]
  local t = list and list[#list]
  if not t then
    local n = s and rewound[s.key]
    if n then
      local put = string.format("nothing more to rewind: %d turn%s put back", n, n == 1 and "" or "s")
      return nil, { string.format("%s (agentrun keeps the last %d that changed files)", put, keep_turns), put }
    end
    return nil, M.nothing(s and s.key, "rewind")
  end
  local said, restored, kept, again = {}, {}, {}, false
  for _, c in ipairs(t.files) do
    local full = t.top .. "/" .. c.path
    local name = t.remote and full or vim.fn.fnamemodify(full, ":~:.")
    local buf = not t.remote and M.buffer_of(full) or nil
    local now = checkpoint.hash(s.key, t.place, c.path)
    local after = checkpoint.blob(s.key, t.place, t.after, c.path)
    local before = checkpoint.blob(s.key, t.place, t.tree, c.path)
    if buf and vim.bo[buf].modified then
      again = true
      table.insert(kept, name .. " (unsaved edits in its buffer: save or :e! it, then :AgentRewind again)")
    elseif now ~= after and now ~= before and not ask(name) then
      table.insert(kept, name .. " (your version, changed since the turn)")
    elseif now ~= before then
      local ok
      if before == nil then
        ok = checkpoint.remove(s.key, t.place, c.path)
      else
        ok = checkpoint.restore(s.key, t.place, t.tree, c.path)
      end
      if ok then
        table.insert(restored, name .. (before == nil and " (removed: the turn made it)" or ""))
        if buf then
          checkpoint.reload(buf)
        end
      else
        again = true
        table.insert(kept, name .. " (could not be written back)")
      end
    end
  end
  if not again then
    table.remove(list) -- the next :AgentRewind goes back one turn more
    rewound[s.key] = (rewound[s.key] or 0) + 1
  end
  if #restored > 0 then
    table.insert(said, "put back as before the turn: " .. table.concat(restored, ", "))
  else
    table.insert(said, "nothing put back")
  end
  if #kept > 0 then
    table.insert(said, "kept: " .. table.concat(kept, ", "))
  end
  return said
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
    newText = (c.now and c.now() or read(c.path)) or "",
    old_label = "before the turn",
    new_label = "now",
  })
end

return M
