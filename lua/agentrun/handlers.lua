-- Which module handles each event Go sends (events.lua dispatches them),
-- and the handlers of a session's own events: started, updated, its turn
-- ended, ended. init loads this module, so every handler is registered
-- before the backend can send anything.
local agentterm = require("agentrun.ui.agentterm")
local approve = require("agentrun.ui.approve")
local ask = require("agentrun.ui.ask")
local binary = require("agentrun.binary")
local complete = require("agentrun.ui.complete")
local config = require("agentrun.config")
local conversation = require("agentrun.conversation")
local earlier_sessions = require("agentrun.earlier_sessions")
local events = require("agentrun.events")
local modes = require("agentrun.modes")
local permission = require("agentrun.ui.permission")
local elicit = require("agentrun.ui.elicit")
local signin = require("agentrun.ui.signin")
local state = require("agentrun.state")
local activity = require("agentrun.ui.activity")
local termend = require("agentrun.ui.termend")
local termlife = require("agentrun.ui.termlife")
local userterm = require("agentrun.ui.userterm")
local util = require("agentrun.util")

local function chat_of(p)
  local s = state.sessions[p.key or ""]
  return s, s and s.chat
end

local handlers = {}

---@param p agentrun.event.session_started
function handlers.session_started(p)
  local s, chat = chat_of(p)
  if not s then
    return
  end
  s.id = p.session_id
  s.terminals = p.terminals -- where its commands run, as the backend decided
  s.our_tool = p.our_tool ~= "" and p.our_tool or nil -- what became of our MCP terminal tool (our_tool)
  s.own_shell = p.own_shell ~= "" and p.own_shell or nil -- what became of its own shell (own_shell)
  s.cwd = p.cwd -- the project: "always allow" answers are kept per cwd (agentrun.policy)
  local signed_in = s.signin
  s.starting, s.signin = false, nil
  modes.started(s, p)
  if chat then
    chat:render_header()
    if signed_in then
      chat:note("(agentrun) signed in; the session has started")
    end
    if p.note then
      chat:note("(agentrun) " .. p.note)
    end
  end
  if not p.replaying then
    conversation.flush(s)
  end -- else once the history has come (history_replayed)
end

---@param p agentrun.event.history_replayed
function handlers.history_replayed(p)
  local s = chat_of(p)
  if s then
    conversation.flush(s)
  end
end

---@param p agentrun.event.session_failed
function handlers.session_failed(p)
  local s, chat = chat_of(p)
  if not s then
    return
  end
  s.starting, s.ended = false, true
  if chat then
    conversation.drop_queue(s) -- what waited for the start goes nowhere
  end
  s.queue = {}
  local msg, note = "could not start agent " .. s.agent .. ": " .. tostring(p.error), "could not start the agent: " .. tostring(p.error)
  if p.cannot_run then
    -- its command is missing or no program: the sentence :checkhealth says
    local problem, advice = config.cmd_problem(s.agent, p.command, p.cannot_run)
    local site = state.site_of(s.key)
    if site then
      -- on the machine it was to run on, not this one
      local host = (s.host or site):gsub("^ssh://", "")
      problem = string.format("%s on %s", problem, host)
      advice = string.format("install it there (on the PATH a command gets over ssh, or in ~/.local/bin), or fix agents.%s.cmd in setup()", s.agent)
    end
    msg = problem .. "; " .. advice
    note = msg
  end
  if chat then
    chat:render_header()
    chat:note("(agentrun) " .. note, "AgentRunError")
  end
  util.notify(msg, vim.log.levels.ERROR)
end

-- session_quiet: the agent has not answered initialize for a while (a
-- hung or wrong command). Said once, with how to get out of it.
---@param p agentrun.event.session_quiet
function handlers.session_quiet(p)
  local s, chat = chat_of(p)
  if not s or s.ended or not s.starting then
    return
  end
  s.quiet = true -- the status line says so too, until the session starts or ends
  local msg = string.format("no answer from agent %q yet (%ds); :AgentStop stops it", s.agent, p.seconds or 0)
  if chat then
    chat:render_header()
    chat:note(string.format("(agentrun) %s (details in %s)", msg, binary.log_path()), "AgentRunError")
  end
  -- short: it comes unasked, and a line that wraps stops the screen
  util.notify(msg, vim.log.levels.WARN)
