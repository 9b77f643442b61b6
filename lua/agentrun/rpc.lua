-- The channels to the Go backends: the local one (bin/agentrun), started
-- on first use with jobstart({bin}, {rpc = true}), and one per other
-- machine an agent runs on (agents.<name>.host = "ssh://…"): `agentrun
-- ssh-backend URL` relays the same backend running there over ssh. Go
-- calls back into Lua through require("agentrun.events").dispatch. A
-- remote backend's ids end in "@site" (state.site_of), and a call about
-- one of them goes to its channel. Which binary, and whether it is the
-- right one, is agentrun.binary's.
-- Why this file is long: every channel to a backend (the local one, one per
-- other machine) starts, restarts and routes calls here, with the sentences
-- for each way a backend can fail to start.
local binary = require("agentrun.binary")
local compat = require("agentrun.compat")
local config = require("agentrun.config")
local state = require("agentrun.state")
local util = require("agentrun.util")

local M = {}

local chan = nil
local stopping = false
local local_starts = 0 -- how many local backends this Neovim started
local stderr_tail = {}

-- sites: the backends on other machines, by site name ("devbox"):
-- { url, chan (nil once ended), stopping, stderr_tail }.
local sites = {}

-- clean turns "Vim:Error invoking 'x' on channel 3:\nmsg" into "msg".
local function clean(err)
  local s = tostring(err)
  s = s:gsub("^.-Error invoking '[^']*' on channel %d+[^:]*:%s*", "")
  return s
end

local function on_exit(job, code)
  if chan ~= nil and chan ~= job then
    return -- an older backend; the current one is fine
  end
  chan = nil
  if vim.v.exiting ~= vim.NIL then
    -- Neovim is quitting (v:exiting is set from VimLeavePre on): nobody
    -- is left to tell, and buffers may no longer take changes.
    stopping = false
    return
  end
  if not stopping then
    local tail = table.concat(stderr_tail, "\n")
    util.notify(
      string.format("the backend exited (code %d): its sessions ended and its terminals were closed. :AgentRun starts it again (details in %s)%s", code, binary.log_path(), tail ~= "" and ("\n" .. tail) or ""),
      vim.log.levels.ERROR
    )
  end
  stopping = false
  for _, fn in ipairs(M.on_exit) do
    fn()
  end
end

local function keep_tail(tail, data)
  for _, line in ipairs(data or {}) do
    if line ~= "" then
      table.insert(tail, line)
      if #tail > 20 then
        table.remove(tail, 1)
      end
    end
  end
end

local function on_stderr(_, data)
  keep_tail(stderr_tail, data)
end

-- has_tty reports whether this Neovim has a terminal it can open (it
-- draws its own UI there: 0.7's TUI). A terminal closed under it makes
-- it exit with 1 on the read error, not on a signal.
local function has_tty()
  local uv = require("agentrun.compat").uv
  local fd = uv.fs_open("/dev/tty", "r", 0)
  if fd then
    uv.fs_close(fd)
  end
  return fd ~= nil
end

-- watch_leave makes Neovim's quitting shut every backend down (those of
-- other machines too: their commands end then, but the detached ones).
local function watch_leave()
  if M._had_tty == nil then
    M._had_tty = has_tty()
  end
  local group = vim.api.nvim_create_augroup("agentrun_backend", { clear = true })
  vim.api.nvim_create_autocmd("VimLeavePre", {
    group = group,
    desc = "agentrun: kill every terminal and stop the agents",
    callback = function()
      M.shutdown()
    end,
  })
end

-- setup_args is what a backend is told once started: the user's options
-- and, for another machine's, its site name.
---@return agentrun.request.setup
local function setup_args(site)
  local cfg = config.get()
  return {
    kill_grace_ms = cfg.terminal.kill_grace_ms, -- nil: the backend's one default
    byte_limit = cfg.terminal.byte_limit, -- nil: the backend's one default
    scrollback = cfg.terminal.scrollback,
    kept_bytes = cfg.terminal.kept_bytes, -- nil: the backend's one default
    -- ended terminals' output beyond kept_bytes; another machine's
    -- backend uses the same folder there
    output_dir = not site and (compat.state_dir() .. "/agentrun/output") or "",
    -- how long another machine's backend waits for a link that dropped
    linger_ms = site and math.floor(cfg.remote.wait_hours * 3600 * 1000) or 0,
    nvim_version = tostring(vim.version().major .. "." .. vim.version().minor .. "." .. vim.version().patch),
    plugin_version = binary.expected_version(),
    site = site or "",
    -- a machine's next backend counts its ids on from where the last
    -- one's ended (1001@devbox): this Neovim still holds those
    id_base = ((site and sites[site] and sites[site].starts or local_starts) - 1) * 1000,
  }
