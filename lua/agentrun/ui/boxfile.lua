-- A file named in the output of a command that ran on another machine (a
-- compiler's file:line, a traceback's frame) is that machine's: it is
-- read over the link from the backend there ("read_files", found as gf
-- finds a file, from the command's directory) into a buffer named for
-- the machine, "ssh://devbox/home/me/calc.go", read-only (:w says how to
-- change it). Never the local file at the same path.
local compat = require("agentrun.compat")
local rpc = require("agentrun.rpc")
local state = require("agentrun.state")
local util = require("agentrun.util")

local api = vim.api
local M = {}

-- of says where what buf shows (a terminal's split, a chat) ran: nil
-- when here; else the id to ask by (nil for another host's terminal
-- attached here), the machine's URL, and the directories to look in.
function M.of(buf)
  local function dirs_of(t, s)
    local out = {}
    for _, d in ipairs({ t and t.cwd, s and s.cwd }) do
      if type(d) == "string" and d ~= "" and d ~= out[1] then
        table.insert(out, d)
      end
    end
    return out
  end
  for _, t in pairs(state.terminals) do
    if t.bufnr == buf then
      local site = state.site_of(t.id)
      if site then
        return { id = t.id, url = rpc.site_url(site) or site, dirs = dirs_of(t, state.sessions[t.session or ""]) }
      end
      local url = tostring(t.id):match("^(ssh://[^/]+)/")
      if url then
        return { url = url, dirs = dirs_of(t) }
      end
      return nil
    end
  end
  for key, s in pairs(state.sessions) do
    if s.chat and s.chat.buf == buf and state.site_of(key) then
      local site = state.site_of(key)
      return { id = key, url = rpc.site_url(site) or site, dirs = dirs_of(nil, s) }
    end
  end
end

-- read asks where's machine (M.of) for paths: a table of path → { file
-- = absolute path there, lines } or { error = why }, or nil and the
-- message saying why nothing could be asked.
function M.read(where, paths)
  local res, err
  if where.id then
    res, err = rpc.request("read_files", where.id, { paths = paths, dirs = where.dirs })
  else
    -- another host's terminal attached here: its machine's files are
    -- read through a link of this Neovim's agents there, when one is up
    local up
    for _, m in ipairs(rpc.machines()) do
      up = up or (m.url == rpc.machine(where.url) and m.up)
    end
    if not up then
      return nil, string.format("the file is on %s, where this command ran; agentrun reads files there over the link of an agent there (:AgentRun %s), and none is up", where.url, where.url)
    end
    res, err = rpc.request_at(where.url, "read_files", "", { paths = paths, dirs = where.dirs })
  end
  if type(res) ~= "table" then
    return nil, err or string.format("the file is on %s and could not be read from there", where.url)
  end
  local out = {}
  for _, f in ipairs(res) do
    out[f.path] = f
  end
  return out
end

-- buffer returns the buffer showing file of machine url with lines
-- (made, or its text brought up to date).
function M.buffer(url, file, lines)
  local name = url .. file
  local b
  for _, x in ipairs(api.nvim_list_bufs()) do
    if api.nvim_buf_get_name(x) == name then
      b = x
    end
  end
  if not b then
    b = api.nvim_create_buf(true, false)
    api.nvim_buf_set_name(b, name)
    vim.bo[b].buftype = "acwrite"
    vim.bo[b].bufhidden = "hide"
    vim.bo[b].swapfile = false
    api.nvim_create_autocmd("BufWriteCmd", {
      buffer = b,
      desc = "agentrun: a file of another machine is not written from here",
      callback = function()
        util.notify(string.format("%s is %s's file, read over the link and shown here read-only: change it there (or ask the agent)", file, url), vim.log.levels.WARN)
      end,
    })
    compat.set_filetype(b, file)
  end
  vim.bo[b].modifiable = true
  api.nvim_buf_set_lines(b, 0, -1, false, lines)
  vim.bo[b].modifiable = false -- (not 'readonly': :w says why, BufWriteCmd)
  vim.bo[b].modified = false
  return b
end

-- find reads paths from where's machine and returns path → buffer for
-- those found, and the first error (a path that is not there), or nil
-- and the message when the machine could not be asked.
function M.find(where, paths)
  local got, err = M.read(where, paths)
  if not got then
    return nil, err
  end
  local out, first = {}, nil
  for _, p in ipairs(paths) do
    local f = got[p]
    if f and f.file and (f.error or "") == "" then
      out[p] = M.buffer(rpc.machine(where.url), f.file, f.lines or {})
    elseif f and f.error then
      first = first or string.format("%s (on %s)", f.error, where.url)
    end
  end
  return out, first
end

return M
