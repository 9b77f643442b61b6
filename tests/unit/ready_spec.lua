-- ui/ready: a question waiting to be shown is shown once, however it comes up.
local ready = require("agentrun.ui.ready")

-- settle runs what was scheduled.
local function settle()
  vim.wait(50, function()
    return false
  end)
end

return {
  [":AgentAnswer as the question comes up by itself shows it once"] = function()
    local notify = vim.notify
    vim.notify = function() end -- "second waits: …"
    local release
    ready.show({ id = "first", what = "first", show = function(done)
      release = done -- on screen until answered
    end })
    local shows = 0
    ready.show({ id = "second", what = "second", show = function(done)
      shows = shows + 1
      done() -- answered at once
    end })
    eq(0, shows, "shown while the first is on screen")
    release() -- answering the first brings the second up (scheduled)
    ready.answer() -- and the user typed :AgentAnswer just then
    settle()
    eq(1, shows, "times the second question was shown")
    eq(0, ready.pending(), "questions left waiting")
    vim.notify = notify
  end,
}
