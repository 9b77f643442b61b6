-- What the Lua side knows about sessions and terminals. Go is the source
-- of truth for processes; this mirrors it for the UI (buffers, windows).
local M = {
  -- key -> { key, agent, id (ACP session id), busy, starting, chat, queue, tool_calls }
  sessions = {},
  session_order = {},
  current = nil, -- key of the session :AgentPrompt talks to
  ---@type table<string, agentrun.Terminal> id -> its record (types.lua)
  terminals = {},
  terminal_order = {},
  disposed = {}, -- id -> { command, was }: disposed of (dd), so a later mention says so
}

-- add_session registers a session being started and makes it current.
function M.add_session(key, agent)
  local s = { key = key, agent = agent, busy = false, starting = true, queue = {}, tool_calls = {} }
  M.sessions[key] = s
  table.insert(M.session_order, key)
  M.current = key
  return s
end

-- how_ended says how terminal t ended, as the splits, the list, the chat
-- and the messages say it, in the same words: "exit 1", "signal
-- SIGTERM", "interrupted" (<C-c>, a cancel: not a failure), "killed" (X,
-- :AgentKill), "cancelled" (its turn's cancel stopped it), "restarted"
-- (R ran it again in place), else why its
-- display ended (an agent's command: "failed", "ended with the turn"), or
-- nil while it runs.
function M.how_ended(t)
  if t.restarting and t.state ~= "running" then
    return "restarted" -- R stopped it to run it again in place
  elseif M.interrupted(t) then
    return "interrupted"
  elseif t.state ~= "running" and (t.signal == "SIGTERM" or t.signal == "SIGKILL") and (t.killed or t.cancelled) then
    -- stopped by you (X, :AgentKill) or by cancelling its turn
    return t.killed and "killed" or "cancelled"
  elseif t.signal and t.signal ~= "" then
    return "signal " .. t.signal
  elseif t.exit_code ~= nil then
    return "exit " .. tostring(t.exit_code)
  end
  return t.ended_by
end

-- interrupted tells whether terminal t ended by an interrupt (<C-c> in
-- its split, the chat's <C-c>, a cancel): SIGINT, or the exit 130 a shell
-- gives for a command SIGINT stopped. Not a failure.
function M.interrupted(t)
  return t.state ~= "running" and (t.signal == "SIGINT" or t.exit_code == 130)
end

-- describe_terminal is terminal t as status(), :AgentTerminals and User
-- AgentRunTerminalExited show it: the one place the record becomes that
-- table. With from (the backend's status() row of t), that row with how
-- t stands as far as this editor has heard (the backend's news may be a
-- moment ahead: what the commands go by); else made from t alone.
---@param t agentrun.Terminal
---@param from? table
---@return table
function M.describe_terminal(t, from)
  local d = from
  if not d then
    d = {
      id = t.id,
      session = t.session_id,
      key = t.session,
      command = t.command,
      cwd = t.cwd,
      tool_call = t.tool_call,
      ended_by = t.ended_by,
      display_only = t.display_only or false,
      remote = t.remote,
      claim = t.claim,
      mine = t.remote and t.user or nil,
      -- its machine's link was lost: it runs there, out of reach
      link_lost = t.link_dropped ~= nil or nil,
    }
  end
  d.state, d.exit_code, d.signal, d.ran_ms, d.how = t.state, t.exit_code, t.signal, t.ran_ms, M.how_ended(t)
  d.waiting, d.ports, d.bufnr = t.waiting or false, t.ports or {}, t.bufnr
  -- the agent runs the command itself and only shows it, else a pty of ours
  d.owner = t.display_only and "agent" or "agentrun"
  -- how it was started: the agent's command (also once you took it over:
  -- claim says who holds it), R's rerun of one (rerun_of: the row it
  -- takes, runs: the how many-th run), :AgentShell, an agent's sign-in
  d.origin = t.origin or (not t.remote and "agent") or nil
  if not from then
    -- the backend's row says runs, rerun_of and rerun_as (it keeps the
    -- rows, agentrun ls shows them); t caches what its rerun answered
    d.runs, d.rerun_of = t.runs, t.row_of
    -- R ran it again: its newer run's id (every command takes this id for it)
    d.rerun_as = t.rerun_as
  end
  return d
end

-- newest_run returns the id of terminal id's newest run: R ran a command
-- again under a new id, which takes its row in the list; the chat's line
-- of the first run opens the newest (else id itself).
function M.newest_run(id)
  local t = M.terminals[id]
  local seen = {}
  while t and t.rerun_as and not seen[t.rerun_as] do
    seen[t.rerun_as] = true
    id = t.rerun_as
    t = M.terminals[id]
  end
  return id
end

-- label is the one name a user sees and types for terminal t: its id,
-- or for a command R ran again its first run's id (the list's row, the
-- split's name and status line, the quit question, completion and
-- notices say it; every command takes it for the newest run).
function M.label(t)
  return t.row_of or t.id
end

