-- One question to the user on Go's behalf (a permission request, a command
-- approval): a vim.ui.select whose answer goes back to Go as
-- "answer_question", unless Go gave up on the question first.
local rpc = require("agentrun.rpc")

local M = {}

-- open tokens -> true while the picker for them is up. Go makes tokens
-- unique across both kinds of question.
local open = {}

-- note writes text to the session's chat, if it has one.
function M.note(s, text)
  if s and s.chat then
    s.chat:note(text, "AgentRunPermission")
  end
end

-- answer sends Go the answer for token.
function M.answer(token, answer)
  rpc.notify("answer_question", token, answer)
end

-- select shows items with opts (as vim.ui.select) for token. on_choice
-- gets (choice, idx) and returns the answer to send, or nil to send none
-- yet (the question stays open: the caller asks again later, if Go has
-- not given up on it by then: M.is_open); it is not called if Go gave up
-- on the question while the picker was up.
function M.select(token, items, opts, on_choice)
  open[token] = true
  vim.ui.select(items, opts, function(choice, idx)
    if not open[token] then
      return -- Go already gave up on it
    end
    local answer = on_choice(choice, idx)
    if answer == nil then
      return
    end
    open[token] = nil
    M.answer(token, answer)
  end)
end

-- hold marks token's question open for a caller that asks it in several
-- steps (an elicitation's fields) and answers with finish.
function M.hold(token)
  open[token] = true
end

-- finish sends the answer for token, unless Go gave up on it meanwhile.
function M.finish(token, answer)
  if open[token] then
    open[token] = nil
    M.answer(token, answer)
  end
end

-- is_open reports whether token's question still waits for an answer.
function M.is_open(token)
  return open[token] == true
end

-- cancelled forgets a question Go gave up on (the turn was cancelled or
-- the agent's request ended).
function M.cancelled(p)
  open[p.token] = nil
end

return M
