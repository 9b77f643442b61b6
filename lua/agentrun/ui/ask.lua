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

-- grouped is the question for several commands at once (q.lines, each
-- "$ line" numbered under q.title): verb ("Run", "Allow") or refuse all
-- of them, always allow in this project (on q.host) what q.keeps (each
-- command's list) would keep and verb all, or one by one. Returns
-- vim.ui.select's items and opts (q.kind), the numbers of the "Always
-- allow" item (nil: nothing to keep) and of "One by one", and what
-- "Always allow" names.
local function grouped(q)
  local n = #q.lines
  local lines = { q.title }
  local keep, seen = {}, {}
  for i, l in ipairs(q.lines) do
    table.insert(lines, string.format("  %d. $ %s", i, l))
    for _, k in ipairs(q.keeps[i] or {}) do
      if not seen[k] then
        seen[k] = true
        table.insert(keep, k)
      end
    end
  end
  local items = { string.format("%s all %d", q.verb, n), string.format("Refuse all %d", n) }
  local always
  if #keep > 0 then
    table.insert(items, "Always allow in this project" .. (q.host and (" on " .. q.host) or "") .. ": " .. table.concat(keep, " · ") .. string.format(", and %s all %d", q.verb:lower(), n))
    always = #items
  end
  table.insert(items, "One by one")
  return items, { prompt = table.concat(lines, "\n"), kind = q.kind }, always, #items, keep
end

-- gather_ms is how long the first of several questions waits for the
-- others an agent asks at the same moment (parallel commands).
local gather_ms = 40

-- gatherer makes the way questions of one kind are asked together: those
-- of one session that come at the same moment (an agent's parallel
-- commands) are asked as one, each named. A question e has e.p.token,
-- e.p.key and e.s (its session); how says:
--   still(e): whether e is still to be asked (false once it is closed,
--     or decided and answered meanwhile: "Always allow" on another);
--   single(e): vim.ui.select's items, opts and on_choice for e alone,
--     on_choice returning e's answer (nil: none yet);
--   group(es): the question for several at once, as grouped takes it,
--     with answer(yes, always, kept): yes for all of them or no, always
--     when "Always allow" (kept: what it names) was picked; "One by
--     one" asks each of them as single does.
-- Returns gather(e), which asks e with the others that come with it.
function M.gatherer(how)
  local gathering = {} -- session key -> the group not on screen yet
  -- answer_one sends on_choice's answer for e, unless it is no longer
  -- asked or can no longer reach the agent.
  local function answer_one(e, on_choice, choice, idx)
    if M.is_open(e.p.token) and not M.unreachable(e.p.token) then
      local answer = on_choice(choice, idx)
      if answer ~= nil then
        M.finish(e.p.token, answer)
      end
    end
  end
  -- one asks e on its own.
  local function one(e)
    M.pick(function()
      if not how.still(e) then
        return nil
      end
      local items, opts, on_choice = how.single(e)
      return items, opts, function(choice, idx)
        answer_one(e, on_choice, choice, idx)
      end
    end, nil, nil, e.p.token, e.s)
  end
  -- show shows the questions of g still to be asked: one on its own,
  -- several as one.
  local function show(g)
    if gathering[g.key] == g then
      gathering[g.key] = nil -- a question from now on starts a group of its own
    end
    local es = {}
    for _, e in ipairs(g.entries) do
      if how.still(e) then
        table.insert(es, e)
      end
    end
    if #es == 0 then
      return nil
    end
    if #es == 1 then
      local items, opts, on_choice = how.single(es[1])
      return items, opts, function(choice, idx)
        answer_one(es[1], on_choice, choice, idx)
      end
    end
    local q = how.group(es)
    local items, opts, always, one_by_one, kept = grouped(q)
    return items, opts, function(_, idx)
      local waits = false
      for _, e in ipairs(es) do
        -- (each looked at: one whose link dropped says so, and closes)
        if M.is_open(e.p.token) and not M.unreachable(e.p.token) then
          waits = true
        end
      end
      if not waits then
        return
      elseif idx == one_by_one then
        for _, e in ipairs(es) do
          one(e)
        end
        return
      end
      q.answer(idx == 1 or idx == always, idx == always, kept)
    end
  end
  return function(e)
    M.hold(e.p.token, e.s)
    local key = e.p.key or ""
    local g = gathering[key]
    if g then
      table.insert(g.entries, e)
      g.held[e.p.token] = true
      return
    end
    g = { key = key, entries = { e }, held = { [e.p.token] = true } }
    gathering[key] = g
    local function drop_one(id)
      if not g.held[id] then
        return false
      end
      g.held[id] = nil
      return next(g.held) == nil
    end
    vim.defer_fn(function()
      M.pick(function()
        return show(g)
      end, nil, nil, "group:" .. e.p.token, e.s, drop_one)
    end, gather_ms)
  end
end

return M
