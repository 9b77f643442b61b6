-- Buffer side of fs/read_text_file and fs/write_text_file, called by Go
-- with nvim_exec_lua. A loaded buffer wins over the file on disk: reads
-- see unsaved text, writes go through the buffer so undo works. A buffer
-- with unsaved changes of the user's is never written into: the agent's
-- version opens beside it (a diff), and the agent is told it was not
-- written.
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

-- beside shows the agent's text for buffer b beside the user's own (a
-- diff in a new tab page: their buffer on the left, the agent's version
-- in a scratch buffer agentrun://agent-version/FILE on the right, not
-- written anywhere; q there closes the tab page), once
-- no key typed for something else can go to it (ui/ready.lua).
local function beside(b, path, content)
  local short = vim.fn.fnamemodify(api.nvim_buf_get_name(b), ":t")
  require("agentrun.ui.ready").show({
    what = "the agent's version of " .. short,
    tell = string.format("%s: your unsaved edits kept; the agent's version is beside them", short),
    waiting = string.format("%s: your unsaved edits kept; <Esc> shows the agent's version", short),
    show = function(done)
      done()
      if not api.nvim_buf_is_valid(b) then
        return
      end
      vim.cmd("tab sbuffer " .. b)
      vim.cmd("diffthis")
      vim.cmd("rightbelow vnew")
      local sb = api.nvim_get_current_buf()
      vim.bo[sb].buftype, vim.bo[sb].bufhidden, vim.bo[sb].swapfile = "nofile", "wipe", false
      local lines = vim.split(content, "\n", { plain = true })
      if #lines > 1 and lines[#lines] == "" then
        table.remove(lines)
      end
      api.nvim_buf_set_lines(sb, 0, -1, false, lines)
      vim.bo[sb].modifiable = false
      -- short enough for the status line: the file as the user names it
      pcall(api.nvim_buf_set_name, sb, "agentrun://agent-version/" .. vim.fn.fnamemodify(path, ":~:."))
      require("agentrun.compat").set_filetype(sb, path)
      require("agentrun.compat").map(sb, "q", function()
        vim.cmd("tabclose")
      end, "agentrun: close the agent's version")
      vim.cmd("diffthis")
    end,
  })
end

-- write replaces a loaded buffer's text with content, changing only the
-- lines that differ (one undo step), and writes it to disk. A buffer with
-- unsaved changes of the user's is left as it is: the agent's version is
-- shown beside it (beside), and Go tells the agent it was not written.
-- Returns { loaded, saved, was_modified } or { loaded = false } when no
-- buffer has the file.
function M.write(path, content)
  local b = M.find(path)
  if not b then
    return { loaded = false }
  end
  if vim.bo[b].modified then
    vim.schedule(function()
      beside(b, path, content)
    end)
    return { loaded = true, saved = false, was_modified = true }
  end
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
  api.nvim_buf_call(b, function()
    vim.cmd("silent keepalt write!")
  end)
  return { loaded = true, saved = true, was_modified = false }
end

return M