end

---@param p agentrun.event.session_update
function handlers.session_update(p)
  local s, chat = chat_of(p)
  if s and type(p.update) == "table" and p.update.sessionUpdate == "available_commands_update" then
    complete.commands(s, p.update.availableCommands)
    return
  end
  if s and type(p.update) == "table" and modes.update(s, p.update) then
    if chat then
      chat:render_header()
    end
    return
  end
  if chat and type(p.update) == "table" then
    chat:update(p.update)
  end
end

local changed_files

-- changed_files reloads what the turn's commands changed (buffers
-- without unsaved edits) and lists in the chat the files that changed
-- while the turn ran, <CR> on one showing its diff against how it was
-- before the turn (or, for a file with unsaved edits here, against
-- those).
local most_listed = 10

changed_files = function(s, chat)
  local disk = require("agentrun.disk")
  disk.refresh()
  local changes = disk.turn_end(s)
  if #changes == 0 then
    return
  end
  local head = chat:note(string.format("files changed this turn (%d; <CR> on one shows its diff, here reviews them all):", #changes))
  head.opens = { [0] = function()
    require("agentrun.ui.review").open(s, "turn")
  end }
  for i, c in ipairs(changes) do
    if i > most_listed then
      chat:note(string.format("  … and %d more (:AgentReview shows them all)", #changes - most_listed))
      break
    end
    local b = chat:note("  " .. c.name .. (c.conflict and "  ⚠ you have unsaved edits in it: <CR> compares them with it" or ""), c.conflict and "AgentRunError" or nil)
    b.opens = { [0] = function()
      disk.diff_change(c)
    end }
  end
end

---@param p agentrun.event.turn_end
function handlers.turn_end(p)
  local s, chat = chat_of(p)
  if not s then
    return
  end
  s.busy = false
  s.interrupted = nil -- (a <C-c> of the next turn starts anew)
  local interrupted = s.interrupted_note ~= nil -- the user pressed <C-c> in this turn
  if chat then
    chat:end_message() -- the next turn's answer starts a line of its own
    if s.interrupted_note then
      chat:remove(s.interrupted_note) -- its "<C-c> again" no longer holds
      s.interrupted_note = nil
    end
  end
  local why = p.stopped and "stopped" or p.stop_reason == "cancelled" and "cancelled" or "unfinished"
  s.turn_ended_by = why == "unfinished" and "ended with the turn" or why
  agentterm.settle(s.key, s.turn_ended_by)
  if chat then
    chat:settle(why)
    chat:render_header()
    if p.stopped then
      -- the user stopped the session (:AgentStop) under the turn: not a
      -- failure, and the session's end says so
    elseif p.error and p.error ~= "" and s.ended then
      -- the session ended under the turn; its note already says why
    elseif p.error and p.error ~= "" then
      chat:note("(agentrun) the turn failed: " .. p.error, "AgentRunError")
    elseif p.stop_reason and p.stop_reason ~= "end_turn" then
      chat:note("(turn ended: " .. p.stop_reason .. ")")
    end
  end
  if chat then
    changed_files(s, chat)
  end
  conversation.say_dropped(s) -- after the turn's last words (:AgentCancel)
  if interrupted and chat then
    conversation.hold_queue(s) -- the user stopped something: ask before going on
  end
  conversation.flush(s)
end

---@param p agentrun.event.session_ended
function handlers.session_ended(p)
  local s, chat = chat_of(p)
  if not s then
    return
  end
  s.ended, s.busy, s.starting = true, false, false
  agentterm.settle(s.key, "stopped")
  if chat then
    chat:settle("stopped")
    conversation.drop_queue(s) -- nothing is left to send them to
    conversation.say_dropped(s) -- one a cancel left for the turn's end
  end
  if p.reason and p.reason ~= "" then
    -- the agent ended on its own (crashed, exited, closed its stdout)
    local msg = string.format("(agentrun) the agent stopped: %s. Its terminals were killed. :AgentRun starts a new session (details in %s)", p.reason, binary.log_path())
    if chat then
      chat:render_header()
      chat:note(msg, "AgentRunError")
    end
    util.notify(msg, vim.log.levels.ERROR)
  elseif chat then
    chat:render_header()
    if p.stopped then
      chat:note("(agentrun) you stopped this session (:AgentStop); its terminals were killed. :AgentRun starts a new one")
    else
      chat:note("(agentrun) session ended; :AgentRun starts a new one")
    end
  end
end

-- prompt_sent: the user's prompt, replayed to a Neovim taking the
-- session up again (launch.lua's adopt); the turn it started runs until its
-- turn_end.
---@param p agentrun.event.prompt_sent
function handlers.prompt_sent(p)
  local s, chat = chat_of(p)
  if not s then
    return
  end
  s.busy = true
  s.turn = (s.turn or 0) + 1
  if chat then
    chat:end_message()
    chat:user(tostring(p.text))
    chat:render_header()
  end
end

-- chat_note: a line a chat showed about a question (asked, answered,
-- refused by a rule), replayed to a Neovim taking the session up again.
---@param p agentrun.event.chat_note
function handlers.chat_note(p)
  local s, chat = chat_of(p)
  if not chat or (s.noted and s.noted[(p.tool_call or "") .. "\0" .. tostring(p.text)]) then
    return -- (written already: a question still open, asked again)
  end
  if p.tool_call and p.tool_call ~= "" then
    chat:note_before(p.tool_call, tostring(p.text), "AgentRunPermission")
  else
    chat:note(tostring(p.text), "AgentRunPermission")
  end
end

---@param p agentrun.event.message
function handlers.message(p)
  local msg = tostring(p.text)
  if msg:sub(1, 11) ~= "(agentrun) " then
    msg = "(agentrun) " .. msg -- the chat's note has it too
  end
  local _, chat = chat_of(p)
  if chat then
    chat:note(msg, p.level == "error" and "AgentRunError" or "AgentRunNote")
  end
  local level = ({ error = vim.log.levels.ERROR, info = vim.log.levels.INFO })[p.level] or vim.log.levels.WARN
  util.notify(msg, level)
end

-- Events a UI module handles whole.
handlers.terminal_created = termlife.created
handlers.terminal_exit = termlife.exited
handlers.display_ended = termend.display_ended
handlers.terminal_released = termlife.released
handlers.terminal_activity = activity.activity
handlers.remote_claimed = userterm.remote_claimed
handlers.ssh_connected = require("agentrun.ui.terminals").ssh_connected
handlers.tool_terminal = termlife.tool_terminal

-- our_tool: what the agent did with our MCP terminal tool (listed it,
-- used it, or never listed it), as status() reports it; the chat says it
-- once.
---@param p agentrun.event.our_tool
function handlers.our_tool(p)
  local s, chat = chat_of(p)
  if not s then
    return
  end
  s.our_tool = p.our_tool
  if chat and p.note then
    chat:note("(agentrun) " .. p.note)
  end
end
handlers.agent_terminal = agentterm.agent_terminal
handlers.auth_required = signin.required
handlers.session_list = earlier_sessions.listed
handlers.permission = permission.ask
handlers.permission_cancelled = ask.cancelled
handlers.elicitation = elicit.ask
handlers.elicitation_withdrawn = ask.cancelled
handlers.elicitation_complete = elicit.complete
handlers.approve = approve.ask
handlers.approve_cancelled = ask.cancelled

for name, fn in pairs(handlers) do
  events.on(name, fn)
end
events.check()

return {}

