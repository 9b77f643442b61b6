-- state.how_ended: the words a terminal's end is said in everywhere;
-- describe_terminal: a terminal as status() gives it.
local state = require("agentrun.state")

return {
  ["a signal is said before an exit code"] = function()
    eq("signal SIGTERM", state.how_ended({ signal = "SIGTERM", exit_code = 143 }))
  end,
  ["an exit code, zero too"] = function()
    eq("exit 0", state.how_ended({ exit_code = 0 }))
    eq("exit 3", state.how_ended({ exit_code = 3, signal = "" }))
  end,
  ["neither: who ended it, or nothing while it runs"] = function()
    eq("released", state.how_ended({ ended_by = "released" }))
    eq(nil, state.how_ended({}))
  end,
  ["term-N as :AgentTerminals shows another machine's names it, unless two machines have one"] = function()
    local saved_t, saved_o = state.terminals, state.terminal_order
    state.terminals, state.terminal_order = {}, {}
    local function add(id, remote)
      state.terminals[id] = { id = id, remote = remote }
      table.insert(state.terminal_order, id)
    end
    add("term-1")
    add("term-2@devbox")
    add("term-3@devbox")
    add("term-3@other")
    add("ssh://devbox/42:term-4", true) -- attached: named by its URL
    eq({ "term-2@devbox" }, state.on_machines("term-2"))
    eq({}, state.on_machines("term-1")) -- this machine's own: its id as it is
    eq({}, state.on_machines("term-4"))
    eq({}, state.on_machines("term-2@devbox"))
    eq({ "term-3@devbox", "term-3@other" }, state.on_machines("term-3"))
    eq("term-3 is on more than one machine: say which, term-3@devbox or term-3@other", state.unknown_text("term-3"))
    eq({ 'unknown terminal "term-9"; :AgentTerminals lists them', 'no terminal "term-9" (:AgentTerminals)', 'no terminal "term-9"' }, state.unknown_text("term-9"))
    state.terminals, state.terminal_order = saved_t, saved_o
  end,
  ["status() says how a terminal was started: the agent's, R's rerun of its first run, :AgentShell"] = function()
    local agents = state.describe_terminal({ id = "term-1", state = "exited", exit_code = 0 })
    eq("agent", agents.origin)
    eq(nil, agents.rerun_of)
    -- the backend's row says user (any of yours); the record says which
    local rerun = state.describe_terminal({ id = "term-3", state = "running", user = true, origin = "rerun", runs = 3, row_of = "term-1" }, { id = "term-3", user = true, runs = 3, rerun_of = "term-1" })
    eq({ "rerun", 3, "term-1", true }, { rerun.origin, rerun.runs, rerun.rerun_of, rerun.user })
    eq("shell", state.describe_terminal({ id = "term-4", user = true, origin = "shell" }).origin)
    eq(nil, state.describe_terminal({ id = "PID:term-2", remote = true }).origin) -- another host's
  end,
}
