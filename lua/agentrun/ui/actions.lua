-- What a user can do to a terminal, in one table (overseer.nvim's task
-- actions are the model): each action has a desc, a condition and a run.
-- The same table maps the keys of a terminal split and of the terminal
-- list, writes the list's hint line and backs the commands (:AgentKill,
-- :AgentTakeover, …), so an action is offered and refused the same way
-- everywhere: where its condition fails, the user hears why.
-- Why this file is long: one table of every action on a terminal (its
-- condition, its run, its key and hint) — kept as one table so keys, hints
-- and commands cannot drift apart.
local compat = require("agentrun.compat")
local config = require("agentrun.config")
local rpc = require("agentrun.rpc")
local state = require("agentrun.state")
local activity = require("agentrun.ui.activity")
local stop = require("agentrun.ui.stop")
local term = require("agentrun.ui.term")
local termend = require("agentrun.ui.termend")
local userterm = require("agentrun.ui.userterm")
local util = require("agentrun.util")

local M = {}

local function always()
  return true
end

-- not_released: a released terminal's process is gone (or the user's,
-- when taken over) and nothing of it can be signalled.
local function not_released(t)
  if t.state == "released" and not t.user then
    return string.format("%s was released; nothing of it runs any more", state.label(t))
  end
  return true
end

