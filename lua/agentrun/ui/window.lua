-- Terminal windows: where a split opens (reusing ours in the tab page),
-- and the pty size that follows its window. Neovim never tells a pty
-- opened with nvim_open_term its size, so this module does, for every
-- window that shows a terminal and for the next split to open.
local api = vim.api
local config = require("agentrun.config")
local rpc = require("agentrun.rpc")
local state = require("agentrun.state")

local M = {}

-- window_size returns the text area of win: columns, rows.
function M.size(win)
  local info = vim.fn.getwininfo(win)[1]
  if not info then
    return 80, 24
  end
  return math.max(1, info.width - (info.textoff or 0)), math.max(1, info.height)
end

-- send_resize tells Go the pty size of t when the window showing it changed.
local function send_resize(t, win)
  if t.remote and not t.user then
    return -- another host's pty: its holder sizes it (we do once we hold it)
  end
  if t.display_only or t.state ~= "running" then
    return
  end
  local cols, rows = M.size(win)
  if t.cols ~= cols or t.rows ~= rows then
    t.cols, t.rows = cols, rows
    rpc.notify("resize", t.id, cols, rows)
  end
end

-- expected_size is the text area a new terminal split will get: that of
-- our terminal window in this tab (it is reused), else what place() makes.
function M.expected_size()
  local cfg = config.get().terminal
  for _, w in ipairs(api.nvim_tabpage_list_wins(0)) do
    local ok, tag = pcall(api.nvim_win_get_var, w, "agentrun_terminal_window")
    if ok and tag == cfg.position then
      return M.size(w)
    end
  end
  local cols, lines = vim.o.columns, vim.o.lines
  if cfg.position == "right" then
    return math.min(cfg.size, cols - 10), math.max(1, lines - vim.o.cmdheight - 2)
  elseif cfg.position == "float" then
    return math.max(20, math.floor(cols * 0.8)), math.max(5, math.floor(lines * 0.7))
  end
  return cols, math.min(cfg.size, math.max(3, lines - 8))
end

local last_expected = nil

-- send_expected_size tells Go the size to give a new pty at once, so a
-- command that asks early already sees (nearly) its window's size.
-- force sends even an unchanged size (a new backend).
function M.send_expected_size(force)
  M.watch()
  local cols, rows = M.expected_size()
  local key = cols .. "x" .. rows
  if force or key ~= last_expected then
    last_expected = key
    rpc.notify("terminal_size", cols, rows)
  end
end

-- min_cols is the narrowest terminal we let a window make: in a terminal
-- one column wide, any wide character crashes Neovim (every version).
local min_cols = 2

-- min_rows is the lowest terminal we let a window make: Neovim's terminal
-- (libvterm) one row tall scrolls a line off by erasing it, never into
-- the scrollback, so whatever a command prints meanwhile is lost for good
-- (every version; the lines are missing when the window grows again).
local min_rows = 2

local function resize_visible()
  for _, w in ipairs(api.nvim_list_wins()) do
    local t = state.terminal_for_buf(api.nvim_win_get_buf(w))
    if t then
      local cols, rows = M.size(w)
      if cols < min_cols and vim.o.columns > min_cols + 1 then
        local info = vim.fn.getwininfo(w)[1]
        pcall(api.nvim_win_set_width, w, min_cols + (info and info.textoff or 0))
      end
      if rows < min_rows then
        pcall(api.nvim_win_set_height, w, min_rows)
      end
      send_resize(t, w)
    end
  end
  M.send_expected_size()
end

-- resize_terminal sends terminal t's size now (a remote terminal just
-- taken over), from the first window showing it.
function M.resize_terminal(t)
  t.cols, t.rows = nil, nil
  for _, w in ipairs(api.nvim_list_wins()) do
    if t.bufnr and api.nvim_win_get_buf(w) == t.bufnr then
      send_resize(t, w)
      return
    end
  end
end

