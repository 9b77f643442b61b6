-- policy.said: the chat's line for a command decided without asking.
local policy = require("agentrun.policy")

return {
  ["a rule's verdict names the line once"] = function()
    local v = { decision = "run", reason = "allowed by the rule `go test*`" }
    eq("✓ allowed by the rule `go test*`  $ go test ./...", policy.said(v, "go test ./...", "go test ./..."))
  end,
  ["a line the reason quotes is not repeated"] = function()
    local v = { decision = "refuse", reason = "refused by the rule `rm *`: `rm -rf x`" }
    eq("✗ refused by the rule `rm *`: `rm -rf x`", policy.said(v, "rm -rf x"))
  end,
  ["the agent's title comes before the line when it says more"] = function()
    local v = { decision = "run", reason = "allowed: remembered" }
    eq("✓ allowed: remembered: Run the tests  $ make test", policy.said(v, "make test", "Run the tests"))
  end,
  ["Always allow keeps no cd out of the project"] = function()
    local v = { commands = {
      { text = "cd /tmp", exact = true, allowed = false },
      { text = "go test ./...", exact = true, allowed = false },
    } }
    eq(false, policy.keepable(v.commands[1]), "cd /tmp")
    eq(true, policy.keepable(v.commands[2]), "go test")
    local dir = vim.fn.tempname()
    vim.fn.mkdir(dir, "p")
    local old = vim.env.XDG_STATE_HOME
    vim.env.XDG_STATE_HOME = dir .. "/state"
    local kept = policy.remember(dir, nil, v)
    vim.env.XDG_STATE_HOME = old
    eq({ "go test ./..." }, kept, "kept")
  end,
  ["Always allow offers nothing for a line with a cd out of the project or an unknown word"] = function()
    local go = { text = "go test ./...", exact = true, allowed = false }
    eq({ "go test ./..." }, policy.keeps({ commands = { go } }), "go test alone")
    eq({}, policy.keeps({ commands = { { text = "cd /tmp", exact = true, allowed = false }, go } }), "after a cd out")
    eq({}, policy.keeps({ commands = { go }, unknown = { "$X" } }), "an unknown word")
    eq({}, policy.keeps({ commands = { { text = "ls", exact = true, allowed = true } } }), "allowed already")
  end,
}
