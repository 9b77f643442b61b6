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
  ["tool output without fences or Copilot's shellId line"] = function()
    local lines = toolcall.render({ title = "ls", kind = "execute", status = "completed", content = {
      { type = "content", content = { type = "text", text = "```console\na.txt\nb.txt\n```\n<shellId: 0 completed with exit code 0>\n" } },
    } })
    eq({ "● ls [execute] · completed", "  a.txt", "  b.txt" }, lines)
  end,
}
