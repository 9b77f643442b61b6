-- A checkpoint is a git tree object of a session's folder as it is
-- (before and after each turn). The backend of the machine the session
-- runs on makes and reads them ("checkpoint", internal/checkpoint/
-- checkpoint.go, routed by the session's id): in a git work tree
-- through agentrun's own index file (the user's index, stash and refs
-- untouched; the blobs in the repository's object store, referenced by
-- nothing), outside git in a git directory of the folder's own under
-- the state folder, within checkpoint.copies_bytes. So a session on
-- another machine is checkpointed, reviewed and put back there, over
-- the same link. A place is what snapshot answered: { top, store,
-- index, tree }; every other call takes one.
local compat = require("agentrun.compat")
local rpc = require("agentrun.rpc")
local state = require("agentrun.state")

local M = {}

-- read returns the whole of file path (on this machine), or nil.
function M.read(path)
  local f = io.open(path, "rb")
  if not f then
    return nil
  end
  local text = f:read("*a")
  f:close()
  return text
end

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

-- call asks the backend of session key's machine for op on place p,
-- with args: its answer (a table), or nil and why not.
local function call(key, op, p, args)
  args = args or {}
  args.op = op
  if p then
    args.top, args.store, args.index = p.top, p.store, p.index
  end
  local res, err = rpc.request("checkpoint", tostring(key), args)
  if type(res) ~= "table" then
    return nil, err or "the backend did not answer"
  end
  if res.why then
    return nil, res.why
  end
  return res
end

-- snapshot takes a checkpoint of folder dir of session key: a place
-- (with its tree), or nil and why not.
function M.snapshot(key, dir)
  local args = { dir = dir }
  if not state.site_of(key) then
    args.base = compat.state_dir() .. "/agentrun/checkpoint"
  end
  local c = require("agentrun.config").get().checkpoint
  args.budget = c and c.copies_bytes or nil
  local res, why = call(key, "snapshot", nil, args)
  if not res or type(res.tree) ~= "string" then
    return nil, why
  end
  return { top = res.top, store = res.store, index = res.index, tree = res.tree, fresh = res.fresh }
end

-- changed lists the paths that differ between trees a and b of place p:
-- { path, status } (status A added, D deleted, M modified).
function M.changed(key, p, a, b)
  local res = call(key, "changed", p, { a = a, b = b })
  return res and res.files or {}
end

-- blob is the object id of path in tree (nil: not there).
function M.blob(key, p, tree, path)
  local res = call(key, "blob", p, { a = tree, path = path })
  return res and res.blob
end

-- hash is the object id of path as it is now (nil: no such file).
function M.hash(key, p, path)
  local res = call(key, "hash", p, { path = path })
  return res and res.blob
end

-- text returns path's text in tree (nil: not there).
function M.text(key, p, tree, path)
  local res = call(key, "text", p, { a = tree, path = path })
  return res and res.text
end

-- now returns path's text as it is now (nil: no such file).
function M.now(key, p, path)
  local res = call(key, "read", p, { path = path })
  return res and res.text
end

-- restore writes path back as it is in tree (never the user's index);
-- true, or false and why not.
function M.restore(key, p, tree, path)
  local res, why = call(key, "restore", p, { a = tree, path = path })
  return res ~= nil, why
end

-- remove removes path (a file the turn made); true, or false and why not.
function M.remove(key, p, path)
  local res, why = call(key, "remove", p, { path = path })
  return res ~= nil, why
end

-- diff returns `git diff` from tree a to tree b of paths, as lines.
function M.diff(key, p, a, b, paths)
  local res = call(key, "diff", p, { a = a, b = b, paths = paths })
  return res and res.lines or {}
end

-- unapply takes patch (lines of one file's header and one or more of its
-- hunks) back out of the files (never the index); true, or false and
-- git's complaint.
function M.unapply(key, p, patch)
  local res, why = call(key, "unapply", p, { patch = patch })
  return res ~= nil, why
end

return M
