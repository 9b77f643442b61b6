-- A session's conversation: prompts sent, queued while the agent is busy
-- or starting and sent one by one as turns end; the turn cancelled, the
-- agent stopped. Events call flush; the public API, the chat and the
-- terminal splits call the rest. Dependencies: rpc, state, util and the
-- session's chat (s.chat); nothing here calls back into the public API.
local rpc = require("agentrun.rpc")
local state = require("agentrun.state")
local util = require("agentrun.util")

local M = {}

local function warn(msg)
  util.notify(msg, vim.log.levels.WARN)
end

-- send sends a prompt to session s (already shown in the chat): its text
-- and the context items it names (agentrun.context).
local function send(s, p)
  if p.waiting then
    s.chat:remove(p.waiting) -- no longer waiting: it enters the transcript now
    p.waiting = nil
  end
  if p.unshown then
    s.chat:end_message()
    s.chat:user(p.text) -- after the history or the turn it was queued behind
  end
  require("agentrun.disk").turn_start(s)
  local ok, msg = rpc.request("prompt", s.key, p.text, p.items or {})
  if not ok then
    s.chat:note(msg, "AgentRunError")
    return false
  end
  s.busy = true
  s.turn = (s.turn or 0) + 1
  s.chat:render_header()
  return true
end

-- flush sends the next prompt queued while the session was starting or
-- the agent was working on a turn.
function M.flush(s)
  if s.busy or s.starting or s.ended or #s.queue == 0 then
    return
  end
  send(s, table.remove(s.queue, 1))
end

-- queued_note marks prompt text as waiting in s's chat, on one line that
-- fits the chat's width ("(queued: text — when)"; a narrow chat drops the
-- when, then cuts the text with …): a note that wraps reads badly.
local function queued_note(s, text, when)
  local w = vim.fn.bufwinid(s.chat.buf)
  local width = w ~= -1 and vim.api.nvim_win_get_width(w) or 80
  text = text:gsub("%s*\n%s*", " ⏎ ")
  local full = string.format("(queued: %s — %s)", text, when)
  if w == -1 then
    -- the chat is not on screen (:AgentPrompt with the chat closed): the
    -- note would go unseen, so it is said where the user typed
    util.notify(util.fit(string.format("queued: %s — %s", text, when), math.max(20, util.room())))
  end
  if vim.fn.strdisplaywidth(full) <= width then
    return s.chat:note(full)
  end
  return s.chat:note("(queued: " .. util.fit(text, math.max(10, width - 11)) .. ")")
end

