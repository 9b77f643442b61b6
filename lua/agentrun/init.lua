-- agentrun.nvim: run a coding agent over the Agent Client Protocol with
-- its terminals in real ptys shown live in Neovim. This module is the
-- public Lua API; the commands in plugin/agentrun.lua call it.
-- Why this file is long: it is the whole public Lua API, one short
-- function per command (the real work is in the modules it calls).
-- It is the top of the Lua modules: none of them requires it
-- (TestLuaRequiresFlowOneWay), and it wires them together below.
local config = require("agentrun.config")
local conversation = require("agentrun.conversation")
local launch = require("agentrun.launch")
local rpc = require("agentrun.rpc")
local state = require("agentrun.state")
-- loaded now: it maps each terminal split's keys as the split is made
local actions = require("agentrun.ui.actions")
local util = require("agentrun.util")

local M = {}

require("agentrun.highlight").setup()
-- every event Go sends has its handler before the backend can start
require("agentrun.handlers")

-- A new backend learns at once the size a new terminal split will have,
-- so the first command already sees (nearly) its window's size.
table.insert(rpc.on_start, function()
  require("agentrun.ui.window").send_expected_size(true)
end)
table.insert(rpc.on_exit, function(site, why, kept)
  if site and why and why:match("^the agentrun backend on %S+ is gone") then
    -- it died there, and its commands with it (its guard ends them)
    require("agentrun.ui.termlife").backend_gone(site, rpc.site_url(site) or site, nil, false)
  end
  conversation.backend_exited(site, why, kept)
  if kept then
    require("agentrun.ui.termlife").link_dropped(kept)
  end
end)

table.insert(rpc.on_gone, function(site, url, gone, backend_found)
  conversation.backend_gone(url, gone, backend_found)
  require("agentrun.ui.termlife").backend_gone(site, url, gone, backend_found)
end)

local function warn(msg)
  util.notify(msg, vim.log.levels.WARN)
end

local function err(msg)
  util.notify(msg, vim.log.levels.ERROR)
end

-- cmdwin_refuses tells the user that what opens windows, which the
-- command-line window (q:) forbids, and returns true while it is open.
local function cmdwin_refuses(what)
  return require("agentrun.ui.cmdwin").refuses(what)
end

-- setup(opts) validates and applies options (optional: defaults work).
-- Returns true, or false and the message naming the bad option.
---@param opts? agentrun.Config (lua/agentrun/types.lua)
---@return boolean ok, string? why
function M.setup(opts)
  local c, msg = config.set(opts)
  if not c then
    err(msg)
    return false, msg
  end
  return true
end

