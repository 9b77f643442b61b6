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
  ["the ▸ line says a command its head line says by its state alone"] = function()
    local state = require("agentrun.state")
    state.terminals["term-90"] = { id = "term-90", command = "go test ./...", state = "exited", exit_code = 1, ran_ms = 1234 }
    state.terminals["term-91"] = { id = "term-91", command = "make check", state = "running" }
    local lines = toolcall.render({ title = "go test ./...", kind = "execute", status = "failed", content = { { type = "terminal", terminalId = "term-90" } } })
    eq("  ▸ terminal term-90 · exit 1 · 1.2s (<CR> opens it)", lines[2])
    -- a title that does not say it: the ▸ line does, once
    lines = toolcall.render({ title = "Run the checks", kind = "other", status = "in_progress", content = { { type = "terminal", terminalId = "term-91" } } })
    eq("  ▸ terminal term-91 · running: make check (<CR> opens it)", lines[2])
    state.terminals["term-90"], state.terminals["term-91"] = nil, nil
  end,
  ["how long a command ran"] = function()
    eq({ "<0.1s", "1.2s", "12s", "3m05s" }, { toolcall.ran_text(40), toolcall.ran_text(1234), toolcall.ran_text(12345), toolcall.ran_text(185000) })
  end,
}
