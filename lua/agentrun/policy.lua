-- One approval policy for every command, whoever runs it: terminal.approve
-- decides for the commands the agent runs in our terminals (ui/approve.lua)
-- and for the agents' own permission requests that carry a command
-- (Claude Code's Bash, Codex's exec: ui/permission.lua). A line is judged
-- by its simple commands: the backend parses it as a shell does
-- (check_command, Go's internal/cmdrule), so a rule never lets a second
-- command ride along. "Always allow" answers keep those simple commands
-- per machine and project in a plain text file, one a line (written as a
-- rule: `*` is any text; lines starting with # are comments), which the
-- user may read and edit.
local config = require("agentrun.config")
local rpc = require("agentrun.rpc")
local util = require("agentrun.util")

local M = {}

-- file is where the "always allow" answers of the project at cwd are kept
-- (stdpath("state")/agentrun/allow/, the project's path with % for /; for
-- a project on another machine, in a folder named for the machine,
-- allow/me@devbox/…, so an answer given there never allows a command
-- here). A local file Neovim 0.7 kept under stdpath("data") (agentrun did
-- until 0.7 got the same state directory as 0.8+) is moved there the
-- first time.
function M.file(cwd, machine)
  local compat = require("agentrun.compat")
  local dir = cwd or vim.fn.getcwd()
  if not machine then
    dir = vim.fn.fnamemodify(dir, ":p")
  end
  local name = dir:gsub("/$", ""):gsub("/", "%%")
  name = name == "" and "%" or name
  if machine then
    local host = machine:gsub("^ssh://", ""):gsub("[/%%]", "_")
    return compat.state_dir() .. "/agentrun/allow/" .. host .. "/" .. name .. ".txt"
  end
  local base = "/agentrun/allow/" .. name .. ".txt"
  local path = compat.state_dir() .. base
  local old = compat.old_state_dir() .. base
  if old ~= path and vim.fn.filereadable(path) == 0 and vim.fn.filereadable(old) == 1 then
    vim.fn.mkdir(vim.fn.fnamemodify(path, ":h"), "p")
    if vim.fn.rename(old, path) ~= 0 then
      return old -- cannot move it: keep using it where it is
    end
  end
  return path
end

-- remembered returns the commands kept for the project at cwd (on
-- machine; nil: this one).
function M.remembered(cwd, machine)
  local out = {}
  local path = M.file(cwd, machine)
  if vim.fn.filereadable(path) == 0 then
    return out
  end
  for _, line in ipairs(vim.fn.readfile(path)) do
    line = vim.trim(line)
    if line ~= "" and line:sub(1, 1) ~= "#" then
      table.insert(out, line)
    end
  end
  return out
end

-- keepable says "Always allow" may keep simple command c (of a verdict's
-- commands): one not allowed yet, whose words are all known before it
-- runs, and no cd (pushd, popd) out of the project, which is asked each
-- time (kept, it would allow what comes after it anywhere).
function M.keepable(c)
  return not c.allowed and c.exact and c.text ~= "" and not M.leaves(c)
end

-- keeps lists the texts "Always allow" would keep of verdict v
-- (check_command's answer): none when a word of the line is unknown (it
-- would be asked again anyway) or a cd leaves the project (asked each
-- time: keeping the rest would not stop the line being asked again).
function M.keeps(v)
  local out = {}
  if #(v.unknown or {}) > 0 then
    return out
  end
  for _, c in ipairs(v.commands or {}) do
    if M.keepable(c) then
      table.insert(out, c.text)
    elseif not c.allowed and c.exact and M.leaves(c) then
      return {}
    end
  end
  return out
end

-- leaves says simple command c changes the directory (cd, pushd, popd;
-- env -C is judged as a cd): asked each time it leaves the project.
function M.leaves(c)
  local program = (c.text or ""):match("^%s*(%S+)")
  return program == "cd" or program == "pushd" or program == "popd"
end

-- remember keeps each simple command of verdict (check_command's answer)
-- not allowed yet as always allowed in the project at cwd (on machine).
-- It returns the texts kept, and those that cannot be kept: a command
-- with a word known only when it runs would, kept, allow more than the
-- user saw.
function M.remember(cwd, machine, verdict)
  local kept, skipped = {}, {}
  local have = {}
  for _, p in ipairs(M.remembered(cwd, machine)) do
    have[p] = true
  end
  for _, c in ipairs(verdict and verdict.commands or {}) do
    if not c.allowed and c.text ~= "" and (M.keepable(c) or not c.exact) then
      if not c.exact then
        table.insert(skipped, c.text)
      elseif not have[c.text] then
        have[c.text] = true
        table.insert(kept, c.text)
      end
    end
  end
  if #kept == 0 then
    return kept, skipped
  end
  local path = M.file(cwd, machine)
  vim.fn.mkdir(vim.fn.fnamemodify(path, ":h"), "p")
  local lines = vim.fn.filereadable(path) == 1 and vim.fn.readfile(path) or {
    "# agentrun: commands always allowed in " .. (machine and (machine .. " ") or "") .. (cwd or vim.fn.getcwd()),
    "# One simple command a line, written as a terminal.approve rule (* is any text). Edit freely.",
  }
  for _, t in ipairs(kept) do
    table.insert(lines, (t:gsub("\n", " ")))
  end
  vim.fn.writefile(lines, path)
  return kept, skipped
end

-- machine_of returns the URL of the machine session key runs on (nil:
-- this one) and its host as a person names it.
function M.machine_of(key)
  local site = require("agentrun.state").site_of(key)
  if not site then
    return nil, nil
  end
  local url = rpc.site_url(site) or site
  return url, (url:gsub("^ssh://", ""))
end

local said_errors = {}

-- check asks the backend of session key what line runs and what the
-- rules (and the remembered answers) say of it: { decision = "run" |
-- "refuse" | "ask", reason, commands = { { text, program, allowed, by,
-- denied, exact } }, unknown = { why } }. A backend that cannot answer
-- gives "ask", saying why, with failed = true. how says how the line
-- runs, when not in agentrun's terminals: { argv = { ... } } for a
-- command run without a shell (Codex's exec argv, judged word by word),
-- { dialect = "bash" } for an agent's own Bash; its env ({ "NAME=value" },
-- terminal/create's) is judged too.
function M.check(key, line, rules, remembered, how)
  rules = rules or {}
  how = how or {}
  local v, err = rpc.request("check_command", key, {
    line = line,
    allow = rules.allow or {},
    deny = rules.deny or {},
    otherwise = rules.otherwise or "ask",
    remembered = remembered,
    argv = how.argv,
    dialect = how.dialect,
    env = how.env,
  })
  if type(v) ~= "table" then
    return { decision = "ask", reason = "asked: " .. tostring(err or "the backend could not check the line"), commands = {}, unknown = {}, failed = true }
  end
  if type(v.errors) == "table" and #v.errors > 0 and not said_errors[v.errors[1]] then
    said_errors[v.errors[1]] = true -- once, not before every command
    util.notify("terminal.approve: " .. v.errors[1], vim.log.levels.WARN)
  end
  return v
end

-- verdict decides for cmd ({ line, argv, cwd, session, agent, project,
-- key, machine, how }; how as for check): { decision = "run" | "refuse" | "ask", reason,
-- commands, unknown }, or nil for an agent's own permission request
-- (own = true) that no rule or answer decides: its own question is shown
-- as it comes. By terminal.approve:
--   "agent", "ask", "run": what was always allowed runs; else ask;
--   rules { allow, deny, otherwise }: the backend decides on the line's
--     simple commands, remembered answers allowing as allow rules do;
--   a function: called with cmd, cmd.commands (the simple commands,
--     { text, program }) and cmd.unknown (what of the line cannot be
--     known before it runs); its true runs only a line with nothing
--     unknown, else the user is asked.
-- A refusal (a deny rule, the function's false) wins over a remembered
-- answer.
function M.verdict(cmd, own)
  local approve = config.get().terminal.approve
  local kept = M.remembered(cmd.project, cmd.machine)
  if type(approve) == "table" then
    return M.check(cmd.key, cmd.line, approve, kept, cmd.how)
  end
  local v = M.check(cmd.key, cmd.line, nil, kept, cmd.how)
  if type(approve) == "function" then
    local arg = vim.deepcopy(cmd)
    arg.commands = vim.tbl_map(function(c)
      return { text = c.text, program = c.program }
    end, v.commands or {})
    arg.unknown = vim.deepcopy(v.unknown or {})
    local ok, res = pcall(approve, arg)
    if not ok then
      util.notify("terminal.approve failed, so the command was refused: " .. tostring(res), vim.log.levels.ERROR)
      return { decision = "refuse", reason = "refused: terminal.approve failed", commands = v.commands }
    end
    if res == false then
      return { decision = "refuse", reason = "refused by terminal.approve (the function)", commands = v.commands }
    elseif res == true and #(v.unknown or {}) > 0 then
      return { decision = "ask", reason = "asked: terminal.approve allowed it, but " .. v.unknown[1], commands = v.commands, unknown = v.unknown }
    elseif res == true then
      return { decision = "run", reason = "allowed by terminal.approve (the function)", commands = v.commands }
    elseif res == "ask" then
      return v.decision == "run" and v or { decision = "ask", reason = v.reason, commands = v.commands, unknown = v.unknown }
    end
    util.notify(string.format("terminal.approve must return true, false or \"ask\", not %s; the command was refused", vim.inspect(res)), vim.log.levels.ERROR)
    return { decision = "refuse", reason = "refused: terminal.approve returned " .. vim.inspect(res), commands = v.commands }
  end
  if v.decision == "run" then
    return v
  end
  if own then
    return nil
  end
  return { decision = "ask", reason = v.reason, commands = v.commands, unknown = v.unknown }
end

-- again decides once more on a command asked but not shown yet: a rule
-- remembered meanwhile ("Always allow" on another question) may allow it
-- now. Only what can have changed is read again, the remembered answers:
-- a terminal.approve function is not called twice for one command. nil:
-- it is still to be asked.
function M.again(cmd)
  local approve = config.get().terminal.approve
  local rules = type(approve) == "table" and approve or nil
  local v = M.check(cmd.key, cmd.line, rules, M.remembered(cmd.project, cmd.machine), cmd.how)
  if v.decision == "run" or (rules and v.decision == "refuse") then
    return v
  end
  return nil
end

-- meaning says what each named value of terminal.approve does.
M.meaning = {
  agent = "ask when the agent's current mode asks before acting (Claude's Manual and Plan, Codex's Read-only), run otherwise",
  ask = "ask before every command (but those always allowed in this project)",
  run = "run every command without asking",
}

-- said is the chat's line for a command decided without asking: the
-- mark and the reason, then the agent's title and the command line, each
-- only when the line does not say it yet (the reason quotes the simple
-- command it judged: the whole line when it is all there is).
function M.said(v, line, title)
  local text = (v.decision == "run" and "✓ " or "✗ ") .. v.reason
  if title and title ~= "" and title ~= line and not text:find(title, 1, true) then
    text = text .. ": " .. title
  end
  if line and line ~= "" and not text:find("`" .. line .. "`", 1, true) then
    text = text .. "  $ " .. line
  end
  return text
end

-- describe says what terminal.approve is, for :checkhealth: for rules,
-- a line per rule saying what it matches.
function M.describe()
  local approve = config.get().terminal.approve
  if type(approve) == "table" then
    local lines = { "rules (each matches one simple command; a line runs unasked only when every command in it is allowed, and a deny refuses it)" }
    for _, k in ipairs({ "allow", "deny" }) do
      local list = approve[k] or {}
      local said = #list > 0 and rpc.request("describe_rules", list) or nil
      for i, p in ipairs(list) do
        local what = type(said) == "table" and said[i] or "(the backend is not running to say)"
        if k == "deny" then
          -- a deny rule refuses the whole line that holds such a command
          what = "refuses a line with " .. what:gsub(" %(one simple command[^)]*%)$", ""):gsub(" %(one simple command%)$", "") .. " anywhere in it"
        end
        table.insert(lines, string.format("  %s %q: %s", k, p, what))
      end
    end
    table.insert(lines, "  otherwise " .. (approve.otherwise or "ask") .. " (a line with a command no rule allows)")
    return table.concat(lines, "\n")
  elseif type(approve) == "function" then
    return "a function (it decides each command)"
  end
  return string.format("%q: %s", approve, M.meaning[approve] or "?")
end

return M