-- gone_session opens the chat of the session (of agent name, else the
-- newest) the user came to take up on host, which is gone (gone lists
-- them: its chat says why), and says so; a new one is for the next
-- :AgentRun.
local function gone_session(gone, name, host)
  local g = gone[#gone]
  for _, x in ipairs(gone) do
    g = x.agent == name and x or g
  end
  state.current = g.key
  g.chat:open()
  local where = g.host or rpc.machine(host)
  err(string.format("the %s session on %s is gone (its chat says why); :AgentRun %s %s starts a new one", g.agent, where, where, name or g.agent))
  return nil
end

-- run(agent, continue, host) starts a session with agent (default:
-- default_agent) or opens the chat of the running one; continue (or
-- chat.continue_last) opens the cwd's most recent earlier session
-- instead of a new one; host ("ssh://[user@]machine[:port][/dir]") runs
-- the agent on that machine (default: agents.<name>.host, else here).
-- Returns the session (a table).
function M.run(name, continue, host)
  if cmdwin_refuses(":AgentRun") then
    return nil
  end
  if host ~= nil and not config.is_host(host) then
    warn(string.format("%s is not a machine: write ssh://[user@]host[:port][/dir]", vim.inspect(host)))
    return nil
  end
  if not name and not host and not continue then
    -- no name: back to the chat of the session you were in (or the last
    -- one started), whichever agent it runs; a new session needs a name
    -- (or ! for the default agent's)
    local s = state.session()
    if not s or s.ended then
      s = launch.live()
    end
    if s and not s.ended then
      state.current = s.key
      s.chat:open()
      return s
    end
  end
  if not name and host then
    -- :AgentRun ssh://host (what a lost link's note says): what runs
    -- there, whichever agent (a link that dropped is taken up first);
    -- a new session of the default agent only when nothing does
    local s = launch.live(nil, host)
    if not s then
      local ok, msg, gone = launch.connect(host)
      if not ok then
        util.notify(msg, vim.log.levels.ERROR)
        return nil
      end
      s = launch.live(nil, host)
      if not s and #gone > 0 then
        return gone_session(gone, nil, host)
      end
    end
    if s then
      state.current = s.key
      s.chat:open()
      return s
    end
  end
  if not name and config.rejected then
    warn(string.format("setup() was rejected, so :AgentRun starts the default agent %q; fix the options it named (:messages) and call setup() again", config.get().default_agent))
  end
  name = name or config.get().default_agent
  local agents = config.agents()
  local a = agents[name]
  if not a then
    warn(config.unknown_agent(name))
    return nil
  end
  local s = launch.live(name, host or a.host)
  if not s and (host or a.host) then
    -- another machine's link first: what waited there (its link had
    -- dropped) is taken up, and its session of this agent shown
    local ok, msg, gone = launch.connect(host or a.host)
    if not ok then
      util.notify(msg, vim.log.levels.ERROR)
      return nil
    end
    s = launch.live(name, host or a.host)
    if not s and #gone > 0 then
      return gone_session(gone, name, host or a.host)
    end
  end
  if s then
    state.current = s.key
    s.chat:open()
    return s
  end
  return launch.start(name, { continue = continue or config.get().chat.continue_last, host = host })
end

-- prompt(text, key, range) sends a prompt to a session (default: the
-- current one; starts the default agent if there is none), with the
-- context its words name (#buffer, #selection, @path; range = { first,
-- last } adds those lines of the current buffer). Returns true when sent
-- or queued.
function M.prompt(text, key, range)
  if type(text) ~= "string" or vim.trim(text) == "" then
    warn({ "an empty prompt; try :AgentPrompt {text}", "nothing to send; :AgentPrompt {text}" })
    return false
  end
  local s = state.session(key)
  if s and s.link_dropped then
    -- not a new session here: the one the user talks to goes on there
    warn(conversation.link_dropped_text("the session", s.link_dropped))
    return false
  end
  if not s or s.ended then
    if key == nil and not launch.live() and cmdwin_refuses(":AgentPrompt (it would start a session)") then
      return false
    end
    s = key == nil and (launch.live() or M.run()) or nil
    if not s then
      warn("no running session; start one with :AgentRun")
      return false
    end
  end
  if range ~= nil and (type(range) ~= "table" or type(range[1]) ~= "number" or type(range[2]) ~= "number") then
    warn("prompt(text, key, range): range is { first, last } line numbers, or nil")
    return false
  end
  return conversation.submit(s, text, range)
end

-- stop_command(key, kill) stops the running command of a session (default:
-- the current one) from wherever the user is (agentrun.ui.stop).
function M.stop_command(key, kill)
  return require("agentrun.ui.stop").command(key, kill)
end

-- cancel(key) cancels the current turn of a session (default: current).
function M.cancel(key)
  return conversation.cancel(key)
end

-- stop(key) stops a session's agent; its terminals are killed and released.
function M.stop(key)
  return conversation.stop(key)
end

-- runs reports whether t still runs (a released terminal the user took
-- over runs until it exits; one that ended, also another host's that was
-- killed, does not).
local function runs(t)
  return not t.stale and (t.state == "running" or (t.state == "released" and t.user and t.exit_code == nil and t.signal == nil))
end

-- newest_running returns the newest running terminal, or nil.
local function newest_running()
  for i = #state.terminal_order, 1, -1 do
    local x = state.terminals[state.terminal_order[i]]
    if runs(x) then
      return x
    end
  end
end

