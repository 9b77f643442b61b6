-- Terminal splits. Lua creates each terminal buffer with nvim_open_term
-- (it needs a Lua on_input callback) and hands the channel to Go, whose
-- display pump feeds it with nvim_chan_send. Keystrokes go back with
-- rpcnotify("input"). Display-only agent terminals (the agent ran the
-- command itself and streams it in _meta) are fed from here instead.
-- Why this file is long: a terminal split's whole life — its buffer, its
-- feed, its end marker and every way it ends or is mended — shares the
-- terminal's state; the windows it opens in are window.lua's.
local api = vim.api
local cmdwin = require("agentrun.ui.cmdwin")
local compat = require("agentrun.compat")
local config = require("agentrun.config")
local rpc = require("agentrun.rpc")
local state = require("agentrun.state")
local window = require("agentrun.ui.window")

local M = {}

local notify = require("agentrun.util").notify

local function session_chat(t)
  local s = state.sessions[t.session or ""]
  return s and s.chat
end

-- on_change lists functions called whenever a terminal started, ended,
-- changed hands or went (the terminal list refreshes there).
M.on_change = {}

local function listed_changed()
  for _, fn in ipairs(M.on_change) do
    fn()
  end
end

local function changed(t)
  local chat = session_chat(t)
  if chat then
    chat:terminal_changed(t.id)
  end
  listed_changed()
end

local name_buffer -- defined below (open uses it)
local wait_over -- defined below (record_exit uses it)

