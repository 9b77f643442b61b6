-- The chat: a transcript buffer (read-only, rendered from blocks) and a
-- prompt buffer below it. Each block (a user prompt, an agent message, a
-- thought, the plan, a tool call, a note) owns a run of lines and is
-- re-rendered in place when it changes, so tool call statuses update where
-- they first appeared.
-- Why this file is long: the transcript, the prompt area and their windows
-- are one object (Chat) whose blocks, header and keys change together; a
-- tool call's rendering is ui/toolcall.lua, streamed text ui/stream.lua.
local api = vim.api
local compat = require("agentrun.compat")
local config = require("agentrun.config")
local content_text = require("agentrun.ui.toolcall").content_text

local M = {}
local Chat = {}
Chat.__index = Chat
-- the agent's streamed text: messages (markdown), thoughts, replayed prompts
require("agentrun.ui.stream").install(Chat)

local ns = api.nvim_create_namespace("agentrun_chat")

local windows_of, show_end -- (below)

local function split_lines(text)
  return vim.split(text or "", "\n", { plain = true })
end

local function scratch(name, ft)
  local buf = api.nvim_create_buf(false, true)
  pcall(api.nvim_buf_set_name, buf, name)
  vim.bo[buf].filetype = ft
  vim.bo[buf].swapfile = false
  vim.bo[buf].bufhidden = "hide"
  return buf
end

-- buffer_name names the chat's (what "chat") or the prompt's ("prompt")
-- buffer of session s in words: "prompt of demo 1". The tab line shows
-- the name of its current window's buffer cut at each "/"
-- (agentrun://prompt/1 read "a//p/1"), and the prompt's status line shows
-- it whole at 80 columns (20 columns before its ruler there: "agentrun"
-- would not fit). The chat's windows and buffers are found by their
-- variables (agentrun_chat_buffer; agentrun_chat_window and
-- agentrun_prompt_window), never by name.
local function buffer_name(s, what)
  return string.format("%s of %s %s", what, s.agent or "the session", tostring(s.key))
end

-- new creates the chat buffers of session s (not shown yet).
function M.new(s)
  local self = setmetatable({ session = s, blocks = {}, by_id = {}, term_blocks = {} }, Chat)
  self:make_chat_buf()
  self:make_prompt_buf()
  -- What was typed in an ended session's prompt and not sent (it was
  -- refused there) is the new prompt's start, not lost in a hidden buffer.
  local from, newest = nil, nil
  for key, o in pairs(require("agentrun.state").sessions) do
    -- (not one whose link was lost: it comes back, with its prompt)
    local ob = o ~= s and o.ended and not o.link_dropped and o.chat and o.chat.prompt_buf
    if ob and api.nvim_buf_is_valid(ob) and vim.trim(table.concat(api.nvim_buf_get_lines(ob, 0, -1, false), "\n")) ~= "" then
      local n = tonumber(key) or 0
      if not newest or n > newest then
        from, newest = ob, n
      end
    end
  end
  if from then
    api.nvim_buf_set_lines(self.prompt_buf, 0, -1, false, api.nvim_buf_get_lines(from, 0, -1, false))
    api.nvim_buf_set_lines(from, 0, -1, false, {})
  end
  require("agentrun.ui.window").watch()
  self.header = self:add({ kind = "header" })
  self:render_header()
  table.insert(require("agentrun.ui.window").on_layout, function()
    if api.nvim_buf_is_valid(self.buf) then
      self:fit_notes()
      self:keep_end()
      self:set_statusline()
    end
  end)
  return self
end

-- buffer_lost reports whether buf is no longer the chat's buffer as made:
-- wiped (:bw), or unloaded (:bd, which also clears its options, keys and
-- variables; the buffer number stays).
local function buffer_lost(buf)
  return not (buf and api.nvim_buf_is_valid(buf) and api.nvim_buf_is_loaded(buf) and pcall(api.nvim_buf_get_var, buf, "agentrun_chat_buffer"))
end

-- revive makes old (the chat's or the prompt's buffer, after :bd or :bw)
-- a buffer of ours again: the same buffer loaded again when it still
-- exists (:bd), else a new one of that name (:bw).
local function revive(old, name, ft)
  if not (old and api.nvim_buf_is_valid(old)) then
    return scratch(name, ft)
  end
  vim.bo[old].buftype = "nofile" -- loading reads no file
  vim.bo[old].swapfile = false
  vim.fn.bufload(old)
  vim.bo[old].filetype = ft
  vim.bo[old].bufhidden = "hide"
  return old
end

-- make_chat_buf makes the transcript's buffer: at first, and again when
-- it was lost to :bd or :bw, then with every block rendered into it as
-- before, so the conversation goes on where it was (doc/agentrun.txt).
function Chat:make_chat_buf()
  local name = buffer_name(self.session, "chat")
  local rebuild = self.buf ~= nil
  self.buf = rebuild and revive(self.buf, name, "agentrun") or scratch(name, "agentrun")
  vim.b[self.buf].agentrun_chat_buffer = true
  -- :w here writes nothing, so :wq and :x quit (ui/window.lua); :e and
  -- :e! read no file: they draw the transcript again, as it was.
  require("agentrun.ui.writes").accept_write(self.buf, nil, function()
    self:render_all()
    local last = api.nvim_buf_line_count(self.buf)
    for _, w in ipairs(windows_of(self.buf)) do
      show_end(w, last)
    end
  end)
  self:map_keys({ [self.buf] = true })
  self:render_all()
end

