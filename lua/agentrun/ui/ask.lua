-- One question to the user on Go's behalf (a permission request, a command
-- or file write approval, an elicitation): a picker (ui/ready.lua: never
-- answered by keys typed before it appeared) whose answer goes back to Go
-- as "answer_question", unless Go gave up on the question first.
local rpc = require("agentrun.rpc")
local ready = require("agentrun.ui.ready")

local M = {}

-- open tokens -> true while the picker for them is up. Go makes tokens
-- unique across both kinds of question.
local open = {}
local asked_in = {} -- token -> the session whose chat shows the question

-- note writes text to the session's chat, if it has one: above tool call
-- tool_call's block when given (what was decided on it reads first).
function M.note(s, text, tool_call)
  if s and require("agentrun.state").site_of(s.key) then
    -- a backend on another machine keeps it for a chat shown again
    -- after a take-up (chat_note); a question still open there is asked
    -- again by the replay, which writes its line itself
    s.noted = s.noted or {}
    s.noted[(tool_call or "") .. "\0" .. text] = true
    rpc.notify("keep_note", s.key, { text = text, tool_call = tool_call or "" })
  end
  if s and s.chat then
    if tool_call then
      s.chat:note_before(tool_call, text, "AgentRunPermission")
    else
      s.chat:note(text, "AgentRunPermission")
    end
  end
end

-- answer sends Go the answer for token: the option picked ("" for none)
-- and, for a command the user's rules refused without asking, why.
function M.answer(token, answer, why)
  rpc.notify("answer_question", token, answer, why or "")
end

-- guarded calls ui_fn (vim.ui.select or vim.ui.input) with args and the
-- callback cb: <C-c> in Neovim's own picker (inputlist, input) raises
-- "Keyboard interrupt" out of it, which then counts as closing it (cb
-- gets nil), as <Esc> does.
local function guarded(ui_fn, cb, ...)
  local called = false
  local args = { ... }
  table.insert(args, function(...)
    called = true
    return cb(...)
  end)
  local ok, err = pcall(ui_fn, (table.unpack or unpack)(args))
  if not ok then
    if called then
      error(err, 0) -- the callback's own error
    end
    cb(nil)
  end
end

-- pick is vim.ui.select(items, opts, cb), <C-c> answering nil, shown
-- only when no key the user typed for something else can answer it
-- (ui/ready.lua): else it waits, and the chat of session s says so.
-- Neovim's own picker (inputlist(), which any key closes) is replaced by
-- agentrun's window, where only a choice's key answers and q puts the
-- question aside (cb is then not called: it waits for :AgentAnswer).
-- token names the question, so that its withdrawal closes it. items may
-- be a function called when the question is shown, returning items,
-- opts and cb (nil: nothing is left to ask): a question that gathers
-- others while it waits (ui/approve.lua). drop_one(id), when given, is
-- told of a withdrawn question id the item holds, and returns true when
-- nothing is left of it.
function M.pick(items, opts, cb, token, s, drop_one)
  local item = { id = token, what = (s and s.agent or "the agent") .. "'s question", drop_one = drop_one }
  item.show = function(done)
    if type(items) == "function" then
      local build = items
      items, opts, cb = build()
      if not items then
        return done()
      end
      if s and require("agentrun.state").site_of(s.key) then
        -- another machine's: what happened while the picker was up goes
        -- first (a link lost meanwhile is known before the answer), as
        -- M.select does
        local answer = cb
        cb = function(...)
          local args = { n = select("#", ...), ... }
          vim.schedule(function()
            answer((table.unpack or unpack)(args, 1, args.n))
          end)
        end
      end
    end
    if ready.builtin_select() then
      item.close, item.focus = ready.select(items, opts, cb, done)
      return
    end
    done() -- a picker of the user's own: it holds the screen its own way
    -- what the chat just said of the question is drawn first
    pcall(vim.cmd, "redraw")
    guarded(vim.ui.select, cb, items, opts)
  end
  if not ready.show(item) then
    M.note(s, "  (the question waits while you type: <Esc> shows it, or :AgentAnswer)")
  end
