-- ui/toolcall: how a tool call's head line reads.
local toolcall = require("agentrun.ui.toolcall")

return {
  ["a refused call of our tool reads as its command"] = function()
    local lines = toolcall.render({ title = "mcp__agentrun__run_command", kind = "other", status = "failed", rawInput = { command = "cd /tmp && rm -rf x" } })
    eq("✗ cd /tmp && rm -rf x · failed", lines[1])
  end,
  ["another tool keeps its title and kind"] = function()
    local lines = toolcall.render({ title = "Read file", kind = "read", status = "completed" })
    eq("● Read file [read] · completed", lines[1])
  end,
}