-- written ends a write into the transcript (here and ui/stream.lua): not
-- modifiable by hand, and not 'modified' (it is no file). writes.lua's
-- BufModifiedSet clears 'modified' only in the current buffer, and the
-- transcript is written mostly while the prompt is: the tab line read
-- "3+" with nothing to save.
function Chat:written()
  vim.bo[self.buf].modifiable = false
  if vim.bo[self.buf].modified then
    vim.bo[self.buf].modified = false
  end
end

-- render_all writes every block into the transcript's buffer, with its
-- highlights: when the buffer was made again (:bd, :bw) or emptied (:e).
function Chat:render_all()
  vim.bo[self.buf].modifiable = true
  api.nvim_buf_clear_namespace(self.buf, ns, 0, -1)
  local lines, at = {}, {}
  for _, b in ipairs(self.blocks) do
    at[b] = #lines
    vim.list_extend(lines, b.lines)
  end
  api.nvim_buf_set_lines(self.buf, 0, -1, false, lines)
  self:written()
  for _, b in ipairs(self.blocks) do
    for _, h in ipairs(b.hls or {}) do
      compat.highlight(self.buf, ns, h[2], at[b] + h[1], h[3] or 0, h[4] or -1)
    end
    if b.kind == "message" and #b.lines > 0 then
      b.md = nil
      self:markdown(b, 1, at[b])
    end
  end
end

-- make_prompt_buf makes the prompt's buffer: at first, and again when it
-- was lost to :bd or :bw, with the text it held then.
function Chat:make_prompt_buf()
  local name = buffer_name(self.session, "prompt")
  local rebuild = self.prompt_buf ~= nil
  self.prompt_buf = rebuild and revive(self.prompt_buf, name, "agentrun_prompt") or scratch(name, "agentrun_prompt")
  local buf = self.prompt_buf
  vim.b[buf].agentrun_chat_buffer = true
  require("agentrun.ui.complete").attach(self.session, buf)
  -- :w here writes nothing, so :wq and :x quit (ui/window.lua); it fails
  -- on the prompt's unsent text rather than lose it on the way out.
  require("agentrun.ui.writes").accept_write(buf, function(b)
    local text = vim.trim(table.concat(api.nvim_buf_get_lines(b, 0, -1, false), "\n"))
    -- (a :wq or :x typed here writes nothing and goes on when the quit
    -- that follows asks first, ui/quitask.lua: the question names the
    -- text; a :w alone says why nothing was written)
    local to_quit = require("agentrun.ui.window").write_to_quit() and require("agentrun.ui.quitask").asks()
    if text ~= "" and not to_quit then
      local km = config.get().keymaps
      local send = km.send_insert or km.send or ":AgentPrompt"
      return {
        string.format("the prompt is no file and its text is not sent yet: send it (%s) or clear it first", send),
        string.format("the prompt is no file: send its text (%s) or clear it", send),
      }
    end
  end, function()
    -- :e here: the text kept as the buffer was emptied comes back
    if self.prompt_kept then
      api.nvim_buf_set_lines(buf, 0, -1, false, self.prompt_kept)
      self.prompt_kept = nil
    end
  end)
  -- what :bd or :bw takes with the buffer comes back with the next one
  api.nvim_create_autocmd("BufUnload", {
    buffer = buf,
    desc = "agentrun: keep the prompt's unsent text for when it is shown again",
    callback = function()
      self.prompt_kept = api.nvim_buf_get_lines(buf, 0, -1, false)
    end,
  })
  if self.prompt_kept then
    api.nvim_buf_set_lines(buf, 0, -1, false, self.prompt_kept)
    self.prompt_kept = nil
  end
  self:map_keys({ [buf] = true })
end

-- ensure_buffers makes the chat's buffers again if :bd or :bw took them.
function Chat:ensure_buffers()
  if buffer_lost(self.buf) then
    self:make_chat_buf()
  end
  if buffer_lost(self.prompt_buf) then
    self:make_prompt_buf()
  end
end

-- map_keys maps the chat's keys in the buffers of only (a set).
function Chat:map_keys(only)
  local km = config.get().keymaps
  local function map(buf, key, fn, desc, mode)
    if key and only[buf] then
      compat.map(buf, key, fn, "agentrun: " .. desc, mode)
    end
  end
  map(self.prompt_buf, km.send, function()
    self:send()
  end, "send the prompt")
  map(self.prompt_buf, km.send_insert, function()
    self:send()
  end, "send the prompt", "i")
  local history = require("agentrun.ui.history")
  map(self.prompt_buf, km.history_prev, function()
    history.key(self.prompt_buf, -1, km.history_prev)
  end, "the previous prompt (on the first line)", { "n", "i" })
  map(self.prompt_buf, km.history_next, function()
    history.key(self.prompt_buf, 1, km.history_next)
  end, "the next prompt (on the last line)", { "n", "i" })
  -- Stopping needs no trip to the split: from the chat and the prompt,
  -- <C-c> interrupts the session's running command (again: cancels the
  -- turn), X kills it.
  for _, buf in ipairs({ self.buf, self.prompt_buf }) do
    map(buf, km.interrupt, function()
      require("agentrun.ui.stop").command(self.session.key, false)
    end, "interrupt the running command (again: cancel the turn)", buf == self.prompt_buf and { "n", "i" } or "n")
    map(buf, km.kill, function()
      require("agentrun.ui.stop").command(self.session.key, true)
    end, "kill the running command")
  end
  -- gx on a URL in the chat (a command's output, the agent's text)
  -- opens it as in a split: said in our words when no browser can
  map(self.buf, km.browse, function()
    require("agentrun.util").open_url_at_cursor()
  end, "open the URL under the cursor")
  -- ZZ is :x, as typed (ui/window.lua reads the command line): it writes
  -- the user's files and quits from here too.
  for _, buf in ipairs({ self.buf, self.prompt_buf }) do
    if only[buf] then
      compat.map(buf, "ZZ", ":x<CR>", "agentrun: write your files and quit, as :x")
    end
  end
  -- A terminal float (terminal.position "float") lies over the code, out
  -- of the way but out of reach: the chat and the prompt close it.
  for _, buf in ipairs({ self.buf, self.prompt_buf }) do
    map(buf, km.close_float, function()
      require("agentrun.ui.window").close_floats()
    end, "close the terminal float")
  end
  map(self.buf, km.open, function()
    self:open_at_cursor()
  end, "open the terminal, the diff or the file:line under the cursor")
  if only[self.buf] then
    require("agentrun.ui.gotofile").map(self.buf)
  end
  map(self.buf, km.close, function()
    self:close()
  end, "close the chat")
  map(self.buf, km.toggle, function()
    self:toggle_at_cursor()
  end, "show or fold the thought or tool output under the cursor")
  -- The transcript is read, not edited: a key that starts typing there
  -- goes to the prompt, in insert mode (not E21).
  for _, key in ipairs({ "i", "a", "I", "A", "o", "O" }) do
    map(self.buf, key, function()
      self:open()
    end, "type in the prompt")
  end
