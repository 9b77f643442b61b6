-- Ports of commands on another machine, reached from here: url(t, port)
-- listens on 127.0.0.1 here (port itself when it is free, else a port
-- the system picks) and returns "http://localhost:LOCALPORT". Each
-- connection made to it is relayed over the link to that machine's
-- backend, its own msgpack-RPC channel (no second ssh connection, no ssh
-- forwarding): port_open, port_write, port_ack and port_close go there,
-- the events port_data, port_written and port_closed come back
-- (internal/editor/portfwd.go). Both directions are windowed: the browser is read
-- only while less than WINDOW of its bytes wait to reach the server, and
-- the backend reads the server only while Neovim has not yet written its
-- window of bytes to the browser. Listening stops when the command ends
-- or is released (ended, from ui/term.lua), when the link drops, and when
-- Neovim quits.
local compat = require("agentrun.compat")
local rpc = require("agentrun.rpc")
local state = require("agentrun.state")
local util = require("agentrun.util")

local M = {}

local uv = compat.uv

-- WINDOW: the browser's bytes sent to the backend and not yet written to
-- the server (port_written) before the browser is no longer read (the
-- backend drops a connection more than 1 MiB ahead).
local WINDOW = 256 * 1024

-- forwards by site .. ":" .. port: { key, site, port, id (the
-- terminal), url, server, conns = { [n] = true }, said = { [error] = true } }
local forwards = {}

-- conns by number (unique in this Neovim): { n, fw, sock, sent (not yet
-- written there), paused, closed }
local conns = {}
local next_conn = 0

-- send notifies site's backend, if its link is up.
local function send(site, method, ...)
  local c = rpc.site_channel(site)
  if c then
    pcall(vim.rpcnotify, c, method, ...)
  end
end

local function close_handle(h)
  if h and not h:is_closing() then
    h:close()
  end
end

