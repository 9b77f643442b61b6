-- Prompt history: the prompts sent from every chat of this Neovim, newest
-- last, recalled in a prompt area as a shell recalls commands: <Up> on
-- its first line goes back, <Down> on its last line forward, and the text
-- being typed is kept as the newest entry, so <Down> past the end brings
-- it back. Elsewhere the keys move the cursor as usual.
local api = vim.api

local M = {}

-- max is how many prompts are kept.
local max = 100
local list = {}
-- per prompt buffer: { pos = index into list (#list + 1: the draft), draft = text }
local at = {}

-- add remembers a sent prompt and starts buf's next recall from the end.
function M.add(buf, text)
  if text ~= list[#list] then
    table.insert(list, text)
    if #list > max then
      table.remove(list, 1)
    end
  end
  at[buf] = nil
end

-- move shows the prompt delta steps away (-1 back, 1 forward) in buf and
-- reports whether it did (false at either end: nothing to show).
function M.move(buf, delta)
  local cur = at[buf] or { pos = #list + 1 }
  local pos = cur.pos + delta
  if pos < 1 or pos > #list + 1 then
    return false
  end
  if cur.pos == #list + 1 then
    cur.draft = table.concat(api.nvim_buf_get_lines(buf, 0, -1, false), "\n")
  end
  cur.pos = pos
  at[buf] = cur
  local text = pos == #list + 1 and cur.draft or list[pos]
  local lines = vim.split(text or "", "\n", { plain = true })
  api.nvim_buf_set_lines(buf, 0, -1, false, lines)
  -- back: on the first line (another <Up> goes on); forward: on the last
  local row = delta < 0 and 1 or #lines
  api.nvim_win_set_cursor(0, { row, #lines[row] })
  return true
end

-- key handles <Up> (delta -1) or <Down> (1) in prompt buffer buf: a
-- recall on the first (last) line unless the completion menu is open,
-- else the key itself.
function M.key(buf, delta, key)
  local row = api.nvim_win_get_cursor(0)[1]
  local edge = delta < 0 and row == 1 or delta > 0 and row == api.nvim_buf_line_count(buf)
  if vim.fn.pumvisible() == 0 and edge and M.move(buf, delta) then
    return
  end
  api.nvim_feedkeys(api.nvim_replace_termcodes(key, true, false, true), "n", false)
end

return M