end

-- windows returns the windows (in the current tab) showing buf.
function windows_of(buf)
  local wins = {}
  for _, w in ipairs(api.nvim_tabpage_list_wins(0)) do
    if api.nvim_win_get_buf(w) == buf then
      table.insert(wins, w)
    end
  end
  return wins
end

local function set_win_opts(win)
  -- conceal: markdown's markers (**, `) are hidden, also on the cursor line
  require("agentrun.util").set_win_opts(win, { wrap = true, linebreak = true, conceallevel = 2, concealcursor = "nc" })
end

-- tagged returns the window of this tab marked with window variable name.
local function tagged(name)
  for _, w in ipairs(api.nvim_tabpage_list_wins(0)) do
    local ok, v = pcall(api.nvim_win_get_var, w, name)
    if ok and v then
      return w
    end
  end
end

-- terminal_split returns this tab page's terminal split, if any.
local function terminal_split()
  for _, w in ipairs(api.nvim_tabpage_list_wins(0)) do
    local ok, tag = pcall(api.nvim_win_get_var, w, "agentrun_terminal_window")
    if ok and tag then
      return w
    end
  end
end

-- current_terminal returns this session's current terminal: its newest
-- running one with a buffer, else (unless running_only) its newest.
function Chat:current_terminal(running_only)
  local state = require("agentrun.state")
  local current
  for i = #state.terminal_order, 1, -1 do
    local t = state.terminals[state.terminal_order[i]]
    if t and t.session == self.session.key and t.bufnr and api.nvim_buf_is_valid(t.bufnr) then
      if t.state == "running" then
        return t
      end
      current = current or (not running_only and t) or nil
    end
  end
  return current
end

-- show_current_terminal puts this session's current terminal (its
-- newest running one, else its newest) in the terminal split of this tab
-- page when the split shows another session's: the chat and the split
-- beside it tell of one session. A split the user closed stays closed.
function Chat:show_current_terminal()
  local state = require("agentrun.state")
  local split = terminal_split()
  local shown = split and state.terminal_for_buf(api.nvim_win_get_buf(split))
  if not shown or not shown.session or shown.session == self.session.key then
    return
  end
  local current = self:current_terminal()
  if current then
    api.nvim_win_set_buf(split, current.bufnr)
    require("agentrun.ui.follow").reset(split)
  end
end

-- bring_back_split shows this session's newest running command in a
-- split when this tab page has none: the chat shown again (its tab page
-- closed by :tabonly, its window by :only, or another session's chat
-- left for it) comes back with the command it runs. A split the user
-- closed with q stays closed (ui/actions.lua marks its buffer), as does
-- every split under terminal.position = "none", and one shown in another
-- tab page stays there alone. The current window may change.
function Chat:bring_back_split()
  local position = config.get().terminal.position
  if position == "none" or terminal_split() then
    return
  end
  local t = self:current_terminal(true)
  if t and not vim.b[t.bufnr].agentrun_closed_by_user and #vim.fn.win_findbuf(t.bufnr) == 0 then
    require("agentrun.ui.window").place(t.bufnr, position)
  end
end

