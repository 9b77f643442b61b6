-- Terminals the user holds and who holds another host's: a shell or
-- command of yours (:AgentShell, a sign-in, R's rerun), one taken over
-- (T), another host's attached (:AgentAttach) and its claims, and
-- detaching one so that it outlives Neovim. The split itself is
-- ui/term.lua's.
local api = vim.api
local config = require("agentrun.config")
local rpc = require("agentrun.rpc")
local state = require("agentrun.state")
local term = require("agentrun.ui.term")
local window = require("agentrun.ui.window")

local M = {}

local notify = require("agentrun.util").notify

-- rerun runs terminal t's command again as the user's, in a split where
-- its was (one of the user's still running restarts in place). A deny
-- rule of terminal.approve (or its function's false) refuses it as it
-- would the agent; pressing the key is the user's yes to an "ask".
function M.rerun(t)
  local approve = config.get().terminal.approve
  if type(approve) == "table" or type(approve) == "function" then
    local v = require("agentrun.policy").verdict({ line = t.command or "", cwd = t.cwd, key = t.session or "", session = t.session_id })
    if v and v.failed then
      notify(string.format("%s not run again: the rules could not be checked (%s)", state.label(t), v.reason or ""))
      return false
    end
    if v and v.decision == "refuse" then
      notify(string.format("%s not run again: %s", state.label(t), v.reason or "terminal.approve refuses it"))
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
  -- no longer shows the old), with the number of runs. The backend keeps
  -- the rows (agentrun ls shows them too): its answer says the row, the
  -- run and the run it replaced (the newest, also when t was older).
  local old = state.terminals[res.replaces] or t
  local nt = state.add_terminal({ id = res.id, command = res.command, cwd = t.cwd or vim.fn.getcwd() })
  nt.runs, nt.row_of, nt.interactive = res.runs, res.rerun_of, t.interactive
  old.rerun_as = nt.id
  term.name_buffer(old) -- "term-1 run 1 …": the new run takes its name
  M.open_user(res, "rerun")
  return true
end

-- type_into opens terminal t's split, focused, in terminal mode: what
-- you type goes to the command (:AgentType, the answer to "waits for
-- input", a terminal of yours opened).
function M.type_into(t)
  term.open(t.id, { focus = true })
  if t.bufnr and api.nvim_get_current_buf() == t.bufnr then
    vim.cmd("startinsert")
    return true
  end
  return false
end

-- shell starts a terminal the user holds (see require("agentrun").shell)
-- and enters it in terminal mode.
function M.shell(cmd)
  local res, err = rpc.request("shell", { cmd = cmd or "", shell = vim.env.SHELL or "", cwd = vim.fn.getcwd() })
  if not res then
    notify(err)
    return nil
  end
  local t = M.open_user(res, "shell")
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

-- focus opens terminal id's split, focused in terminal mode (open_user
-- calls it, from keys when it leaves Insert mode first).
function M.focus(id)
  local t = state.terminals[id]
  if t then
    M.type_into(t)
  end
end

-- open_user shows a terminal the user holds ({ id, command } as Go
-- answered) focused in terminal mode, ready for typing; origin says how
-- it was started ("shell", "sign_in", "rerun": status()'s origin).
-- Returns its state entry.
function M.open_user(res, origin)
  local t = state.add_terminal({ id = res.id, command = res.command, cwd = vim.fn.getcwd() })
  t.user, t.origin = true, origin
  if api.nvim_get_mode().mode:sub(1, 1) == "i" then
    -- Called from an event (a sign-in) while the user is in Insert mode
    -- in the prompt: a window switched to from there stays in Insert
    -- mode, which a terminal ignores. Leave Insert mode first, then
    -- focus the terminal from Normal mode, as typed keys would.
    local keys = api.nvim_replace_termcodes("<C-\\><C-n><Cmd>lua require('agentrun.ui.userterm').focus(" .. string.format("%q", t.id) .. ")<CR>", true, false, true)
    api.nvim_feedkeys(keys, "n", false)
  else
    M.focus(t.id)
  end
  term.changed(t) -- (a rerun's line in the chat too, where it starts)
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
      window.resize_terminal(t)
    end
    term.changed(t)
  end
  if config.get().terminal.persist then
    return M.detach(id)
  end
  -- One short line (at 80 columns, 68 fit beside the ruler): a longer
  -- message makes Neovim stop at "Press ENTER".
  notify(string.format("%s is yours now: i types into its split, %s kills it", t and state.label(t) or id, config.get().keymaps.kill or ":AgentKill"), vim.log.levels.INFO)
  return true
end

-- attach shows terminal name of another host live in a split and enters
-- it: its scrollback, then its output as it comes. name is "PID:term-N"
-- (a host of this machine's) or "ssh://[user@]host[:port]/PID:term-N"
-- (a remote machine's; the backend checks the rest of it).
function M.attach(name)
  if type(name) ~= "string" or not (name:match("^%d+:%S+$") or name:match("^ssh://%S+$")) then
    -- (a list: the shorter fits 60 columns, util.notify)
    notify({ string.format("unknown terminal %s; :AgentTerminals lists them", vim.inspect(name)), string.format("no terminal %s (:AgentTerminals)", vim.inspect(name)), string.format("no terminal %s", vim.inspect(name)) })
    return false
  end
  local t = state.terminals[name]
  if not t then
    t = state.add_terminal({ id = name, command = name, state = "running" })
    t.remote = true
  end
  if term.open(name, { focus = true }) == false then
    term.changed()
    return false
  end
  t.shown = true
  term.changed()
  return true
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
      window.resize_terminal(t)
    end
    term.changed(t)
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
    term.changed(t)
  end
  local site = state.site_of(id)
  local url = site and rpc.site_url(site)
  -- another machine's: named as attach reaches it, ssh://host/PID:term-N
  -- (the URL says the machine: no "@site" after the id)
  local name = url and string.format("%s/%d:%s", rpc.machine(url), res.host, (id:gsub("@[^@]*$", "")))
    or string.format("%d:%s", res.host, id)
  -- (shorter forms keep what a reattach needs: its name)
  notify({
    string.format("%s is detached (it outlives Neovim): :AgentAttach %s", id, name),
    string.format("%s detached: :AgentAttach %s", id, name),
    string.format("detached: :AgentAttach %s", name),
  }, vim.log.levels.INFO)
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
    notify(string.format("%s is detached already (its Neovim quit): it runs until it ends or is killed", state.label(t)), vim.log.levels.INFO)
  else
    notify(string.format("%s is %s's: quitting this Neovim leaves it; it ends with its own unless detached there", state.label(t), M.host_label(t)), vim.log.levels.INFO)
  end
  return true
end

return M