-- hold queues prompt p of s, marked in its chat as waiting until when
-- (and counted in the chat's header with header).
local function hold(s, p, when, header)
  p.unshown = true
  p.waiting = queued_note(s, p.text, when)
  table.insert(s.queue, p)
  if header then
    s.chat:render_header()
  end
  return true
end

-- prompt shows text in s's chat and sends it with the context it names
-- (items), or queues it while the agent is busy or the session starting.
-- Returns true when sent or queued.
function M.prompt(s, text, items)
  local p = { text = text, items = items }
  if s.starting and s.loading then
    -- an earlier session being opened: its history comes first, the
    -- prompt (shown then) after it
    return hold(s, p, "sent once the history has loaded")
  end
  if s.busy then
    -- The agent is still on the last turn (or its end has not reached us
    -- yet): queue it, as agents with prompt queueing do. It waits marked
    -- as such, and enters the transcript when it is sent.
    return hold(s, p, "sent after this turn", true)
  end
  if s.starting then
    -- the agent has not started yet (or waits for a sign-in): the prompt
    -- waits marked as such, as behind a turn
    return hold(s, p, "sent once the agent has started", true)
  end
  s.chat:user(text)
  return send(s, p)
end

-- submit sends text to session s with the context its words name
-- (#buffer, #selection, @path; range = { first, last } adds those lines
-- of the current buffer): shown in s's chat, or queued (see prompt).
-- Returns true when sent or queued; an ended session says so.
function M.submit(s, text, range)
  -- A refusal is said in the chat too: sent from the prompt in insert
  -- mode, a message alone is hidden at once by "-- INSERT --".
  local function refuse(msg)
    warn(msg)
    if s.chat then
      s.chat:note("(agentrun) " .. msg, "AgentRunError")
    end
    return false
  end
  if s.link_dropped then
    M.say_link_dropped(s)
    return false
  elseif s.ended then
    return refuse("this session has ended; :AgentRun starts a new one")
  end
  local items, cerr, selected = require("agentrun.context").gather(text, range)
  if not items then
    return refuse(cerr)
  end
  if selected then
    -- lines of a buffer that is no file (a pasted log): sent as text
    text = text .. "\n\n```\n" .. selected .. "```"
  end
  return M.prompt(s, text, items)
end

-- drop_queue forgets s's queued prompts and says so in its chat: at once,
-- or with after_turn once the running turn has ended (its last words come
-- first: say_dropped).
function M.drop_queue(s, after_turn)
  if #s.queue > 0 then
    local texts = {}
    for _, p in ipairs(s.queue) do
      if p.waiting then
        s.chat:remove(p.waiting)
      end
      table.insert(texts, (p.text:gsub("%s*\n%s*", " ⏎ ")))
    end
    M.say_dropped(s) -- an earlier cancel's, still waiting for its turn's end
    s.dropped_note = string.format("(dropped %d queued prompt%s: %s)", #s.queue, #s.queue == 1 and "" or "s", table.concat(texts, "; "))
    s.queue = {}
    s.chat:render_header()
    if not after_turn then
      M.say_dropped(s)
    end
  end
end

-- hold_queue puts s's queued prompts back into its prompt, above what is
-- being typed there, instead of sending them: the turn they waited for
-- ended after the user interrupted it (<C-c>), and what was queued before
-- may no longer be wanted. <C-s> sends them (as one prompt), or the user
-- edits or clears them.
function M.hold_queue(s, why)
  if #s.queue == 0 or not s.chat or not s.chat.prompt_buf then
    return
  end
  local api = vim.api
  local buf = s.chat.prompt_buf
  local lines = {}
  for _, p in ipairs(s.queue) do
    if p.waiting then
      s.chat:remove(p.waiting)
    end
    if #lines > 0 then
      table.insert(lines, "")
    end
    vim.list_extend(lines, vim.split(p.text, "\n", { plain = true }))
  end
  local n = #s.queue
  s.queue = {}
  local typed = api.nvim_buf_get_lines(buf, 0, -1, false)
  if #typed == 1 and typed[1] == "" then
    api.nvim_buf_set_lines(buf, 0, -1, false, lines)
  else
    table.insert(lines, "")
    api.nvim_buf_set_lines(buf, 0, 0, false, lines)
  end
  s.chat:note(string.format("(%s: the %s queued for the turn %s back in the prompt; %s sends, or edit or clear %s)", why or "you interrupted the turn", n == 1 and "prompt" or (n .. " prompts"), n == 1 and "is" or "are", require("agentrun.config").get().keymaps.send_insert or "<C-s>", n == 1 and "it" or "them"))
  s.chat:render_header()
end

-- say_dropped puts the note of the prompts drop_queue dropped, if any.
function M.say_dropped(s)
  if s.dropped_note and s.chat then
    s.chat:note(s.dropped_note)
  end
  s.dropped_note = nil
end

-- backend_exited ends every session the backend of site ran (nil: the
-- local one; else the link to that machine ended, why says how, and kept
-- is its URL when its sessions go on there) and says so in their chats.
function M.backend_exited(site, why, kept)
  for _, s in ipairs(state.backend_exited(site, kept)) do
    if s.chat then
      local url = site and (rpc.site_url(site) or site)
      if kept then
        -- what waited for the turn is the user's still: back to the prompt
        M.hold_queue(s, "the link was lost")
        s.chat:note(string.format("(agentrun) %s; this session goes on there: :AgentRun %s takes it up again", why or ("lost the link to " .. url), url))
      else
        M.drop_queue(s)
        s.chat:note(site and string.format("(agentrun) %s; this session ended", why or ("the link to " .. url .. " ended")) or "(agentrun) the backend stopped; this session ended")
      end
      s.chat:render_header()
    end
  end
end

-- backend_gone says in the chats of the sessions gone that they ended:
-- they waited on url's machine (their link had dropped), and a new link
-- found their backend gone there (killed, or the machine restarted).
-- backend_found: the backend there runs, without them (they ended there
-- while the link was down).
function M.backend_gone(url, gone, backend_found)
  for _, s in ipairs(gone) do
    s.link_dropped = nil
    if s.chat then
      local why = backend_found and string.format("this session ended on %s while the link was down (its agent ended), and its commands with it", url)
        or string.format("the backend on %s is gone (it was killed, the machine restarted, or its agent ended while the link was down): this session ended there, and its commands with it", url)
      s.chat:note(string.format("(agentrun) %s. :AgentRun %s %s starts a new one", why, url, s.agent), "AgentRunError")
      s.chat:render_header()
    end
  end
end

-- say_link_dropped tells the user that session s is out of reach (its
-- link dropped; it goes on there) and how to take it up: as a message,
-- and in its chat too (from the prompt in Insert mode, "-- INSERT --"
-- hides a message at once).
function M.say_link_dropped(s)
  local msg = M.link_dropped_text("the session", s.link_dropped)
  warn(msg)
  if s.chat then
    s.chat:note("(agentrun) " .. msg, "AgentRunError")
  end
end

-- link_dropped_text says what to do about something of a machine whose
-- link dropped (url).
function M.link_dropped_text(what, url)
  return string.format("link lost; %s goes on there: :AgentRun %s", what, url)
end

-- request_running asks Go to `method` ("cancel", "stop") the running
-- session key (default: current). It warns and returns nil when there is
-- no such session or Go refused; else the session.
local function request_running(key, method)
  local s = state.session(key)
  if s and s.link_dropped then
    M.say_link_dropped(s)
    return nil
  end
  if not s or s.ended then
    warn("no running session to " .. method)
    return nil
  end
  local ok, msg = rpc.request(method, s.key)
  if not ok then
    warn(msg)
    return nil
  end
  return s
end

-- cancel(key) cancels the current turn of a session (default: current);
-- of a session still starting, it drops the prompts waiting for the start.
function M.cancel(key)
  local st = state.session(key)
  if st and not st.ended and st.starting then
    if #st.queue == 0 then
      warn(string.format("session %s is still starting; no prompt waits for it. :AgentStop stops it", st.key))
      return false
    end
    M.drop_queue(st)
    return true
  end
  if st and not st.ended and not st.busy and #st.queue == 0 then
    warn(string.format("nothing to cancel: session %s has no turn running", st.key))
    return false
  end
  local s = request_running(key, "cancel")
  if not s then
    return false
  end
  M.drop_queue(s, true)
  -- the agent's commands the cancel stops end by it, not by a failure
  for _, t in pairs(state.terminals) do
    if t.session == s.key and t.state == "running" and not t.user then
      t.cancelled = true
    end
  end
  -- An agent that ignores session/cancel leaves the turn running: say so,
  -- and how to get out of it.
  local turn = s.turn
  vim.defer_fn(function()
    if s.busy and not s.ended and s.turn == turn then
      local text = string.format("(agentrun) the agent has not ended the turn %gs after :AgentCancel; it may be hung. :AgentStop stops it and kills its terminals", M._cancel_patience_ms / 1000)
      s.chat:note(text, "AgentRunError")
      warn(text)
    end
  end, M._cancel_patience_ms)
  return true
end

-- _cancel_patience_ms is how long after :AgentCancel a still running turn
-- gets a note saying the agent may be hung.
M._cancel_patience_ms = 3000

-- stop(key) stops a session's agent; its terminals are killed and released.
function M.stop(key)
  return request_running(key, "stop") ~= nil
end

return M
