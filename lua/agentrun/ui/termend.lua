-- The end of a terminal's split, kept in sight: the end marker the
-- backend wrote (display_ended) checked for and written again when Neovim
-- dropped it, the work that waits for the split to show its end
-- (when_end_shown, with_output), and finished splits out of sight wiped
-- (sweep). The split itself is ui/term.lua's.
local api = vim.api
local config = require("agentrun.config")
local state = require("agentrun.state")
local term = require("agentrun.ui.term")
local window = require("agentrun.ui.window")

local M = {}

-- The end of a split, kept. Neovim (0.7 to 0.12; neovim#37823, #37835)
-- may drop the last lines of a terminal buffer fed a flood while its
-- window is tiny, or resized soon after one, the end marker among them:
-- the split would end mid-output, silently. When the backend has sent
-- the end marker (display_ended), and after every resize, a split that
-- does not show it gets it again, with what happened and the command's
-- last line.

-- shows_end says whether t's buffer shows its end near its end (in a
-- narrow split wrapped over several lines): the first of the lines the
-- backend wrote at its end (display_ended's lines, "[exit 0]"), never a
-- text built here.
local function shows_end(t)
  local marker = t.end_lines and t.end_lines[1]
  if not (marker and t.bufnr and api.nvim_buf_is_valid(t.bufnr)) then
    return false
  end
  local n = api.nvim_buf_line_count(t.bufnr)
  local tail = table.concat(api.nvim_buf_get_lines(t.bufnr, math.max(n - 24, 0), n, false), "")
  return tail:find(marker, 1, true) ~= nil
end

-- mend writes t's end again in its split, saying that Neovim lost it.
local function mend(t)
  local last = t.last_line and t.last_line ~= "" and ("; the command's last line: " .. t.last_line) or ""
  local msg = term.reset .. "\r\n[agentrun: Neovim dropped the end of this split (a tiny or resized window)" .. last .. "]\r\n" .. table.concat(t.end_lines, "\r\n")
  pcall(api.nvim_chan_send, t.chan, term.guard .. msg)
end

-- when_end_shown calls fn once terminal t's split shows its end (the
-- backend's display_ended, checked a moment later): at once when it does.
function M.when_end_shown(t, fn)
  if t.end_shown and t.bufnr and api.nvim_buf_is_valid(t.bufnr) then
    fn()
    return
  end
  t.on_end_shown = t.on_end_shown or {}
  table.insert(t.on_end_shown, fn)
end

-- display_ended: the backend sent t's end marker (or "[released]" after
-- it), p.lines as it wrote them; a moment later (the buffer follows its
-- terminal on a timer) its split must show them.
---@param p agentrun.event.display_ended
function M.display_ended(p)
  local t = state.terminals[p.id]
  if not (t and p.lines and p.lines[1]) then
    return
  end
  t.end_lines = p.lines
  vim.defer_fn(function()
    if not t.chan then
      return
    end
    if not shows_end(t) then
      mend(t)
    end
    t.end_shown = true
    M.show_text(t)
    local after = t.on_end_shown or {}
    t.on_end_shown = nil
    for _, fn in ipairs(after) do
      fn()
    end
    M.sweep()
  end, 500)
end

-- with_output calls fn once terminal t's split holds its output: at once
-- when it has its buffer, else (a finished split wiped out of sight) once
-- the split made again shows its end. False when t has no output here.
function M.with_output(t, fn)
  if t.bufnr and api.nvim_buf_is_valid(t.bufnr) then
    fn()
    return true
  end
  if t.state == "running" or t.display_only or t.remote then
    return false
  end
  M.when_end_shown(t, fn)
  term.open(t.id)
  return true
end

-- A finished split out of sight costs Neovim a live terminal (libvterm's
-- scrollback: megabytes). Beyond the newest terminal.live_ended ended
-- ones, the buffer of one no window shows is wiped; the backend keeps
-- its output (terminal.kept_bytes), and opening it again makes a new
-- buffer fed from there (attach), colours, keys, end marker and all.
local sweep_pending = false
local function sweep()
  sweep_pending = false
  local keep = config.get().terminal.live_ended
  local current = api.nvim_get_current_buf()
  local ended = 0
  for i = #state.terminal_order, 1, -1 do
    local t = state.terminals[state.terminal_order[i]]
    -- ours (the backend holds its output), shown to its end
    if t and t.state ~= "running" and t.end_shown and not t.display_only and not t.remote and t.bufnr and api.nvim_buf_is_valid(t.bufnr) then
      ended = ended + 1
      if ended > keep and t.bufnr ~= current and #vim.fn.win_findbuf(t.bufnr) == 0 then
        local buf = t.bufnr
        t.bufnr, t.chan, t.end_shown = nil, nil, nil
        pcall(api.nvim_buf_delete, buf, { force = true })
      end
    end
  end
end

-- sweep wipes, soon, the buffers of ended splits out of sight beyond the
-- newest terminal.live_ended.
function M.sweep()
  if not sweep_pending then
    sweep_pending = true
    vim.defer_fn(sweep, 200)
  end
end

-- show_text puts each window of ended terminal t on its last line with
-- text, that line at the window's bottom when the text above it fills
-- the window: Neovim (0.7) keeps a terminal window whose cursor is on the
-- last line on the terminal's screen, so a short output replayed into a
-- reopened split sat above its top (a blank split); a split made lower
-- kept its top line.
function M.show_text(t)
  local buf = t.bufnr
  if not (buf and api.nvim_buf_is_valid(buf)) then
    return
  end
  -- its last line with text, read from the end (a resize calls this for
  -- every ended terminal: not its whole scrollback each time)
  local count = api.nvim_buf_line_count(buf)
  local from = math.max(0, count - 200)
  local lines = api.nvim_buf_get_lines(buf, from, -1, false)
  local last = #lines
  while last > 0 and lines[last]:match("^%s*$") do
    last = last - 1
  end
  if last == 0 then
    return -- nothing but blank rows near its end: nothing to show
  end
  last = from + last
  for _, w in ipairs(vim.fn.win_findbuf(buf)) do
    if api.nvim_win_get_cursor(w)[1] > last then
      -- the cursor on that line, not below it: Neovim keeps a window whose
      -- cursor is on a terminal's last line on its screen; nothing more
      -- comes, so the window stops following (follow.lua)
      vim.w[w].agentrun_set, vim.w[w].agentrun_follow = last, false
      api.nvim_win_set_cursor(w, { last, 0 })
    end
    -- and the text fills the window up to that line (a split made lower,
    -- by the list opening, kept its top: the output above, blank below)
    local top = math.max(1, last - api.nvim_win_get_height(w) + 1)
    api.nvim_win_call(w, function()
      if vim.fn.line("w0") > top then
        vim.fn.winrestview({ topline = top })
      end
    end)
  end
end

-- mend_ends writes the end again in every split that showed it and lost
-- it in a resize.
local mend_pending = false
local function mend_ends()
  mend_pending = false
  for _, t in pairs(state.terminals) do
    if t.end_shown and t.chan and not shows_end(t) then
      mend(t)
    end
    if t.end_shown then
      M.show_text(t)
    end
  end
end
table.insert(window.on_layout, function()
  M.sweep() -- a split taken by another buffer may be out of sight now
  if not mend_pending then
    mend_pending = true
    vim.defer_fn(mend_ends, 300) -- once Neovim has redrawn the resized splits
  end
end)

return M
