-- What agentrun shows the user unasked (a question, an agent's version of
-- a file beside theirs) never takes keys typed before it appeared. It is
-- shown at once only when the user is in Normal mode with no typed keys
-- waiting to be read (getchar(1)); else it waits, and the user is told
-- so, until they leave Insert, Command-line or Terminal mode, stop typing
-- in Normal mode (CursorHold), or type :AgentAnswer. One thing is shown
-- at a time; the others wait in order. Neovim's own vim.ui.select
-- (inputlist(), which any key closes) is replaced here by a window of
-- agentrun's own, in which only a choice's key answers.
local api = vim.api
local util = require("agentrun.util")
local compat = require("agentrun.compat")

local M = {}

-- queue: items { id, what, show = function(done), parked } in order.
-- shown is the item on screen (nil: none); an item is on screen until
-- its show calls done.
local queue = {}
local shown = nil
local watching = false

-- free reports whether the user can be shown something now without it
-- taking keys they typed for something else.
function M.free()
  local m = api.nvim_get_mode()
  if m.blocking or (m.mode ~= "n" and m.mode ~= "nt") then
    return false
  end
  return vim.fn.getchar(1) == 0
end

local function watch()
  if watching then
    return
  end
  watching = true
  local group = api.nvim_create_augroup("agentrun_ready", { clear = true })
  local events = { "CursorHold", "InsertLeave", "CmdlineLeave", "TermLeave" }
  if vim.fn.exists("##ModeChanged") == 1 then
    events = { "CursorHold", "ModeChanged" }
  end
  api.nvim_create_autocmd(events, {
    group = group,
    desc = "agentrun: show what waits once the user stopped typing",
    callback = function()
      vim.schedule(M.try)
    end,
  })
end

-- take removes item from the queue.
local function take(item)
  for i, q in ipairs(queue) do
    if q == item then
      table.remove(queue, i)
      return
    end
  end
end

local function open(item)
  take(item)
  shown = item
  local finished = false
  item.show(function(park)
    if finished then
      return
    end
    finished = true
    if shown == item then
      shown = nil
    end
    if park then
      item.parked = true
      table.insert(queue, 1, item)
    end
    vim.schedule(M.try)
  end)
end

-- try shows the first item that waits (not one the user put aside), if
-- nothing is on screen and the user is free.
function M.try()
  if shown or #queue == 0 or not M.free() then
    return
  end
  for _, item in ipairs(queue) do
    if not item.parked then
      return open(item)
    end
  end
end