-- name_of is what a notice calls terminal t: its id, or for a command R
-- ran again the name the list shows it by, with its run ("term-3 (run
-- 2)": every command takes term-3 for it).
function M.name_of(t)
  if t.runs and t.row_of and t.row_of ~= t.id then
    return string.format("%s (run %d)", t.row_of, t.runs)
  end
  return t.id
end

-- session returns the session by key (or the current one when key is nil).
function M.session(key)
  return M.sessions[key or M.current or ""]
end

local retired = 0

-- retire moves a terminal of a backend that exited out of the way of a new
-- one with the same id (ids start again with each backend). It stays
-- listed, with its buffer, as "<id>~<n>".
local function retire(old)
  retired = retired + 1
  local id = old.id .. "~" .. retired
  M.terminals[old.id] = nil
  M.terminals[id] = old
  for i, x in ipairs(M.terminal_order) do
    if x == old.id then
      M.terminal_order[i] = id
    end
  end
  old.id = id
end

-- add_terminal registers a terminal (or returns the known one).
function M.add_terminal(t)
  local known = M.terminals[t.id]
  if known and known.stale then
    retire(known)
  elseif known then
    return known
  end
  t.state = t.state or "running"
  M.had_terminals = true -- the terminal list says "no terminals", not "yet"
  M.disposed[t.id] = nil -- shown again (another host's attached anew)
  M.terminals[t.id] = t
  table.insert(M.terminal_order, t.id)
  return t
end

-- remove_terminal forgets a disposed terminal.
function M.remove_terminal(id)
  M.terminals[id] = nil
  for i, x in ipairs(M.terminal_order) do
    if x == id then
      table.remove(M.terminal_order, i)
      break
    end
  end
end

-- on_machines lists the ids of the terminals of other machines' backends
-- that id ("term-3", without "@site") is the short form of, as
-- :AgentTerminals shows them under their machine's line: "term-3@devbox".
function M.on_machines(id)
  local out = {}
  if type(id) ~= "string" or id:find("[@:/]") then
    return out
  end
  for _, full in ipairs(M.terminal_order) do
    local t = M.terminals[full]
    if t and not t.remote and full:sub(1, #id + 1) == id .. "@" and M.site_of(full) then
      table.insert(out, full)
    end
  end
  return out
end

-- unknown_text says why terminal id is not known here: disposed of (its
-- chat line and your commands may still name it), on more than one
-- machine (term-3 of two), or never was.
function M.unknown_text(id)
  if M.disposed[id] then
    -- (a list: the shorter ones fit 80 and 60 columns, util.notify)
    return {
      string.format("%s was disposed of (dd in :AgentTerminals): killed, released, its output wiped", id),
      string.format("%s was disposed of (dd): killed, output wiped", id),
      string.format("%s was disposed of (dd)", id),
    }
  end
  local on = M.on_machines(id)
  if #on > 1 then
    return string.format("%s is on more than one machine: say which, %s", id, table.concat(on, " or "))
  end
  -- (a list: the shorter fits 60 columns beside the ruler, util.notify)
  return { string.format("unknown terminal %q; :AgentTerminals lists them", tostring(id)), string.format("no terminal %q (:AgentTerminals)", tostring(id)), string.format("no terminal %q", tostring(id)) }
end

-- terminal_for_buf returns the terminal shown in buffer buf.
function M.terminal_for_buf(buf)
  for _, t in pairs(M.terminals) do
    if t.bufnr == buf then
      return t
    end
  end
end

-- backend_exited marks everything the backend of site ran as ended (nil:
-- the local backend's) and returns the sessions it ended. With kept (the
-- machine's URL: its link dropped and its sessions go on there), they are
-- marked link_dropped instead: the commands still run, out of reach until
-- :AgentRun! takes them up again.
function M.backend_exited(site, kept)
  local ended = {}
  for _, s in pairs(M.sessions) do
    if not s.ended and M.site_of(s.key) == site then
      s.ended = true
      s.busy = false
      s.starting = false
      s.link_dropped = kept
      table.insert(ended, s)
    end
  end
  for _, t in pairs(M.terminals) do
    if not t.remote and M.site_of(t.id) == site then
      t.stale = true
      if kept and t.state == "running" then
        t.link_dropped = kept
      elseif not t.display_only and t.state ~= "released" and t.ended_by ~= "backend gone" then
        t.state = "released"
      end
    end
  end
  return ended
end

-- short_name is another machine's terminal name as listed there,
-- "ssh://devbox/PID:term-3": without the "@devbox" its backend ends its
-- ids with (the URL says the machine), as the backend lists them. Any
-- other name is returned as it is.
function M.short_name(name)
  if type(name) ~= "string" then
    return name
  end
  return (name:gsub("^(ssh://[^/]+/%d+:[^@/%s]+)@[%w%._%-]+$", "%1"))
end

-- site_of returns the site an id of a backend on another machine ends
-- with ("term-3@devbox", "2@devbox": "devbox"), or nil for the local
-- backend's ids and for other hosts' terminals shown here
-- ("ssh://host/PID:term-N").
function M.site_of(id)
  if type(id) ~= "string" or id:sub(1, 6) == "ssh://" then
    return nil
  end
  return id:match("@([%w%._%-]+)$")
end

return M
