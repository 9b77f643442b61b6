-- A checkpoint (in a git work tree) is a tree object of the whole work
-- tree as it is, tracked files and untracked ones git does not ignore:
-- `git add -A` into agentrun's own index file (GIT_INDEX_FILE under
-- stdpath("state")/agentrun/checkpoint/, one per work tree, seeded from a
-- copy of the repository's index so only changed files are read again),
-- then `git write-tree`. The user's index, stash, branches and refs are
-- never touched; the blobs and trees go into the repository's object
-- store, referenced by nothing, so `git gc` prunes them after its
-- gc.pruneExpire (two weeks by default). An untracked file larger than
-- checkpoint_bytes is left out (its changes are not seen).
local compat = require("agentrun.compat")

local M = {}

-- git runs git in dir and returns its output lines, or nil. (No input:
-- one given is written to git's stdin, which fails once git has exited.)
-- disk.lua uses it too.
function M.git(dir, args)
  local out = vim.fn.systemlist(vim.list_extend({ "git", "-C", dir }, args))
  if vim.v.shell_error ~= 0 then
    return nil
  end
  return out
end
local git = M.git

-- read returns the whole of file path, or nil.
function M.read(path)
  local f = io.open(path, "rb")
  if not f then
    return nil
  end
  local text = f:read("*a")
  f:close()
  return text
end
local read = M.read

-- reload shows buffer buf's file as it is on disk again after agentrun
-- put it back (disk.lua's rewind, ui/review.lua's reject): read again,
-- or wiped when the file is gone.
function M.reload(buf)
  if vim.fn.filereadable(vim.api.nvim_buf_get_name(buf)) == 0 then
    vim.cmd("silent! bwipeout " .. buf)
  else
    vim.api.nvim_buf_call(buf, function()
      vim.cmd("silent! edit")
    end)
  end
end

local checkpoint_bytes = 1024 * 1024

-- git_in runs git in dir with index as its index file (env(1) sets it
-- for git alone: Neovim's own environment stays as it is).
local function git_in(index, dir, args)
  local out = vim.fn.systemlist(vim.list_extend({ "env", "GIT_INDEX_FILE=" .. index, "git", "-C", dir }, args))
  if vim.v.shell_error ~= 0 then
    return nil
  end
  return out
end

local function index_of(top)
  local dir = compat.state_dir() .. "/agentrun/checkpoint"
  vim.fn.mkdir(dir, "p")
  return dir .. "/" .. top:gsub("[/\\:]", "%%") .. ".index"
end

-- take writes the tree of the work tree at top through index (seeded
-- from the repository's when seed and there is none yet): its id or nil.
local function take(top, index, seed)
  if seed and not compat.uv.fs_stat(index) then
    -- seed from the repository's index (read only): its stat data
    -- spares re-reading every tracked file
    local p = git(top, { "rev-parse", "--path-format=absolute", "--git-path", "index" })
    local text = p and p[1] and read(p[1])
    if text then
      local f = io.open(index, "wb")
      if f then
        f:write(text)
        f:close()
      end
    end
  end
  local args = { "-c", "core.quotePath=false", "add", "-A", "--", "." }
  for _, path in ipairs(git_in(index, top, { "-c", "core.quotePath=false", "ls-files", "-o", "--exclude-standard" }) or {}) do
    local st = compat.uv.fs_stat(top .. "/" .. path)
    if st and st.size > checkpoint_bytes then
      table.insert(args, ":(exclude,literal)" .. path)
    end
  end
  if not git_in(index, top, args) then
    return nil
  end
  return (git_in(index, top, { "write-tree" }) or {})[1]
end

-- snapshot returns the tree id of the work tree at top as it is now,
-- or nil when git cannot make one. An index file git refuses (a copy of
-- a split or newer index, a damaged one) is made again from nothing.
function M.snapshot(top)
  local index = index_of(top)
  local tree = take(top, index, true)
  if not tree and compat.uv.fs_stat(index) then
    os.remove(index)
    tree = take(top, index, false)
  end
  return tree
end

-- changed_paths lists the paths that differ between trees a and b:
-- { path, status } (status A added, D deleted, M modified).
function M.changed(top, a, b)
  local out = {}
  for _, l in ipairs(git(top, { "-c", "core.quotePath=false", "diff-tree", "-r", "--no-renames", "--name-status", a, b }) or {}) do
    local st, path = l:match("^(%a)%d*\t(.*)$")
    if st then
      table.insert(out, { path = path, status = st })
    end
  end
  return out
end

-- blob_id is the object id of path in tree (nil: not there).
function M.blob(top, tree, path)
  local out = git(top, { "rev-parse", "-q", "--verify", tree .. ":" .. path })
  return out and out[1]
end


-- text returns path's text in tree (nil: not there).
function M.text(top, tree, path)
  local out = vim.fn.system({ "git", "-C", top, "cat-file", "blob", tree .. ":" .. path })
  return vim.v.shell_error == 0 and out or nil
end

-- restore writes path (relative to top) back as it is in tree, through
-- agentrun's own index file (the user's is untouched); true when done.
function M.restore(top, tree, path)
  return git_in(index_of(top), top, { "restore", "--source=" .. tree, "--worktree", "--", ":(literal)" .. path }) ~= nil
end

-- diff returns `git diff` from tree a to tree b of paths, as lines.
function M.diff(top, a, b, paths)
  local args = { "-c", "core.quotePath=false", "diff", "--no-color", "--no-ext-diff", "--no-renames", "--no-textconv", a, b, "--" }
  for _, p in ipairs(paths) do
    table.insert(args, ":(literal)" .. p)
  end
  return git(top, args) or {}
end

-- unapply takes patch (lines of one file's header and one or more of its
-- hunks) back out of the work tree at top (never the index); true when
-- it applied, else false and git's first line.
function M.unapply(top, patch)
  local file = vim.fn.tempname()
  vim.fn.writefile(patch, file)
  local out = vim.fn.systemlist({ "git", "-C", top, "apply", "-R", "--whitespace=nowarn", file })
  local ok = vim.v.shell_error == 0
  os.remove(file)
  return ok, out[1]
end

return M
