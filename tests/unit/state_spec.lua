-- state.how_ended: the words a terminal's end is said in everywhere.
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
}
