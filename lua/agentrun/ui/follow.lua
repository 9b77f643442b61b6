-- follow: a terminal split shows the newest output, as a terminal does,
-- unless the user scrolled away from the end.
--
-- Why: Neovim scrolls a terminal window with new output only while the
-- window's cursor sits on the buffer's last line (or it is the current
-- window in terminal mode). A split opened beside the user's work has its
-- cursor on line 1 when the first screenful arrives, and would show the
-- first lines of a long command forever. So whenever the buffer changes,
-- each window showing it that "follows" gets its cursor on the last line.
-- A window stops following when the user moves its cursor off the last
-- line (scrolling up to read), and follows again at the last line (G).
local api = vim.api

local M = {}

local pending = {} -- buf -> true while a follow is scheduled

local function follow(buf)
  pending[buf] = nil
  if not api.nvim_buf_is_valid(buf) then
    return
  end
  local last = api.nvim_buf_line_count(buf)
  local cur = api.nvim_get_current_win()
  local typing = api.nvim_get_mode().mode == "t" -- Neovim follows the focused terminal itself
  for _, w in ipairs(api.nvim_list_wins()) do
    if api.nvim_win_get_buf(w) == buf and vim.w[w].agentrun_follow ~= false and not (typing and w == cur) then
      if pcall(api.nvim_win_set_cursor, w, { last, 0 }) then
        vim.w[w].agentrun_set = last
      end
    end
  end
end

-- attach makes the windows that show terminal buffer buf follow its output.
function M.attach(buf)
  api.nvim_buf_attach(buf, false, {
    on_lines = function(_, b)
      if not pending[b] then -- once per main-loop turn, however much arrived
        pending[b] = true
        vim.schedule(function()
          follow(b)
        end)
      end
    end,
  })
  api.nvim_create_autocmd("CursorMoved", {
    buffer = buf,
    desc = "agentrun: a terminal split follows its output while the cursor is on the last line",
    callback = function()
      local w = api.nvim_get_current_win()
      local line = api.nvim_win_get_cursor(w)[1]
      if line == vim.w[w].agentrun_set then
        -- where we put it (or where it was when the split opened): output
        -- arriving under it, or entering the window, is no move of the
        -- user's
        return
      end
      vim.w[w].agentrun_set = nil
      vim.w[w].agentrun_follow = line >= api.nvim_buf_line_count(buf)
    end,
  })
  api.nvim_create_autocmd("TermLeave", {
    buffer = buf,
    desc = "agentrun: leaving terminal mode is no scroll of the user's: the split goes on following",
    callback = function()
      -- Leaving terminal mode (<C-\><C-n>) puts the cursor on the
      -- terminal's cursor row, on 0.7.2 above the blank rows below it:
      -- taken for the user moving off the last line, the split stopped
      -- following its output. Terminal mode showed the newest output, as
      -- G does: the window follows it again.
      local w = api.nvim_get_current_win()
      vim.w[w].agentrun_set = api.nvim_win_get_cursor(w)[1]
      vim.w[w].agentrun_follow = true
    end,
  })
end

-- reset makes window win follow again (a buffer was just placed in it, or
-- shown again): its cursor goes to the newest output at once.
function M.reset(win)
  vim.w[win].agentrun_follow = true
  local buf = api.nvim_win_get_buf(win)
  local last = api.nvim_buf_line_count(buf)
  if pcall(api.nvim_win_set_cursor, win, { last, 0 }) then
    vim.w[win].agentrun_set = last
  end
end

return M