-- drop forgets connection c and closes its socket; tell: the backend is
-- told too (the browser's side ended).
local function drop(c, tell)
  if c.closed then
    return
  end
  c.closed = true
  conns[c.n] = nil
  c.fw.conns[c.n] = nil
  if tell then
    send(c.fw.site, "port_close", c.n)
  end
  close_handle(c.sock)
end

-- accepted relays the browser's connection sock to the port there. It
-- runs in libuv's callback, where no Neovim API may be called: the
-- window is counted and reading paused there at once, and what goes to
-- the backend goes in order from the main loop (vim.schedule).
local function accepted(fw, sock)
  next_conn = next_conn + 1
  local c = { n = next_conn, fw = fw, sock = sock, sent = 0 }
  conns[c.n] = c
  fw.conns[c.n] = true
  vim.schedule(function()
    if not c.closed then
      send(fw.site, "port_open", fw.id, fw.port, c.n)
    end
  end)
  c.on_read = function(err, data)
    if c.closed then
      return
    end
    if err or not data then
      vim.schedule(function()
        drop(c, true)
      end)
      return
    end
    c.sent = c.sent + #data
    if c.sent >= WINDOW and not c.paused then
      c.paused = true
      sock:read_stop()
    end
    vim.schedule(function()
      if not c.closed then
        send(fw.site, "port_write", c.n, data)
      end
    end)
  end
  if not pcall(sock.read_start, sock, c.on_read) then
    vim.schedule(function()
      drop(c, true)
    end)
  end
end

-- say tells the user msg about forward fw once (until a connection
-- works again).
local function say(fw, msg)
  if fw.said[msg] then
    return
  end
  fw.said[msg] = true
  util.notify(msg)
end

-- stop ends forward fw: no more listening, its connections closed. It
-- says nothing: url said "until the command ends", and the end of a
-- command or of a link is said already.
local function stop(fw)
  if forwards[fw.key] ~= fw then
    return
  end
  forwards[fw.key] = nil
  close_handle(fw.server)
  for n in pairs(fw.conns) do
    if conns[n] then
      drop(conns[n], true)
    end
  end
end

-- listen starts a server on 127.0.0.1:port (0: a port the system picks)
-- calling on_conn(sock) with each accepted connection; returns it and
-- its port, or nil and why not.
local function listen(port, on_conn)
  local server = uv.new_tcp()
  local ok, err = server:bind("127.0.0.1", port)
  if ok then
    ok, err = server:listen(64, function(lerr)
      if lerr then
        return
      end
      local sock = uv.new_tcp()
      if server:accept(sock) then
        on_conn(sock)
      else
        close_handle(sock)
      end
    end)
  end
  if not ok then
    close_handle(server)
    return nil, tostring(err)
  end
  local name = server:getsockname()
  return server, name and name.port or port
end

local leave_watched = false

-- watch_leave stops every forward when Neovim quits.
local function watch_leave()
  if leave_watched then
    return
  end
  leave_watched = true
  vim.api.nvim_create_autocmd("VimLeavePre", {
    group = vim.api.nvim_create_augroup("agentrun_portforward", { clear = true }),
    desc = "agentrun: stop forwarding the ports of commands on other machines",
    callback = function()
      for _, fw in pairs(forwards) do
        stop(fw)
      end
    end,
  })
end

-- url returns the local URL that reaches port of terminal t, a command on
-- another machine, forwarding it from now on (once per machine and port:
-- gx again gives the same URL), or nil and a sentence saying why not.
function M.url(t, port)
  local site = state.site_of(t.id)
  if not site then
    return nil, string.format("%s is no command of an agent on another machine: there is nothing to forward (http://localhost:%s reaches this machine's port)", t.id, tostring(port))
  end
  local c, msg = rpc.site_channel(site)
  if not c then
    return nil, msg
  end
  if t.state ~= "running" then
    return nil, string.format("%s has ended: nothing of it listens on port %s on %s", t.id, tostring(port), site)
  end
  if not vim.tbl_contains(t.ports or {}, port) then
    local list = {}
    for _, p in ipairs(t.ports or {}) do
      table.insert(list, tostring(p))
    end
    local now = #list > 0 and ("it listens on " .. table.concat(list, " and ")) or "it listens on no port"
    return nil, string.format("%s does not listen on port %s on %s (%s)", t.id, tostring(port), site, now)
  end
  local key = site .. ":" .. tostring(port)
  local fw = forwards[key]
  if fw and fw.id == t.id then
    return fw.url
  end
  if fw then
    stop(fw) -- an ended command's, on the same port
  end
  fw = { key = key, site = site, port = port, id = t.id, conns = {}, said = {} }
  local on_conn = function(sock)
    accepted(fw, sock)
  end
  local server, local_port = listen(port, on_conn)
  if not server then
    server, local_port = listen(0, on_conn) -- port is taken here
    if not server then
      return nil, string.format("%s: port %d on %s cannot be forwarded: no port to listen on here (%s)", t.id, port, site, local_port)
    end
  end
  fw.server, fw.local_port = server, local_port
  fw.url = "http://localhost:" .. tostring(local_port)
  forwards[key] = fw
  watch_leave()
  util.notify(string.format("%s: port %d on %s is forwarded to %s (until the command ends)", t.id, port, site, fw.url), vim.log.levels.INFO)
  return fw.url
end

-- forwarded lists the forwards: { id, site, port, url }, by site and port.
function M.forwarded()
  local out = {}
  for _, fw in pairs(forwards) do
    table.insert(out, { id = fw.id, site = fw.site, port = fw.port, url = fw.url })
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

-- data (event port_data) writes the server's bytes to the browser and,
-- once written, acknowledges them (the backend's window).
function M.data(p)
  local c = conns[p.conn]
  if not c or type(p.data) ~= "string" then
    return
  end
  c.fw.said = {} -- it works: a later failure is worth saying again
  local n = #p.data
  local ok = pcall(c.sock.write, c.sock, p.data, function(err)
    vim.schedule(function()
      if c.closed then
        return
      end
      if err then
        drop(c, true)
      else
        send(c.fw.site, "port_ack", c.n, n)
      end
    end)
  end)
  if not ok then
    drop(c, true)
  end
end

-- written (event port_written): the browser's bytes reached the server;
-- a paused connection is read again below half the window.
function M.written(p)
  local c = conns[p.conn]
  if not c or c.closed then
    return
  end
  c.sent = math.max(c.sent - (tonumber(p.n) or 0), 0)
  if c.paused and c.sent < WINDOW / 2 then
    c.paused = false
    if not pcall(c.sock.read_start, c.sock, c.on_read) then
      drop(c, true)
    end
  end
end

-- closed (event port_closed): the server's side ended, or the backend
-- refused or lost the connection (p.error says why: said once). The
-- browser gets what was written, then the end.
function M.closed(p)
  local c = conns[p.conn]
  if not c then
    return
  end
  if p.error then
    say(c.fw, tostring(p.error))
  end
  c.closed = true
  conns[c.n] = nil
  c.fw.conns[c.n] = nil
  pcall(c.sock.read_stop, c.sock)
  local ok = pcall(c.sock.shutdown, c.sock, function()
    close_handle(c.sock)
  end)
  if not ok then
    close_handle(c.sock)
  end
end

-- A link that ends (dropped, or its backend gone) ends its forwards: the
-- backend there has closed their connections.
table.insert(rpc.on_exit, function(site)
  if not site then
    return
  end
  for _, fw in pairs(forwards) do
    if fw.site == site then
      for n in pairs(fw.conns) do
        if conns[n] then
          drop(conns[n], false)
        end
      end
      stop(fw)
    end
  end
end)

return M
