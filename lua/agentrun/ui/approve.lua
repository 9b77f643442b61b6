-- Command approval (terminal.approve): before a command the agent asked
-- for runs, Go sends "approve" with the exact command line (and the name
-- of the agent's current mode when it asks before acting: "agent", the
-- default, asks then and only then). The policy
-- (agentrun.policy: rules on the line's simple commands, a function,
-- remembered answers) decides; "ask" shows vim.ui.select with the command
-- line, its cwd and its machine when not this one (an agent's file write
-- outside the project, or any under "ask", is asked the same way: Go sends
-- "approve" with the file). Closing a picker of the user's own refuses; the agent then gets an error saying the user did not allow it
-- (or which rule refused it).
-- "Always allow" remembers the line's simple commands for the project on
-- that machine. The chat says what decided, before the tool call.
local ask = require("agentrun.ui.ask")
local policy = require("agentrun.policy")
local state = require("agentrun.state")

local M = {}

-- reply is the answer to Go: "run", or "" (the user refused).
local function reply(allowed)
  return allowed and "run" or ""
end

local note = ask.note

-- ask_write asks whether the agent may write file p.file (p.real once
-- symlinks and .. are resolved): Go asks when it is outside the project,
-- or inside under terminal.approve = "ask". No answer is remembered: a
-- file is no command a rule could name, and "any file" is no answer.
local function ask_write(p, s)
  local _, host = policy.machine_of(p.key)
  local shown = p.file
  if p.real and p.real ~= "" and p.real ~= p.file then
    shown = p.file .. " (that is " .. p.real .. ")"
  end
  if host then
    shown = shown .. " on " .. host
  end
  local why = p.outside and "it is outside the project" or 'terminal.approve is "ask"'
  note(s, string.format("? write file %s  (%s)", shown, why))
  ask.select(p.token, { "Write it", "Refuse" }, {
    prompt = string.format("(agentrun) %s wants to write %s%s", s and s.agent or "the agent", shown, p.outside and ", OUTSIDE the project" or ""),
    kind = "agentrun.write",
  }, function(_, idx)
    note(s, idx == 1 and "  → written" or "  → refused")
    return idx == 1 and "write" or ""
  end, s)
end

-- recheck decides again on question e before it is shown: an answer
-- given meanwhile ("Always allow" on another) may now allow it. It
-- returns true when e is still to be asked (and open).
local function recheck(e)
  if not ask.is_open(e.p.token) then
    return false -- withdrawn, or answered
  end
  local v = policy.again(e.cmd)
  if not v then
    return true
  end
  note(e.s, policy.said(v, e.p.line), e.p.tool_call)
  ask.finish(e.p.token, reply(v.decision == "run", v.reason))
  return false
end