-- show shows item ({ id, what, show = function(done), tell, waiting })
-- now if the user
-- is free and nothing else is on screen, else queues it and returns
-- false: the caller says in the chat that it waits. show(done) calls
-- done() when the item is finished with, done(true) when the user put it
-- aside (it waits for :AgentAnswer).
function M.show(item)
  table.insert(queue, item)
  watch()
  -- one short message (a long one would stop the screen at "Press
  -- ENTER"): tell when shown now, waiting when it waits
  if not shown and M.free() and queue[1] == item then
    if item.tell then
      util.notify(item.tell, vim.log.levels.WARN)
    end
    open(item)
    return true
  end
  -- (within the room: a wrapped one stopped a 60-column screen at "Press
  -- ENTER" while the user typed)
  local short = item.what .. " waits: <Esc> opens it"
  local forms = item.waiting and { item.waiting } or { item.what .. " waits: <Esc> or :AgentAnswer opens it", short }
  table.insert(forms, util.fit(forms[#forms], util.room()))
  util.notify(forms, vim.log.levels.WARN)
  return false
end

-- drop forgets the item with id (its question was withdrawn): out of the
-- queue, and closed if on screen.
-- An item holding several questions (drop_one) goes only when the last
-- of them is withdrawn.
function M.drop(id)
  for _, q in ipairs(queue) do
    if q.id == id or (q.drop_one and q.drop_one(id)) then
      take(q)
      break
    end
  end
  if shown and (shown.id == id or (shown.drop_one and shown.drop_one(id))) and shown.close then
    shown.close()
  end
end

-- answer shows what waits, first of all what the user put aside
-- (:AgentAnswer): they typed it, so what they type next is meant for it.
function M.answer()
  if shown then
    if shown.focus then
      shown.focus()
    end
    return true
  end
  local item = queue[1]
  if not item then
    util.notify("no question waits for an answer", vim.log.levels.INFO)
    return false
  end
  item.parked = false
  vim.schedule(function()
    -- it may have been shown (and answered) meanwhile, by the user
    -- stopping typing: shown twice, it was answered twice
    if not shown and vim.tbl_contains(queue, item) then
      open(item)
    end
  end)
  return true
end

-- pending returns how many items wait (besides the one on screen).
function M.pending()
  return #queue
end

-- builtin reports whether vim.ui.select is Neovim's own (inputlist()).
function M.builtin_select()
  local info = debug.getinfo(vim.ui.select, "S")
  return info ~= nil and info.source:find("vim/ui%.lua$") ~= nil
end

-- select is vim.ui.select(items, opts, on_choice) in a float of our own:
-- the prompt, then one line per item with its number; a number or <CR>
-- on an item's line answers; q or <Esc> puts the question aside (done
-- with park: it waits for :AgentAnswer). It returns the functions that
-- close it and focus it.
function M.select(items, opts, on_choice, done)
  local fmt = opts.format_item or tostring
  local width = math.max(10, math.min(math.max(40, vim.o.columns - 10), 100, vim.o.columns - 2))
  local lines = {}
  for _, l in ipairs(vim.split(opts.prompt or "Choose:", "\n", { plain = true })) do
    while #l > width - 2 do
      -- cut at the last space that leaves most of the row used, so that
      -- a command reads in whole words; a word longer than that is cut
      local cut = width - 2
      local space = l:sub(1, cut + 1):match(".*() ")
      if space and space > cut / 2 then
        cut = space - 1
      end
      table.insert(lines, l:sub(1, cut))
      l = "  " .. l:sub(cut + 1):gsub("^ ", "")
    end
    table.insert(lines, l)
  end
  table.insert(lines, "")
  local first = #lines + 1
  for i, it in ipairs(items) do
    table.insert(lines, string.format(" %d  %s", i, (tostring(fmt(it)):gsub("\n", " "))))
  end
  table.insert(lines, "")
  table.insert(lines, string.format("1-%d or <CR> on a line answers · q puts it aside (:AgentAnswer)", #items))
  local buf = api.nvim_create_buf(false, true)
  api.nvim_buf_set_lines(buf, 0, -1, false, lines)
  vim.bo[buf].modifiable = false
  vim.bo[buf].bufhidden = "wipe"
  pcall(api.nvim_buf_set_name, buf, "agentrun://question")
  local height = math.min(#lines, math.max(3, vim.o.lines - 6))
  local from = api.nvim_get_current_win()
  local win = api.nvim_open_win(buf, true, {
    relative = "editor",
    row = math.max(0, math.floor((vim.o.lines - height) / 2) - 1),
    col = math.max(0, math.floor((vim.o.columns - width) / 2)),
    width = width,
    height = height,
    style = "minimal",
    border = "rounded",
  })
  vim.wo[win].wrap = true
  vim.wo[win].cursorline = true
  api.nvim_win_set_cursor(win, { first, 0 })
  local over = false
  local function close()
    if api.nvim_win_is_valid(win) then
      api.nvim_win_close(win, true)
    end
    if api.nvim_win_is_valid(from) then
      pcall(api.nvim_set_current_win, from)
    end
  end
  local function finish(idx)
    if over then
      return
    end
    over = true
    close()
    done(idx == nil)
    if idx then
      on_choice(items[idx], idx)
    end
  end
  for i = 1, math.min(#items, 9) do
    compat.map(buf, tostring(i), function()
      finish(i)
    end, "agentrun: answer " .. i)
  end
  compat.map(buf, "<CR>", function()
    local idx = api.nvim_win_get_cursor(0)[1] - first + 1
    if items[idx] then
      finish(idx)
    end
  end, "agentrun: answer with the choice under the cursor")
  for _, k in ipairs({ "q", "<Esc>" }) do
    compat.map(buf, k, function()
      finish(nil)
    end, "agentrun: put the question aside (:AgentAnswer brings it back)")
  end
  api.nvim_create_autocmd("BufWipeout", {
    buffer = buf,
    once = true,
    callback = function()
      if not over then
        over = true
        vim.schedule(function()
          done(true)
        end)
      end
    end,
  })
  pcall(vim.cmd, "redraw")
  return function()
    over = true
    close()
    done()
  end, function()
    if api.nvim_win_is_valid(win) then
      api.nvim_set_current_win(win)
    end
  end
end

return M