end

-- site_name returns the site name of url's machine ("ssh://me@devbox:22/src"
-- is "devbox"): its host, made unique among the machines of this Neovim.
function M.site_name(url)
  local base = url:gsub("^ssh://", ""):gsub("/.*$", ""):gsub("^.*@", ""):gsub(":%d+$", ""):gsub("[^%w%._%-]", "-")
  base = base:sub(1, 60)
  local name, n = base, 1
  while sites[name] and sites[name].url ~= M.machine(url) do
    n = n + 1
    name = base .. "-" .. n
  end
  return name
end

-- machine is url without the directory after its host.
function M.machine(url)
  return (url:gsub("^(ssh://[^/]*).*$", "%1"))
end

-- site_url returns the machine site names (nil if none).
function M.site_url(site)
  return sites[site] and sites[site].url
end

-- machines lists the other machines this Neovim has reached, by site
-- name: { site, url, up (its link is), lost (its link was lost and its
-- sessions wait there) }.
function M.machines()
  local out = {}
  for name, s in pairs(sites) do
    table.insert(out, { site = name, url = s.url, up = s.chan ~= nil, lost = s.chan == nil and s.waiting or false })
  end
  table.sort(out, function(a, b)
    return a.site < b.site
  end)
  return out
end

-- own_terminal returns the id this Neovim knows another machine's
-- terminal name by ("ssh://devbox/PID:term-3", with or without "@devbox"
-- after it) when PID is the backend this Neovim's link to that machine
-- reaches: then it is one of this Neovim's own agents' commands
-- ("term-3@devbox"). Else nil.
function M.own_terminal(name)
  local url, pid, id = tostring(name):match("^(ssh://[^/]+)/(%d+):([^@/%s]+)")
  if not url then
    return nil
  end
  for site, s in pairs(sites) do
    if s.url == M.machine(url) and s.pid == tonumber(pid) then
      return id .. "@" .. site
    end
  end
end