-- open shows the chat (transcript above, prompt below) and focuses the
-- prompt, in insert mode: the user types the prompt next.
function Chat:open()
  self:ensure_buffers()
  self:show_current_terminal()
  local cfg = config.get().chat
  local window = require("agentrun.ui.window")
  local pw = windows_of(self.prompt_buf)[1]
  local tw = windows_of(self.buf)[1]
  if pw and tw then
    api.nvim_set_current_win(pw)
    vim.cmd("startinsert!")
    return
  end
  -- A prompt without its chat (:only in the prompt; this session's or
  -- another's) closes once the chat is open again, with a prompt under it.
  local lone_prompt = pw or (not tagged("agentrun_chat_window") and tagged("agentrun_prompt_window"))
  if not tw then
    -- Another session's chat shown in this tab (one that ended, or
    -- another agent's) gives its windows to this one, layout and all.
    local old_tw, old_pw = tagged("agentrun_chat_window"), tagged("agentrun_prompt_window")
    if old_tw and old_pw then
      api.nvim_win_set_buf(old_tw, self.buf)
      api.nvim_win_set_buf(old_pw, self.prompt_buf)
      self:bring_back_split()
      api.nvim_set_current_win(old_pw)
      self:render_header()
      self:scroll()
      vim.cmd("startinsert!")
      return
    end
    local cmd = ({
      right = "botright vertical sbuffer ",
      left = "topleft vertical sbuffer ",
      below = "botright sbuffer ",
      tab = "tab sbuffer ",
    })[cfg.position]
    vim.cmd(cmd .. self.buf)
    tw = api.nvim_get_current_win()
    if cfg.position == "right" or cfg.position == "left" then
      -- never more than half the screen: the user's code stays visible
      api.nvim_win_set_width(tw, window.chat_width())
      vim.wo[tw].winfixwidth = true
      window.bottom_splits_full_width()
    end
    set_win_opts(tw)
    api.nvim_win_set_var(tw, "agentrun_chat_window", true)
  end
  if lone_prompt and api.nvim_win_is_valid(lone_prompt) then
    api.nvim_win_close(lone_prompt, true)
  end
  api.nvim_set_current_win(tw)
  vim.cmd("belowright sbuffer " .. self.prompt_buf)
  pw = api.nvim_get_current_win()
  api.nvim_win_set_var(pw, "agentrun_prompt_window", 3) -- its height (ui/window.lua keeps it)
  api.nvim_win_set_height(pw, 3)
  window.watch()
  vim.wo[pw].winfixheight = true
  -- its name cut at its end, never its start, in a narrow window (the
  -- default status line read "<of demo 1" beside its ruler)
  vim.wo[pw].statusline = " %t%<"
  set_win_opts(pw)
  self:bring_back_split()
  -- The layout changed around the new windows: the split, the chat and
  -- the prompt get their configured sizes, a terminal float its place.
  window.fit()
  api.nvim_set_current_win(pw)
  self:render_header()
  self:scroll()
  vim.cmd("startinsert!")
end

-- reset empties the transcript (the prompt keeps its text): a session
-- taken up again from the machine it runs on is shown from its first
-- event once more (launch.resume).
function Chat:reset()
  self.blocks, self.by_id, self.term_blocks, self.reruns = {}, {}, {}, {}
  self:ensure_buffers()
  api.nvim_buf_clear_namespace(self.buf, -1, 0, -1)
  vim.bo[self.buf].modifiable = true
  api.nvim_buf_set_lines(self.buf, 0, -1, false, {})
  self:written()
  self.header = self:add({ kind = "header" })
  self:render_header()
end

-- close closes the chat's windows (the session keeps running).
function Chat:close()
  for _, buf in ipairs({ self.prompt_buf, self.buf }) do
    for _, w in ipairs(windows_of(buf)) do
      if #api.nvim_tabpage_list_wins(0) > 1 then
        pcall(api.nvim_win_close, w, false)
      end
    end
  end
end

-- unsent returns the lines the prompt holds and were not sent (also kept
-- from a prompt buffer :bd took), nil when it holds nothing: what a quit
-- would lose (ui/quitask.lua).
function Chat:unsent()
  local lines = self.prompt_kept
  if not buffer_lost(self.prompt_buf) then
    lines = api.nvim_buf_get_lines(self.prompt_buf, 0, -1, false)
  end
  if not lines or vim.trim(table.concat(lines, "\n")) == "" then
    return nil
  end
  -- without the blank lines around the text
  local first, last = 1, #lines
  while vim.trim(lines[first]) == "" do
    first = first + 1
  end
  while vim.trim(lines[last]) == "" do
    last = last - 1
  end
  return vim.list_slice(lines, first, last)
end

-- send sends the prompt area's text and clears it.
function Chat:send()
  local lines = api.nvim_buf_get_lines(self.prompt_buf, 0, -1, false)
  local text = vim.trim(table.concat(lines, "\n"))
  if text == "" then
    return
  end
  if require("agentrun.conversation").submit(self.session, text) then
    require("agentrun.ui.history").add(self.prompt_buf, text)
    api.nvim_buf_set_lines(self.prompt_buf, 0, -1, false, {})
  end
end

-- start_line returns the 0-based first line of block b.
function Chat:start_line(b)
  local n = 0
  for _, x in ipairs(self.blocks) do
    if x == b then
      return n
    end
    n = n + #x.lines
  end
end

-- add appends a block (rendered by render()) and returns it.
function Chat:add(b)
  b.lines = {}
  b.hls = {}
  table.insert(self.blocks, b)
  if b.id then
    self.by_id[b.id] = b
  end
  return b
end

-- put replaces block b's lines with lines and highlights hls
-- ({ row, group, col_start, col_end }), then follows the end.
function Chat:put(b, lines, hls)
  self:ensure_buffers()
  local start = self:start_line(b)
  local old = #b.lines
  local total = 0
  for _, x in ipairs(self.blocks) do
    total = total + #x.lines
  end
  lines = require("agentrun.util").lines_of(lines)
  vim.bo[self.buf].modifiable = true
  api.nvim_buf_clear_namespace(self.buf, ns, start, start + old)
  if total == 0 then
    api.nvim_buf_set_lines(self.buf, 0, -1, false, lines)
  else
    api.nvim_buf_set_lines(self.buf, start, start + old, false, lines)
  end
  self:written()
  b.lines = lines
  b.hls = hls or {}
  for _, h in ipairs(b.hls) do
    compat.highlight(self.buf, ns, h[2], start + h[1], h[3] or 0, h[4] or -1)
  end
  self:scroll()
end

-- show_end puts the cursor of chat window w on the transcript's last
-- line and that line at the window's bottom, the rows above it filled
-- with the lines before it, as a terminal shows its newest output.
-- (Setting the cursor alone leaves the top line where Neovim put it: a
-- chat shown again in a new window, on 0.7 and 0.10, starts at its last
-- line with the rows below it empty, and a window that grew keeps its
-- top line, its end no longer at its bottom.) A last line that wraps
-- over more rows than the window has shows from its start (0.7 shows no
-- other part of a line in a window that is not the current one): what
-- such a line must keep in sight comes first (toolcall.lua's terminal
-- line).
function show_end(w, last)
  pcall(api.nvim_win_set_cursor, w, { last, 0 })
  pcall(api.nvim_win_call, w, function()
    vim.cmd("normal! zb")
  end)
end

-- follows reports whether chat window w shows the transcript's end (its
-- cursor on the last line or the one before: the user did not scroll up).
local function follows(w, last)
  return api.nvim_win_get_cursor(w)[1] >= last - 1
