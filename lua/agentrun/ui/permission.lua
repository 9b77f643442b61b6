-- Permission requests: vim.ui.select over the agent's options, showing the
-- tool call's title and, for commands, the exact command line. Closing the
-- picker answers "cancelled".
local ask = require("agentrun.ui.ask")
local policy = require("agentrun.policy")
local state = require("agentrun.state")

local M = {}

-- quote writes one argv word as a shell reads it back (for the line a
-- person reads).
local function quote(w)
  if w ~= "" and not w:find("[^%w%-_./=:,+@%%]") then
    return w
  end
  return "'" .. w:gsub("'", "'\\''") .. "'"
end

-- command_line finds the command a tool call will run: rawInput.command
-- (a string or a list), or the command of a terminal it embeds, and how
-- it runs (policy.check's how): a list is an argv run as it is, judged
-- word by word (Codex's ["/bin/bash", "-lc", "rm -rf x"] is bash running
-- the script "rm -rf x"), a string is a line for the agent's bash.
local function command_line(tc)
  local raw = type(tc.rawInput) == "table" and tc.rawInput or {}
  local cmd = raw.command or raw.cmd
  if type(cmd) == "table" and #cmd > 0 then
    local argv = vim.tbl_map(tostring, cmd)
    return table.concat(vim.tbl_map(quote, argv), " "), { argv = argv }
  end
  if type(cmd) == "string" and cmd ~= "" then
    return cmd, { dialect = "bash" }
  end
  for _, c in ipairs(type(tc.content) == "table" and tc.content or {}) do
    local t = c.type == "terminal" and state.terminals[c.terminalId]
    if t and t.command then
      return t.command
    end
  end
end

-- how_long says in words for how long an option's kind answers, unless
-- its name says so already ("Always Allow").
local how_long = { allow_once = "this time", reject_once = "this time", allow_always = "from now on", reject_always = "from now on" }

-- option_text is a permission option as a person reads it: its name and,
-- when the name does not say, for how long ("Allow — this time").
local function option_text(o)
  local name = o.name or o.optionId or "?"
  local lower = name:lower()
  local span = how_long[o.kind or ""]
  if not span or lower:find("always") or lower:find("once") or lower:find("this time") then
    return name
  end
  return name .. " — " .. span
end

-- option returns the first of options whose kind is one of kinds, in
-- the order of kinds.
local function option(options, kinds)
  for _, k in ipairs(kinds) do
    for _, o in ipairs(options or {}) do
      if o.kind == k then
        return o
      end
    end
  end
end

-- first_diff returns the first diff a tool call shows (an edit).
local function first_diff(tc)
  for _, c in ipairs(type(tc.content) == "table" and tc.content or {}) do
    if c.type == "diff" then
      return c
    end
  end
end

-- decided answers request e by the rules when they decide it now (an
-- "Always allow" given while it waited), and reports whether they did.
local function decided(e)
  if not ask.is_open(e.p.token) then
    return true
  end
  local v = policy.verdict(e.cmd_args, true)
  if not v or v.decision == "ask" then
    return false
  end
  local opt = option(e.p.options, v.decision == "run" and { "allow_once", "allow_always" } or { "reject_once", "reject_always" })
  ask.note(e.s, policy.said(v, e.cmd, e.title), e.tc.toolCallId)
  ask.finish(e.p.token, opt and opt.optionId or "")
  return true
end

-- keepable lists what "Always allow" would keep of e's command.
local function keepable(e)
  local c = policy.check(e.p.key, e.cmd, nil, policy.remembered(e.project, e.machine), e.how)
  e.check = c
  return policy.keeps(c)
end

-- group is the question for several requests at once (es): each command
-- named; allowed or refused all together (or asked one by one:
-- ask.gatherer does).
local function group(es)
  local first, n = es[1], #es
  local lines, keeps = {}, {}
  for i, e in ipairs(es) do
    lines[i] = e.cmd
    keeps[i] = keepable(e)
  end
  local q = {
    title = string.format("(agentrun) %s asks permission for %d commands%s:", first.s and first.s.agent or "the agent", n, first.host and (" (on " .. first.host .. ")") or ""),
    lines = lines,
    keeps = keeps,
    verb = "Allow",
    host = first.host,
    kind = "agentrun.permission",
  }
  q.answer = function(allow, always, keep)
    for _, e in ipairs(es) do
      if ask.is_open(e.p.token) and not ask.unreachable(e.p.token) then
        local kinds = allow and { "allow_once", "allow_always" } or { "reject_once", "reject_always" }
        if always then
          policy.remember(e.project, e.machine, e.check)
          kinds = { "allow_always", "allow_once" }
        end
        local opt = option(e.p.options, kinds)
        ask.note(e.s, (allow and "  → allowed: $ " or "  → refused: $ ") .. e.cmd, e.tc.toolCallId)
        ask.finish(e.p.token, opt and opt.optionId or "")
      end
    end
    if always then
      ask.note(first.s, "  (always allowed here: " .. table.concat(keep, " · ") .. ", in " .. policy.file(first.project, first.machine) .. ")")
    end
  end
  return q
end

-- gather asks request e with the others of its session that come at the
-- same moment (an agent's parallel commands): one question for all, as
-- each alone would have been asked when it is one.
local gather = ask.gatherer({
  still = function(e)
    return not decided(e)
  end,
  single = function(e)
    return e.items, e.opts, e.on_choice
  end,
  group = group,
})

-- ask shows the picker for one request from Go:
-- { token, key, tool_call = ToolCallUpdate, options = { PermissionOption } }.
-- For an edit it offers to view the diff side by side first: the question
-- waits, and comes back once that view is closed.
---@param p agentrun.event.permission
function M.ask(p, again)
  local s = state.sessions[p.key or ""]
  local tc = p.tool_call or {}
  -- the request carries only what changed; merge with what the chat knows.
  local known = s and s.tool_calls[tc.toolCallId or ""] or {}
  local merged = vim.tbl_extend("force", known, tc)
  local title = merged.title or "a tool call"
  local cmd, how = command_line(merged)
  local prompt = string.format("(agentrun) %s asks permission: %s", s and s.agent or "the agent", title)
  if cmd and cmd ~= title then
    prompt = prompt .. "  $ " .. cmd
  end
  -- A request about a command answers to the one policy (terminal.approve
  -- and what was always allowed in this project), as our terminals do.
  local project = s and s.cwd or vim.fn.getcwd()
  local machine, host = policy.machine_of(p.key)
  if host then
    prompt = prompt .. "  (on " .. host .. ")"
  end
  local v
  if cmd then
    v = policy.verdict({ line = cmd, how = how, cwd = merged.rawInput and merged.rawInput.cwd or project, session = p.session_id, agent = s and s.agent, project = project, key = p.key, machine = machine }, true)
  end
  if v and not again and v.decision ~= "ask" then
    local run = v.decision == "run"
    local opt = option(p.options, run and { "allow_once", "allow_always" } or { "reject_once", "reject_always" })
    ask.note(s, policy.said(v, cmd, title), tc.toolCallId)
    ask.answer(p.token, opt and opt.optionId or "")
    return
  end
  -- A command named only by the tool call's title (Gemini CLI sends no
  -- rawInput): a deny rule holds for it, but the title is the agent's
  -- word, not what we would run, so nothing is allowed unasked on it.
  local named = not cmd and merged.kind == "execute" and type(merged.title) == "string" and merged.title ~= "" and merged.title or nil
  local why = ""
  if named then
    local nv = policy.verdict({ line = named, how = { dialect = "bash" }, cwd = project, session = p.session_id, agent = s and s.agent, project = project, key = p.key, machine = machine }, true)
    if nv and nv.decision == "refuse" and not again then
      local opt = option(p.options, { "reject_once", "reject_always" })
      ask.note(s, string.format("✗ %s: %s (the command as the agent names it)", nv.reason, named), tc.toolCallId)
      ask.answer(p.token, opt and opt.optionId or "")
      return
    elseif nv and nv.decision == "run" then
      -- an allowed command asked all the same: the question says why
      why = string.format(" (asked though your rules allow it: %s names the command only in a title, which agentrun does not run unasked)", s and s.agent or "the agent")
      prompt = prompt .. why
    end
  end
  if not again then
    ask.note(s, "? permission: " .. title .. (cmd and cmd ~= title and ("  $ " .. cmd) or "") .. why, tc.toolCallId)
  end
  local items = vim.list_extend({}, p.options or {})
  local diff = first_diff(merged)
  local view = { view_diff = true }
  if diff then
    table.insert(items, view)
  end
  local opts = {
    prompt = prompt,
    kind = "agentrun.permission",
    format_item = function(o)
      if o.view_diff then
        return "View the diff side by side first (q there brings this question back)"
      end
      return option_text(o)
    end,
  }
  local function on_choice(choice)
    if choice == view then
      require("agentrun.ui.toolcall").open_diff(diff, function()
        if ask.is_open(p.token) then
          M.ask(p, true)
        end
      end)
      return nil -- no answer yet
    end
    local id = type(choice) == "table" and choice.optionId or ""
    if cmd and type(choice) == "table" and choice.kind == "allow_always" then
      policy.remember(project, machine, v or policy.check(p.key, cmd, nil, policy.remembered(project, machine), how))
    end
    ask.note(s, "  → " .. (type(choice) == "table" and (choice.name or id) or "cancelled"), tc.toolCallId)
    return id
  end
  if cmd and not diff and not again then
    -- a command: asked with the others that come at the same moment
    return gather({
      p = p, s = s, tc = tc, cmd = cmd, how = how, title = title, project = project, machine = machine, host = host,
      cmd_args = { line = cmd, how = how, cwd = merged.rawInput and merged.rawInput.cwd or project, session = p.session_id, agent = s and s.agent, project = project, key = p.key, machine = machine },
      items = items, opts = opts, on_choice = on_choice,
    })
  end
  ask.select(p.token, items, opts, on_choice, s)
end

return M