-- link_gone returns the machine's URL when site's link has ended though
-- Neovim has not run its on_exit yet (0.7 runs no job callback while
-- inputlist() waits for the user): its process is gone, or a zombie
-- (Linux's /proc tells). Asks nothing of the event loop. Else nil.
function M.link_gone(site)
  local s = sites[site]
  if not s or not s.chan then
    return s and s.url
  end
  local ok, pid = pcall(vim.fn.jobpid, s.chan)
  if not ok or type(pid) ~= "number" or pid <= 0 then
    return s.url
  end
  local uv = require("agentrun.compat").uv
  if not uv.kill(pid, 0) then
    return s.url
  end
  local f = io.open("/proc/" .. pid .. "/stat", "r")
  if f then
    local stat = f:read("*l") or ""
    f:close()
    if stat:match("^%d+ %b() Z") then
      return s.url
    end
  end
end

-- site_channel returns the channel of site's backend, or nil and why not.
function M.site_channel(site)
  local s = sites[site]
  if s and s.chan then
    return s.chan
  end
  if s and s.waiting then
    return nil, string.format("(agentrun) link lost; its sessions go on there: :AgentRun %s", s.url)
  end
  return nil, string.format("(agentrun) the link to %s has ended: :AgentRun starts its agent there again", s and s.url or site)
end

local function on_site_exit(site, job, code)
  local s = sites[site]
  if not s or s.chan ~= job then
    return -- an older link; the current one is fine
  end
  s.chan = nil
  if vim.v.exiting ~= vim.NIL then
    return
  end
  local why, kept
  if not s.stopping then
    local tail = s.stderr_tail[#s.stderr_tail] or ""
    tail = tail:gsub("^agentrun: ", "")
    why = tail ~= "" and tail or string.format("the link to %s ended (code %d)", s.url, code)
    -- The backend there keeps the commands that ran (serve.go: a link
    -- that drops is not the user quitting).
    local live = false
    for key, ss in pairs(state.sessions) do
      live = live or (not ss.ended and state.site_of(key) == site)
    end
    if why:match("^the link to ") and live then
      -- and the sessions with them: the backend there lingers (linger.go)
      -- until a link takes it up, or this Neovim quits (VimLeavePre)
      kept = s.url
      s.waiting = true
      util.notify(string.format("link lost; its sessions go on there: :AgentRun %s", s.url), vim.log.levels.ERROR)
    elseif why:match("^the link to ") then
      util.notify(string.format("%s: commands still running there are kept: :AgentAttach %s", why, s.url), vim.log.levels.ERROR)
    else
      util.notify(why .. ": its agents and their commands there ended", vim.log.levels.ERROR)
    end
  end
  s.stopping = false
  for _, fn in ipairs(M.on_exit) do
    fn(site, why, kept)
  end
end

-- start_link starts `agentrun ssh-backend` for site s (url s.url) with
-- args after the URL, and makes the first requests: first(channel)
-- returns the answer, or nil and an error. start_link returns that
-- answer, or nil and the message saying what is wrong.
local function start_link(site, s, args, first)
  local ok, msg = binary.check()
  if not ok then
    return nil, msg
  end
  s.stderr_tail = {}
  util.notify(string.format("connecting to %s…", s.url))
  vim.cmd("redraw")
  local cmd = { binary.bin(), "ssh-backend", s.url }
  vim.list_extend(cmd, args)
  local id = vim.fn.jobstart(cmd, {
    rpc = true,
    env = { AGENTRUN_LOG = binary.log_path() },
    on_exit = function(job, code)
      on_site_exit(s.site or site, job, code) -- s.site: renamed by ensure_site
    end,
    on_stderr = function(_, data)
      for _, line in ipairs(data or {}) do
        local note = line:match("^agentrun: note: (.+)$")
        if note then
          -- what ssh-backend did first (it ended what a Neovim that quit
          -- left running there): said, not an error
          vim.schedule(function()
            util.notify(note, vim.log.levels.INFO)
          end)
        end
      end
      keep_tail(s.stderr_tail, data)
    end,
  })
  if id <= 0 then
    return nil, string.format("(agentrun) could not start %s (jobstart returned %d)", binary.bin(), id)
  end
  s.chan = id
  s.stopping = true -- a failed start is said here, not by on_exit
  local res, err = first(id)
  if not res then
    -- The link did not come up: ssh-backend said why on stderr and exits.
    vim.fn.jobwait({ id }, 5000)
    pcall(vim.fn.jobstop, id)
    s.chan = nil
    local why = (s.stderr_tail[#s.stderr_tail] or ""):gsub("^agentrun: ", "")
    if why == "" then
      why = clean(err)
    end
    return nil, "(agentrun) " .. why
  end
  s.stopping = false
  s.pid = res.pid -- the backend's there: its terminals are ssh://…/PID:term-N to attach
  watch_leave()
  for _, fn in ipairs(M.on_start) do
    fn(id)
  end
  return res
end

-- ensure_site starts the link to url's machine if need be (over ssh:
-- `agentrun ssh-backend URL`) and returns its site name, or nil and a
-- message saying what is wrong and what to do. A backend there whose
-- link dropped (its sessions went on) is taken up (this Neovim's own
-- first, else the newest): on_resume hears of its sessions. Else a new
-- backend starts. Its third result lists the sessions that waited there
-- and are gone (on_gone was told).
function M.ensure_site(url)
  local machine = M.machine(url)
  local site = M.site_name(machine)
  if sites[site] and sites[site].chan then
    return site
  end
  if vim.v.exiting ~= vim.NIL then
    return nil, "(agentrun) Neovim is quitting"
  end
  local had = sites[site]
  local s = { url = machine, stderr_tail = {}, starts = (had and had.starts or 0) + 1 }
  sites[site] = s
  local res, msg = start_link(site, s, { "--resume-or-new", tostring(had and had.pid or 0) }, function(id)
    local ok, r = pcall(vim.rpcrequest, id, "resume", { plugin_version = binary.expected_version() })
    if ok and type(r) == "table" and r.fresh then
      ok, r = pcall(vim.rpcrequest, id, "setup", setup_args(site)) -- nothing waited there: a new backend
    end
    if not ok or type(r) ~= "table" then
      return nil, r
    end
    return r
  end)
  if not res then
    -- a link that never came up holds no name: the next machine of
    -- that host name gets it
    sites[site] = had
    return nil, msg
  end
  -- Sessions that waited there (their link had dropped) but whose
  -- backend this link did not reach: that backend is gone (killed, the
  -- machine restarted), and they ended with it.
  -- Sessions that waited there (their link had dropped) but that this
  -- link did not find: their backend is gone (killed, the machine
  -- restarted, or it ended with its last session), or it runs on without
  -- them (they ended while the link was down).
  local gone = {}
  if had and had.waiting and had.pid then
    had.waiting = false
    local same = res.pid == had.pid and type(res.sessions) == "table"
    local live = {}
    for _, r in ipairs(same and res.sessions or {}) do
      live[r.key] = true
    end
    for _, ss in pairs(state.sessions) do
      if ss.link_dropped and state.site_of(ss.key) == site and not live[ss.key] then
        table.insert(gone, ss)
      end
    end
    table.sort(gone, function(a, b)
      return a.key < b.key
    end)
    if #gone > 0 then
      for _, fn in ipairs(M.on_gone) do
        fn(site, machine, gone, same)
      end
    end
  end
  if type(res.sessions) == "table" then
    s.starts = had and had.starts or 1 -- its ids count on from its own
    if res.site ~= site then
      -- started by another Neovim, which named the machine otherwise:
      -- its ids end in that name
      sites[site] = had
      if sites[res.site] and sites[res.site].chan then
        pcall(vim.fn.jobstop, s.chan)
        return nil, string.format("(agentrun) the sessions waiting on %s were started as @%s, a name this Neovim gives another machine", machine, res.site)
      end
      sites[res.site] = s
      site = res.site
      s.site = site
    end
    for _, fn in ipairs(M.on_resume) do
      fn(site, res)
    end
  end
  return site, nil, gone
end

-- left_there says what runs on site's machine out of reach (its link
-- dropped): "the demo session (1@devbox) with `make test`".
local function left_there(site)
  local parts = {}
  for _, key in ipairs(state.session_order) do
    local ss = state.sessions[key]
    if ss and ss.link_dropped and state.site_of(key) == site then
      local cmds = {}
      for _, id in ipairs(state.terminal_order) do
        local t = state.terminals[id]
        if t and t.session == key and t.link_dropped then
          table.insert(cmds, "`" .. (t.command or t.id) .. "`")
        end
      end
      table.insert(parts, string.format("the %s session (%s)%s", ss.agent, key, #cmds > 0 and (" with " .. table.concat(cmds, ", ")) or ""))
    end
  end
  return #parts > 0 and table.concat(parts, "; ") or "its sessions"
end

-- end_wait_ms is how long a quitting Neovim with a UI waits for the
-- machines whose link dropped to end their sessions before it says which
-- did not.
M._end_wait_ms = 5000

-- end_waiting ends the sessions on the machines whose link dropped (they
-- went on there): Neovim is quitting, as it would end them over a live
-- link. It starts `agentrun ssh-backend URL --end PID` for each (detached:
-- ssh may take long to connect, and it may outlive Neovim to finish).
-- With a UI, it waits a few seconds for them, and what could not be ended
-- is said before Neovim is gone (a message the user must see: Press
-- ENTER): it goes on there, until the next link to that machine ends it
-- first (ssh-backend keeps the end for it).
local function end_waiting()
  local jobs = {}
  for name, s in pairs(sites) do
    if not s.chan and s.waiting and s.pid then
      s.waiting = false
      local j = { site = name, url = s.url, what = left_there(name), tail = {} }
      local ok, id = pcall(vim.fn.jobstart, { binary.bin(), "ssh-backend", s.url, "--end", tostring(s.pid) }, {
        detach = true,
        env = { AGENTRUN_LOG = binary.log_path() },
        on_stderr = function(_, data)
          keep_tail(j.tail, data)
        end,
      })
      if ok and id > 0 then
        j.id = id
        table.insert(jobs, j)
      end
    end
  end
  if #jobs == 0 or #vim.api.nvim_list_uis() == 0 then
    return -- nobody to tell: the ends go on, and what fails is kept for later
  end
  local codes = vim.fn.jobwait(vim.tbl_map(function(j)
    return j.id
  end, jobs), M._end_wait_ms)
  local lines = {}
  for i, j in ipairs(jobs) do
    if codes[i] ~= 0 then
      local why = (j.tail[#j.tail] or ""):gsub("^agentrun: ", "")
      if codes[i] == -1 or why == "" then
        why = string.format("it did not answer within %d s", math.floor(M._end_wait_ms / 1000))
      end
      table.insert(lines, string.format("(agentrun) %s could not be reached to end what runs there (%s): %s goes on there until agentrun reaches %s again; the next :AgentRun %s ends it first.", j.url, why, j.what, j.url, j.url))
    end
  end
  if #lines > 0 then
    local msg = table.concat(lines, "\n")
    M.log("warn", msg)
    vim.api.nvim_echo({ { msg .. "\n", "ErrorMsg" } }, true, {})
    pcall(vim.fn.input, "Press ENTER to quit")
  end
end

-- running reports whether the backend is up (without starting it): the
-- one the id is of (see request), else the local one.
function M.running(id)
  local site = state.site_of(id)
  if site then
    return sites[site] ~= nil and sites[site].chan ~= nil
  end
  return chan ~= nil
end

-- channel returns the backend's channel id, or nil when not running.
function M.channel()
  return chan
end

-- ensure starts the backend if needed; returns the channel or nil, message.
function M.ensure()
  if chan then
    return chan
  end
  if vim.v.exiting ~= vim.NIL then
    return nil -- Neovim is quitting: never start a backend now
  end
  local ok, msg = binary.check()
  if not ok then
    return nil, msg
  end
  local log = binary.log_path()
  vim.fn.mkdir(vim.fn.fnamemodify(log, ":h"), "p")
  stderr_tail = {}
  local id = vim.fn.jobstart({ binary.bin() }, {
    rpc = true,
    -- Neovim does not kill it when it quits: it ends its sessions when
    -- the channel closes, and stays to serve detached terminals.
    detach = true,
    env = { AGENTRUN_LOG = log },
    on_exit = on_exit,
    on_stderr = on_stderr,
  })
  if id <= 0 then
    return nil, string.format("(agentrun) could not start %s (jobstart returned %d)", binary.bin(), id)
  end
  chan = id
  local_starts = local_starts + 1
  local sok, err = pcall(vim.rpcrequest, chan, "setup", setup_args(nil))
  if not sok then
    M.stop()
    return nil, "(agentrun) the backend failed to set up: " .. clean(err)
  end
  for _, fn in ipairs(M.on_start) do
    fn(chan)
  end
  watch_leave()
  return chan
end

-- call makes one request on channel c.
local function call(c, method, ...)
  local ok, res = pcall(vim.rpcrequest, c, method, ...)
  if not ok then
    return nil, "(agentrun) " .. clean(res)
  end
  return res == vim.NIL and true or res, nil
end

-- request calls a Go handler and returns its result, or nil and a
-- message: the backend of the machine the first argument's id is of (a
-- remote one's ids end in "@site"), else the local one (started if need
-- be).
function M.request(method, first, ...)
  local site = state.site_of(first)
  if site then
    local c, msg = M.site_channel(site)
    if not c then
      return nil, msg
    end
    return call(c, method, first, ...)
  end
  local c, msg = M.ensure()
  if not c then
    return nil, msg
  end
  return call(c, method, first, ...)
end

-- request_at calls a Go handler of the backend on url's machine (nil:
-- the local one), starting it if need be.
function M.request_at(url, method, ...)
  if not url then
    return M.request(method, ...)
  end
  local site, msg = M.ensure_site(url)
  if not site then
    return nil, msg
  end
  return call(sites[site].chan, method, ...)
end

-- on_start lists functions called with the channel each time a backend
-- has started and is set up (the UI registers what it must tell it
-- first, so rpc needs no UI module).
M.on_start = {}

-- on_exit lists functions called when the backend has exited while
-- Neovim runs on (sessions and terminals ended with it): with the site
-- (nil: the local backend), why, and the machine's URL when its sessions
-- go on there (its link dropped).
M.on_exit = {}

-- on_resume lists functions called with the site and the backend's answer
-- ({ sessions = { { key, agent, busy, cwd } … }, pid }) when a link took
-- up a backend whose link had dropped; the events of those sessions
-- follow, from their first.
M.on_resume = {}

-- on_gone lists functions called with the site, the machine's URL, the
-- sessions that waited there (their link had dropped) and a new link did
-- not find, and whether their backend was found (they ended there while
-- the link was down) or not (it is gone: killed, the machine restarted,
-- or it ended with its last session): they ended, their commands too.
M.on_gone = {}

-- notify sends a notification to Go if the backend runs (never starts
-- it): the backend of the first argument's id, as request does.
function M.notify(method, first, ...)
  local site = state.site_of(first)
  local c = chan
  if site then
    c = sites[site] and sites[site].chan
  end
  if c then
    pcall(vim.rpcnotify, c, method, first, ...)
  end
end

-- log writes msg (level "warn", "error") to the log: through the local
-- backend when it runs, else (an agent only on another machine, or none
-- started) appended to the log file itself, so what the messages point
-- at holds it.
function M.log(level, msg)
  if chan and pcall(vim.rpcnotify, chan, "log", level, msg) then
    return
  end
  local path = binary.log_path()
  pcall(vim.fn.mkdir, vim.fn.fnamemodify(path, ":h"), "p")
  local f = io.open(path, "a")
  if f then
    f:write(string.format("%s %s lua: %s\n", os.date("!%Y-%m-%dT%H:%M:%SZ"), level:upper(), msg))
    f:close()
  end
end

-- notify_all sends a notification to every running backend (what they
-- all must know: the size a new terminal split will have).
function M.notify_all(method, ...)
  for _, c in ipairs(M.channels()) do
    pcall(vim.rpcnotify, c, method, ...)
  end
end

-- channels lists the running backends' channels, the local one first.
function M.channels()
  local out = { chan }
  local names = vim.tbl_keys(sites)
  table.sort(names)
  for _, name in ipairs(names) do
    if sites[name].chan then
      table.insert(out, sites[name].chan)
    end
  end
  return out
end

-- shutdown asks the backend to kill every terminal and stop every agent
-- but the detached terminals, waits for it, and closes the channel. It
-- never signals the backend (jobstop would SIGTERM it): a backend serving
-- detached terminals stays after Neovim, however Neovim ends (:qa, :cq,
-- SIGHUP and SIGTERM all run VimLeavePre; SIGKILL closes the channel);
-- one with nothing to serve exits on the channel's end.
function M.shutdown()
  -- Quit on purpose (:qa, :cq): the sessions on other machines end with
  -- Neovim. Not so when it dies of a signal (SIGHUP, SIGTERM) or exits
  -- with 1 as its UI went away (its terminal closed under 0.7's TUI, the
  -- TUI process killed on 0.10+): that is the link dropping, and they go
  -- on there for :AgentRun to take up.
  local code = vim.v.exiting ~= vim.NIL and vim.v.exiting or 0
  local lost_ui = #vim.api.nvim_list_uis() == 0 or (M._had_tty and not has_tty())
  local on_purpose = vim.v.dying == 0 and not (code ~= 0 and lost_ui)
  if on_purpose then
    end_waiting()
  end
  for _, site in pairs(sites) do
    -- Another machine's backend ends its sessions and commands when its
    -- link closes; asked first, it has done so before Neovim is gone.
    if site.chan and on_purpose then
      site.stopping = true
      local c = site.chan
      pcall(vim.rpcrequest, c, "shutdown")
      site.chan = nil
      pcall(vim.fn.chanclose, c)
    end
  end
  if not chan then
    return
  end
  stopping = true
  local c = chan
  pcall(vim.rpcrequest, c, "shutdown")
  chan = nil
  pcall(vim.fn.chanclose, c)
end

-- stop ends the backend job (it kills what it still runs on stdin EOF).
function M.stop()
  if chan then
    stopping = true
    local c = chan
    chan = nil
    pcall(vim.fn.jobstop, c)
  end
end

return M
