-- util: small helpers the UI modules share.
local api = vim.api

local M = {}

-- close_window closes the current window (unless it is the last one) and
-- returns to the window the user came from (wincmd p), not to whichever
-- one Neovim would pick.
function M.close_window()
  if #api.nvim_tabpage_list_wins(0) <= 1 then
    return
  end
  local prev = vim.fn.win_getid(vim.fn.winnr("#"))
  api.nvim_win_close(0, false)
  if prev ~= 0 and api.nvim_win_is_valid(prev) then
    api.nvim_set_current_win(prev)
  end
end

return M
