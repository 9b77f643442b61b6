-- Terminal windows: where a split opens (reusing ours in the tab page),
-- and the pty size that follows its window. Neovim never tells a pty
-- opened with nvim_open_term its size, so this module does, for every
-- window that shows a terminal and for the next split to open.
-- Why this file is long: every window agentrun opens is placed and sized
-- here (splits, floats, the chat's sizes) and follows screen resizes in one
-- place, since each size depends on the others in the tab page.
local api = vim.api
local cmdwin = require("agentrun.ui.cmdwin")
local config = require("agentrun.config")
local rpc = require("agentrun.rpc")
local state = require("agentrun.state")
local writes = require("agentrun.ui.writes")

local M = {}

-- on_layout holds functions called when windows changed size (the chat
-- fills it: its notes follow its width).
M.on_layout = {}

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
    return M.right_width(), math.max(1, lines - vim.o.cmdheight - 2)
  elseif cfg.position == "float" then
    local fc = M.float_config()
    return fc.width, fc.height
  end
  return cols, M.split_height()
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
    rpc.notify_all("terminal_size", cols, rows)
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
  local room = M.room()
  for _, w in ipairs(api.nvim_list_wins()) do
    local t = state.terminal_for_buf(api.nvim_win_get_buf(w))
    if t then
      local cols, rows = M.size(w)
      if room and cols < min_cols then
        local info = vim.fn.getwininfo(w)[1]
        pcall(api.nvim_win_set_width, w, min_cols + (info and info.textoff or 0))
      end
      if room and rows < min_rows and M.has_rows_neighbour(w) then
        pcall(api.nvim_win_set_height, w, min_rows)
      end
      send_resize(t, w)
    end
  end
  M.send_expected_size()
end

-- chat_width is the width of a chat beside the code: chat.size, never
-- more than half the screen (the user's code stays visible).
function M.chat_width()
  return math.min((config.chat_size("right")), math.max(30, math.floor(vim.o.columns / 2)))
end

-- chat_height is the height of a chat below the code: chat.size, at most
-- half the screen's rows, so the code above stays readable.
function M.chat_height()
  return math.min((config.chat_size("below")), math.max(3, math.floor((vim.o.lines - vim.o.cmdheight) / 2)))
end

-- split_height is the height of a terminal split below: terminal.size,
-- at most a third of the screen's rows (never less than 3), so that on a
-- short screen the chat and the code above it keep a readable height.
function M.split_height()
  local third = math.floor((vim.o.lines - vim.o.cmdheight) / 3)
  return math.min((config.terminal_size("below")), math.max(3, third))
end

-- list_height is the height the terminal list (:AgentTerminals) wants
-- for its n lines: its key line, column headers and terminals, up to 12
-- rows and a third of the screen (never less than 3).
function M.list_height(n)
  local third = math.floor((vim.o.lines - vim.o.cmdheight) / 3)
  return math.min(12, math.max(3, n + 1), math.max(3, third))
end

-- bottom_rows is what the terminal list and a terminal split below share
-- when both are shown: half the screen's rows less a status line (6 at
-- least), so that the chat and the code above keep the rest.
function M.bottom_rows()
  return math.max(6, math.floor((vim.o.lines - vim.o.cmdheight) / 2) - 1)
end

-- list_win returns the window of this tab page showing the terminal list.
local function list_win()
  for _, w in ipairs(api.nvim_tabpage_list_wins(0)) do
    if vim.b[api.nvim_win_get_buf(w)].agentrun_terminal_list then
      return w
    end
  end
end

-- share_bottom gives the terminal list of this tab page its height (what
-- list_height says for its lines), and, with a terminal split below too,
-- shares bottom_rows between them: the list first (the split keeps 3
-- rows at least: its last lines), the split the rest up to its own height. Without it a
-- split opened under the list took a third of the screen besides the
-- list's, and the chat beside the code was left one row; a list made
-- small by a small screen stayed small when it grew.
-- A quickfix window below them (Q: open_quickfix) takes its rows and
-- status line out of bottom_rows first.
local lent = {} -- split window -> its height before it shared rows with the list

-- qf_win returns the quickfix window of this tab page (not a location
-- list's) when it has a window above or below it.
local function qf_win()
  local tab = vim.fn.tabpagenr()
  for _, info in ipairs(vim.fn.getwininfo()) do
    if info.tabnr == tab and info.quickfix == 1 and info.loclist == 0 and M.has_rows_neighbour(info.winid) then
      return info.winid
    end
  end
end

-- below_splits returns this tab page's terminal splits below that share
-- their column with other windows.
local function below_splits()
  local splits = {}
  for _, w in ipairs(api.nvim_tabpage_list_wins(0)) do
    local ok, tag = pcall(api.nvim_win_get_var, w, "agentrun_terminal_window")
    if ok and tag == "below" and M.has_rows_neighbour(w) then
      table.insert(splits, w)
    end
  end
  return splits
end

-- bottom_heights returns the heights share_bottom gives (window ->
-- rows) with quickfix window qf qf_rows tall, or nil with no list.
local function bottom_heights(qf, qf_rows)
  local list = list_win()
  if not list or not M.has_rows_neighbour(list) then
    return nil
  end
  local heights = {}
  local want = M.list_height(api.nvim_buf_line_count(api.nvim_win_get_buf(list)))
  local splits = below_splits()
  if #splits > 0 then
    local budget = M.bottom_rows() - (qf and qf_rows + 1 or 0)
    want = math.max(3, math.min(want, budget - 3))
    local rest = math.max(3, math.min(M.split_height(), budget - want))
    for _, w in ipairs(splits) do
      local h = api.nvim_win_get_height(w)
      if h > rest then
        lent[w] = lent[w] or h -- back when the list closes (give_back)
      end
      heights[w] = rest
    end
  end
  heights[list] = want
  return heights
end

function M.share_bottom()
  local qf = qf_win()
  local heights = bottom_heights(qf, qf and api.nvim_win_get_height(qf))
  if not heights then
    return
  end
  local list = list_win()
  for w, h in pairs(heights) do
    if w ~= list and api.nvim_win_get_height(w) ~= h then
      pcall(api.nvim_win_set_height, w, h)
    end
  end
  if api.nvim_win_get_height(list) ~= heights[list] then
    pcall(api.nvim_win_set_height, list, heights[list])
  end
end

-- window_above returns a window whose height is that of the frame above
-- win in the tab page's column of windows (the code and the chat above
-- the splits: its row), or nil.
local function window_above(win)
  local top = vim.fn.winlayout()
  if top[1] ~= "col" then
    return nil
  end
  local node
  for i, child in ipairs(top[2]) do
    if child[1] == "leaf" and child[2] == win then
      node = top[2][i - 1]
    end
  end
  while node and node[1] ~= "leaf" do
    local pick = node[2][node[1] == "col" and #node[2] or 1]
    for _, child in ipairs(node[1] == "row" and node[2] or {}) do
      if child[1] == "leaf" then
        pick = child -- a row's height is any of its windows'
        break
      end
    end
    node = pick
  end
  return node and node[2]
end

-- set_heights gives each window of heights (window -> rows, windows at
-- the bottom of the tab page's column) its height, the rows they give or
-- take going to or coming from the windows above them. (Where Neovim
-- puts the rows a window gives differs: 0.12 gives them to the window
-- below, 'winfixheight' or not, 0.7 and 0.10 to the one above.)
local function set_heights(heights)
  local wins = vim.tbl_keys(heights)
  table.sort(wins, function(a, b)
    return vim.fn.win_screenpos(a)[1] < vim.fn.win_screenpos(b)[1]
  end)
  for _ = 1, 3 do
    for _, w in ipairs(wins) do
      if api.nvim_win_get_height(w) ~= heights[w] then
        pcall(api.nvim_win_set_height, w, heights[w])
      end
    end
    local excess = 0
    for _, w in ipairs(wins) do
      excess = excess + api.nvim_win_get_height(w) - heights[w]
    end
    local above = excess > 0 and window_above(wins[1])
    if not above then
      return
    end
    pcall(api.nvim_win_set_height, above, api.nvim_win_get_height(above) + excess)
  end
end

-- quickfix_rows is how many rows the quickfix window in win wants: its
-- lines as they wrap there (1 at least, 10 at most: :copen's height).
local function quickfix_rows(win)
  local width = M.size(win)
  local wrap = vim.wo[win].wrap
  local rows = 0
  for _, l in ipairs(api.nvim_buf_get_lines(api.nvim_win_get_buf(win), 0, -1, false)) do
    rows = rows + (wrap and math.max(1, math.ceil(vim.fn.strdisplaywidth(l) / width)) or 1)
    if rows >= 10 then
      return 10
    end
  end
  return math.max(1, rows)
end

-- open_quickfix opens the quickfix window where :copen usually goes, at
-- the bottom, full width (:botright copen), but as tall as its items (as
-- :cwindow N would, 10 rows at most), and no taller than leaves the
-- terminal list and a split below 3 rows each of the bottom rows
-- (bottom_rows); the list and the split share the rest as share_bottom
-- does (the list keeps its key line, its headers and a row), the code
-- and the chat above keep theirs. (It was 10 rows beside a list and a
-- split at 100x30, squeezing both.) The cursor ends in the quickfix
-- window.
function M.open_quickfix()
  local list, splits = list_win(), below_splits()
  local cap = 10
  if list or #splits > 0 then
    local others = (list and 3 or 0) + (#splits > 0 and 3 or 0)
    cap = math.max(1, math.min(cap, M.bottom_rows() - others - 1)) -- (its status line)
  end
  vim.cmd("botright copen " .. math.max(1, math.min(cap, #vim.fn.getqflist())))
  local qf = api.nvim_get_current_win()
  local rows = math.min(cap, quickfix_rows(qf))
  local heights = bottom_heights(qf, rows) or {}
  heights[qf] = rows
  set_heights(heights)
  M.keep_prompts()
  return qf
end

-- give_back gives the splits that shared their rows with the terminal
-- list (share_bottom) their heights back once it closed; the chat's
-- prompt keeps its own.
function M.give_back()
  local back = lent
  lent = {}
  for w, h in pairs(back) do
    if api.nvim_win_is_valid(w) and api.nvim_win_get_height(w) < h then
      pcall(api.nvim_win_set_height, w, h)
    end
  end
  M.keep_prompts()
end

-- chat_beside returns the chat window of this tab page when it stands
-- beside the code (chat.position "right" or "left").
local function chat_beside()
  local pos = config.get().chat.position
  if pos ~= "right" and pos ~= "left" then
    return nil
  end
  for _, w in ipairs(api.nvim_tabpage_list_wins(0)) do
    if pcall(api.nvim_win_get_var, w, "agentrun_chat_window") then
      return w
    end
  end
end

-- right_width is the width of a terminal split on the right: terminal.size
-- when set (leaving the rest 10 columns), else 80 columns, at most half of
-- what a chat beside the code leaves.
function M.right_width()
  local room = vim.o.columns
  local cw = chat_beside()
  if cw then
    room = room - api.nvim_win_get_width(cw) - 1
  end
  local size, set = config.terminal_size("right")
  return math.max(2, math.min(size, set and room - 10 or math.floor(room / 2)))
end

-- overflows reports whether the windows of this tab page reach past the
-- rows the screen has for them. A screen made smaller than the windows'
-- least heights leaves Neovim's layout so (every version), also after it
-- grew again: a split's status line and last rows fall off the screen.
local function overflows()
  local wins = vim.tbl_filter(function(w)
    return api.nvim_win_get_config(w).relative == ""
  end, api.nvim_tabpage_list_wins(0))
  local last = vim.o.lines - vim.o.cmdheight -- the last row windows may use
  local ls = vim.o.laststatus
  local status = (ls == 2 or (ls == 1 and #wins > 1)) and 1 or 0
  if ls == 3 then
    last = last - 1 -- the global status line
  end
  for _, w in ipairs(wins) do
    if vim.fn.win_screenpos(w)[1] + api.nvim_win_get_height(w) - 1 + status > last then
      return true
    end
  end
  return false
end

-- fit gives agentrun's windows their configured sizes again when the
-- screen changed size (a screen made smaller leaves a split below as tall
-- as it was, its status line past the screen's end; one made very small
-- and large again leaves them as small as it was): the chat its width, a
-- terminal split terminal.size (at most a third of the screen), the
-- prompt its height, a terminal float its place beside the chat. A split
-- taller than that is made lower on any screen (that only gives rows to
-- the windows above it); the rest waits for a screen with room.
function M.fit()
  if cmdwin.open() then
    return cmdwin.after(M.fit) -- no window can change size before
  end
  local room = M.room()
  if room and overflows() then
    vim.cmd("wincmd =") -- what the user would type; the sizes below follow
  end
  for _, w in ipairs(api.nvim_tabpage_list_wins(0)) do
    local ok, tag = pcall(api.nvim_win_get_var, w, "agentrun_terminal_window")
    if ok and tag == "below" and M.has_rows_neighbour(w) and (room or api.nvim_win_get_height(w) > M.split_height()) then
      pcall(api.nvim_win_set_height, w, M.split_height())
    end
  end
  if not room then
    M.place_floats()
    return
  end
  local chat_pos = config.get().chat.position
  for _, w in ipairs(api.nvim_tabpage_list_wins(0)) do
    local ok, tag = pcall(api.nvim_win_get_var, w, "agentrun_terminal_window")
    if ok and tag == "below" and M.has_rows_neighbour(w) then
      pcall(api.nvim_win_set_height, w, M.split_height())
    end
    if pcall(api.nvim_win_get_var, w, "agentrun_chat_window") then
      if chat_pos == "right" or chat_pos == "left" then
        pcall(api.nvim_win_set_width, w, M.chat_width())
      elseif chat_pos == "below" and M.has_rows_neighbour(w) then
        pcall(api.nvim_win_set_height, w, M.chat_height())
      end
    end
  end
  for _, w in ipairs(api.nvim_tabpage_list_wins(0)) do
    local ok, tag = pcall(api.nvim_win_get_var, w, "agentrun_terminal_window")
    if ok and tag == "right" then
      pcall(api.nvim_win_set_width, w, M.right_width()) -- once the chat has its width
    end
  end
  M.share_bottom() -- the list grows back with the screen
  M.keep_prompts()
  M.place_floats()
end

-- tagged_wins returns the windows of tab page tab (0: this one) marked
-- with window variable name.
local function tagged_wins(tab, name)
  local out = {}
  for _, w in ipairs(api.nvim_tabpage_list_wins(tab)) do
    local ok, v = pcall(api.nvim_win_get_var, w, name)
    if ok and v then
      table.insert(out, w)
    end
  end
  return out
end

-- float_config is where a terminal float (terminal.position "float")
-- goes in this tab page: never over the chat's prompt, where the user
-- types. Beside a chat on the right or left it covers the code's side;
-- over a chat below or in its own tab it ends above the chat's last
-- lines, the prompt and they stay in sight; with no chat in the tab page
-- it is centred, 80% of the columns, 70% of the rows. Returns
-- nvim_open_win's config (the border's rows and columns are outside
-- width and height).
function M.float_config()
  local lines, cols = vim.o.lines, vim.o.columns
  local top = (vim.o.showtabline == 2 or (vim.o.showtabline == 1 and #api.nvim_list_tabpages() > 1)) and 1 or 0
  local bottom = lines - vim.o.cmdheight - (vim.o.laststatus == 3 and 1 or 0) -- rows top .. bottom-1
  local function region(r0, c0, r1, c1)
    return { relative = "editor", row = r0, col = c0, width = math.max(2, c1 - c0 - 2), height = math.max(2, r1 - r0 - 2), border = "rounded", style = "minimal" }
  end
  local chat = tagged_wins(0, "agentrun_chat_window")[1]
  local prompt = tagged_wins(0, "agentrun_prompt_window")[1]
  if chat and prompt then
    local cp = vim.fn.win_screenpos(chat) -- 1-based
    local cw = api.nvim_win_get_width(chat)
    local pp = vim.fn.win_screenpos(prompt)
    if cp[2] > 1 and cp[2] - 3 >= 20 then
      return region(top, 0, bottom, cp[2] - 1) -- the code's side, its border on the chat's separator
    elseif cp[2] == 1 and cw < cols and cols - cw - 2 >= 20 then
      return region(top, cw, bottom, cols) -- right of a chat on the left, the same
    end
    -- Above: the chat's last lines (a third, 3 to 8) and the prompt stay.
    local ch = api.nvim_win_get_height(chat)
    local keep = math.min(ch, math.max(3, math.min(8, math.floor(ch / 3))))
    local r1 = math.min(cp[1] - 1 + ch - keep, pp[1] - 2)
    if cp[1] - 1 - top >= 8 then
      r1 = cp[1] - 2 -- a chat below the code: over the code
    end
    if r1 - top >= 5 then
      return region(top, 0, r1, cols)
    end
  end
  local width = math.max(20, math.floor(cols * 0.8))
  local height = math.max(5, math.floor(lines * 0.7))
  return { relative = "editor", row = math.floor((lines - height) / 2), col = math.floor((cols - width) / 2), width = width, height = height, border = "rounded", style = "minimal" }
end

-- place_floats moves the terminal float of this tab page to where
-- float_config says (the screen or the chat changed).
function M.place_floats()
  for _, w in ipairs(tagged_wins(0, "agentrun_terminal_window")) do
    if api.nvim_win_get_var(w, "agentrun_terminal_window") == "float" then
      local fc = M.float_config()
      local cur = api.nvim_win_get_config(w)
      local row = type(cur.row) == "table" and cur.row[false] or cur.row -- 0.7 answers { [false] = n }
      local col = type(cur.col) == "table" and cur.col[false] or cur.col
      if cur.width ~= fc.width or cur.height ~= fc.height or row ~= fc.row or col ~= fc.col then
        pcall(api.nvim_win_set_config, w, { relative = "editor", row = fc.row, col = fc.col, width = fc.width, height = fc.height })
        resize_visible() -- its pty follows (no WinResized for a float on every version)
      end
    end
  end
end

-- close_floats closes the terminal float of this tab page (the command
-- keeps running); true when there was one.
function M.close_floats()
  local closed = false
  for _, w in ipairs(tagged_wins(0, "agentrun_terminal_window")) do
    if api.nvim_win_get_var(w, "agentrun_terminal_window") == "float" then
      closed = pcall(api.nvim_win_close, w, false) or closed
    end
  end
  return closed
end

-- close_partner closes, in tab page tab, a chat's prompt whose chat
-- window closed, or a chat whose prompt window closed (:q, :close,
-- <C-w>c in either): they go together, as the close key takes both. One
-- left alone in its tab page stays (:only in it; see Chat:open).
local function close_partner(tab)
  if not api.nvim_tabpage_is_valid(tab) or cmdwin.open() then
    return
  end
  local chats = tagged_wins(tab, "agentrun_chat_window")
  local prompts = tagged_wins(tab, "agentrun_prompt_window")
  local lone = (#chats == 0 and prompts) or (#prompts == 0 and chats) or {}
  if #lone == 0 or #lone >= #api.nvim_tabpage_list_wins(tab) then
    return
  end
  for _, w in ipairs(lone) do
    pcall(api.nvim_win_close, w, false)
  end
end

-- bottom_splits_full_width moves the terminal split below and the
-- terminal list back under every window, full width (terminal.position
-- "below"), after a window opened full height beside them (the chat),
-- keeping their heights.
function M.bottom_splits_full_width()
  for _, w in ipairs(api.nvim_tabpage_list_wins(0)) do
    local ok, tag = pcall(api.nvim_win_get_var, w, "agentrun_terminal_window")
    local list = vim.b[api.nvim_win_get_buf(w)].agentrun_terminal_list ~= nil
    if (ok and tag == "below") or list then
      local h = api.nvim_win_get_height(w)
      api.nvim_win_call(w, function()
        vim.cmd("wincmd J")
      end)
      pcall(api.nvim_win_set_height, w, h)
    end
  end
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

-- has_rows_neighbour reports whether win shares its column with another
-- window (one above or below it): only then does setting its height take
-- rows from a window rather than from the command line.
function M.has_rows_neighbour(win)
  return api.nvim_win_call(win, function()
    local n = vim.fn.winnr()
    return vim.fn.winnr("k") ~= n or vim.fn.winnr("j") ~= n
  end)
end

-- room reports whether the screen is large enough for the sizes the
-- plugin gives its windows: 40 columns, and rows for the chat (two at
-- least), its prompt (three) and a split below (M.split_height), each
-- with its status line, and the code's window above a chat below. Below
-- that Neovim has to take the rows from the command line or lay windows
-- out past the screen's end, so the plugin sets no size that grows a
-- window and lets Neovim share the little there is.
function M.room()
  local rows = vim.o.lines - vim.o.cmdheight - (vim.o.laststatus == 3 and 1 or 0)
  local need = M.split_height() + 1 + 3 + 1 + 2 + 1
  if config.get().chat.position == "below" then
    need = need + 2
  end
  return vim.o.columns >= 40 and rows >= need
end

-- in_column reports whether win shares a column of windows with others
-- (the prompt below its chat): its height is then taken from or given to
-- them. A prompt beside the code in a row of windows (its chat closed)
-- is not: its height would be the whole row's, the code's with it.
local function in_column(win)
  local function find(node, parent)
    if node[1] == "leaf" then
      return node[2] == win and parent or nil
    end
    for _, child in ipairs(node[2]) do
      local p = find(child, node[1])
      if p then
        return p
      end
    end
  end
  return find(vim.fn.winlayout(), nil) == "col"
end

-- keep_prompts gives every chat prompt window in this tab page its height
-- back: Neovim hands the rows of a closed window to a neighbour and takes
-- those of a new split from one, 'winfixheight' or not.
--
-- A window with no neighbour above or below it is left alone: its height
-- is the screen's, and setting it would change 'cmdheight' instead (a
-- prompt left alone by :only). So is a height the screen cannot give
-- (ui/window.lua's fit says when the screen is too small), and so is a
-- prompt that is no longer below its chat (in_column).
function M.keep_prompts()
  if cmdwin.open() then
    return cmdwin.after(M.keep_prompts)
  end
  local changed = false
  for _, w in ipairs(api.nvim_tabpage_list_wins(0)) do
    local ok, h = pcall(api.nvim_win_get_var, w, "agentrun_prompt_window")
    if ok and h and in_column(w) and M.room() then
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

-- write_quit: the command line just left is a :wq or :x (each command
-- line says anew; see watch's CmdlineLeave)
local write_quit = false

-- write_to_quit reports whether the write under way is a :wq's or an
-- :x's typed by the user, whose quit follows (the prompt's text is then
-- asked about, not refused: ui/chat.lua).
function M.write_to_quit()
  return write_quit
end
-- watch keeps every terminal pty the size of its window (once).
function M.watch()
  if autocmds_done then
    return
  end
  autocmds_done = true
  require("agentrun.ui.quitask").watch()
  local group = api.nvim_create_augroup("agentrun_terminal", { clear = true })
  -- nvim_open_term never tells a pty its size: follow the windows.
  api.nvim_create_autocmd("VimResized", {
    group = group,
    desc = "agentrun: the chat and splits get their sizes back when the screen has room",
    callback = function()
      M.fit()
    end,
  })
  local events = { "VimResized", "BufWinEnter", "WinEnter" }
  table.insert(events, vim.fn.exists("##WinResized") == 1 and "WinResized" or "WinScrolled")
  api.nvim_create_autocmd(events, {
    group = group,
    desc = "agentrun: pty size follows the terminal window",
    callback = function()
      resize_visible()
      for _, fn in ipairs(M.on_layout) do
        fn()
      end
    end,
  })
  -- :q / :wq in the last window that is not ours quits Neovim, as it
  -- would without the chat and the terminal splits beside it.
  local function ours(w)
    local b = api.nvim_win_get_buf(w)
    local v = vim.b[b]
    return api.nvim_buf_get_name(b):find("^agentrun://") ~= nil
      or v.agentrun_review ~= nil
      or v.agentrun_chat_buffer ~= nil
      or v.agentrun_terminal_list ~= nil
      or v.agentrun_terminal ~= nil
  end
  -- :wq and :x typed in the chat or the prompt (where :AgentRun leaves
  -- you) mean what they mean in your window: see QuitPre below.
  api.nvim_create_autocmd("CmdlineLeave", {
    group = group,
    desc = "agentrun: notes a :wq or :x, which quits Neovim from the chat and its prompt too",
    callback = function()
      if vim.fn.getcmdtype() ~= ":" then
        return
      end
      local line = vim.fn.getcmdline():gsub("^[%s:]+", ""):gsub("%s+$", ""):gsub("!$", "")
      -- each command line says anew (one typed after a failed :wq is not it)
      write_quit = not (vim.v.event or {}).abort and (line == "wq" or line == "x" or line == "xi" or line == "xit" or line == "exi" or line == "exit")
      if write_quit then
        vim.schedule(function()
          write_quit = false
        end)
      end
    end,
  })
  api.nvim_create_autocmd("QuitPre", {
    group = group,
    desc = "agentrun: quitting your last window quits Neovim, the chat and splits with it",
    callback = function()
      -- The chat and the prompt take :w as a write of nothing (buftype
      -- acwrite): what they hold never makes a quit ask for a write.
      for _, b in ipairs(api.nvim_list_bufs()) do
        if writes.nothing[b] then
          vim.bo[b].modified = false
        end
      end
      local cur = api.nvim_get_current_win()
      if #api.nvim_list_tabpages() > 1 then
        return
      end
      local quitask = require("agentrun.ui.quitask")
      if ours(cur) then
        local buf = api.nvim_win_get_buf(cur)
        local check = write_quit and writes.nothing[buf] -- the chat's or the prompt's, not a split's
        if check and quitask.asks() then
          -- asked before your files are written and the windows close
          -- (Stay leaves every window as it was)
          if quitask.ask() then
            writes.write_and_leave(cur)
          end
          return
        end
        local why = check and check(buf)
        if why then
          -- :x (no write asked): only this window closes, the text stays
          require("agentrun.util").notify(why)
        elseif check then
          writes.write_and_leave(cur)
        end
        return -- else :q closes this window of ours, as in any window
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
      -- Neovim quits with this window: asked before ours close
      if not quitask.ask() then
        return
      end
      for _, w in ipairs(close) do
        pcall(api.nvim_win_close, w, true)
      end
    end,
  })
  api.nvim_create_autocmd("WinClosed", {
    group = group,
    desc = "agentrun: the chat and its prompt close together; the prompt keeps its height when a window closes",
    callback = function(ev)
      local win = tonumber(ev.match)
      local ours_pair = win and (pcall(api.nvim_win_get_var, win, "agentrun_chat_window") or pcall(api.nvim_win_get_var, win, "agentrun_prompt_window"))
      local tab = ours_pair and select(2, pcall(api.nvim_win_get_tabpage, win))
      vim.schedule(function() -- once the window is gone
        if type(tab) == "number" then
          close_partner(tab)
        end
        M.keep_prompts()
        M.place_floats()
      end)
    end,
  })
end


-- holder_word says who holds terminal t, short, for its split's status
-- line: the agent, you (after taking it over, or your own command),
-- another Neovim (another host's that you follow), or nil (nobody types
-- into it: it ended).
local function holder_word(t)
  if t.state ~= "running" then
    return nil
  elseif t.display_only then
    return "agent's own" -- it runs the command itself: shown, not ours to type into
  elseif t.user then
    return t.detached and "yours, detached" or "yours"
  elseif t.remote then
    local c = type(t.claim) == "table" and t.claim or {}
    if c.kind == "client" and c.client_id == "detached" then
      return "detached"
    end
    return "another Neovim's"
  end
  return "agent's"
end

-- status_words says how terminal t stands, for its split's status line:
-- "run 2" (R ran it again), then "running · agent's", "waiting for
-- input · yours", "exit 1" or "signal SIGTERM", then its ports.
function M.status_words(t)
  local words = {}
  if t.runs then
    table.insert(words, "run " .. tostring(t.runs)) -- R ran it again
  end
  if t.state == "running" then
    table.insert(words, t.waiting and "waiting for input" or "running")
    table.insert(words, holder_word(t))
  else
    table.insert(words, state.how_ended(t) or "ended")
  end
  local text = table.concat(words, " · ")
  for _, p in ipairs(t.ports or {}) do
    text = text .. " :" .. tostring(p)
  end
  return text
end

-- set_statusline gives window w, when it shows a terminal, a status line
-- that says how it stands, the useful part first: its name (term-N, a
-- rerun's first run's id; a command the agent runs itself: none), "run
-- 2", "running · agent's", "waiting for input · yours", "exit 1",
-- ":8000", then its command, then the default's flags and ruler. Too
-- long for the window, the tail is cut (%< at the end), never the head
-- (it read "<trun://terminal/term-4 · run 2 of term-3 · signal SIGTERM"
-- at 60 columns). A plain string, set when that changes: an expression
-- would run Lua at every redraw of a flooding split (and a <C-c> typed
-- then was lost under load).
function M.set_statusline(w)
  local ok, buf = pcall(api.nvim_win_get_buf, w)
  if not ok then
    return
  end
  local text
  for _, t in pairs(state.terminals) do
    if t.bufnr == buf then
      local head = {}
      if not t.display_only then
        table.insert(head, state.label(t))
      end
      table.insert(head, M.status_words(t))
      local cmd = (t.command or ""):gsub("%s+", " ")
      if cmd ~= "" and cmd ~= t.id then
        table.insert(head, cmd)
      end
      if t.title and t.title ~= "" and t.title ~= t.command then
        table.insert(head, t.title) -- the description the agent gave it
      end
      if t.sandbox and t.sandbox ~= "" then
        table.insert(head, "[sandbox: " .. t.sandbox:match("^%S+") .. "]")
      end
      text = table.concat(head, " · ")
    end
  end
  local sl = text and (text:gsub("%%", "%%%%") .. " %h%w%m%r%=%-14.(%l,%c%V%) %P%<") or ""
  if vim.wo[w].statusline ~= sl then
    vim.wo[w].statusline = sl
  end
end

-- place shows buf in the terminal window for position (reusing ours in
-- this tab page), returns the window. The current window may change.
function M.place(buf, position)
  -- a split showed it: ending out of sight later is worth a word (ui/termlife.lua)
  vim.b[buf].agentrun_was_shown = true
  vim.b[buf].agentrun_closed_by_user = nil -- shown again (ui/chat.lua)
  for _, w in ipairs(api.nvim_tabpage_list_wins(0)) do
    local ok, tag = pcall(api.nvim_win_get_var, w, "agentrun_terminal_window")
    if ok and tag == position then
      api.nvim_win_set_buf(w, buf)
      M.set_statusline(w)
      require("agentrun.ui.follow").reset(w)
      return w
    end
  end
  local w
  if position == "float" then
    w = api.nvim_open_win(buf, false, M.float_config())
  elseif position == "right" then
    -- Full height on the right, but left of a chat on the right: the chat
    -- and its prompt stay where they are, and the split takes its columns
    -- from the code beside them.
    local cw = chat_beside()
    local left = cw and config.get().chat.position == "right" and api.nvim_win_call(cw, function()
      return vim.fn.win_getid(vim.fn.winnr("h"))
    end)
    if left and left ~= 0 and left ~= cw then
      api.nvim_set_current_win(left)
      vim.cmd("rightbelow vertical sbuffer " .. buf)
    else
      vim.cmd("botright vertical sbuffer " .. buf)
    end
    w = api.nvim_get_current_win()
    api.nvim_win_set_width(w, M.right_width())
    vim.wo[w].winfixwidth = true
  else
    vim.cmd("botright sbuffer " .. buf)
    w = api.nvim_get_current_win()
    api.nvim_win_set_height(w, M.split_height())
    vim.wo[w].winfixheight = true
  end
  api.nvim_win_set_var(w, "agentrun_terminal_window", position)
  if position == "below" then
    M.share_bottom() -- under the terminal list: the two share their rows
  end
  M.set_statusline(w)
  M.keep_prompts()
  require("agentrun.util").set_win_opts(w)
  require("agentrun.ui.follow").reset(w)
  return w
end

return M
