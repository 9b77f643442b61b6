-- Buffer side of fs/read_text_file and fs/write_text_file, called by Go
-- with nvim_exec_lua. A loaded buffer wins over the file on disk: reads
-- see unsaved text, writes go through the buffer so undo works.
local api = vim.api
local uv = require("agentrun.compat").uv

local M = {}

local function real(path)
  return uv.fs_realpath(path) or vim.fn.fnamemodify(path, ":p")
end

-- find returns the loaded file buffer for path, or nil.
function M.find(path)
  local want = real(path)
  for _, b in ipairs(api.nvim_list_bufs()) do
    if api.nvim_buf_is_loaded(b) and vim.bo[b].buftype == "" then
      local name = api.nvim_buf_get_name(b)
      if name ~= "" and (name == path or real(name) == want) then
        return b
      end
    end
  end
end

-- text returns the buffer's content as it would be written to disk.
local function text(b)
  local lines = api.nvim_buf_get_lines(b, 0, -1, false)
  if #lines == 1 and lines[1] == "" then
    return ""
  end
  local s = table.concat(lines, "\n")
  if vim.bo[b].eol or (vim.bo[b].fixeol and not vim.bo[b].binary) then
    s = s .. "\n"
  end
  return s
end

-- read returns { loaded = true, text = ... } for a loaded buffer, else
-- { loaded = false }.
function M.read(path)
  local b = M.find(path)
  if not b then
    return { loaded = false }
  end
  return { loaded = true, text = text(b) }
end

-- write replaces a loaded buffer's text with content, changing only the
-- lines that differ (one undo step). A buffer that had no unsaved changes
-- is written to disk; one that had is left modified so the user's own
-- edits are not saved behind their back. Returns { loaded, saved,
-- was_modified } or { loaded = false } when no buffer has the file.
function M.write(path, content)
  local b = M.find(path)
  if not b then
    return { loaded = false }
  end
  local was_modified = vim.bo[b].modified
  local new = vim.split(content, "\n", { plain = true })
  local eol = #new > 1 and new[#new] == ""
  if eol then
    table.remove(new)
  end
  local old = api.nvim_buf_get_lines(b, 0, -1, false)
  local first = 1
  while first <= #old and first <= #new and old[first] == new[first] do
    first = first + 1
  end
  local o, n = #old, #new
  while o >= first and n >= first and old[o] == new[n] do
    o, n = o - 1, n - 1
  end
  api.nvim_buf_call(b, function()
    -- start a new undo block so `u` undoes exactly the agent's write
    vim.cmd("let &g:undolevels = &g:undolevels")
  end)
  if first <= o or first <= n then
    api.nvim_buf_set_lines(b, first - 1, o, false, vim.list_slice(new, first, n))
  end
  if content ~= "" and vim.bo[b].eol ~= eol then
    vim.bo[b].eol = eol
    vim.bo[b].fixeol = eol
  end
  local saved = false
  if not was_modified then
    api.nvim_buf_call(b, function()
      vim.cmd("silent keepalt write!")
    end)
    saved = true
  end
  return { loaded = true, saved = saved, was_modified = was_modified }
end

return M