-- single is the picker for one question e: items, opts and on_choice
-- (as vim.ui.select's).
local function single(e)
  local items = { "Run it", "Refuse" }
  if #e.keep > 0 then
    table.insert(items, "Always allow in this project" .. (e.host and (" on " .. e.host) or "") .. ": " .. table.concat(e.keep, " · "))
  end
  local p, s = e.p, e.s
  return items, {
    prompt = string.format("(agentrun) %s wants to run (%s):  $ %s", e.cmd.agent or "the agent", e.where, p.line),
    kind = "agentrun.approve",
  }, function(_, idx)
    if idx == 3 then
      local kept, skipped = policy.remember(e.project, e.machine, e.v)
      local msg = "  → run, and always allowed here: " .. table.concat(kept, " · ") .. " (" .. policy.file(e.project, e.machine) .. ")"
      if #skipped > 0 then
        msg = msg .. "; not kept (words known only when it runs): " .. table.concat(skipped, " · ")
      end
      note(s, msg, p.tool_call)
      return reply(true)
    end
    note(s, idx == 1 and "  → run" or "  → refused", p.tool_call)
    return reply(idx == 1)
  end
end

-- group is the question for several at once (es, each still open): each
-- command named, answered for all of them (or one by one: ask.gatherer
-- asks each on its own then, in order).
local function group(es)
  local first = es[1]
  local n = #es
  local lines, keeps = {}, {}
  for i, e in ipairs(es) do
    lines[i] = e.p.line .. (e.where ~= first.where and ("  (" .. e.where .. ")") or "")
    keeps[i] = e.keep
  end
  local q = {
    title = string.format("(agentrun) %s wants to run %d commands (%s):", first.cmd.agent or "the agent", n, first.where),
    lines = lines,
    keeps = keeps,
    verb = "Run",
    host = first.host,
    kind = "agentrun.approve",
  }
  q.answer = function(run, always)
    local kept, skipped, have = {}, {}, {}
    for _, e in ipairs(es) do
      if ask.is_open(e.p.token) then
        if always then
          local k, sk = policy.remember(e.project, e.machine, e.v)
          vim.list_extend(kept, k)
          for _, t in ipairs(sk) do
            if not have[t] then
              have[t] = true
              table.insert(skipped, t)
            end
          end
        end
        note(e.s, (run and "  → run: $ " or "  → refused: $ ") .. e.p.line, e.p.tool_call)
        ask.finish(e.p.token, reply(run))
      end
    end
    if always then
      local msg = "  (always allowed here: " .. (#kept > 0 and table.concat(kept, " · ") or "nothing new") .. ", in " .. policy.file(first.project, first.machine)
      if #skipped > 0 then
        msg = msg .. "; not kept (words known only when it runs): " .. table.concat(skipped, " · ")
      end
      note(first.s, msg .. ")")
    end
  end
  return q
end

-- gather asks a command with the others of its session that come at the
-- same moment (an agent's parallel commands): one question names them all.
local gather = ask.gatherer({ still = recheck, single = single, group = group })

-- ask handles one request from Go: { token, key, session_id, line, argv,
-- env, cwd, sandbox, asks_first }, or a file write's { token, key, file,
-- real, outside }. env ({ "NAME=value" }, what the agent set for the
-- command) is judged with the line and shown with it. Questions of one
-- session that come together (an agent's parallel commands) are asked as
-- one, naming each command.
---@param p agentrun.event.approve
function M.ask(p)
  local s = state.sessions[p.key or ""]
  if p.file and p.file ~= "" then
    return ask_write(p, s)
  end
  local machine, host = policy.machine_of(p.key)
  local project = s and s.cwd or vim.fn.getcwd()
  local env = type(p.env) == "table" and p.env or {}
  local cmd = { line = p.line, argv = p.argv, env = env, how = { env = #env > 0 and env or nil }, cwd = p.cwd, session = p.session_id, agent = s and s.agent, sandbox = p.sandbox ~= "" and p.sandbox or nil, project = project, key = p.key, machine = machine }
  -- Go asked: it alone decides when to ask (terminal.approve "run" asks
  -- nothing, "agent" only while the agent's mode asks first), as the
  -- session started; the rules decide what they can, else the user
  local v = policy.verdict(cmd)
  if v.decision ~= "ask" then
    note(s, policy.said(v, p.line), p.tool_call)
    -- refused by the rules, not the user: the agent is told why
    ask.answer(p.token, reply(v.decision == "run"), v.decision ~= "run" and v.reason or nil)
    return
  end
  local where = (host and ("on " .. host .. ", ") or "") .. "in " .. p.cwd
  if p.sandbox and p.sandbox ~= "" then
    where = where .. ", sandbox " .. p.sandbox
  end
  if #env > 0 then
    where = where .. ", env " .. table.concat(env, " ")
  end
  local why = p.asks_first and string.format("the agent's mode %s asks first", p.asks_first) or v.reason
  note(s, string.format("? run command (%s): $ %s  (%s)", where, p.line, why), p.tool_call)
  local e = { p = p, s = s, cmd = cmd, v = v, keep = policy.keeps(v), where = where, host = host, project = project, machine = machine }
  gather(e)
end

return M