-- on_buffer lists functions called with a terminal once its split's
-- buffer exists (ui/actions.lua maps the split's keys there), so that
-- this module needs none of the modules above it.
M.on_buffer = {}

local function feed(t, data)
  if t.chan then
    pcall(api.nvim_chan_send, t.chan, M.guard .. data)
  else
    t.pending = t.pending or {}
    table.insert(t.pending, data)
  end
end

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
  local msg = M.reset .. "\r\n[agentrun: Neovim dropped the end of this split (a tiny or resized window)" .. last .. "]\r\n" .. table.concat(t.end_lines, "\r\n")
  pcall(api.nvim_chan_send, t.chan, M.guard .. msg)
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
  M.open(t.id)
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

-- open shows terminal id. opts.focus enters its window (and opens one even
-- when terminal.position is "none"); opts.auto opens it only if it has no
-- buffer yet (a tool call embedded it).
function M.open(id, opts)
  opts = opts or {}
  local t = state.terminals[id]
  if not t then
    notify(state.unknown_text(id))
    return
  end
  window.watch()
  local position = config.get().terminal.position
  if opts.focus and position == "none" then
    position = "below"
  end
  local prev = api.nvim_get_current_win()
  if t.bufnr and api.nvim_buf_is_valid(t.bufnr) then
    if opts.auto then
      return
    end
    local w = vim.fn.bufwinid(t.bufnr)
    if w == -1 then
      w = window.place(t.bufnr, position)
    end
    api.nvim_set_current_win(w)
    return
  end
  local buf = api.nvim_create_buf(false, true)
  local win, restore
  if position ~= "none" and cmdwin.open() then
    -- The command-line window (q:) forbids opening or entering another:
    -- the terminal starts without a window; its split shows once q: closed.
    cmdwin.after(function()
      if api.nvim_buf_is_valid(buf) and vim.fn.bufwinid(buf) == -1 then
        local back = api.nvim_get_current_win()
        local w = window.place(buf, position)
        if opts.focus then
          api.nvim_set_current_win(w)
        elseif api.nvim_win_is_valid(back) then
          api.nvim_set_current_win(back)
        end
      end
    end)
  elseif position ~= "none" then
    -- what our terminal window shows now: a refused attach puts it back
    local shown_before = {}
    for _, w in ipairs(api.nvim_tabpage_list_wins(0)) do
      if vim.w[w].agentrun_terminal_window == position then
        shown_before[w] = api.nvim_win_get_buf(w)
      end
    end
    win = window.place(buf, position)
    restore = { win = win, buf = shown_before[win], prev = prev }
  end
  local function open_term()
    return compat.open_term(buf, function(_, _, _, data)
      M.input(t, data)
    end)
  end
  local chan
  if win and t.state ~= "running" then
    -- An ended split made again gets its whole output at once: its
    -- terminal must start at its window's size (Neovim makes it the
    -- current window's, then resizes it: 0.7 and 0.10 resized under a
    -- flood put blank lines at its top and the colours off by as many).
    chan = api.nvim_win_call(win, open_term)
  else
    chan = open_term()
  end
  -- a new buffer: its end is shown once the backend wrote it there
  t.bufnr, t.chan, t.end_shown, t.end_lines = buf, chan, nil, nil
  if win and t.runs then
    window.set_statusline(win) -- "· run 2": placed before it was t's
  end
  require("agentrun.ui.follow").attach(buf)
  vim.bo[buf].scrollback = config.get().terminal.scrollback
  name_buffer(t)
  api.nvim_buf_set_var(buf, "agentrun_terminal", id)
  for _, fn in ipairs(M.on_buffer) do
    fn(t)
  end
  if t.display_only then
    for _, d in ipairs(t.pending or {}) do
      feed(t, d)
    end
    t.pending = nil
  else
    local cols, rows = 80, 24
    if win then
      cols, rows = window.size(win)
    end
    t.cols, t.rows = cols, rows
    local res, err = rpc.request(t.remote and "remote_attach" or "attach", id, chan, { cols = cols, rows = rows, scrollback = vim.bo[buf].scrollback })
    if err and t.remote and not t.shown then
      -- no such terminal of another host: nothing of it stays
      notify(err)
      t.bufnr, t.chan = nil, nil
      -- Nothing on screen changes: the terminal window shows again what
      -- it showed (deleting the buffer would close it), focus goes back.
      local r = restore
      if r and r.buf and api.nvim_win_is_valid(r.win) and api.nvim_buf_is_valid(r.buf) then
        api.nvim_win_set_buf(r.win, r.buf)
        require("agentrun.ui.follow").reset(r.win)
      end
      pcall(api.nvim_buf_delete, buf, { force = true })
      if r and api.nvim_win_is_valid(r.prev) then
        api.nvim_set_current_win(r.prev)
      end
      state.remove_terminal(id)
      return false
    elseif err then
      notify(err)
    elseif t.remote and type(res) == "table" then
      t.claim, t.user, t.command, t.claim_seq = res.claim, res.mine, res.title, res.seq
      -- nobody's once its Neovim quit: that Neovim never comes back
      t.was_detached = t.was_detached or (type(res.claim) == "table" and res.claim.client_id == "detached")
      name_buffer(t)
      if t.user then
        window.resize_terminal(t) -- ours already (taken over before): our size
      end
    end
  end
  if win and not opts.focus and api.nvim_win_is_valid(prev) then
    api.nvim_set_current_win(prev)
  elseif win then
    api.nvim_set_current_win(win)
  end
end

-- created registers a terminal Go created for the agent and opens its
-- split.
---@param p agentrun.event.terminal_created
function M.created(p)
  if p.session then
    require("agentrun.disk").baseline() -- what the command changes is the agent's
  end
  local t = state.add_terminal({
    id = p.id,
    session = p.session,
    session_id = p.session_id,
    command = p.command,
    title = p.title,
    cwd = p.cwd,
    sandbox = p.sandbox ~= "" and p.sandbox or nil,
  })
  if p.user then
    t.user = true
    return -- shell() opens it
  end
  -- At once, not when a tool call embeds it: from the moment Lua knows a
  -- terminal it has its buffer (status() lists it with its bufnr).
  M.open(t.id, { auto = true })
  if p.session then
    M.tie_by_command(p.session)
  end
end

-- yours reports whether t is a command you ran (an R rerun, :AgentShell
-- cmd): its end is told and its failures loaded as the agent's are. Not
-- an interactive shell (:AgentShell alone), whose end you typed.
function M.yours(t)
  return t.user and not t.session and not t.interactive and (t.command or "") ~= "" and true or false
end

