-- One approval policy for every command, whoever runs it: terminal.approve
-- decides for the commands the agent runs in our terminals (ui/approve.lua)
-- and for the agents' own permission requests that carry a command
-- (Claude Code's Bash, Codex's exec: ui/permission.lua). "Always allow"
-- answers are remembered per project in a plain text file, one pattern a
-- line (`*` matches any text, lines starting with # are comments), which
-- the user may read and edit.
local config = require("agentrun.config")
local util = require("agentrun.util")

local M = {}

-- file is where the "always allow" answers of the project at cwd are kept
-- (stdpath("state")/agentrun/allow/, the project's path with % for /). A
-- file Neovim 0.7 kept under stdpath("data") (agentrun did until 0.7 got
-- the same state directory as 0.8+) is moved there the first time.
function M.file(cwd)
  local compat = require("agentrun.compat")
  local name = vim.fn.fnamemodify(cwd or vim.fn.getcwd(), ":p"):gsub("/$", ""):gsub("/", "%%")
  local base = "/agentrun/allow/" .. (name == "" and "%" or name) .. ".txt"
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

-- remembered returns the patterns kept for the project at cwd.
function M.remembered(cwd)
  local out = {}
  local path = M.file(cwd)
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

-- remember keeps line as always allowed in the project at cwd.
function M.remember(cwd, line)
  for _, p in ipairs(M.remembered(cwd)) do
    if p == line then
      return
    end
  end
  local path = M.file(cwd)
  vim.fn.mkdir(vim.fn.fnamemodify(path, ":h"), "p")
  local lines = vim.fn.filereadable(path) == 1 and vim.fn.readfile(path) or {
    "# agentrun: commands always allowed in " .. (cwd or vim.fn.getcwd()),
    "# One per line; * matches any text. Edit freely.",
  }
  table.insert(lines, (line:gsub("\n", " ")))
  vim.fn.writefile(lines, path)
end

-- matches says whether line matches pattern: `*` is any text (also none),
-- everything else is itself.
function M.matches(pattern, line)
  local parts = vim.split(pattern, "*", { plain = true })
  if #parts == 1 then
    return pattern == line
  end
  local first, last = parts[1], parts[#parts]
  if line:sub(1, #first) ~= first or #line < #first + #last or (last ~= "" and line:sub(-#last) ~= last) then
    return false
  end
  local at, stop = #first + 1, #line - #last
  for i = 2, #parts - 1 do
    local s, e = line:find(parts[i], at, true)
    if not s or e > stop then
      return false
    end
    at = e + 1
  end
  return true
end

local function any(patterns, line)
  for _, p in ipairs(patterns or {}) do
    if M.matches(p, line) then
      return p
    end
  end
end

-- verdict decides for cmd ({ line, argv, cwd, session, agent }): true
-- (run), false (refuse) or "ask". For the agent's own permission
-- requests (own = true) "never" and "always" give nil: the agent's own
-- question is shown as it comes. An explicit refusal (a deny rule, the
-- function's false) wins over a remembered "always allow".
function M.verdict(cmd, own)
  local approve = config.get().terminal.approve
  local remembered = any(M.remembered(cmd.project), cmd.line) ~= nil
  if type(approve) == "table" then
    if any(approve.deny, cmd.line) then
      return false
    end
    if any(approve.allow, cmd.line) or remembered then
      return true
    end
    local otherwise = approve.otherwise or "ask"
    return otherwise == "run" or (otherwise ~= "refuse" and "ask")
  elseif type(approve) == "function" then
    local ok, res = pcall(approve, vim.deepcopy(cmd))
    if not ok then
      util.notify("terminal.approve failed, so the command was refused: " .. tostring(res), vim.log.levels.ERROR)
      return false
    end
    if res == "ask" and remembered then
      return true
    end
    if res == true or res == false or res == "ask" then
      return res
    end
    util.notify(string.format("terminal.approve must return true, false or \"ask\", not %s; the command was refused", vim.inspect(res)), vim.log.levels.ERROR)
    return false
  end
  if remembered then
    return true
  end
  if own then
    return nil
  end
  return "ask"
end

-- describe says what terminal.approve is, for :checkhealth.
function M.describe()
  local approve = config.get().terminal.approve
  if type(approve) == "table" then
    local parts = {}
    for _, k in ipairs({ "allow", "deny" }) do
      if approve[k] and #approve[k] > 0 then
        table.insert(parts, k .. " " .. table.concat(vim.tbl_map(function(p)
          return string.format("%q", p)
        end, approve[k]), ", "))
      end
    end
    table.insert(parts, "otherwise " .. (approve.otherwise or "ask"))
    return "rules: " .. table.concat(parts, "; ")
  elseif type(approve) == "function" then
    return "a function (it decides each command)"
  end
  return string.format("%q", approve)
end

return M
