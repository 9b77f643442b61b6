-- :AgentTerminals: every terminal (the agent's, the user's shells, the
-- agent's own display-only ones) with its state, holder, age and last
-- output line, like a task list. Keys (overridable through `keymaps`):
-- open (<CR>) opens its split, kill (X) kills it, takeover (T) takes it
-- over from the agent, dispose (dd) kills, releases and wipes it, close
-- (q) closes the list. While the list is shown it refreshes every second
-- and whenever a terminal starts, ends or changes hands. Also the picker
-- of :AgentAttach (pick), and :AgentAttach ssh://… (attach_ssh).
-- Why this file is long: the terminal list is one view with its rows, its
-- keys, its refresh and the :AgentAttach picker that shows the same rows.
local api = vim.api
local ns = api.nvim_create_namespace("agentrun_terminals")
local compat = require("agentrun.compat")

local M = {}

-- refresh_ms is how often a shown list re-reads status().
M.refresh_ms = 1000

local buf = nil
local ids = {} -- line (1-based) -> terminal id
local running_rows = {} -- the lines of running terminals, in order
local had = false -- the list showed terminals once
local timer = nil
local drawn = nil -- the lines the list's buffer holds (nil: to be drawn)

-- client_name names AHP client id for a person, as agentrun ls does
-- (ahp.ClientName): "Neovim 4242", "agentrun attach 4242", else
-- "client ID".
local function client_name(id)
  id = tostring(id)
  local pid = id:match("^nvim%-(%d+)$")
  if pid then
    return "Neovim " .. pid
  end
  pid = id:match("^cli%-(%d+)$")
  return pid and ("agentrun attach " .. pid) or ("client " .. id)
end

-- holder says who holds a terminal, from its AHP claim.
local function holder(t)
  local c = type(t.claim) == "table" and t.claim or {}
  if t.state == "released" and c.kind ~= "client" then
    return "—" -- nobody: the agent let go of it
  elseif t.display_only then
    return "agent's own"
  elseif c.kind == "client" and c.client_id == "detached" then
    return "nobody (detached)" -- the editor that detached it has quit
  elseif c.kind == "client" and t.holder_gone and not t.mine then
    return "nobody (" .. client_name(c.client_id) .. " left)" -- anyone may take it
  elseif c.kind == "client" then
    local lt = require("agentrun.state").terminals[t.id]
    if t.mine and lt and lt.detached then
      return "you (detached)" -- it outlives this Neovim
    end
    return t.mine and "you" or client_name(c.client_id)
  elseif c.kind == "session" and c.tool_call_id and c.tool_call_id ~= "" then
    -- given back after its tool call ended (you took it over, then let
    -- go): the agent's session holds it, no tool call waits on it
    local s = require("agentrun.state").sessions[t.key or ""]
    local tc = s and s.tool_calls[c.tool_call_id]
    if tc and tc.status ~= "pending" and tc.status ~= "in_progress" then
      return "background"
    end
    return "tool call"
  elseif c.kind == "session" then
    return "background"
  end
  return ""
end

-- status_text is the state column, in the words of the split's status
-- line: running, waiting for input, or how it ended ("exit 0",
-- "interrupted"), whoever ended it (the command itself, the agent releasing
-- it: the HOLDER column says who held it).
local function status_text(t)
  if t.link_lost then
    return "link lost" -- it runs there, out of reach until :AgentRun takes it up
  end
  local st = t.state or "?"
  if st == "running" then
    return t.waiting and "waiting for input" or st
  end
  -- (a row of status(): how says it as the split does, "killed" too)
  return t.how or require("agentrun.state").how_ended(t) or st
end

local function status_hl(t)
  if t.state == "running" then
    return "AgentRunToolRunning"
  elseif require("agentrun.state").interrupted(t) or t.how == "killed" or t.how == "cancelled" or t.how == "restarted" then
    return "AgentRunHint" -- stopped by you: not a failure
  elseif t.signal or (t.exit_code ~= nil and t.exit_code ~= 0) then
    return "AgentRunToolFailed"
  elseif t.state == "released" then
    return "AgentRunHint"
  end
  return "AgentRunToolDone"
end

local function age(ms)
  if type(ms) ~= "number" then
    return ""
  end
  local s = math.floor(ms / 1000)
  if s < 60 then
    return s .. "s"
  elseif s < 3600 then
    return math.floor(s / 60) .. "m"
  end
  return math.floor(s / 3600) .. "h"
end

-- short_id is id without its "@site" (another machine's, under the line
-- naming it).
local function short_id(id, site)
  if site and id:sub(-#site - 1) == "@" .. site then
    return id:sub(1, #id - #site - 1)
  end
  return id
end

-- fields are one row's columns: id, state, holder, age, the command, then
-- its last line (free width, last).
local function fields(t, with_session, with_ports, site)
  local name = t.command or ""
  if t.title and t.title ~= "" and t.title ~= name then
    name = t.title .. " (" .. name .. ")"
  end
  local lt = require("agentrun.state").terminals[t.id]
  local id = t.id
  if lt and lt.runs then
    -- R ran it again: the row keeps the name the user knows it by (its
    -- first run's id, which every command takes for its newest run), in
    -- its place, with the number of runs (first: a long command is cut
    -- at its end, and took the number with it)
    id = lt.row_of or t.id
    name = "(run " .. lt.runs .. ") " .. name
  end
  local last = t.last_line and t.last_line ~= "" and t.last_line:gsub("%s+", " ") or ""
  -- another machine's id without its "@site": the line above its rows
  -- says the machine (at 80 columns the command keeps its room)
  id = short_id(id, site)
  local row = { id, status_text(t), holder(t), age(t.age_ms), name, "│ " .. last }
  if with_ports then
    table.insert(row, 3, require("agentrun.ui.activity").ports_text(t))
  end
  if with_session then
    table.insert(row, 2, t.session_label or "")
  end
  return row
end

-- session_label names the session a terminal belongs to: its agent and
-- key ("demo 1"), "host PID" for another host's.
local function session_label(t)
  if t.remote or (type(t.id) == "string" and t.id:find(":")) then
    return require("agentrun.ui.userterm").host_label(t)
  end
  -- by our key: an ACP session id (t.session) is the agent's, and
  -- agents repeat them
  local state = require("agentrun.state")
  local lt = state.terminals[t.id]
  if lt and lt.row_of and state.terminals[lt.row_of] then
    -- R ran it again: its row stays in the session it came from (its
    -- holder says it is yours now); a rerun alone adds no SESSION column
    lt = state.terminals[lt.row_of]
    t = { id = lt.id, key = lt.session, user = lt.user }
  end
  local key = t.key or (lt and lt.session)
  local s = key and state.sessions[key]
  if not s then
    return t.user and "you" or ""
  end
  -- (another machine's: its line above says the machine)
  return s.agent .. " " .. tostring(key):gsub("@[%w%._%-]+$", "")
end

-- row_id is the id terminal t is sorted by: a command R ran again stands
-- where its first run stood.
local function row_id(t)
  local lt = require("agentrun.state").terminals[t.id]
  return tostring(lt and lt.row_of or t.id)
end

-- by_id returns list sorted by id where the ids say: those of the same
-- host or machine (the same prefix before term-N) by their number (term-9
-- before term-10; commands started in parallel may be heard of out of
-- order), in the places that prefix's terminals had; other ids keep the
-- order they were heard of. (Each id is read once: the list sorts
-- hundreds every second.)
local function by_id(list)
  local out, groups, order = {}, {}, {}
  for i, t in ipairs(list) do
    out[i] = t
    local p, n = row_id(t):match("^(.-)term%-(%d+)")
    if p then
      local g = groups[p]
      if not g then
        g = { places = {}, items = {} }
        groups[p] = g
        table.insert(order, g)
      end
      table.insert(g.places, i)
      table.insert(g.items, { n = tonumber(n), i = i, t = t })
    end
  end
  for _, g in ipairs(order) do
    table.sort(g.items, function(a, b)
      if a.n ~= b.n then
        return a.n < b.n
      end
      return a.i < b.i
    end)
    for k, place in ipairs(g.places) do
      out[place] = g.items[k].t
    end
  end
  return out
end

-- running_first orders terminals: the running ones first, each group by
-- id (oldest first).
function M.running_first(list)
  list = by_id(list)
  local out = {}
  for _, t in ipairs(list) do
    if t.state == "running" then
      table.insert(out, t)
    end
  end
  for _, t in ipairs(list) do
    if t.state ~= "running" then
      table.insert(out, t)
    end
  end
  return out
end

local width_of = require("agentrun.util").width

-- pad fills s with spaces to width display columns.
local function pad(s, width)
  return s .. string.rep(" ", width - width_of(s))
end

local fit = require("agentrun.util").fit

-- min_last is how many columns of the last line a row keeps at least (a
-- third of the window, at most 24): a long command is cut to leave them.
local function min_last(width)
  return math.min(24, math.floor(width * 0.35))
end

-- give_way lists, in order, what gives way when a row is wider than the
-- window: a column (by header) cut with "…" down to its floor (never
-- narrower than its header), every cell of a column said shorter
-- (shorter), or a column left out (drop): the command first, then the
-- states said shorter, the age left out, then who holds it, the session
-- and the ports, then the command again. The id is never cut.
local give_way = {
  { "COMMAND", 16 },
  { "STATE", shorter = true },
  { "AGE", drop = true },
  { "COMMAND", 12 },
  { "HOLDER", 6 },
  { "SESSION", 6 },
  { "PORTS", 5 },
  { "COMMAND", 7 },
}

-- shorter says a cell in fewer columns, the same way for every row of the
-- column: a state keeps how the command ended ("signal SIGTERM" →
-- "SIGTERM") and that it waits ("waiting").
local shorter = {
  STATE = function(s)
    if s == "waiting for input" then
      return "waiting"
    end
    return s:match("^signal (.+)") or s
  end,
}

-- layout turns rows of fields (the first: the column headers) into lines
-- whose columns line up (by display width), each column as wide as its
-- widest cell; columns give way (give_way) so that the last line keeps
-- room in a window of `width` columns (as much as it needs, up to
-- min_last). It returns the lines and, per line, the byte range of each
-- column, by header.
local function layout(rows, width)
  width = width or vim.o.columns
  local widths = {}
  for _, r in ipairs(rows) do
    for i = 1, #r - 1 do
      widths[i] = math.max(widths[i] or 0, width_of(r[i]))
    end
  end
  local last = 0
  for _, r in ipairs(rows) do
    last = math.max(last, width_of(r[#r]))
  end
  local function over()
    local used = math.min(last, min_last(width))
    for i = 1, #rows[1] - 1 do
      used = used + widths[i] + 2
    end
    return used - width
  end
  for _, g in ipairs(give_way) do
    local excess = over()
    if excess <= 0 then
      break
    end
    for i = #rows[1] - 1, 1, -1 do
      if rows[1][i] == g[1] then
        if g.drop then
          for _, r in ipairs(rows) do
            table.remove(r, i)
          end
          table.remove(widths, i)
        elseif g.shorter then
          local used = width_of(rows[1][i])
          for k = 2, #rows do
            rows[k][i] = shorter[g[1]](rows[k][i])
            used = math.max(used, width_of(rows[k][i]))
          end
          widths[i] = used
        else
          local floor = math.max(#g[1], g[2])
          if widths[i] > floor then
            widths[i] = math.max(floor, widths[i] - excess)
            local used = width_of(rows[1][i])
            for k = 2, #rows do
              rows[k][i] = fit(rows[k][i], widths[i])
              used = math.max(used, width_of(rows[k][i]))
            end
            widths[i] = used -- shorter cells may leave room for the last line
          end
        end
      end
    end
  end
  local lines, ranges = {}, {}
  for _, r in ipairs(rows) do
    local parts = {}
    for i = 1, #r - 1 do
      parts[i] = pad(r[i], widths[i])
    end
    parts[#r] = r[#r]
    local line = table.concat(parts, "  "):gsub("%s+$", "") -- no last line: it ends at │
    table.insert(lines, line)
    -- per column (by header), its byte range in the line
    local cols, from = {}, 0
    for i = 1, #r do
      cols[rows[1][i]] = { from, from + #r[i] }
      from = from + #parts[i] + 2
    end
    table.insert(ranges, cols)
  end
  return lines, ranges
end

-- head is the float that keeps the list's key line and column headers in
-- sight over its rows when they are scrolled (a list longer than its
-- window): a plain buffer scrolls its first lines away, and 0.7.2 has no
-- 'winbar'.
local head = { buf = nil, win = nil }

local function close_head()
  if head.win and api.nvim_win_is_valid(head.win) then
    pcall(api.nvim_win_close, head.win, true)
  end
  head.win = nil
end

-- pin keeps the list's first lines (its keys, its column headers) in
-- sight in list window w: at the top, or, when its rows are scrolled, in
-- a float over the top of the window, the cursor's row kept below it.
local function pin(w)
  if not (w and api.nvim_win_is_valid(w) and buf and api.nvim_win_get_buf(w) == buf) then
    close_head()
    return
  end
  local rows = math.min(2, api.nvim_win_get_height(w) - 1, api.nvim_buf_line_count(buf))
  local top = api.nvim_win_call(w, vim.fn.winsaveview).topline
  local cur = api.nvim_win_get_cursor(w)[1]
  if top > 1 and rows >= 1 and cur < top + rows then
    -- the cursor's row would be under the headers: scroll it below them
    top = math.max(1, cur - rows)
    api.nvim_win_call(w, function()
      vim.fn.winrestview({ topline = top })
    end)
  end
  if top <= 1 or rows < 1 then
    close_head()
    return
  end
  if not (head.buf and api.nvim_buf_is_valid(head.buf)) then
    head.buf = api.nvim_create_buf(false, true)
    vim.bo[head.buf].bufhidden = "hide"
  end
  local lines = api.nvim_buf_get_lines(buf, 0, rows, false)
  if table.concat(api.nvim_buf_get_lines(head.buf, 0, -1, false), "\n") ~= table.concat(lines, "\n") then
    api.nvim_buf_set_lines(head.buf, 0, -1, false, lines)
    api.nvim_buf_clear_namespace(head.buf, ns, 0, -1)
    compat.highlight(head.buf, ns, "AgentRunHeader", 0, 0, -1)
    if rows > 1 then
      compat.highlight(head.buf, ns, "AgentRunHint", 1, 0, -1)
    end
  end
  local cfg = { relative = "win", win = w, row = 0, col = 0, width = api.nvim_win_get_width(w), height = rows, focusable = false }
  -- (pcall: a list window of another tab page takes no float here)
  if head.win and api.nvim_win_is_valid(head.win) then
    pcall(api.nvim_win_set_config, head.win, cfg)
  else
    cfg.style, cfg.noautocmd = "minimal", true
    local ok, hw = pcall(api.nvim_open_win, head.buf, false, cfg)
    if ok then
      head.win = hw
      vim.wo[hw].winhighlight = "NormalFloat:Normal"
      vim.wo[hw].wrap = false
    end
  end
end

-- hint is the list's first line: the title and the keys, each named, in
-- the width of the list's window (the title gives way first).
local function hint(width)
  return require("agentrun.ui.actions").hint("list", width, "agentrun terminals — ")
end

local function render()
  if vim.v.exiting ~= vim.NIL or not (buf and api.nvim_buf_is_valid(buf)) then
    -- Neovim quits: the list's buffer may be half gone (0.7.2 said E322
    -- setting its lines as :qa ended the terminals)
    return
  end
  local st = require("agentrun.status").describe()
  local marks = {}
  local cursor_id = nil
  local w = vim.fn.bufwinid(buf)
  local lines = { hint(w ~= -1 and api.nvim_win_get_width(w) or vim.o.columns) }
  if w ~= -1 then
    cursor_id = ids[api.nvim_win_get_cursor(w)[1]]
    -- on a command R ran again: on its new run (in view, where it stands)
    local lt = cursor_id and require("agentrun.state").terminals[cursor_id]
    while lt and lt.rerun_as do
      cursor_id = lt.rerun_as
      lt = require("agentrun.state").terminals[cursor_id]
    end
  end
  ids, running_rows = {}, {}
  -- Then the terminals of other hosts (another Neovim, or one that
  -- stayed for detached terminals), named PID:term-N.
  local all = {}
  for _, t in ipairs(st.terminals) do
    local lt = require("agentrun.state").terminals[t.id]
    if not (lt and lt.rerun_as) then -- (R ran it again: its new run has its row)
      table.insert(all, t)
    end
  end
  all = by_id(all)
  if require("agentrun.rpc").running() then
    for _, r in ipairs(require("agentrun.rpc").request("remote_terminals") or {}) do
      r.command = r.command or r.title
      table.insert(all, r)
    end
  end
  -- Then those of remote machines shown here (ssh://host/PID:term-N), as
  -- this editor has heard of them (listing a machine would wait on the
  -- network: :AgentAttach ssh://host does).
  local state = require("agentrun.state")
  for _, id in ipairs(state.terminal_order) do
    local t = state.terminals[id]
    if t.remote and id:match("^ssh://") then
      table.insert(all, state.describe_terminal(t))
    end
  end
  -- Another machine's terminals (term-N@site) after this one's, each
  -- machine's together under a line naming it once.
  local sites, by_site = {}, {}
  for _, t in ipairs(all) do
    local site = state.site_of(t.id)
    t.site = site
    if site and not by_site[site] then
      by_site[site] = {}
      table.insert(sites, site)
    end
  end
  if #sites > 0 then
    local here = {}
    for _, t in ipairs(all) do
      table.insert(t.site and by_site[t.site] or here, t)
    end
    all = here
    for _, site in ipairs(sites) do
      vim.list_extend(all, by_site[site])
    end
  end
  -- A session column once the terminals are of more than one session.
  local labels = {}
  for _, t in ipairs(all) do
    t.session_label = session_label(t)
    labels[t.session_label] = true
  end
  local with_session = vim.tbl_count(labels) > 1
  local with_ports = false
  for _, t in ipairs(all) do
    with_ports = with_ports or (t.state == "running" and #(t.ports or {}) > 0)
  end
  local header = { "ID", "STATE", "HOLDER", "AGE", "COMMAND", "│ LAST LINE" }
  if with_ports then
    table.insert(header, 3, "PORTS")
  end
  if with_session then
    table.insert(header, 2, "SESSION")
  end
  local rows = { header }
  for _, t in ipairs(all) do
    -- a multi-line command reads as one line (each cell, before the layout)
    table.insert(rows, require("agentrun.util").lines_of(fields(t, with_session, with_ports, t.site)))
  end
  local rendered, ranges = layout(rows, w ~= -1 and api.nvim_win_get_width(w) or vim.o.columns)
  if #all > 0 then
    table.insert(lines, rendered[1])
    table.insert(marks, { #lines - 1, 0, -1, "AgentRunHint" })
  end
  for i, t in ipairs(all) do
    if t.site and t.site ~= (all[i - 1] or {}).site then
      local url = require("agentrun.rpc").site_url(t.site)
      table.insert(lines, string.format("on %s (its ids end with @%s)", url and require("agentrun.rpc").machine(url) or t.site, t.site))
      table.insert(marks, { #lines - 1, 0, -1, "AgentRunHint" })
    end
    table.insert(lines, rendered[i + 1])
    ids[#lines] = t.id
    if t.state == "running" then
      table.insert(running_rows, #lines)
    end
    local r = ranges[i + 1]
    table.insert(marks, { #lines - 1, r.STATE[1], r.STATE[2], status_hl(t) })
  end
  had = had or #all > 0 or state.had_terminals
  if #lines == 1 then
    -- "yet" only while there never were any
    -- first, above the keys: a window made one row high (a :help
    -- split above it) still says it
    table.insert(lines, 1, had and "(no terminals now; :AgentShell opens one)" or "(no terminals yet; :AgentShell opens one)")
    table.insert(marks, { 1, 0, -1, "AgentRunHint" })
  end
  -- The same text has the same highlights (a state's colour goes with
  -- its words): a refresh rewrites only the rows that changed (mostly an
  -- age), and leaves the buffer alone when none did.
  local changed = {}
  if drawn and #drawn == #lines and api.nvim_buf_line_count(buf) == #lines then
    for i, l in ipairs(lines) do
      if drawn[i] ~= l then
        table.insert(changed, i - 1)
      end
    end
  else
    changed = nil -- all of it
  end
  local hl_of = {}
  for _, m in ipairs(marks) do
    hl_of[m[1]] = hl_of[m[1]] or {}
    table.insert(hl_of[m[1]], m)
  end
  local function highlight(l)
    if l == 0 then
      compat.highlight(buf, ns, "AgentRunHeader", 0, 0, -1)
    end
    for _, m in ipairs(hl_of[l] or {}) do
      compat.highlight(buf, ns, m[4], m[1], m[2], m[3])
    end
  end
  if not changed or #changed > #lines / 2 then
    vim.bo[buf].modifiable = true
    api.nvim_buf_set_lines(buf, 0, -1, false, lines)
    vim.bo[buf].modifiable = false
    api.nvim_buf_clear_namespace(buf, ns, 0, -1)
    for l = 0, #lines - 1 do
      highlight(l)
    end
  elseif #changed > 0 then
    vim.bo[buf].modifiable = true
    for _, l in ipairs(changed) do
      api.nvim_buf_set_lines(buf, l, l + 1, false, { lines[l + 1] })
      api.nvim_buf_clear_namespace(buf, ns, l, l + 1)
      highlight(l)
    end
    vim.bo[buf].modifiable = false
  end
  drawn = lines
  if w ~= -1 and cursor_id then
    for line, id in pairs(ids) do
      if id == cursor_id then
        pcall(api.nvim_win_set_cursor, w, { line, 0 })
        break
      end
    end
  elseif w ~= -1 and api.nvim_win_get_cursor(w)[1] > 1 then
    M._to_row(w) -- it was on the empty line, now the header: a terminal's row
  end
  if w ~= -1 then
    pin(w)
  end
end

-- _to_row puts list window w's cursor on a terminal's row, the title and
-- the header in sight: the newest running terminal's that fits the window
-- below them, else the first terminal's. When no running terminal's row
-- fits (they are further down), the rows scroll up to the newest running
-- one instead: what one acts on stays in sight.
function M._to_row(w)
  if not next(ids) then
    return
  end
  local h = api.nvim_win_get_height(w)
  local row
  for i = #running_rows, 1, -1 do
    if running_rows[i] <= h then
      row = running_rows[i]
      break
    end
  end
  if not row then
    -- nothing running in sight: the newest running one (scrolled to),
    -- else the newest that fits below the title and the header
    local newest = 3 -- the first terminal, after the title and the header
    for line in pairs(ids) do
      if line <= h then
        newest = math.max(newest, line)
      end
    end
    row = running_rows[#running_rows] or newest
  end
  api.nvim_win_call(w, function()
    pcall(api.nvim_win_set_cursor, w, { row, 0 })
    vim.fn.winrestview({ topline = math.max(1, row - h + 1) })
  end)
  pin(w)
end

local function visible()
  return buf and api.nvim_buf_is_valid(buf) and vim.fn.bufwinid(buf) ~= -1
end

-- shown: the list is in a window of some tab page (visible: of this one)
local function shown()
  return buf and api.nvim_buf_is_valid(buf) and #vim.fn.win_findbuf(buf) > 0
end

local function stop_timer()
  if timer then
    timer:stop()
    timer:close()
    timer = nil
  end
end

-- start_timer refreshes the list while it is visible, and stops itself
-- once it is shown in no tab page: a list left in another tab page keeps
-- its timer, and refreshes the moment its tab page is entered again (it
-- stopped for good there, its row's age and last line frozen).
local function start_timer()
  if timer then
    return
  end
  timer = compat.uv.new_timer()
  timer:start(
    M.refresh_ms,
    M.refresh_ms,
    vim.schedule_wrap(function()
      if visible() then
        render()
      elseif not shown() then
        stop_timer()
      end
    end)
  )
end

local function under_cursor()
  return ids[api.nvim_win_get_cursor(0)[1]]
end

local function create()
  buf = api.nvim_create_buf(false, true)
  drawn = nil
  -- named in words: the tab line cuts a name at each "/" (it read
  -- "a//terminals"); found by its variable, never by name
  pcall(api.nvim_buf_set_name, buf, "agentrun terminals")
  vim.b[buf].agentrun_terminal_list = true
  vim.bo[buf].filetype = "agentrun_terminals"
  vim.bo[buf].bufhidden = "hide"
  require("agentrun.ui.actions").map(buf, "list", under_cursor)
  require("agentrun.ui.actions").map_prefixes(buf, "list")
  local group = api.nvim_create_augroup("agentrun_terminal_list", { clear = true })
  local events = { "WinScrolled", "VimResized" }
  if vim.fn.exists("##WinResized") == 1 then
    table.insert(events, "WinResized")
  end
  api.nvim_create_autocmd(events, {
    group = group,
    desc = "agentrun: the terminal list keeps its key line and column headers in sight",
    callback = function()
      -- (every scroll of every window, a flooding split's too: only a
      -- change of the list's view is looked at)
      local w = buf and api.nvim_buf_is_valid(buf) and vim.fn.bufwinid(buf) or -1
      local view = w ~= -1 and table.concat({ w, vim.fn.line("w0", w), api.nvim_win_get_height(w), api.nvim_win_get_width(w) }, ":") or nil
      if view ~= head.view then
        head.view = view
        pin(w)
      end
    end,
  })
  api.nvim_create_autocmd("TabEnter", {
    group = group,
    desc = "agentrun: the terminal list in a tab page entered again is up to date at once",
    callback = function()
      vim.schedule(M.refresh)
    end,
  })
  api.nvim_create_autocmd("CursorMoved", {
    group = group,
    buffer = buf,
    desc = "agentrun: the cursor's row in the terminal list stays below its headers",
    callback = function()
      pin(api.nvim_get_current_win())
    end,
  })
end

-- open shows the list (refreshing it) and enters it, its cursor on the
-- newest running terminal (an open list with nothing running keeps its
-- cursor's row).
function M.open()
  -- The backend lists the other hosts' terminals (another Neovim's, ones
  -- left detached): a fresh Neovim starts it to see them.
  local ok, err = require("agentrun.rpc").ensure()
  if not ok then
    require("agentrun.util").notify(err)
  end
  if not (buf and api.nvim_buf_is_valid(buf)) then
    create()
  end
  local w = vim.fn.bufwinid(buf)
  local fresh = w == -1
  if fresh then
    vim.cmd("botright sbuffer " .. buf)
    w = api.nvim_get_current_win()
    vim.wo[w].wrap = false -- long last lines are cut, not wrapped into the next row
    -- Its height is what it shows: a split opened from it (botright, with
    -- 'equalalways') or closed beside it does not share its rows with it.
    vim.wo[w].winfixheight = true
  end
  render()
  -- Tall enough for the key hint, the column headers and the terminals
  -- (up to 12 rows, and a third of the screen: the chat and the code keep
  -- theirs); with a terminal split below too, the two share half the
  -- screen (ui/window.lua's share_bottom): the split gives the rows, and
  -- gets them back when the list closes.
  require("agentrun.ui.window").share_bottom()
  if fresh then
    api.nvim_create_autocmd("WinClosed", {
      pattern = tostring(w),
      once = true,
      desc = "agentrun: the splits that gave the terminal list rows get them back",
      callback = function()
        close_head()
        vim.schedule(require("agentrun.ui.window").give_back)
      end,
    })
  end
  require("agentrun.ui.window").watch()
  require("agentrun.ui.window").keep_prompts()
  api.nvim_set_current_win(w)
  -- The command goes to the newest running terminal, also in a list
  -- already open (where the refresh each second keeps the cursor's row:
  -- R there must not rerun an older one the cursor was left on). With
  -- nothing running, an open list keeps the row the cursor was put on.
  if fresh or #running_rows > 0 or not ids[api.nvim_win_get_cursor(w)[1]] then
    M._to_row(w)
  end
  start_timer()
end

-- refresh re-renders the list when it is visible.
function M.refresh()
  if visible() then
    render()
    start_timer()
  end
end

-- pick asks which of list (other hosts' terminals, as the backend lists
-- them) to attach to, running first.
function M.pick(list)
  vim.ui.select(M.running_first(list), {
    prompt = "(agentrun) attach to",
    format_item = function(r)
      return string.format("%s  %s  (%s)", r.id, r.title, r.state)
    end,
  }, function(r)
    if r then
      require("agentrun.ui.userterm").attach(r.id)
    end
  end)
  return true
end

-- ssh_waiting maps the token of each ssh_connect asked to what follows
-- once the link is up.
local ssh_waiting, ssh_token = {}, 0

-- attach_ssh answers :AgentAttach ssh://[user@]host[:port][/PID:term-N]:
-- once the link to the machine is up (in the background: Neovim goes on
-- while ssh connects), it lists the machine's terminals to pick one, or
-- attaches to the one named. A malformed name is refused at once.
function M.attach_ssh(name)
  local util = require("agentrun.util")
  local machine = name:match("^(ssh://[^/]*)/?$")
  ssh_token = ssh_token + 1
  local _, err = require("agentrun.rpc").request("ssh_connect", machine or name, ssh_token)
  if err then
    util.notify(err)
    return false
  end
  ssh_waiting[ssh_token] = function()
    if not machine then
      return require("agentrun.ui.userterm").attach(name)
    end
    local list, lerr = require("agentrun.rpc").request("ssh_terminals", machine)
    if lerr then
      util.notify(lerr)
    elseif type(list) ~= "table" or #list == 0 then
      util.notify(string.format("%s has no terminals now: a terminal is listed from when its command starts there", machine))
    else
      M.pick(list)
    end
  end
  util.notify(string.format("connecting to %s …", (machine or name):match("^ssh://[^/]+")), vim.log.levels.INFO)
  return true
end

-- ssh_connected carries on an attach_ssh once its link is up, or says
-- why it is not.
---@param p agentrun.event.ssh_connected
function M.ssh_connected(p)
  local k = ssh_waiting[p.token]
  ssh_waiting[p.token] = nil
  if p.error then
    require("agentrun.util").notify(p.error)
  elseif k then
    k()
  end
end

-- A terminal started, ended, changed hands or went: the list shows it.
table.insert(require("agentrun.ui.term").on_change, M.refresh)

return M