-- exited records a terminal's exit (Go writes "[exit N]" in its buffer).
-- ended_unseen tells, once, that the agent's command t ended while no
-- window of this tab page shows it, though one did (its split was closed,
-- or taken by another command, or you went to another tab page; with
-- terminal.position "none" you chose not to see them): how it ended and
-- its last line, with vim.notify (so nvim-notify, noice and fidget show
-- it too). Not once the session ended or Neovim quits.
function M.ended_unseen(t, last)
  local s = state.sessions[t.session or ""]
  -- (a command of yours, an R rerun or :AgentShell cmd, as the agent's)
  if t.end_noticed or t.restarting or not (s or M.yours(t)) or (s and s.ended) or vim.v.exiting ~= vim.NIL then
    return
  end
  if not (t.bufnr and api.nvim_buf_is_valid(t.bufnr) and vim.b[t.bufnr].agentrun_was_shown) then
    return
  end
  local tab = api.nvim_get_current_tabpage()
  for _, w in ipairs(t.bufnr and vim.fn.win_findbuf(t.bufnr) or {}) do
    if api.nvim_win_get_tabpage(w) == tab then
      return
    end
  end
  t.end_noticed = true
  local how = state.how_ended(t) or "ended"
  -- its last line first: a long command line is what gets cut
  local msg = string.format("%s ended (%s): ", t.id, how)
  if last and last ~= "" then
    msg = msg .. last .. " — "
  end
  msg = msg .. (t.command or "")
  msg = require("agentrun.util").fit(msg, math.max(vim.o.columns - 24, 40)) -- one line, no Press ENTER
  notify(msg, t.exit_code == 0 and vim.log.levels.INFO or vim.log.levels.WARN)
end

-- record_exit records that terminal t ended, every kind of terminal (ours,
-- another host's, an agent's own command): p has exit_code or signal, and
-- ran_ms when known; ended_by (an agent's command) why its display ended
-- without them. Said once to whoever listens: User AgentRunTerminalExited.
function M.record_exit(t, p)
  local was = t.state
  if t.state == "running" then
    t.state = "exited"
    t.waiting, t.ports = false, {}
    for _, w in ipairs(t.bufnr and vim.fn.win_findbuf(t.bufnr) or {}) do
      window.set_statusline(w)
    end
  end
  t.exit_code, t.signal, t.ended_by = p.exit_code, p.signal, p.ended_by
  t.last_line = p.last_line or t.last_line
  if t.wait_note then
    wait_over(t, "it ended: " .. (state.how_ended(t) or "ended"))
  end
  t.ran_ms = p.ran_ms or (t.started_ms and (vim.loop.now() - t.started_ms)) or nil
  if was == "running" or not t.exit_said then
    t.exit_said = true
    local d = state.describe_terminal(t)
    compat.user_event("AgentRunTerminalExited", { id = d.id, key = d.key, exit_code = d.exit_code, signal = d.signal, ran_ms = d.ran_ms, how = d.how })
  end
end

---@param p agentrun.event.terminal_exit
function M.exited(p)
  local t = state.terminals[p.id]
  if not t then
    return
  end
  M.record_exit(t, p)
  require("agentrun.portforward").ended(t.id) -- its ports no longer forwarded here
  if t.session or M.yours(t) then
    -- a command ended: the files it changed show as they are
    require("agentrun.disk").refresh()
    M.ended_unseen(t, p.last_line)
    if not t.restarting then
      -- terminal.on_failure, once the split shows all of the output
      M.when_end_shown(t, function()
        require("agentrun.ui.quickfix").on_exit(t)
      end)
    end
  end
  -- The command is gone: a user typing into its split in terminal mode
  -- would only feed a dead pty. Back to normal mode, where q, X and
  -- scrolling work.
  if t.bufnr and api.nvim_get_current_buf() == t.bufnr and api.nvim_get_mode().mode == "t" then
    vim.cmd("stopinsert")
  end
  changed(t)
end

-- link_dropped says in the splits of url's machine that its link dropped
-- (their commands go on there; the splits stop until it is taken up).
function M.link_dropped(url)
  for _, t in pairs(state.terminals) do
    if t.link_dropped == url and t.chan then
      pcall(api.nvim_chan_send, t.chan, M.guard .. M.reset .. string.format("\r\n[agentrun: link lost; it goes on there: :AgentRun %s]", url))
    end
  end
  listed_changed()
end

-- backend_gone ends the splits of the commands of the sessions gone
-- (they waited on url's machine, site, and a new link did not find
-- them): they read as ended, not as lost. gone nil: the link said its
-- backend died (killed, or failed); every running command of site ends.
function M.backend_gone(site, url, gone, backend_found)
  local host = url:gsub("^ssh://", "")
  local of = {}
  for _, s in ipairs(gone or {}) do
    of[s.key] = true
  end
  for _, t in pairs(state.terminals) do
    -- gone == nil: the link said the backend died; its running ones end
    local mine = gone == nil and not t.remote and t.state == "running" or (t.link_dropped == url and of[t.session])
    if mine and state.site_of(t.id) == site then
      t.link_dropped = nil
      M.record_exit(t, { ended_by = backend_found and "its session ended" or "backend gone" })
      local why = backend_found and "ended there while the link was down" or string.format("ended: the backend on %s is gone", host)
      if t.chan then
        pcall(api.nvim_chan_send, t.chan, M.guard .. M.reset .. string.format("\r\n[agentrun: %s]", why))
      end
      changed(t)
    end
  end
  listed_changed()
end

-- ports_text is how terminal t's listening ports read: ":8000 :5173"
-- ("" for none).
function M.ports_text(t)
  local out = {}
  for _, p in ipairs(t.ports or {}) do
    table.insert(out, ":" .. tostring(p))
  end
  return table.concat(out, " ")
end

-- shown_in_current reports whether the current window shows terminal t.
local function shown_in_current(t)
  return t.bufnr ~= nil and api.nvim_get_current_buf() == t.bufnr
end

-- activity records what the backend saw of a running terminal: whether
-- it waits for input (an agent's command), the ports it listens on. A
-- command that starts waiting is said once, in its chat and (unless you
-- are in its window already) with vim.notify — :AgentType, which takes
-- you there to type, and its last line (what it asks, most often).
-- wait_over rewrites the chat's note that terminal t waits for input once
-- it no longer does (how: "answered", or how it ended), so that it does
-- not stand there as if it still waited.
wait_over = function(t, how)
  local n = t.wait_note
  t.wait_note = nil
  if not (n and n.chat.buf and api.nvim_buf_is_valid(n.chat.buf)) then
    return
  end
  local asked = n.asked and n.asked ~= "" and (": " .. n.asked) or ""
  n.block.text = string.format("%s waited for input%s (%s)", t.id, asked, how)
  n.chat:put_note(n.block)
end

---@param p agentrun.event.terminal_activity
function M.activity(p)
  local t = state.terminals[p.id]
  if not t then
    return
  end
  local was = t.waiting
  t.waiting = p.waiting and true or false
  t.ports = p.ports or {}
  if t.waiting and not was and vim.v.exiting == vim.NIL then
    -- what it asked last: a long one is what gets cut
    local msg = string.format("%s waits for input (:AgentType types into it)", t.id)
    if p.last_line and p.last_line ~= "" then
      msg = msg .. ": " .. p.last_line
    end
    -- in the chat (whole), also when you are in its split: the chat keeps
    -- what the turn waited on (typing in the prompt, in Insert mode, the
    -- message line shows "-- INSERT --" over the message)
    local chat = session_chat(t)
    if chat then
      t.wait_note = { chat = chat, block = chat:note(msg, "AgentRunNote"), asked = p.last_line }
    end
    if not shown_in_current(t) then
      msg = require("agentrun.util").fit(msg, math.max(vim.o.columns - 24, 40)) -- one line, no Press ENTER
      notify(msg, vim.log.levels.WARN)
    end
  elseif was and not t.waiting then
    wait_over(t, "answered")
  end
  for _, w in ipairs(t.bufnr and vim.fn.win_findbuf(t.bufnr) or {}) do
    window.set_statusline(w)
  end
  changed(t)
end

-- rerun runs terminal t's command again as the user's, in a split where
-- its was (one of the user's still running restarts in place). A deny
-- rule of terminal.approve (or its function's false) refuses it as it
-- would the agent; pressing the key is the user's yes to an "ask".
function M.rerun(t)
  local approve = config.get().terminal.approve
  if type(approve) == "table" or type(approve) == "function" then
    local v = require("agentrun.policy").verdict({ line = t.command or "", cwd = t.cwd, key = t.session or "", session = t.session_id })
    if v and v.failed then
      notify(string.format("%s not run again: the rules could not be checked (%s)", t.id, v.reason or ""))
      return false
    end
    if v and v.decision == "refuse" then
      notify(string.format("%s not run again: %s", t.id, v.reason or "terminal.approve refuses it"))
      return false
    end
  end
  -- one of yours still running is stopped to restart: its end is no
  -- failure to announce (not "ended (signal SIGTERM)")
  t.restarting = t.state == "running" or nil
  local res, err = rpc.request("rerun", t.id)
  if not res then
    t.restarting = nil
    notify(err)
    return false
  end
  -- The new run takes the old one's place: its row in the list (which
  -- no longer shows the old), with the number of runs.
  local nt = state.add_terminal({ id = res.id, command = res.command, cwd = t.cwd or vim.fn.getcwd() })
  nt.runs, nt.row_of, nt.interactive = (t.runs or 1) + 1, t.row_of or t.id, t.interactive
  t.rerun_as = nt.id
  M.open_user(res)
  return true
end

-- browse opens http://localhost:PORT of a port terminal t listens on
-- (asking which when several). For a command on another machine (an
-- agent's there, or one attached with :AgentAttach ssh://…) the port is
-- forwarded here first (agentrun.portforward).
function M.browse(t)
  local function open(port)
    -- the URL it printed for that port, with its path (/docs/, /app/)
    local path = ""
    for _, l in ipairs(t.bufnr and api.nvim_buf_is_valid(t.bufnr) and api.nvim_buf_get_lines(t.bufnr, 0, -1, false) or {}) do
      local p = l:match("https?://[%w.%-%[%]:]-:" .. tostring(port) .. "(/[^%s\"'<>`]*)")
      if p then
        path = p:gsub("[.,;:!?)%]}]+$", ""):gsub("^/$", "")
        break
      end
    end
    local url = "http://localhost:" .. tostring(port) .. path
    if state.site_of(t.id) or tostring(t.id):match("^ssh://") then
      local u, err = require("agentrun.portforward").url(t, port)
      if not u then
        notify(err)
        return
      end
      url = u:gsub("/$", "") .. path
    end
    local ok, err = compat.open_url(url)
    if not ok then
      notify(err)
    end
  end
  local ports = t.ports or {}
  if #ports == 1 then
    open(ports[1])
    return true
  end
  vim.ui.select(ports, { prompt = t.id .. " listens on:", format_item = function(p)
    return "http://localhost:" .. tostring(p)
  end }, function(p)
    if p then
      open(p)
    end
  end)
  return true
end

-- type_into opens terminal t's split, focused, in terminal mode: what
-- you type goes to the command (:AgentType, the answer to "waits for
-- input").
function M.type_into(t)
  M.open(t.id, { focus = true })
  if t.bufnr and api.nvim_get_current_buf() == t.bufnr then
    vim.cmd("startinsert")
    return true
  end
  return false
end

-- released records that the agent released a terminal.
---@param p agentrun.event.terminal_released
function M.released(p)
  local t = state.terminals[p.id]
  if not t then
    return
  end
  t.state = "released"
  require("agentrun.portforward").ended(t.id)
  changed(t)
end

-- name_buffer names t's buffer after its id (term-N, what the commands
-- take) and, for a terminal the agent runs itself, after its command
-- alone (the split's status line shows it): the agent's id for it
-- (run_shell_command__call_1) means nothing to the user. Its id comes
-- back only to tell two of the same command apart.
name_buffer = function(t)
  if t.bufnr and api.nvim_buf_is_valid(t.bufnr) then
    local name = "agentrun://terminal/" .. t.id
    local short
    if t.display_only and t.command and t.command ~= t.id then
      short = "agentrun://terminal/" .. t.command:gsub("%s+", " ")
      name = name .. " " .. t.command:gsub("%s+", " ")
    elseif t.title and t.title ~= "" then
      name = name .. " " .. t.title -- the description the agent gave it
    end
    local sandbox = t.sandbox and t.sandbox ~= "" and (" [sandbox: " .. t.sandbox:match("^%S+") .. "]") or ""
    if not (short and pcall(api.nvim_buf_set_name, t.bufnr, short .. sandbox)) then
      pcall(api.nvim_buf_set_name, t.bufnr, name .. sandbox)
    end
  end
end

-- reset goes before a line the plugin writes into a terminal (a marker such
-- as "[cancelled]"), so it reads right whatever the command left on; guard
-- starts every write, as Neovim may have resized the terminal since the
-- last. The same bytes as Go's vtsafe.Reset and vtsafe.Guard
-- (internal/vtsafe/vtsafe.go says why; TestLuaResetAndGuardAreGos keeps
-- them equal).
M.reset = "\24\0277\27[?6l\27[r\0278\27[0m\27(B\27)B\27*B\27+B\15\27[4l\27[?7h\27[?69l\27[?5l"
M.guard = "\27[?0h"

-- Internals the agent-shown terminals (ui/agentterm.lua) share.
M._feed = function(t, data)
  feed(t, data)
end
M._changed = function(t)
  changed(t)
end
M._name_buffer = function(t)
  name_buffer(t)
end

-- shell starts a terminal the user holds (see require("agentrun").shell)
-- and enters it in terminal mode.
function M.shell(cmd)
  local res, err = rpc.request("shell", { cmd = cmd or "", shell = vim.env.SHELL or "", cwd = vim.fn.getcwd() })
  if not res then
    notify(err)
    return nil
  end
  local t = M.open_user(res)
  t.interactive = (cmd or "") == "" or nil
  if config.get().terminal.persist then
    local ok, derr = rpc.request("detach", t.id)
    t.detached = ok and true or nil
    if derr then
      notify(derr)
    end
  end
  return t.id
end

-- _focus_user opens terminal id's split, focused in terminal mode.
function M._focus_user(id)
  local t = state.terminals[id]
  if not t then
    return
  end
  M.open(t.id, { focus = true })
  if t.bufnr and api.nvim_get_current_buf() == t.bufnr then
    vim.cmd("startinsert")
  end
end

-- open_user shows a terminal the user holds ({ id, command } as Go
-- answered: a shell, a sign-in) focused in terminal mode, ready for
-- typing. Returns its state entry.
function M.open_user(res)
  local t = state.add_terminal({ id = res.id, command = res.command, cwd = vim.fn.getcwd() })
  t.user = true
  if api.nvim_get_mode().mode:sub(1, 1) == "i" then
    -- Called from an event (a sign-in) while the user is in Insert mode
    -- in the prompt: a window switched to from there stays in Insert
    -- mode, which a terminal ignores. Leave Insert mode first, then
    -- focus the terminal from Normal mode, as typed keys would.
    local keys = api.nvim_replace_termcodes("<C-\\><C-n><Cmd>lua require('agentrun.ui.term')._focus_user(" .. string.format("%q", t.id) .. ")<CR>", true, false, true)
    api.nvim_feedkeys(keys, "n", false)
  else
    M._focus_user(t.id)
  end
  listed_changed()
  return t
end

-- claimed records who holds another host's terminal t as of its host's
-- serverSeq seq (an event's, or the answer to a take or a let go):
-- unless Lua knows a newer state already. The answer comes in the call
-- that took, an event queued before it is handled later (events wait for
-- the main loop): an earlier let go's event must not undo the take.
-- Returns whether it was recorded.
function M.claimed(t, claim, mine, seq)
  if type(seq) == "number" and type(t.claim_seq) == "number" and seq < t.claim_seq then
    return false
  end
  t.claim, t.user = claim, mine
  if type(seq) == "number" then
    t.claim_seq = seq
  end
  return true
end

-- takeover gives terminal id to the user (claim {client}).
function M.takeover(id)
  local t = state.terminals[id]
  local res, err = rpc.request(t and t.remote and "remote_take" or "takeover", id)
  if err then
    notify(err)
    return false
  end
  if t then
    local was = t.user
    if t.remote and type(res) == "table" then
      M.claimed(t, res.claim, res.mine, res.seq)
    else
      t.user = true
    end
    if t.remote and not was then
      -- ours to size now: the pty takes our split's size
      require("agentrun.ui.window").resize_terminal(t)
    end
    changed(t)
  end
  if config.get().terminal.persist then
    return M.detach(id)
  end
  -- One short line: a longer message makes Neovim stop at "Press ENTER".
  notify(string.format("%s is yours now: i in its split types into it, %s kills it", id, config.get().keymaps.kill or ":AgentKill"), vim.log.levels.INFO)
  return true
end

-- attach shows terminal name of another host live in a split and enters
-- it: its scrollback, then its output as it comes. name is "PID:term-N"
-- (a host of this machine's) or "ssh://[user@]host[:port]/PID:term-N"
-- (a remote machine's; the backend checks the rest of it).
function M.attach(name)
  if type(name) ~= "string" or not (name:match("^%d+:%S+$") or name:match("^ssh://%S+$")) then
    notify(string.format("unknown terminal %s; :AgentTerminals lists them", vim.inspect(name)))
    return false
  end
  local t = state.terminals[name]
  if not t then
    t = state.add_terminal({ id = name, command = name, state = "running" })
    t.remote = true
  end
  if M.open(name, { focus = true }) == false then
    listed_changed()
    return false
  end
  t.shown = true
  listed_changed()
  return true
end

-- tool_terminal shows a terminal our MCP tool ran for a tool call in that
-- tool call's place in the chat (the agent's tool_call does not name it).
---@param p agentrun.event.tool_terminal
function M.tool_terminal(p)
  local t = state.terminals[p.id or ""]
  local s = state.sessions[p.key or ""]
  if t then
    t.tool_call = p.tool_call
  end
  if s and s.chat then
    s.chat:tool_terminal(p.tool_call, p.id)
  end
end

-- ties_by_command tells whether a tool call's title names our MCP
-- run_command tool as an agent names it that does not say in the MCP call
-- which tool call it is (opencode: "agentrun_run_command"; Claude Code's
-- "mcp__agentrun__run_command" comes with its id, tool_terminal).
function M.ties_by_command(title)
  return title == "agentrun_run_command"
end

-- tie_by_command gives session key's newest terminal of ours that no tool
-- call claims to each open tool call of our run_command tool (as
-- ties_by_command names it) that runs the same command line, in
-- whichever order the two came: the tool call's updates may reach us
-- after its command ended.
function M.tie_by_command(key)
  local s = state.sessions[key or ""]
  if not (s and s.chat and s.tool_calls) then
    return
  end
  for id, tc in pairs(s.tool_calls) do
    local input = type(tc.rawInput) == "table" and tc.rawInput or {}
    if not tc.agentrun_terminals and M.ties_by_command(tc.title) and type(input.command) == "string" then
      for i = #state.terminal_order, 1, -1 do
        local t = state.terminals[state.terminal_order[i]]
        if t and t.session == key and not t.display_only and not t.user and not t.tool_call and t.command == input.command then
          M.tool_terminal({ key = key, tool_call = id, id = t.id })
          break
        end
      end
    end
  end
end

-- remote_claimed records who holds a remote terminal now.
---@param p agentrun.event.remote_claimed
function M.remote_claimed(p)
  local t = state.terminals[p.id or ""]
  if t then
    local took = p.mine and not t.user
    if not M.claimed(t, p.claim, p.mine, p.seq) then
      return -- older than what the take or let go answered
    end
    if took then
      -- ours to size now: the pty takes our split's size
      require("agentrun.ui.window").resize_terminal(t)
    end
    changed(t)
  end
end

-- detach keeps terminal id running after Neovim quits (the user holds it).
function M.detach(id)
  local res, err = rpc.request("detach", id)
  if err then
    notify(err)
    return false
  end
  local t = state.terminals[id]
  if t then
    t.user, t.detached = true, true
    changed(t)
  end
  local site = state.site_of(id)
  local url = site and rpc.site_url(site)
  -- another machine's: named as attach reaches it, ssh://host/PID:term-N
  -- (the URL says the machine: no "@site" after the id)
  local name = url and string.format("%s/%d:%s", rpc.machine(url), res.host, (id:gsub("@[^@]*$", "")))
    or string.format("%d:%s", res.host, id)
  notify(string.format("%s is detached (it outlives Neovim): :AgentAttach %s", id, name), vim.log.levels.INFO)
  return true
end

-- host_label names the host of another host's terminal t: "host 4242",
-- "host 4242 on ssh://devbox".
function M.host_label(t)
  local where, pid = tostring(t.id):match("^(ssh://[^/]+)/(%d+):")
  if where then
    return "host " .. pid .. " on " .. where
  end
  return "host " .. tostring(t.host or tostring(t.id):match("^(%d+):") or "?")
end

-- detach_remote answers :AgentDetach on another host's terminal t: it
-- is not this Neovim's, so quitting this one never ended it; whether it
-- outlives its own Neovim was that one's to say (:AgentDetach there).
function M.detach_remote(t)
  if t.was_detached or (type(t.claim) == "table" and t.claim.kind == "client" and t.claim.client_id == "detached") then
    notify(string.format("%s is detached already (its Neovim quit): it runs until it ends or is killed", t.id), vim.log.levels.INFO)
  else
    notify(string.format("%s is %s's: quitting this Neovim leaves it; it ends with its own unless detached there", t.id, M.host_label(t)), vim.log.levels.INFO)
  end
  return true
end

-- dispose kills terminal id if it runs, releases it and wipes its buffer
-- (another host's: shown here, its split goes; its host killed it).
function M.dispose(id)
  local t = state.terminals[id]
  if not t then
    return false
  end
  if not t.display_only and not t.remote and rpc.running(id) then
    -- Go only fails for an id it does not know: nothing runs there then.
    local _, err = rpc.request("dispose", id)
    if err then
      notify(err)
    end
  end
  if t.bufnr and api.nvim_buf_is_valid(t.bufnr) then
    pcall(api.nvim_buf_delete, t.bufnr, { force = true })
  end
  local chat = session_chat(t)
  state.remove_terminal(id)
  -- what the chat says of it from now on (its record is gone)
  state.disposed[id] = { command = t.command, was = t.state == "running" and "killed and disposed of (dd)" or "disposed of (dd)" }
  if chat then
    chat:terminal_changed(id)
  end
  listed_changed()
  return true
end

-- input forwards terminal-mode keystrokes to the pty.
function M.input(t, data)
  if t.display_only then
    return
  end
  rpc.notify(t.remote and "remote_input" or "input", t.id, data)
end

local function cancel_turn(t)
  require("agentrun.conversation").cancel(t.session)
end

-- interrupt sends SIGINT to terminal id's process group (display-only
-- terminals: cancels the turn).
function M.interrupt(id)
  local t = state.terminals[id]
  if t and t.display_only then
    return cancel_turn(t)
  end
  if t and t.remote then
    return rpc.notify("remote_input", id, "\3") -- Ctrl-C, as typed (if you hold it)
  end
  local _, err = rpc.request("interrupt", id)
  if err then
    notify(err)
  end
end

-- kill kills terminal id's process group: SIGTERM then SIGKILL after the
-- grace period, or SIGKILL at once when force is set; a message says so
-- when no split in sight shows its end. remote: id is
-- another host's (PID:term-N), shown here or not: its host kills it, as
-- `agentrun kill` does; false when it could not.
function M.kill(id, force, remote)
  local t = state.terminals[id]
  if t and t.display_only then
    return cancel_turn(t)
  end
  if remote or (t and t.remote) then
    local _, err = rpc.request("remote_dispose", id) -- its host kills it
    if err then
      notify(err)
      return false
    end
    if not (t and t.bufnr and api.nvim_buf_is_valid(t.bufnr)) then
      -- no split here shows its end
      notify(string.format("killed %s", id), vim.log.levels.INFO)
    end
    return true
  end
  local res, err = rpc.request("kill", id, force and true or false)
  if err then
    notify(err)
    return false
  end
  if not (t and t.bufnr and vim.fn.bufwinid(t.bufnr) ~= -1) then
    -- no split in sight shows its end: say what was done (short: with
    -- "(agentrun) " and "(newest running)" it fits 80 columns)
    local grace = type(res) == "table" and tonumber(res.grace_ms) or 0
    if force or grace <= 0 then
      notify(string.format("%s is killed (SIGKILL)", id), vim.log.levels.INFO)
    else
      notify(string.format("%s: SIGTERM sent; SIGKILL in %g s", id, grace / 1000), vim.log.levels.INFO)
    end
  end
  return true
end

return M
