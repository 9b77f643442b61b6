-- Context from the editor in a prompt: "#buffer" (the buffer you were
-- in, as it is now, unsaved edits included), "#selection" (your last
-- visual selection there, or the range of :'<,'>AgentPrompt) and "@path"
-- (a file). The words stay in the prompt's text; what they name is sent
-- along as ACP content (the Go side embeds it or links to it, as the agent
-- can take it).
local api = vim.api

local M = {}

-- source is the buffer the context words refer to: the current one if it
-- is a file, else the file buffer used last (getbufinfo's lastused, so a
-- buffer opened before the plugin loaded counts too).
local function source()
  local cur = api.nvim_get_current_buf()
  if vim.bo[cur].buftype == "" and api.nvim_buf_get_name(cur) ~= "" then
    return cur
  end
  local best, used = nil, -1
  for _, info in ipairs(vim.fn.getbufinfo({ buflisted = 1 })) do
    if vim.bo[info.bufnr].buftype == "" and info.name ~= "" and (info.lastused or 0) > used then
      best, used = info.bufnr, info.lastused or 0
    end
  end
  return best
end

local function lines_text(buf, first, last)
  local lines = api.nvim_buf_get_lines(buf, first - 1, last, false)
  return table.concat(lines, "\n") .. "\n"
end

-- gather returns the context items a prompt names, or nil and a message
-- saying what is wrong. range = { first, last } (from :'<,'>AgentPrompt)
-- adds the selection even without "#selection".
--
-- A range in a buffer that is no file (a scratch buffer with a pasted log)
-- has no path to name: its lines come back as the third result, text to
-- send with the prompt.
function M.gather(text, range)
  local items = {}
  local cur = api.nvim_get_current_buf()
  if range and (vim.bo[cur].buftype ~= "" or api.nvim_buf_get_name(cur) == "") then
    if type(range[1]) ~= "number" or type(range[2]) ~= "number" or range[1] < 1 or range[2] < range[1] then
      return nil, "the range must be { first, last } line numbers of the current buffer"
    end
    local more, err = M.gather(text:gsub("#selection", ""), nil)
    return more, err, lines_text(cur, range[1], range[2])
  end
  local wants_buffer = text:find("#buffer", 1, true) ~= nil
  local wants_selection = range ~= nil or text:find("#selection", 1, true) ~= nil
  if wants_buffer or wants_selection then
    local buf = source()
    if not buf then
      return nil, "#buffer and #selection name the file buffer you were in; open one first"
    end
    local path = api.nvim_buf_get_name(buf)
    local ft = vim.bo[buf].filetype
    if wants_buffer then
      table.insert(items, { kind = "buffer", path = path, text = lines_text(buf, 1, api.nvim_buf_line_count(buf)), filetype = ft })
    end
    if wants_selection then
      local first, last
      if range then
        first, last = range[1], range[2]
      else
        first, last = api.nvim_buf_get_mark(buf, "<")[1], api.nvim_buf_get_mark(buf, ">")[1]
      end
      if not first or first < 1 or last < first then
        return nil, "#selection: select lines in the buffer first (visual mode), or use :'<,'>AgentPrompt"
      end
      table.insert(items, { kind = "selection", path = path, text = lines_text(buf, first, last), start_line = first, end_line = last, filetype = ft })
    end
  end
  for word in text:gmatch("@(%S+)") do
    local path = vim.fn.fnamemodify(vim.fn.expand(word), ":p")
    if vim.fn.filereadable(path) == 0 then
      return nil, string.format("@%s: no readable file %s", word, path)
    end
    table.insert(items, { kind = "file", path = path })
  end
  return items
end

return M
