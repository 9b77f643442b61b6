-- Ports of commands on another machine, reached from here: url(t, port)
-- starts `agentrun ssh-forward URL PORT` (internal/sshlink/forward.go),
-- which listens on 127.0.0.1 here (port itself when it is free, else a
-- port the system picks), says which, and relays each connection made to
-- it over an ssh of its own to that machine's port; url returns
-- "http://localhost:LOCALPORT". Nothing of the relay runs in Neovim's
-- event loop, so a hit-enter prompt or a busy Neovim never stalls it.
-- Forwarding stops when the command ends or is released (ended, from
-- ui/term.lua), when the link of its agents' machine drops, and when
-- Neovim quits (the process's input ends with Neovim).
local binary = require("agentrun.binary")
local rpc = require("agentrun.rpc")
local state = require("agentrun.state")
local util = require("agentrun.util")

local M = {}

-- forwards by machine URL .. " " .. port: { key, url (the machine's), site
-- (nil for an attached terminal), port, id (the terminal), job, local_url,
-- said = { [error] = true } }
local forwards = {}

-- say tells the user msg about forward fw once.
local function say(fw, msg)
  if fw.said[msg] then
    return
  end
  fw.said[msg] = true
  util.notify(msg)
end

-- stop ends forward fw: its process, so its listening and connections.
-- It says nothing: url said "until the command ends", and the end of a
-- command or of a link is said already.
local function stop(fw)
  if forwards[fw.key] ~= fw then
    return
  end
  forwards[fw.key] = nil
  pcall(vim.fn.jobstop, fw.job)
end

-- machine_of returns the machine URL terminal t runs on: its agents'
-- machine (and that site), or the one an attached id names
-- ("ssh://host/PID:term-N"); nil when t is of this machine.
local function machine_of(t)
  local site = state.site_of(t.id)
  if site then
    return rpc.site_url(site) and rpc.machine(rpc.site_url(site)), site
  end
  local url = tostring(t.id):match("^(ssh://[^/]+)/")
  return url, nil
end

-- url returns the local URL that reaches port of terminal t, a command on
-- another machine, forwarding it from now on (once per machine and port:
-- gx again gives the same URL), or nil and a sentence saying why not.
function M.url(t, port)
  local machine, site = machine_of(t)
  if not machine then
    return nil, string.format("%s is no command of an agent on another machine: there is nothing to forward (http://localhost:%s reaches this machine's port)", t.id, tostring(port))
  end
  local where = site or machine
  if site then
    local c, msg = rpc.site_channel(site)
    if not c then
      return nil, msg
    end
  end
  if t.state ~= "running" then
    return nil, string.format("%s has ended: nothing of it listens on port %s on %s", t.id, tostring(port), where)
  end
  if not vim.tbl_contains(t.ports or {}, port) then
    local list = {}
    for _, p in ipairs(t.ports or {}) do
      table.insert(list, tostring(p))
    end
    local now = #list > 0 and ("it listens on " .. table.concat(list, " and ")) or "it listens on no port"
    return nil, string.format("%s does not listen on port %s on %s (%s)", t.id, tostring(port), where, now)
  end
  local key = machine .. " " .. tostring(port)
  local fw = forwards[key]
  if fw and fw.id == t.id and fw.local_url then
    return fw.local_url
  end
  if fw then
    stop(fw) -- an ended command's, on the same port
  end
  fw = { key = key, url = machine, site = site, port = port, id = t.id, said = {} }
  local first_err
  local ok, job = pcall(vim.fn.jobstart, { binary.bin(), "ssh-forward", machine, tostring(port) }, {
    on_stdout = function(_, data)
      for _, line in ipairs(data or {}) do
        local lp = line:match("^listening (%d+)$")
        if lp then
          fw.local_url = "http://localhost:" .. lp
        end
        local why = line:match("^error (.+)$")
        if why then
          vim.schedule(function()
            say(fw, why)
          end)
        end
      end
    end,
    on_stderr = function(_, data)
      for _, line in ipairs(data or {}) do
        if line ~= "" then
          first_err = first_err or line:gsub("^agentrun: ", "")
        end
      end
    end,
    on_exit = function()
      if forwards[key] == fw then
        forwards[key] = nil
      end
    end,
  })
  if not ok or job <= 0 then
    return nil, string.format("%s: port %d on %s cannot be forwarded: %s cannot be started", t.id, port, where, binary.bin())
  end
  fw.job = job
  forwards[key] = fw
  -- It listens before it reaches anything: its first line comes at once.
  vim.wait(5000, function()
    return fw.local_url ~= nil or first_err ~= nil or forwards[key] ~= fw
  end, 10)
  if not fw.local_url then
    stop(fw)
    return nil, string.format("%s: port %d on %s cannot be forwarded: %s", t.id, port, where, first_err or "agentrun ssh-forward said nothing")
  end
  util.notify(string.format("%s: port %d on %s is forwarded to %s (until the command ends)", t.id, port, where, fw.local_url), vim.log.levels.INFO)
  return fw.local_url
end

-- forwarded lists the forwards: { id, site, port, url }, by site and port.
function M.forwarded()
  local out = {}
  for _, fw in pairs(forwards) do
    table.insert(out, { id = fw.id, site = fw.site or fw.url, port = fw.port, url = fw.local_url })
  end
  table.sort(out, function(a, b)
    return a.site < b.site or (a.site == b.site and a.port < b.port)
  end)
  return out
end

-- ended stops forwarding the ports of terminal id (it exited or was
-- released).
function M.ended(id)
  for _, fw in pairs(forwards) do
    if fw.id == id then
      stop(fw)
    end
  end
end

-- A link that ends (dropped, or its backend gone) ends the forwards of
-- its agents' commands: what becomes of them is not known here until it
-- is taken up again.
table.insert(rpc.on_exit, function(site)
  if not site then
    return
  end
  for _, fw in pairs(forwards) do
    if fw.site == site then
      stop(fw)
    end
  end
end)

return M
