-- The channel to the Go backend (bin/agentrun), started on first use with
-- jobstart({bin}, {rpc = true}). Go calls back into Lua through
-- require("agentrun.events").dispatch. Which binary, and whether it is
-- the right one, is agentrun.binary's.
local binary = require("agentrun.binary")
local config = require("agentrun.config")
local util = require("agentrun.util")

local M = {}

local chan = nil
local stopping = false
local stderr_tail = {}

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

local function on_stderr(_, data)
  for _, line in ipairs(data or {}) do
    if line ~= "" then
      table.insert(stderr_tail, line)
      if #stderr_tail > 20 then
        table.remove(stderr_tail, 1)
      end
    end
  end
end

-- running reports whether the backend is up (without starting it).
function M.running()
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
  local cfg = config.get()
  local sok, err = pcall(vim.rpcrequest, chan, "setup", {
    kill_grace_ms = cfg.terminal.kill_grace_ms,
    byte_limit = cfg.terminal.byte_limit or 0, -- 0: the backend's default
    scrollback = cfg.terminal.scrollback,
    nvim_version = tostring(vim.version().major .. "." .. vim.version().minor .. "." .. vim.version().patch),
    plugin_version = binary.expected_version(),
  })
  if not sok then
    M.stop()
    return nil, "(agentrun) the backend failed to set up: " .. clean(err)
  end
  for _, fn in ipairs(M.on_start) do
    fn(chan)
  end
  local group = vim.api.nvim_create_augroup("agentrun_backend", { clear = true })
  vim.api.nvim_create_autocmd("VimLeavePre", {
    group = group,
    desc = "agentrun: kill every terminal and stop the agents",
    callback = function()
      M.shutdown()
    end,
  })
  return chan
end

-- request calls a Go handler and returns its result, or nil and a message.
function M.request(method, ...)
  local c, msg = M.ensure()
  if not c then
    return nil, msg
  end
  local ok, res = pcall(vim.rpcrequest, c, method, ...)
  if not ok then
    return nil, "(agentrun) " .. clean(res)
  end
  return res == vim.NIL and true or res, nil
end

-- on_start lists functions called with the channel each time a backend
-- has started and is set up (the UI registers what it must tell it
-- first, so rpc needs no UI module).
M.on_start = {}

-- on_exit lists functions called when the backend has exited while
-- Neovim runs on (sessions and terminals ended with it).
M.on_exit = {}

-- notify sends a notification to Go if the backend runs (never starts it).
function M.notify(method, ...)
  if chan then
    pcall(vim.rpcnotify, chan, method, ...)
  end
end

-- shutdown asks the backend to kill every terminal and stop every agent
-- but the detached terminals, waits for it, and closes the channel. It
-- never signals the backend (jobstop would SIGTERM it): a backend serving
-- detached terminals stays after Neovim, however Neovim ends (:qa, :cq,
-- SIGHUP and SIGTERM all run VimLeavePre; SIGKILL closes the channel);
-- one with nothing to serve exits on the channel's end.
function M.shutdown()
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