-- keep_prompts gives every chat prompt window in this tab page its height
-- back: Neovim hands the rows of a closed window to a neighbour and takes
-- those of a new split from one, 'winfixheight' or not.
function M.keep_prompts()
  local changed = false
  for _, w in ipairs(api.nvim_tabpage_list_wins(0)) do
    local ok, h = pcall(api.nvim_win_get_var, w, "agentrun_prompt_window")
    if ok and h then
      local want = type(h) == "number" and h or 3
      if api.nvim_win_get_height(w) ~= want then
        changed = pcall(api.nvim_win_set_height, w, want) or changed
      end
    end
  end
  if not changed then
    return
  end
  -- A chat that followed its end keeps its last line in sight in the
  -- height it has now (Neovim keeps the top line of a resized window).
  for _, w in ipairs(api.nvim_tabpage_list_wins(0)) do
    local ok = pcall(api.nvim_win_get_var, w, "agentrun_chat_window")
    local buf = api.nvim_win_get_buf(w)
    if ok and api.nvim_win_get_cursor(w)[1] >= api.nvim_buf_line_count(buf) then
      api.nvim_win_call(w, function()
        vim.cmd("normal! zb")
      end)
    end
  end
end

local autocmds_done = false
-- watch keeps every terminal pty the size of its window (once).
function M.watch()
  if autocmds_done then
    return
  end
  autocmds_done = true
  local group = api.nvim_create_augroup("agentrun_terminal", { clear = true })
  -- nvim_open_term never tells a pty its size: follow the windows.
  local events = { "VimResized", "BufWinEnter", "WinEnter" }
  table.insert(events, vim.fn.exists("##WinResized") == 1 and "WinResized" or "WinScrolled")
  api.nvim_create_autocmd(events, {
    group = group,
    desc = "agentrun: pty size follows the terminal window",
    callback = function()
      resize_visible()
    end,
  })
  -- :q / :wq in the last window that is not ours quits Neovim, as it
  -- would without the chat and the terminal splits beside it.
  local function ours(w)
    return api.nvim_buf_get_name(api.nvim_win_get_buf(w)):find("^agentrun://") ~= nil
  end
  api.nvim_create_autocmd("QuitPre", {
    group = group,
    desc = "agentrun: quitting your last window quits Neovim, the chat and splits with it",
    callback = function()
      local cur = api.nvim_get_current_win()
      if #api.nvim_list_tabpages() > 1 or ours(cur) then
        return
      end
      local close = {}
      for _, w in ipairs(api.nvim_tabpage_list_wins(0)) do
        if w ~= cur then
          if not ours(w) then
            return -- another window of the user's stays: an ordinary :q
          end
          table.insert(close, w)
        end
      end
      for _, w in ipairs(close) do
        pcall(api.nvim_win_close, w, true)
      end
    end,
  })
  api.nvim_create_autocmd("WinClosed", {
    group = group,
    desc = "agentrun: the chat's prompt keeps its height when a window closes",
    callback = function()
      vim.schedule(M.keep_prompts) -- once the window is gone
    end,
  })
end


-- place shows buf in the terminal window for position (reusing ours in
-- this tab page), returns the window. The current window may change.
function M.place(buf, position)
  local size = config.get().terminal.size
  for _, w in ipairs(api.nvim_tabpage_list_wins(0)) do
    local ok, tag = pcall(api.nvim_win_get_var, w, "agentrun_terminal_window")
    if ok and tag == position then
      api.nvim_win_set_buf(w, buf)
      require("agentrun.ui.follow").reset(w)
      return w
    end
  end
  local w
  if position == "float" then
    local width = math.max(20, math.floor(vim.o.columns * 0.8))
    local height = math.max(5, math.floor(vim.o.lines * 0.7))
    w = api.nvim_open_win(buf, false, {
      relative = "editor",
      width = width,
      height = height,
      row = math.floor((vim.o.lines - height) / 2),
      col = math.floor((vim.o.columns - width) / 2),
      border = "rounded",
      style = "minimal",
    })
  else
    vim.cmd((position == "right" and "botright vertical sbuffer " or "botright sbuffer ") .. buf)
    w = api.nvim_get_current_win()
    if position == "right" then
      api.nvim_win_set_width(w, math.min(size, vim.o.columns - 10))
      vim.wo[w].winfixwidth = true
    else
      api.nvim_win_set_height(w, math.min(size, math.max(3, vim.o.lines - 8)))
      vim.wo[w].winfixheight = true
    end
  end
  api.nvim_win_set_var(w, "agentrun_terminal_window", position)
  M.keep_prompts()
  require("agentrun.util").set_win_opts(w)
  require("agentrun.ui.follow").reset(w)
  return w
end

return M