end

-- scroll keeps windows that were at the end of the transcript at the end.
function Chat:scroll()
  local last = api.nvim_buf_line_count(self.buf)
  -- in every tab page: a chat whose tab is not shown follows too
  for _, w in ipairs(vim.fn.win_findbuf(self.buf)) do
    if w ~= api.nvim_get_current_win() or follows(w, last) then
      show_end(w, last)
    end
  end
end

-- keep_end shows the end again in every chat window that follows it and
-- changed size since last seen (a resized screen, a split opened or
-- closed beside it): Neovim keeps a resized window's top line, so its
-- end would fall below the window or leave rows empty under it.
function Chat:keep_end()
  local last = api.nvim_buf_line_count(self.buf)
  self.win_sizes = self.win_sizes or {}
  for _, w in ipairs(windows_of(self.buf)) do
    local size = api.nvim_win_get_width(w) .. "x" .. api.nvim_win_get_height(w)
    if self.win_sizes[w] ~= size then
      self.win_sizes[w] = size
      if follows(w, last) then
        show_end(w, last)
      end
    end
  end
end

-- status is the session's one-line state: "agentrun · demo · working…"
-- ("demo on devbox" when the agent runs on another machine).
function Chat:status()
  local s = self.session
  -- (the machine moves after the state when its link is lost: the
  -- state reads first in a narrow window)
  local who = s.host and not s.link_dropped and string.format("%s on %s", s.agent, s.host:gsub("^ssh://", "")) or s.agent
  local state = s.link_dropped and string.format("link lost: %s", (tostring(s.link_dropped):gsub("^ssh://", ""))) or s.ended and "ended" or s.signin and "waiting for you to sign in (:AgentLogin)" or s.starting and (s.quiet and "starting… (no answer yet)" or "starting…") or s.busy and "working…" or "ready"
  local queued = #(s.queue or {}) > 0 and string.format(" · %d queued", #s.queue) or ""
  local mode = require("agentrun.modes").label(s)
  mode = mode ~= "" and (" · " .. mode) or ""
  return string.format("agentrun · %s · %s%s%s%s", who, state, mode, queued, M.usage_text(s.usage))
end

-- set_statusline puts the session's state in the status line of the
-- chat's windows, the line counter at its right, a space at least
-- between them; a window too narrow for both drops the counter, then the
-- remarks in parentheses and the last parts (util.fit_parts), whole: a
-- word is cut with "…" only when the state itself does not fit.
function Chat:set_statusline()
  local text = " " .. self:status()
  local n = #tostring(api.nvim_buf_line_count(self.buf))
  for _, w in ipairs(windows_of(self.buf)) do
    local width = api.nvim_win_get_width(w)
    local sl
    if vim.fn.strdisplaywidth(text) + 1 + (2 * n + 2) <= width then
      sl = text:gsub("%%", "%%%%") .. " %=%l/%L "
    else
      sl = require("agentrun.util").fit_parts(text, math.max(1, width - 1)):gsub("%%", "%%%%")
    end
    if vim.wo[w].statusline ~= sl then
      vim.wo[w].statusline = sl
    end
  end
end

