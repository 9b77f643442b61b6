-- :AgentReview: every hunk a session's last turn (or the whole session)
-- changed, in one buffer grouped by file, from the turns' checkpoints
-- (checkpoint.lua) to the folder as it is now. Keys accept or reject
-- a hunk or a file; rejecting takes the hunk back out of the file on disk
-- (git apply -R, never the index) and reloads its buffer; a buffer with
-- unsaved edits is never written over: the user is told and nothing is
-- rejected. Accepting only hides the hunk from the review. A session on
-- another machine is reviewed the same way, its files read and put back
-- there over the link (its files shown here as ui/boxfile.lua does).
local checkpoint = require("agentrun.checkpoint")
local compat = require("agentrun.compat")
local disk = require("agentrun.disk")
local util = require("agentrun.util")

local api = vim.api
local M = {}

-- accepted[key][path .. "\0" .. hunk body] hides a hunk from session
-- key's reviews
local accepted = {}

-- scope returns the top, the tree to compare with and the paths of what
-- session s changed in its last turn ("turn") or all of it ("session").
local function scope(s, what)
  local turns = disk.turns_of(s.key)
  local last = turns[#turns]
  if not last then
    return nil
  end
  local from, seen, paths = nil, {}, {}
  local list = what == "session" and turns or { last }
  for _, t in ipairs(list) do
    if t.top == last.top then
      from = from or t
      for _, c in ipairs(t.files) do
        if not seen[c.path] then
          seen[c.path] = true
          table.insert(paths, c.path)
        end
      end
    end
  end
  return last, from.tree, paths
end

-- parse splits diff lines into files: { path, head = lines, hunks = {
-- { lines (the @@ line first), line (in the new file) } } }.
local function parse(lines)
  local files, f, h = {}, nil, nil
  for _, l in ipairs(lines) do
    if l:sub(1, 11) == "diff --git " then
      f = { head = { l }, hunks = {}, path = l:match("^diff %-%-git a/.- b/(.*)$") }
      table.insert(files, f)
      h = nil
    elseif f and l:sub(1, 3) == "@@ " then
      h = { lines = { l }, line = tonumber(l:match("%+(%d+)")) or 1 }
      table.insert(f.hunks, h)
    elseif h then
      table.insert(h.lines, l)
    elseif f then
      table.insert(f.head, l)
      f.path = l:match("^%+%+%+ b/(.*)$") or l:match("^%-%-%- a/(.*)$") or f.path
    end
  end
  return files
end

local function body(h)
  return table.concat(h.lines, "\n", 2)
end

-- render fills the review buffer of session s; false when nothing is left.
local function render(v)
  local now = checkpoint.snapshot(v.key, v.top)
  local files = now and parse(checkpoint.diff(v.key, v.place, v.tree, now.tree, v.paths)) or {}
  local lines, at = {}, {}
  local acc = accepted[v.key] or {}
  v.files = {}
  for _, f in ipairs(files) do
    local shown = {}
    for _, h in ipairs(f.hunks) do
      if not acc[f.path .. "\0" .. body(h)] then
        table.insert(shown, h)
      end
    end
    local binary = #f.hunks == 0 and not acc[f.path .. "\0"]
    if #shown > 0 or binary then
      f.hunks = shown
      table.insert(v.files, f)
      local head = table.concat(f.head, "\n")
      local kind = head:find("\nnew file mode") and "new file" or head:find("\ndeleted file mode") and "deleted" or nil
      if binary then
        kind = kind and kind .. ", binary" or "binary"
      end
      kind = kind or string.format("%d hunk%s", #shown, #shown == 1 and "" or "s")
      table.insert(lines, string.format("%s  (%s)", f.path, kind))
      at[#lines] = { file = f }
      for _, h in ipairs(shown) do
        for i, l in ipairs(h.lines) do
          table.insert(lines, l)
          at[#lines] = { file = f, hunk = h, i = i }
        end
      end
      table.insert(lines, "")
    end
  end
  if #v.files == 0 then
    return false
  end
  table.insert(lines, 1, "a/r accept/reject hunk · A/R file · Y accept all · <CR> go to it · d diff · q close")
  table.insert(lines, 2, "")
  local shifted = {}
  for n, x in pairs(at) do
    shifted[n + 2] = x
  end
  v.at = shifted
  vim.bo[v.buf].modifiable = true
  api.nvim_buf_set_lines(v.buf, 0, -1, false, lines)
  vim.bo[v.buf].modifiable = false
  return true
end

-- close closes the review's tab page (or, the last one, its buffer).
local function close(v)
  if #api.nvim_list_tabpages() > 1 and api.nvim_get_current_buf() == v.buf then
    vim.cmd("tabclose")
  elseif api.nvim_buf_is_valid(v.buf) then
    api.nvim_buf_delete(v.buf, { force = true })
  end
end

local function here(v)
  return v.at[api.nvim_win_get_cursor(0)[1]]
end

-- box_buffer brings the buffer of path (relative to the top) of a
-- session on another machine up to date with the file there (made when
-- make; else only one that is there, wiped when the file is gone): the
-- buffer, or nil.
local function box_buffer(v, path, make)
  local rpc = require("agentrun.rpc")
  local url = rpc.machine(rpc.site_url(require("agentrun.state").site_of(v.key)) or "")
  local full = v.top .. "/" .. path
  local there
  for _, b in ipairs(api.nvim_list_bufs()) do
    there = there or (api.nvim_buf_get_name(b) == url .. full and b or nil)
  end
  if not make and not there then
    return nil
  end
  local text = checkpoint.now(v.key, v.place, path)
  if not text and there and not make then
    vim.cmd("silent! bwipeout " .. there) -- the file is gone there (as checkpoint.reload does here)
    return nil
  end
  text = text or ""
  return require("agentrun.ui.boxfile").buffer(url, full, vim.split((text:gsub("\n$", "")), "\n", { plain = true }))
end

-- reload shows a file's new text in its unmodified buffer (or drops the
-- buffer of a file that is gone).
local function reload(v, full)
  if v.remote then
    box_buffer(v, full:sub(#v.top + 2), false)
    return
  end
  local buf = disk.buffer_of(full)
  if not buf then
    return
  end
  checkpoint.reload(buf)
end

-- unsaved tells when the file of x has unsaved edits in a buffer.
local function unsaved(v, f)
  local buf = not v.remote and disk.buffer_of(v.top .. "/" .. f.path)
  if buf and vim.bo[buf].modified then
    util.notify(string.format("%s has unsaved edits: save them (or :e! to drop them) and reject again; nothing was rejected", f.path), vim.log.levels.WARN)
    return true
  end
end

local function after(v)
  if not render(v) then
    util.notify("review: nothing left to review", vim.log.levels.INFO)
    close(v)
  end
end

local function reject(v, x, whole)
  if not x then
    return
  end
  local f = x.file
  if not whole and not x.hunk then
    return util.notify("put the cursor on a hunk (or R rejects the whole file)")
  end
  if unsaved(v, f) then
    return
  end
  local full = v.top .. "/" .. f.path
  local ok, why
  if #f.hunks == 0 then
    -- no hunks to take out (a binary file): the whole file goes back
    if table.concat(f.head, "\n"):find("\nnew file mode") then
      ok, why = checkpoint.remove(v.key, v.place, f.path)
    else
      ok, why = checkpoint.restore(v.key, v.place, v.tree, f.path)
    end
  else
    local patch = vim.list_extend({}, f.head)
    for _, h in ipairs(whole and f.hunks or { x.hunk }) do
      vim.list_extend(patch, h.lines)
    end
    ok, why = checkpoint.unapply(v.key, v.place, patch)
  end
  if not ok then
    util.notify(string.format("%s could not be put back (%s); it is as it was", f.path, why or "git apply failed"), vim.log.levels.WARN)
    return
  end
  reload(v, full)
  after(v)
end

local function accept(v, x, whole)
  if not x then
    return
  end
  accepted[v.key] = accepted[v.key] or {}
  if #x.file.hunks == 0 then
    accepted[v.key][x.file.path .. "\0"] = true
  end
  for _, h in ipairs(whole and x.file.hunks or { x.hunk }) do
    accepted[v.key][x.file.path .. "\0" .. body(h)] = true
  end
  after(v)
end

-- open opens the review of session s: what ("turn", the default, or
-- "session").
function M.open(s, what)
  local last, tree, paths = scope(s, what)
  if not last then
    local n = disk.rewound_turns(s.key)
    if n > 0 then
      util.notify(string.format("nothing to review: :AgentRewind put back %d turn%s", n, n == 1 and "" or "s"))
      return
    end
    util.notify(disk.nothing(s.key, "review"))
    return
  end
  -- Named for its tab's label, which Neovim shortens at each "/"
  -- (agentrun://review/1 read "a//r/1"): words, no slashes.
  local name = string.format("agentrun review of %s %s", s.agent or "the session", tostring(s.key))
  for _, b in ipairs(api.nvim_list_bufs()) do
    if vim.b[b].agentrun_review == s.key then
      api.nvim_buf_delete(b, { force = true })
    end
  end
  local buf = api.nvim_create_buf(false, true)
  local v = { key = s.key, place = last.place, top = last.top, tree = tree, paths = paths, buf = buf, remote = last.remote }
  if not render(v) then
    api.nvim_buf_delete(buf, { force = true })
    util.notify("nothing to review: the files the " .. (what or "turn") .. " changed are as they were, or every hunk was accepted", vim.log.levels.INFO)
    return
  end
  pcall(api.nvim_buf_set_name, buf, name)
  vim.b[buf].agentrun_review = s.key
  vim.bo[buf].filetype = "diff"
  vim.cmd("tabnew")
  api.nvim_win_set_buf(0, buf)
  vim.bo[buf].bufhidden = "wipe"
  local keys = {
    a = { "accept this hunk", function() accept(v, here(v), false) end },
    A = { "accept this file", function() accept(v, here(v), true) end },
    r = { "reject this hunk (the file goes back)", function() reject(v, here(v), false) end },
    R = { "reject this file (the file goes back)", function() reject(v, here(v), true) end },
    Y = { "accept everything", function()
      accepted[v.key] = accepted[v.key] or {}
      for _, f in ipairs(v.files) do
        accepted[v.key][f.path .. "\0"] = #f.hunks == 0 or nil
        for _, h in ipairs(f.hunks) do
          accepted[v.key][f.path .. "\0" .. body(h)] = true
        end
      end
      after(v)
    end },
    ["<CR>"] = { "go to it in the editor window", function()
      local x = here(v)
      if x then
        close(v)
        local w = require("agentrun.ui.gotofile").editor_window()
        api.nvim_set_current_win(w)
        local full = v.top .. "/" .. x.file.path
        if v.remote then
          -- the machine's file, read over the link (never the local one)
          api.nvim_win_set_buf(w, box_buffer(v, x.file.path, true))
        else
          vim.cmd("edit " .. vim.fn.fnameescape(full))
        end
        -- the line under the cursor, in the file as it is now
        local line = x.hunk and x.hunk.line or 1
        for i = 2, (x.i or 1) - 1 do
          local c = x.hunk.lines[i]:sub(1, 1)
          if c == " " or c == "+" then
            line = line + 1
          end
        end
        pcall(api.nvim_win_set_cursor, w, { math.max(line, 1), 0 })
      end
    end },
    d = { "its diff against before", function()
      local x = here(v)
      if x then
        local full = v.top .. "/" .. x.file.path
        require("agentrun.ui.toolcall").open_diff({ path = full, oldText = checkpoint.text(v.key, v.place, v.tree, x.file.path) or "", newText = checkpoint.now(v.key, v.place, x.file.path) or "", old_label = "before", new_label = "now" })
      end
    end },
    q = { "close the review", function() close(v) end },
  }
  for lhs, k in pairs(keys) do
    compat.map(buf, lhs, k[2], "agentrun review: " .. k[1])
  end
end

return M