-- target returns terminal id; without an id the one in the current buffer
-- (also when it ended: the action then says so, and nothing else is
-- touched), else the newest running one (then it also returns true: the
-- action's message names it so). It warns (naming what for) when there is
-- none.
local function target(id, what)
  if id ~= nil and type(id) ~= "string" then
    warn({ string.format("a terminal id is a string such as \"term-1\", not %s; :AgentTerminals lists them", vim.inspect(id)), string.format("not a terminal id: %s (\"term-1\")", vim.inspect(id)) })
    return nil
  end
  local t, newest
  if id then
    -- also another host's (PID:term-N), as :AgentTerminals lists it
    t = actions.terminal(id)
  else
    t = state.terminal_for_buf(vim.api.nvim_get_current_buf())
    if not t then
      t = newest_running()
      newest = t ~= nil
    end
  end
  if not t then
    warn(id and state.unknown_text(id) or ("no running terminal to " .. what))
  end
  return t, newest
end

-- kill(id, force), interrupt(id), takeover(id) and detach(id) run the
-- action of that name (ui/actions.lua, where each says what it does) on
-- terminal id, default: the one in the current buffer, else the newest
-- running one. kill's force = SIGKILL at once.
for _, a in ipairs(actions.actions) do
  if a.api then
    M[a.name] = function(id, ...)
      local t, newest = target(id, a.label or a.name)
      if not t then
        return false
      elseif not newest then
        return actions.perform(a.name, t, ...)
      end
      local args = { n = select("#", ...), ... }
      if a.pick then
        -- what outlives Neovim is never the newest by default: asked
        local list = {}
        for i = #state.terminal_order, 1, -1 do
          local x = state.terminals[state.terminal_order[i]]
          if runs(x) and not x.display_only and not (x.rerun_as and state.terminals[x.rerun_as]) then
            table.insert(list, x)
          end
        end
        vim.ui.select(list, {
          prompt = a.pick,
          format_item = function(x)
            local what = util.fit((x.command or ""):gsub("%s+", " "), 40)
            return string.format("%s %s (%s)", state.label(x), what, x.user and "yours" or "the agent's")
          end,
        }, function(x)
          if x then
            -- the picker's lines gone first: what it did is one line
            vim.schedule(function()
              vim.cmd("redraw")
              actions.perform(a.name, x, (table.unpack or unpack)(args, 1, args.n))
            end)
          end
        end)
        return true
      end
      -- one message says what was done and to which: "term-12 (newest
      -- running) is detached: …"
      local name = state.label(t)
      return util.about(name, "newest running", string.format("%s: %s, the newest running terminal", a.label or a.name, name), function()
        return actions.perform(a.name, t, (table.unpack or unpack)(args, 1, args.n))
      end)
    end
  end
end

-- id_refused warns and returns true when fname(id) cannot go on: the
-- command-line window is open (cmd: what it would run), or id is neither
-- nil nor a terminal id.
local function id_refused(cmd, fname, id)
  if cmdwin_refuses(cmd) then
    return true
  end
  if id ~= nil and type(id) ~= "string" then
    warn(string.format("%s(id): id must be a terminal id, like \"term-3\"", fname))
    return true
  end
  return false
end