-- render_header writes the header block and puts the session's state in
-- the status line of the chat's windows, where it stays in sight however
-- far the transcript scrolls. The header's first line says what the
-- status line does not: which agent, on which machine, in which folder
-- ("agentrun · demo in ~/proj"); the state, which changes, is the status
-- line's alone (both said "agentrun · demo · ready").
function Chat:render_header()
  local s = self.session
  self:set_statusline()
  local line = "agentrun · " .. s.agent
  if s.host then
    line = line .. " on " .. s.host:gsub("^ssh://", "")
  end
  if type(s.cwd) == "string" and s.cwd ~= "" then
    line = line .. " in " .. (s.host and s.cwd or vim.fn.fnamemodify(s.cwd, ":~"))
  end
  local lines = { line }
  local hls = { { 0, "AgentRunHeader" } }
  if s.title then
    table.insert(lines, "“" .. s.title:gsub("%s+", " ") .. "”")
    table.insert(hls, { #lines - 1, "AgentRunHeader" })
  end
  if s.agent == "demo" then
    local km = config.get().keymaps
    table.insert(lines, "Demo agent: each prompt is a shell command run in a real terminal.")
    table.insert(lines, string.format("Type one in the prompt below (e.g. `ls -la` or `sleep 30`) and send it with %s (%s in normal mode).", km.send_insert or "-", km.send or "-"))
    table.insert(lines, string.format("%s here or in the terminal split interrupts it, %s kills it; in the split %s closes the window.", km.interrupt or "-", km.kill or "-", km.close or "-"))
    for i = #lines - 3, #lines - 1 do
      table.insert(hls, { i, "AgentRunHint" })
    end
  end
  self:put(self.header, lines, hls)
end

-- command_cut returns the byte where line must be broken so that no
-- command name in it (" :AgentRun demo") is cut by the wrap of a window
-- width columns wide, or nil. The chat wraps with 'linebreak', which
-- breaks after a 'breakat' character followed by one that is not: with
-- ':' in 'breakat' (the default) that is between ":" and the name.
local function command_cut(line, width)
  local chars = vim.fn.split(line, "\\zs")
  local brk = vim.o.breakat
  local function isbreak(c)
    return c ~= nil and #c == 1 and brk:find(c, 1, true) ~= nil
  end
  local bytes, at = {}, 1
  for i, c in ipairs(chars) do
    bytes[i] = at
    at = at + #c
  end
  local s = 1 -- the first character of a screen row
  while true do
    local col, e = 0, nil
    for i = s, #chars do
      col = col + vim.fn.strdisplaywidth(chars[i])
      if col > width then
        e = i
        break
      end
    end
    if not e then
      return nil -- the rest fits in this row
    end
    local k
    for i = e - 1, s, -1 do
      if isbreak(chars[i]) and not isbreak(chars[i + 1]) then
        k = i
        break
      end
    end
    if not k then
      s = e -- no place to break: Neovim cuts at the edge
    else
      if chars[k] == ":" and chars[k + 1]:match("^%u") and k > s and (k == 1 or chars[k - 1] == " ") then
        return bytes[k]
      end
      -- nor a machine's URL (ssh://dev-box/…): its '-' and '/' are in
      -- 'breakat' too; it goes to the next row whole
      local j = k
      while j > s and chars[j - 1] ~= " " do
        j = j - 1
      end
      if j > s and table.concat(chars, "", j, math.min(j + 5, #chars)) == "ssh://" then
        return bytes[j]
      end
      s = k + 1
    end
  end
end

-- unbroken_commands returns lines with a line break put before each
-- command name (or ssh:// URL) that a window width columns wide would
-- wrap inside.
local function unbroken_commands(lines, width)
  if not width or width < 20 then
    return lines
  end
  local out = {}
  for _, l in ipairs(lines) do
    local cut = command_cut(l, width)
    while cut do
      table.insert(out, (l:sub(1, cut - 1):gsub("%s+$", "")))
      l = l:sub(cut)
      cut = command_cut(l, width)
    end
    table.insert(out, l)
  end
  return out
end

-- note_width is the text width the chat shows notes in (nil: not shown).
function Chat:note_width()
  local w = windows_of(self.buf)[1]
  if w then
    return (require("agentrun.ui.window").size(w))
  end
end

-- put_note (re)writes note b for the chat's width now.
function Chat:put_note(b)
  local lines = unbroken_commands(split_lines(b.text), self:note_width())
  local hls = {}
  for i = 0, #lines - 1 do
    table.insert(hls, { i, b.hl or "AgentRunNote" })
  end
  self:put(b, lines, hls)
end

-- note appends a remark (errors, turn ends). A command name in it is
-- never cut in two by the window's wrap.
function Chat:note(text, hl)
  local b = self:add({ kind = "note", text = text, hl = hl })
  self:put_note(b)
  return b
end

-- note_before writes a remark about tool call tool_call (a decision on
-- it) above that tool call's block, where one reads it first; more
-- remarks about it join the same lines. Without its block, it is a note.
function Chat:note_before(tool_call, text, hl)
  local id = "decision:" .. tostring(tool_call)
  local b = self.by_id[id]
  if b then
    b.text = b.text .. "\n" .. text
    self:put_note(b)
    return b
  end
  local tool = self.by_id["tool:" .. tostring(tool_call)]
  if not tool then
    return self:note(text, hl)
  end
  b = { kind = "note", id = id, text = text, hl = hl, lines = {}, hls = {} }
  for i, x in ipairs(self.blocks) do
    if x == tool then
      table.insert(self.blocks, i, b)
      break
    end
  end
  self.by_id[id] = b
  self:put_note(b)
  return b
end

-- fit_notes writes the notes again when the chat's width changed, so
-- that their command names stay whole.
function Chat:fit_notes()
  local width = self:note_width()
  if not width or width == self.notes_width then
    return
  end
  self.notes_width = width
  for _, b in ipairs(self.blocks) do
    if b.kind == "note" and b.text then
      self:put_note(b)
    end
  end
end

-- remove takes block b (a note that no longer holds) out of the chat.
function Chat:remove(b)
  for i, x in ipairs(self.blocks) do
    if x == b then
      self:put(b, {}, {})
      table.remove(self.blocks, i)
      if b.id then
        self.by_id[b.id] = nil
      end
      return
    end
  end
end

-- end_message ends the agent's current message: what it says next
-- starts on a line of its own (a turn ended, a prompt was sent).
function Chat:end_message()
  local last = self.blocks[#self.blocks]
  if last then
    last.ended = true
  end
end

-- user shows the user's prompt.
function Chat:user(text)
  local b = self:add({ kind = "user", text = text })
  self:put_user(b, text)
end

-- put_user writes user block b's lines: "> " and text.
function Chat:put_user(b, text)
  local lines, hls = { "" }, {}
  for _, l in ipairs(split_lines(text)) do
    table.insert(lines, "> " .. l)
    table.insert(hls, { #lines - 1, "AgentRunUser" })
  end
  self:put(b, lines, hls)
end

-- toggle_at_cursor shows or folds the thought or the long tool output
-- under the cursor, and keeps the cursor on that block.
function Chat:toggle_at_cursor()
  local b = self:block_at(api.nvim_win_get_cursor(0)[1])
  if not b then
    return
  end
  if b.kind == "thought" then
    b.open = not b.open
    self:render_thought(b)
  elseif b.kind == "tool" then
    b.tc.open = not b.tc.open
    self:render_tool_call(b)
  else
    return
  end
  pcall(api.nvim_win_set_cursor, 0, { self:start_line(b) + 1, 0 })
end

-- plan shows the agent's plan (replaced whole on each update).
function Chat:plan(entries)
  local b = self.by_id["plan"] or self:add({ id = "plan", kind = "plan" })
  local lines, hls = { "Plan:" }, { { 0, "AgentRunPlan" } }
  for _, e in ipairs(entries or {}) do
    local mark = ({ completed = "[x]", in_progress = "[~]" })[e.status] or "[ ]"
    table.insert(lines, string.format("  %s %s", mark, e.content or ""))
  end
  self:put(b, lines, hls)
end

-- render_tool_call re-renders a tool call block from its merged state.
function Chat:render_tool_call(b)
  local lines, hls, terminals, diffs = require("agentrun.ui.toolcall").render(b.tc)
  b.actions, b.diffs = terminals, diffs
  for _, id in pairs(terminals) do
    self.term_blocks[id] = b
  end
  self:put(b, lines, hls)
end

-- settle gives every tool call still pending or in progress a final
-- status (the turn or session ended under it: "cancelled", "stopped",
-- "unfinished"), so nothing shows as running forever.
function Chat:settle(status)
  -- A tool call whose command the agent goes on reporting after the turn
  -- (codex-acp) keeps the status the agent gives it, as its split does.
  local reporting = {}
  for _, t in pairs(require("agentrun.state").terminals) do
    -- (tool call ids are the agent's: only this session's terminals count)
    if t.session == self.session.key and t.keeps_reporting and t.tool_call and t.state == "running" and status ~= "stopped" then
      reporting[t.tool_call] = true
    end
  end
  for _, b in ipairs(self.blocks) do
    if b.kind == "tool" and (b.tc.status == "pending" or b.tc.status == "in_progress") and not reporting[b.tc.toolCallId] then
      b.tc.status = status
      self:render_tool_call(b)
    end
  end
end

-- tool_call adds or updates a tool call block (a repeated tool_call with a
-- known id is treated as an update).
function Chat:tool_call(u)
  local id = u.toolCallId
  local b = id and self.by_id["tool:" .. id]
  if not b then
    b = self:add({ id = "tool:" .. tostring(id), kind = "tool", tc = { toolCallId = id, status = "pending" } })
  end
  require("agentrun.ui.toolcall").merge(b.tc, u)
  local s = self.session
  if (b.tc.status == "pending" or b.tc.status == "in_progress") and not s.busy and not s.starting and s.turn_ended_by then
    -- said of after its turn ended (Claude Code sends a cancelled
    -- command's tool call late): it ended with the turn
    b.tc.status = s.turn_ended_by == "cancelled" and "cancelled" or "unfinished"
  end
  s.tool_calls[id or ""] = b.tc
  self:render_tool_call(b)
  self:shorten_prompt(b.tc)
  if not b.tc.agentrun_terminals and require("agentrun.ui.termlife").ties_by_command(b.tc.title) then
    require("agentrun.ui.termlife").tie_by_command(s.key)
  end
  return b.tc
end

-- shorten_prompt writes the turn's prompt short when it is tool call
-- tc's command line itself (the demo agent's prompts are): the tool
-- call's head line shows the line whole, once, so a small chat is not
-- filled with it twice ("> sh -c 'echo building…"; history and the
-- split have it too).
function Chat:shorten_prompt(tc)
  local cmd = type(tc.rawInput) == "table" and tc.rawInput.command or tc.title
  if type(cmd) ~= "string" or tc.kind ~= "execute" then
    return
  end
  for i = #self.blocks, 1, -1 do
    local u = self.blocks[i]
    if u.kind == "user" then
      local text = vim.trim(u.text or "")
      local first = text:match("^[^\n]*")
      if text == vim.trim(cmd) and not u.short and (vim.fn.strchars(first) > 24 or first ~= text) then
        u.short = true
        self:put_user(u, vim.fn.strcharpart(first, 0, 20):gsub("%s+$", "") .. "…")
      end
      return
    end
  end
end

-- tool_terminal adds terminal id to tool call tool_call's block (a
-- terminal our MCP tool ran for it), creating the block if the tool_call
-- has not arrived yet.
function Chat:tool_terminal(tool_call, id)
  local b = self.by_id["tool:" .. tostring(tool_call)]
  if not b then
    b = self:add({ id = "tool:" .. tostring(tool_call), kind = "tool", tc = { toolCallId = tool_call, status = "in_progress" } })
  end
  b.tc.agentrun_terminals = b.tc.agentrun_terminals or {}
  table.insert(b.tc.agentrun_terminals, id)
  self:render_tool_call(b)
end

-- terminal_changed re-renders the tool call that shows terminal id: one
-- whose content embeds it, or the tool call a terminal the agent runs
-- itself belongs to (its own shell tool: the tool call's status then
-- follows the command's true exit, toolcall.render).
function Chat:terminal_changed(id)
  local b = self.term_blocks[id]
  local t = not b and require("agentrun.state").terminals[id]
  if t and t.display_only and t.tool_call and t.session == self.session.key then
    b = self.by_id["tool:" .. tostring(t.tool_call)]
    if b and b.tc then
      b.tc.shown_by = id
    end
  end
  if b and b.tc then
    self:render_tool_call(b)
  end
end

-- rerun_changed writes the line of run t (R ran a command of this chat
-- again) where it happened: a line of its own at the end of the chat
-- when it starts, below what the agent said of the run before ("`cmd`
-- was killed by SIGINT."), rewritten in place as it ends ("▸ terminal
-- term-2 (run 2) · exit 0 · 1.2s"). The command is the tool call's above
-- (its split has it too). The tool call's own line keeps saying its run.
function Chat:rerun_changed(t)
  local id = "rerun:" .. tostring(t.id)
  local b = self.by_id[id]
  if not b then
    b = self:add({ id = id, kind = "rerun", term = t })
    b.opens = {
      [1] = function()
        require("agentrun.ui.term").open(t.id, { focus = true })
      end,
    }
    self.reruns = self.reruns or {}
    table.insert(self.reruns, b)
  end
  self:put_rerun(b)
end

-- put_rerun writes rerun block b's line: how its run stands, or that it
-- was disposed of (dd: its record is gone).
function Chat:put_rerun(b)
  local state = require("agentrun.state")
  local t = b.term
  local gone = state.terminals[t.id] ~= t and state.disposed[t.id]
  local st = gone and gone.was or require("agentrun.ui.toolcall").run_state(t)
  local line = string.format("▸ terminal %s · %s (%s opens it)", state.name_of(t), st, config.get().keymaps.open or "open")
  if b.lines[2] ~= line then
    self:put(b, { "", line }, { { 1, "AgentRunTerminalLine" } })
  end
end

-- refresh_reruns writes the lines of the runs R started again (a
-- terminal went: one of them may be disposed of).
function Chat:refresh_reruns()
  for _, b in ipairs(self.reruns or {}) do
    self:put_rerun(b)
  end
end

-- block_at returns the block and relative line at buffer line lnum (1-based).
function Chat:block_at(lnum)
  local n = 0
  for _, b in ipairs(self.blocks) do
    if lnum <= n + #b.lines then
      return b, lnum - n - 1
    end
    n = n + #b.lines
  end
end

function Chat:open_at_cursor()
  local b, rel = self:block_at(api.nvim_win_get_cursor(0)[1])
  if b and b.diffs and b.diffs[rel] then
    return require("agentrun.ui.toolcall").open_diff(b.diffs[rel])
  end
  if b and b.opens and (b.opens[rel] or b.opens[0]) then
    return (b.opens[rel] or b.opens[0])()
  end
  if not b or not b.actions then
    require("agentrun.ui.gotofile").open() -- a file:line in the text
    return
  end
  local id = b.actions[rel]
  if not id then
    id = select(2, next(b.actions)) -- any of them
  end
  if id then
    -- R ran it again: its newest run, as the list shows it
    require("agentrun.ui.term").open(require("agentrun.state").newest_run(id), { focus = true })
  end
end

-- update renders one session/update (the ACP SessionUpdate object).
function Chat:update(u)
  local kind = u.sessionUpdate
  if kind == "agent_message_chunk" then
    self:stream("message", content_text(u.content), u.messageId)
  elseif kind == "agent_thought_chunk" then
    self:stream("thought", content_text(u.content))
  elseif kind == "user_message_chunk" then
    local text = content_text(u.content)
    if vim.trim(text):match("^%[Request interrupted by user[^%]]*%]$") then
      -- Claude Code's record of a cancel, in the user's turn: not
      -- something the user typed
      self:note("(the turn was interrupted)", "AgentRunNote")
      return
    end
    self:stream("user_echo", require("agentrun.ui.stream").tidy_prompt(text))
  elseif kind == "plan" then
    self:plan(u.entries)
  elseif kind == "tool_call" or kind == "tool_call_update" then
    local tc = self:tool_call(u)
    require("agentrun.ui.agentterm").from_tool_call(self.session, tc, u)
  elseif kind == "session_info_update" then
    -- the agent names the session (Claude does once it knows the topic):
    -- in the header and status(); null clears it
    if u.title ~= nil then
      self.session.title = type(u.title) == "string" and u.title ~= "" and u.title or nil
      self:render_header()
    end
  elseif kind == "usage_update" then
    -- context used of its size, and the cost so far: in the status line
    self.session.usage = { used = u.used, size = u.size, cost = type(u.cost) == "table" and u.cost or nil }
    self:render_header()
  end
  -- Other kinds (available commands, modes, config options) are not
  -- shown here; they are no error.
end

-- usage_text says how much of the context the session used, and its cost:
-- " · 12k/200k tokens · $0.42".
local function usage_text(u)
  if type(u) ~= "table" or type(u.used) ~= "number" then
    return ""
  end
  local function k(n)
    return n >= 1000 and string.format("%.0fk", n / 1000) or tostring(n)
  end
  local text = " · " .. k(u.used) .. (type(u.size) == "number" and ("/" .. k(u.size)) or "") .. " tokens"
  if u.cost and type(u.cost.amount) == "number" then
    text = text .. string.format(" · %s%.2f", u.cost.currency == "USD" and "$" or ((u.cost.currency or "") .. " "), u.cost.amount)
  end
  return text
end
M.usage_text = usage_text

return M