end

-- input is vim.ui.input(opts, cb), <C-c> answering nil and an empty
-- answer "" on every Neovim (compat.input), shown only when no key typed
-- for something else can answer it (as pick).
function M.input(opts, cb, token, s)
  local item = { id = token, what = (s and s.agent or "the agent") .. "'s question" }
  item.show = function(done)
    done()
    guarded(require("agentrun.compat").input, cb, opts)
    -- the answered prompt would stay on the command line under the next
    -- question, read as asked again
    pcall(vim.api.nvim_echo, { { "" } }, false, {})
  end
  if not ready.show(item) then
    M.note(s, "  (the question waits while you type: <Esc> shows it, or :AgentAnswer)")
  end
end

-- select shows items with opts (as vim.ui.select) for token. on_choice
-- gets (choice, idx) and returns the answer to send, or nil to send none
-- yet (the question stays open: the caller asks again later, if Go has
-- not given up on it by then: M.is_open); it is not called if Go gave up
-- on the question while the picker was up.
function M.select(token, items, opts, on_choice, s)
  M.hold(token, s)
  M.pick(items, opts, function(choice, idx)
    local function answer_it()
      if not open[token] or M.unreachable(token) then
        return -- Go already gave up on it, or the answer cannot reach it
      end
      local answer = on_choice(choice, idx)
      if answer == nil then
        return
      end
      M.finish(token, answer)
    end
    if s and require("agentrun.state").site_of(s.key) then
      -- another machine's: what happened while the picker was up goes
      -- first (0.7 runs no job callback while inputlist() waits, so a
      -- link lost meanwhile is known only after it)
      vim.schedule(answer_it)
    else
      answer_it()
    end
  end, token, s)
end

-- hold marks token's question open for a caller that asks it in several
-- steps (an elicitation's fields) and answers with finish.
function M.hold(token, s)
  open[token] = true
  asked_in[token] = s
end

-- unreachable reports whether token's answer can no longer reach the
-- agent (the link to its machine dropped, or the session ended with its
-- backend there) and then says so, and what happens to the question:
-- in its chat and as a message. The question is closed here; the
-- backend there, taken up again, asks it again.
function M.unreachable(token)
  local s = asked_in[token]
  local site = s and require("agentrun.state").site_of(s.key)
  local down = s and (s.link_dropped or (site and rpc.link_gone(site)))
  if not s or not (down or s.ended) then
    return false
  end
  open[token], asked_in[token] = nil, nil
  local msg
  if down then
    msg = string.format("the link to %s is down, so your answer did not reach the agent: the question is asked again when :AgentRun %s takes the session up", down, down)
  else
    msg = "this session has ended, so your answer went nowhere"
  end
  M.note(s, "  (" .. msg .. ")")
  require("agentrun.util").notify(msg, vim.log.levels.WARN)
  return true
end

-- finish sends the answer for token, unless Go gave up on it meanwhile
-- or it cannot reach the agent (unreachable says so).
function M.finish(token, answer)
  if open[token] and not M.unreachable(token) then
    open[token], asked_in[token] = nil, nil
    M.answer(token, answer)
  end
end

-- is_open reports whether token's question still waits for an answer.
function M.is_open(token)
  return open[token] == true
end

-- cancelled forgets a question Go gave up on (the turn was cancelled, or
-- the agent withdrew its request: $/cancel_request); a picker still up
-- then answers nothing, and the chat says so.
---@param p agentrun.event.permission_cancelled|agentrun.event.elicitation_withdrawn|agentrun.event.approve_cancelled
function M.cancelled(p)
  if open[p.token] then
    local why = p.why == "turn" and "the turn ended" or "the agent withdrew its question"
    M.note(asked_in[p.token], "  (" .. why .. ": what you pick now goes nowhere)")
  end
  open[p.token], asked_in[p.token] = nil, nil
  ready.drop(p.token)
end

return M