-- quickfix(id) loads the failures terminal id printed (default: the
-- terminal of the current buffer, else the newest) into the quickfix
-- list and shows the first in the editor window.
function M.quickfix(id)
  if id_refused(":AgentQuickfix", "quickfix", id) then
    return false
  end
  local t
  if id then
    t = state.terminals[state.newest_run(id)] -- (R ran it again: its newest run)
  else
    t = state.terminal_for_buf(vim.api.nvim_get_current_buf())
    t = t or state.terminals[state.terminal_order[#state.terminal_order] or ""]
  end
  if not t then
    warn(id and state.unknown_text(id) or "no terminal to read; run a command first")
    return false
  end
  return actions.perform("quickfix", t)
end

-- type_into(id) opens terminal id's split and enters terminal mode, so
-- that what you type goes to the command; without id, the newest
-- terminal that waits for input (:AgentType).
function M.type_into(id)
  if id_refused(":AgentType", "type_into", id) then
    return false
  end
  local t
  if id then
    t = state.terminals[state.newest_run(id)] -- (R ran it again: its newest run)
    if not t or t.remote then
      warn(state.unknown_text(id))
      return false
    end
  else
    for i = #state.terminal_order, 1, -1 do
      local x = state.terminals[state.terminal_order[i]]
      if x and x.waiting and x.state == "running" then
        t = x
        break
      end
    end
    if not t then
      warn({ "no terminal waits for input; :AgentType term-N types into that one", "no terminal waits for input" })
      return false
    end
  end
  if t.display_only then
    warn(string.format("%s takes no input (the agent runs it itself)", state.label(t)))
    return false
  elseif t.state ~= "running" then
    -- its split, focused in Normal mode: where R runs it again (the next
    -- key typed for the command lands there, not in your file)
    require("agentrun.ui.term").open(t.id, { focus = true })
    local how = state.how_ended(t) or t.state
    warn({
      string.format("%s takes no input: it ended (%s); R here runs it again", state.label(t), how),
      string.format("%s ended (%s): R here runs it again", state.label(t), how),
      string.format("%s ended: R here reruns it", state.label(t)),
    })
    return false
  end
  return require("agentrun.ui.userterm").type_into(t)
end

-- open_terminal(id) opens a terminal's split and enters it.
function M.open_terminal(id)
  if cmdwin_refuses("open_terminal()") then
    return
  end
  -- (R ran it again: its newest run, as the list shows it)
  require("agentrun.ui.term").open(type(id) == "string" and state.newest_run(id) or id, { focus = true })
end

-- input(id, text) types text into a terminal's pty (the AHP
-- terminal/input). Refused for a terminal a session holds: take it over
-- first. (Keystrokes in a terminal split always reach the process.)
function M.input(id, text)
  id = type(id) == "string" and state.newest_run(id) or id -- (R ran it again: its newest run)
  local t = type(id) == "string" and state.terminals[id] or nil
  if not t or t.display_only then
    warn(string.format("terminal %q takes no input", tostring(id)))
    return false
  end
  if type(text) ~= "string" then
    warn("input(id, text): text must be a string")
    return false
  end
  local ok, msg = rpc.request("send_input", id, text)
  if not ok then
    warn(msg)
  end
  return ok and true or false
end

-- shell(cmd) opens a terminal the user holds: $SHELL (else /bin/sh) with
-- agentrun's shell integration (bash, zsh), or cmd run through the shell.
-- It opens in a split in terminal mode. Returns the terminal id or nil.
function M.shell(cmd)
  if cmdwin_refuses(":AgentShell") then
    return nil
  end
  if cmd ~= nil and type(cmd) ~= "string" then
    warn(string.format("shell(cmd): cmd is a command line (a string) or nil for your shell, not %s", vim.inspect(cmd)))
    return nil
  end
  return require("agentrun.ui.userterm").shell(cmd)
end

-- attach(name) shows a terminal of another host live in a split:
-- "PID:term-N" (another Neovim's, or one left detached), or a remote
-- machine's over SSH, "ssh://[user@]host[:port]/PID:term-N". Without a
-- name, or with only a machine ("ssh://host"), it asks which one.
function M.attach(name)
  if cmdwin_refuses(":AgentAttach") then
    return false
  end
  local term = require("agentrun.ui.term")
  if type(name) == "string" and name:match("^ssh://") then
    -- one of this Neovim's agents' commands there: its own split (not
    -- the same command listed and shown a second time)
    local own = rpc.own_terminal(name)
    if own and state.terminals[own] and not state.terminals[own].remote then
      term.open(own, { focus = true })
      return true
    end
    return require("agentrun.ui.terminals").attach_ssh(state.short_name(name))
  end
  if type(name) == "string" then
    -- one of this editor's own terminals (as status() names it, or as
    -- `agentrun ls` does, PID:term-N with our backend's pid): its split
    local pid, id = name:match("^(%d+):(%S+)$")
    if pid and rpc.running() and tonumber(pid) == vim.fn.jobpid(rpc.channel()) then
      if not (state.terminals[id] and not state.terminals[id].remote) then
        -- ours, but no such terminal: said as :AgentKill says it
        warn(state.unknown_text(name))
        return false
      end
      name = id
    end
    local t = state.terminals[name]
    if t and not t.remote then
      term.open(name, { focus = true })
      return true
    end
    if name:match("^term%-%d+") then
      -- the form of this editor's own ids, but none it has: as :AgentKill says it
      warn(state.unknown_text(name))
      return false
    end
  end
  if name then
    return require("agentrun.ui.userterm").attach(name)
  end
  local list = rpc.request("remote_terminals") or {}
  if #list == 0 then
    -- one short line: a longer one stops the screen at "Press ENTER"
    warn("nothing to attach here; a remote machine's: :AgentAttach ssh://host")
    return false
  end
  return require("agentrun.ui.terminals").pick(list)
end

-- mode(id) switches the current session to mode id (asks without one).
function M.mode(id)
  return require("agentrun.modes").set_mode(state.session(), id)
end

-- model(id) switches the current session's model (asks without one).
function M.model(id)
  return require("agentrun.modes").set_model(state.session(), id)
end

-- config(id, value) sets one of the current session's config options
-- (asks for the value without one).
function M.config(id, value)
  return require("agentrun.modes").set_config(state.session(), id, value)
end

-- sessions(agent) lists agent's earlier sessions in this directory
-- (default: the current session's agent, else default_agent) and opens
-- the one picked in a new chat, its history replayed when the agent can.
function M.sessions(name)
  if cmdwin_refuses(":AgentSessions") then
    return false
  end
  return require("agentrun.earlier_sessions").pick(name)
end

-- login() offers the current session's ways to sign in to its agent.
function M.login()
  if cmdwin_refuses(":AgentLogin") then
    return false
  end
  return require("agentrun.ui.signin").ask()
end

-- _complete_modes completes :AgentMode / :AgentModel / :AgentConfig.
function M._complete_modes(what, lead)
  return require("agentrun.modes").complete(state.session(), what, lead)
end

-- dispose(id) kills a terminal if it runs, releases it and wipes its
-- buffer; it leaves the terminal list.
function M.dispose(id)
  if type(id) ~= "string" or not actions.terminal(id) then
    warn(state.unknown_text(tostring(id)))
    return false
  end
  return actions.perform("dispose", id)
end

-- diff(file) compares the unsaved edits of file's buffer (nil: the
-- current buffer) with the file on disk, side by side in a new tab page
-- (q closes it): what to look at when an agent's command changed a file
-- you were editing.
function M.diff(file)
  if cmdwin_refuses(":AgentDiff") then
    return
  end
  if file ~= nil and type(file) ~= "string" then
    util.notify("diff: give a file name (a string), or nothing for this buffer")
    return
  end
  local buf = file and vim.fn.bufnr(file) or vim.api.nvim_get_current_buf()
  if buf == -1 or not vim.api.nvim_buf_is_loaded(buf) then
    -- (a list: the shorter fit 80 and 60 columns, util.notify)
    util.notify({
      string.format("no buffer holds %s; :AgentDiff compares a buffer's unsaved edits with its file", file),
      string.format("no buffer holds %s; open it, then :AgentDiff", file),
      string.format("%s is in no buffer; :e it", file),
    })
    return
  end
  local name = vim.api.nvim_buf_get_name(buf)
  if name == "" or vim.bo[buf].buftype ~= "" or vim.fn.filereadable(name) == 0 then
    util.notify("this buffer has no file on disk to compare with")
    return
  end
  if not vim.bo[buf].modified then
    util.notify(string.format("%s has no unsaved edits; it shows the file as it is", vim.fn.fnamemodify(name, ":~:.")), vim.log.levels.INFO)
    return
  end
  require("agentrun.disk").diff_disk(buf)
end

-- review(what, key) opens the review of what session key (default: the
-- current one) changed: what is "turn" (its last turn, the default) or
-- "session" (every turn agentrun keeps).
function M.review(what, key)
  if cmdwin_refuses(":AgentReview") then
    return
  end
  if what ~= nil and what ~= "turn" and what ~= "session" then
    warn({ string.format(":AgentReview takes turn or session, not %s", vim.inspect(what)), ":AgentReview takes turn or session" })
    return
  end
  local s = state.session(key)
  if not s then
    warn({ "no session; :AgentReview shows what a session's turns changed", "no session to review" })
    return
  end
  require("agentrun.ui.review").open(s, what)
end

-- rewind(key) puts the files that session key's (default: the current
-- one's) last turn changed back as they were before it; a file changed
-- since the turn is kept unless the user chooses otherwise. Again goes
-- back one more turn. The chat says what was put back.
function M.rewind(key)
  if cmdwin_refuses(":AgentRewind") then
    return
  end
  local s = state.session(key)
  if not s then
    warn({ "no session; :AgentRewind puts back what a session's last turn changed", "no session to rewind" })
    return
  end
  if s.busy then
    warn({ "the agent is still working on this turn; :AgentCancel it or wait, then :AgentRewind", "a turn runs: :AgentCancel it first" })
    return
  end
  local said, why = require("agentrun.disk").rewind(s, function(name)
    return vim.fn.confirm(string.format("You changed %s since the turn. Put back the version from before the turn?", name), "&Keep mine\n&Put back", 1) == 2
  end)
  if not said then
    warn(why)
    return
  end
  if s.chat then
    for _, l in ipairs(said) do
      s.chat:note("rewind: " .. l)
    end
  else
    util.notify("rewind: " .. table.concat(said, "; "), vim.log.levels.INFO)
  end
end

-- answer() opens the question that waits for an answer: one that came
-- while the user typed (it never takes keys typed before it appeared), or
-- one put aside with q.
function M.answer()
  if cmdwin_refuses(":AgentAnswer") then
    return false
  end
  return require("agentrun.ui.ready").answer()
end

-- terminals() opens the terminal list.
function M.terminals()
  if cmdwin_refuses(":AgentTerminals") then
    return
  end
  require("agentrun.ui.terminals").open()
end

-- status() describes sessions and terminals (agentrun.status says what
-- it holds).
---@return agentrun.Status
function M.status()
  return require("agentrun.status").describe()
end

-- _complete_agents completes agent names for :AgentRun.
function M._complete_agents(lead)
  local names = vim.tbl_keys(config.agents())
  table.sort(names)
  return vim.tbl_filter(function(n)
    return vim.startswith(n, lead or "")
  end, names)
end

-- _complete_attach completes :AgentAttach: every id status() and
-- `agentrun ls` show, running ones first (this editor's, then other
-- hosts' PID:term-N), then the ended; after "ssh://host/", that remote
-- machine's terminals, running first.
function M._complete_attach(lead, running_only)
  local url = type(lead) == "string" and lead:match("^(ssh://[^/]+)/")
  if url then
    local list = rpc.request("ssh_terminals", url)
    local ids = {}
    for _, r in ipairs(type(list) == "table" and require("agentrun.ui.terminals").running_first(list) or {}) do
      if vim.startswith(r.id, lead) and not (running_only and r.state ~= "running") then
        table.insert(ids, r.id)
      end
    end
    return ids
  end
  local running, ended = {}, {}
  local function add(id, st)
    if vim.startswith(id, lead or "") then
      table.insert(st == "running" and running or ended, id)
    end
  end
  for _, id in ipairs(state.terminal_order) do
    local t = state.terminals[id] or {}
    -- R ran it again: one name, its first run's, for the newest run
    -- (the list's row); the newer runs' own ids are not offered
    if not (t.row_of and t.row_of ~= id) then
      add(id, (state.terminals[state.newest_run(id)] or t).state)
    end
  end
  local remote = rpc.request("remote_terminals")
  for _, r in ipairs(type(remote) == "table" and remote or {}) do
    if not state.terminals[r.id] then
      add(r.id, r.state)
    end
  end
  return running_only and running or vim.list_extend(running, ended)
end

-- _complete_running completes :AgentKill: the running terminals only
-- (one released or ended has nothing left to kill).
function M._complete_running(lead)
  return M._complete_attach(lead, true)
end

-- _complete_terminals completes terminal ids for :AgentKill,
-- :AgentTakeover and :AgentDetach: every id :AgentTerminals lists (other
-- hosts' too), as each of them takes them all.
function M._complete_terminals(lead)
  return M._complete_attach(lead)
end

return M