-- ended: a terminal that ended is not there to signal, take or keep
-- (another host's: its host may have dropped it, or ended itself, since).
local function ended(t)
  if t.state == "running" or (not t.remote and t.state ~= "exited") then
    return nil
  end
  local how = state.how_ended(t)
  how = how and (" (" .. how .. ")") or ""
  return string.format("%s %s%s", state.label(t), t.remote and "ended" or "already ended", how)
end

-- lost: a command of a machine whose link dropped runs there, out of
-- reach until :AgentRun! takes it up.
local function lost(t)
  if t.link_dropped then
    return require("agentrun.conversation").link_dropped_text("the command", t.link_dropped)
  end
end

local function runs(t)
  return lost(t) or ended(t) or not_released(t)
end

-- shown makes sure another host's terminal t is shown here (attached), as
-- T does before it takes one: false when it cannot be.
local function shown(t)
  if t.remote and not state.terminals[t.id] then
    return userterm.attach(t.id)
  end
  return true
end

-- The actions, in the order the hint line lists them. `name` is also the
-- key's option in keymaps; `where` says which buffers map it: "split" (a
-- terminal split) and "list" (:AgentTerminals). desc may depend on the
-- terminal (an agent-owned one cancels the turn instead). `api` makes the
-- action a function of the public API, require("agentrun")[name](id, ...),
-- on terminal id (or the current one); `label` is what it is called in a
-- sentence ("no running terminal to take over"); `word` is what the key
-- hint lines call it, on the screen and in the docs (the name when not
-- given).
M.actions = {
  {
    name = "open",
    desc = "open the terminal",
    where = { list = true },
    condition = always,
    run = function(t)
      if t.remote then
        return userterm.attach(t.id)
      end
      term.open(t.id, { focus = true })
    end,
  },
  {
    name = "interrupt",
    api = true,
    desc = function(t)
      return t.display_only and "cancel the turn" or "interrupt (SIGINT to the process group)"
    end,
    where = { split = true },
    condition = runs,
    run = function(t)
      if not shown(t) then
        return false
      end
      stop.interrupt(t.id)
    end,
  },
  {
    name = "kill",
    api = true,
    label = "kill",
    desc = function(t)
      return t.display_only and "cancel the turn" or "kill the process group"
    end,
    where = { split = true, list = true },
    condition = runs,
    run = function(t, force)
      -- another host's, shown here or not: its host kills it
      return stop.kill(t.id, force, t.remote)
    end,
  },
  {
    name = "takeover",
    word = "take",
    api = true,
    label = "take over",
    desc = "take the terminal over from the agent",
    where = { split = true, list = true },
    condition = function(t)
      if t.display_only then
        return string.format("%s is the agent's own (it ran the command itself); it cannot be taken over, only cancelled", state.label(t))
      elseif lost(t) or ended(t) then
        return lost(t) or ended(t)
      elseif t.user then
        return string.format("%s is already yours", state.label(t))
      elseif t.state == "released" then
        return string.format("%s was released; nothing of it runs any more", state.label(t))
      end
      return true
    end,
    run = function(t)
      -- another host's, not shown here yet: show it, then take it
      if not shown(t) then
        return false
      end
      return userterm.takeover(t.id)
    end,
  },
  {
    name = "detach",
    api = true,
    desc = "keep the terminal running after Neovim quits",
    where = {},
    -- without an id, out of a split: it outlives Neovim, so which one
    -- is asked (the newest running may be the agent's)
    pick = "Keep which command running after Neovim quits?",
    condition = function(t)
      if t.display_only then
        return string.format("%s is the agent's own (it ran the command itself); agentrun cannot keep it running", state.label(t))
      elseif lost(t) or ended(t) then
        return lost(t) or ended(t)
      elseif t.state ~= "running" then
        return { string.format("%s is not running; there is nothing to keep", state.label(t)), string.format("%s ended: nothing to keep", state.label(t)) }
      end
      return true
    end,
    run = function(t)
      if t.remote then
        return userterm.detach_remote(t)
      end
      return userterm.detach(t.id)
    end,
  },
  {
    name = "dispose",
    word = "wipe",
    desc = "dispose of the terminal (kill, release, wipe its buffer)",
    where = { list = true },
    condition = always,
    -- a command that still runs is killed: asked first (a key is typed
    -- by mistake more easily than :AgentKill), a finished one just goes
    ask = function(t)
      if t.state == "running" and not t.display_only then
        return string.format("(agentrun) %s still runs: %s\ndd kills it and wipes its output.", state.label(t), t.command or "?")
      end
    end,
    run = function(t)
      if t.remote and t.state == "running" then
        -- another host's: its host kills it; its split here goes
        if stop.kill(t.id, false, true) == false then
          return false
        elseif not state.terminals[t.id] then
          return true -- not shown here: nothing more to wipe
        end
      elseif t.remote and not state.terminals[t.id] then
        util.notify(ended(t) .. "; nothing of it is shown here to dispose of")
        return false
      end
      return stop.dispose(t.id)
    end,
  },
  {
    name = "quickfix",
    word = "qf",
    desc = "load the failures it printed into the quickfix list",
    where = { split = true, list = true },
    condition = always,
    run = function(t)
      local qf = require("agentrun.ui.quickfix")
      if t.bufnr and vim.api.nvim_buf_is_valid(t.bufnr) then
        return qf.load(t)
      end
      -- a finished split wiped out of sight is made again first
      return termend.with_output(t, function()
        qf.load(t)
      end) or qf.load(t)
    end,
  },
  {
    name = "rerun",
    desc = "run the command again as yours (a running one of yours restarts in place)",
    where = { split = true, list = true },
    condition = function(t)
      if t.display_only then
        return string.format("%s is the agent's own command (it runs it, we show it); ask the agent to run it again", state.label(t))
      elseif t.remote then
        return string.format("%s runs on another host; rerun it there", state.label(t))
      elseif t.link_dropped then
        return lost(t)
      end
      return true
    end,
    run = function(t)
      return userterm.rerun(t)
    end,
  },
  {
    name = "browse",
    word = "web",
    desc = "open the port it listens on (http://localhost:PORT)",
    where = { split = true, list = true },
    condition = function(t)
      if #(t.ports or {}) == 0 then
        return string.format("%s listens on no TCP port%s", state.label(t), t.state == "running" and " (yet)" or "; it is not running")
      end
      return true
    end,
    run = function(t)
      return activity.browse(t)
    end,
  },
  {
    name = "close",
    desc = "close the window (the process keeps running)",
    where = { split = true, list = true },
    needs_no_terminal = true, -- also on the list's header or empty line
    condition = always,
    run = function(t)
      local api = vim.api
      -- Closing the last view of another host's terminal you took over
      -- lets go of it (back to the Neovim that runs it): nothing here
      -- types into it any more, and its holder must not stay you.
      local buf = t and t.remote and t.user and t.bufnr
      local last = buf and api.nvim_get_current_buf() == buf and #vim.fn.win_findbuf(buf) == 1
      if t and t.bufnr and api.nvim_get_current_buf() == t.bufnr then
        -- closed on purpose: the chat shown again does not bring it back
        -- (ui/chat.lua; showing it again clears this, ui/window.lua)
        vim.b[t.bufnr].agentrun_closed_by_user = true
      end
      util.close_window()
      if last and #vim.fn.win_findbuf(buf) == 0 then
        local res, err = rpc.request("remote_let_go", t.id)
        if err then
          util.notify(err)
          return false
        end
        if type(res) == "table" then
          userterm.claimed(t, res.claim, res.mine, res.seq)
        else
          t.user = false
        end
        term.changed(t)
        util.notify({ string.format("you let go of %s; it keeps running (T in :AgentTerminals takes it again)", state.label(t)), string.format("you let go of %s; T takes it again", state.label(t)) }, vim.log.levels.INFO)
      end
    end,
  },
}

local by_name = {}
for _, a in ipairs(M.actions) do
  by_name[a.name] = a
end

-- word is what the key hints call action a: one set of words, in every
-- width (the README and :help say them so).
local function word(a)
  return a.word or a.name
end

local function desc_of(a, t)
  return type(a.desc) == "function" and a.desc(t or {}) or a.desc
end

-- terminal returns what the actions know of terminal id: the Lua state,
-- else another host's terminal as the backend lists it (PID:term-N, as
-- :AgentTerminals shows it, not shown here yet); nil when neither knows
-- it. A terminal of this editor's named PID:term-N (our backend's pid, as
-- `agentrun ls` names it) is its own; term-N with no terminal of that id
-- here is another machine's term-N@site, when only one machine has it
-- (state.on_machines; :AgentTerminals shows it so under its machine).
function M.terminal(id)
  if type(id) ~= "string" then
    return nil
  end
  local mine = rpc.own_terminal(id) -- this Neovim's agent's, named as its machine lists it
  if mine and state.terminals[mine] then
    return state.terminals[mine]
  end
  id = state.short_name(id)
  local known = state.terminals[id]
  local at = id:match("^(ssh://[^/]+)/%d+:")
  if known and known.remote and (at or id:match("^%d+:")) and rpc.running() then
    -- another host's, shown here (another machine's: attached with
    -- :AgentAttach ssh://…): the ports it listens on as its host says
    -- now (no activity events come from there)
    local list = at and rpc.request("ssh_terminals", at) or rpc.request("remote_terminals")
    for _, r in ipairs(type(list) == "table" and list or {}) do
      if r.id == id then
        known.ports = r.ports or {}
      end
    end
  end
  if known and known.rerun_as then
    -- R ran it again: the list shows its newest run under this name
    return state.terminals[state.newest_run(id)] or known
  end
  if known then
    return known
  end
  -- another machine's as :AgentTerminals shows it under that machine's
  -- line (term-N): when no other machine has a term-N
  local on = state.on_machines(id)
  if #on == 1 then
    return state.terminals[on[1]]
  end
  local url = id:match("^(ssh://[^/]+)/%d+:%S+$")
  local pid, own = id:match("^(%d+):(%S+)$")
  if not (pid or url) then
    return nil
  end
  if pid and rpc.running() and tonumber(pid) == vim.fn.jobpid(rpc.channel()) then
    return state.terminals[own]
  end
  -- (the backend lists them: a fresh Neovim starts it to see them; a
  -- remote machine's, over SSH)
  local list = url and rpc.request("ssh_terminals", url) or rpc.request("remote_terminals")
  for _, r in ipairs(type(list) == "table" and list or {}) do
    if r.id == id then
      r.remote, r.user = true, r.mine
      return r
    end
  end
end

local function terminal(id)
  return M.terminal(id) or { id = id, remote = id:find(":") ~= nil }
end

-- perform runs action name on terminal t (a table or an id) when its
-- condition holds, else tells the user why not. Extra arguments go to
-- run. Returns what run returned, or false.
function M.perform(name, t, ...)
  local a = assert(by_name[name], name)
  if type(t) == "string" then
    t = terminal(t)
  end
  local ok = a.condition(t)
  if ok ~= true then
    util.notify(ok)
    return false
  end
  local res = a.run(t, ...)
  if res == nil then
    return true
  end
  return res
end

-- map maps, in buf, the key of every action for `where` ("split" or
-- "list"); get() returns the terminal id the key acts on (nil: none:
-- close still closes, another key says to move to a terminal's row). A
-- key set to false in keymaps is not mapped.
function M.map(buf, where, get)
  local km = config.get().keymaps
  for _, a in ipairs(M.actions) do
    local key = km[a.name]
    if a.where[where] and key then
      local id = get()
      compat.map(buf, key, function()
        local target = get()
        if a.name == "browse" and where == "split" and util.url_at_cursor() then
          -- Neovim's own gx: the URL under the cursor
          util.open_url_at_cursor()
        elseif target then
          local question = a.ask and a.ask(terminal(target))
          if question then
            local ok, choice = pcall(vim.fn.confirm, question, "&Kill it\n&Cancel", 2)
            vim.cmd("redraw") -- the question goes: what follows is said alone, no "Press ENTER"
            if not (ok and choice == 1) then
              return
            end
          end
          M.perform(a.name, target)
        elseif a.needs_no_terminal then
          a.run()
        else
          util.notify(string.format("no terminal on this line to %s; move to a terminal's row", a.label or a.name), vim.log.levels.INFO)
        end
      end, "agentrun: " .. desc_of(a, id and terminal(id)))
    end
  end
end

-- edit_starts are the keys that start an edit in Normal mode.
local edit_starts = { d = true, c = true, s = true, r = true, x = true, p = true, ["="] = true, ["!"] = true, [">"] = true }

-- map_prefixes maps, in the terminal list, the first key of each action
-- key of several (dd): typed alone, or the second one later than
-- 'timeoutlen', it would start an edit of a buffer that cannot be edited
-- (E21); it says which key does what instead.
function M.map_prefixes(buf, where)
  local km = config.get().keymaps
  local full, prefixes = {}, {}
  for _, a in ipairs(M.actions) do
    local key = km[a.name]
    if a.where[where] and key then
      full[key] = true
      -- (only a key that starts an edit: g of gx starts gg, a motion)
      if #key > 1 and key:sub(1, 1) ~= "<" and edit_starts[key:sub(1, 1)] then
        prefixes[key:sub(1, 1)] = prefixes[key:sub(1, 1)] or {}
        table.insert(prefixes[key:sub(1, 1)], key .. " " .. word(a))
      end
    end
  end
  for p, names in pairs(prefixes) do
    if not full[p] then
      vim.keymap.set("n", p, function()
        util.notify(string.format("the list is not edited; %s (typed quickly)", table.concat(names, ", ")), vim.log.levels.INFO)
      end, { [compat.buf_key] = buf, silent = true, desc = "agentrun: " .. table.concat(names, ", ") })
    end
  end
end

-- A terminal split's keys are mapped as its buffer is made, and gf, gF
-- and <CR> open a file:line of its output in the editor window.
table.insert(term.on_buffer, function(t)
  M.map(t.bufnr, "split", function()
    return t.id
  end)
  local gotofile = require("agentrun.ui.gotofile")
  gotofile.map(t.bufnr)
  compat.map(t.bufnr, "<CR>", function()
    local opened, why = gotofile.open()
    if why then
      util.notify(why, vim.log.levels.INFO) -- a file of another machine that could not be read
    elseif not opened then
      vim.cmd("normal! +") -- what <CR> does elsewhere
    end
  end, "agentrun: open the file:line under the cursor in the editor window")
end)

-- keep says which keys a hint keeps longest when the window is too
-- narrow for every key: the most useful last to go.
local keep = { open = 8, close = 7, rerun = 6, kill = 5, takeover = 4, dispose = 3, quickfix = 2, browse = 1, interrupt = 6 }

-- hint names the keys of `where` ("list", "split") after title, in width
-- columns when it is given: with " · " between them where that fits,
-- else spaces, then without the title, then without the keys least
-- needed (the window never cuts a key in two).
function M.hint(where, width, title)
  title = title or ""
  local km = config.get().keymaps
  local shown = {}
  for _, a in ipairs(M.actions) do
    if a.where[where] and km[a.name] then
      table.insert(shown, a)
    end
  end
  local function build(list, sep)
    local parts = {}
    for _, a in ipairs(list) do
      table.insert(parts, km[a.name] .. " " .. word(a))
    end
    return table.concat(parts, sep)
  end
  local function fits(h)
    return not width or vim.fn.strdisplaywidth(h) <= width
  end
  for _, h in ipairs({ title .. build(shown, " · "), title .. build(shown, " ") }) do
    if fits(h) then
      return h
    end
  end
  local list = vim.list_extend({}, shown)
  while #list > 1 and not fits(build(list, " ")) do
    local least = 1
    for i, a in ipairs(list) do
      if (keep[a.name] or 0) < (keep[list[least].name] or 0) then
        least = i
      end
    end
    table.remove(list, least)
  end
  return build(list, " ")
end

return M
