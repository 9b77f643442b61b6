-- A tool call as the chat shows it: its state merged from the agent's
-- tool_call and tool_call_update, rendered to lines (status, title, kind,
-- the terminals it shows, diffs, content). Pure: the chat puts the lines.
local compat = require("agentrun.compat")
local config = require("agentrun.config")

local M = {}

local status_text = {
  pending = { "○", "pending", "AgentRunToolPending" },
  in_progress = { "◐", "in progress", "AgentRunToolRunning" },
  completed = { "●", "completed", "AgentRunToolDone" },
  failed = { "✗", "failed", "AgentRunToolFailed" },
  -- set here, never by an agent: what became of a tool call still open
  -- when its turn or session ended (Chat:settle)
  cancelled = { "⊘", "cancelled", "AgentRunToolFailed" },
  stopped = { "⊘", "stopped with the session", "AgentRunToolFailed" },
  unfinished = { "⊘", "left open when the turn ended", "AgentRunToolPending" },
}

local function split_lines(text)
  return vim.split(text or "", "\n", { plain = true })
end

-- content_text is an ACP content block as plain text.
function M.content_text(c)
  if type(c) ~= "table" then
    return ""
  end
  if c.type == "text" then
    return c.text or ""
  elseif c.type == "resource_link" then
    return string.format("[%s](%s)", c.name or c.uri or "", c.uri or "")
  elseif c.type == "resource" and type(c.resource) == "table" then
    return c.resource.text or c.resource.uri or ""
  elseif c.type == "image" or c.type == "audio" then
    return "[" .. c.type .. "]"
  end
  return ""
end

-- merge applies a tool_call or tool_call_update u to the state tc.
function M.merge(tc, u)
  for _, k in ipairs({ "title", "kind", "status", "content", "locations", "rawInput", "rawOutput" }) do
    if u[k] ~= nil then
      tc[k] = u[k]
    end
  end
  if type(u._meta) == "table" then
    tc._meta = vim.tbl_extend("force", tc._meta or {}, u._meta)
  end
end

-- terminal_line describes terminal id for the transcript.
local function terminal_line(id)
  local t = require("agentrun.state").terminals[id]
  local what = t and t.command or id
  local st = "running"
  if t then
    if t.exit_code ~= nil then
      st = "exit " .. tostring(t.exit_code)
    elseif t.signal then
      st = "signal " .. t.signal
    elseif t.ended_by then
      st = t.ended_by
    elseif t.state ~= "running" then
      st = t.state
    end
  end
  return string.format("  ▸ terminal %s: %s — %s (%s opens it)", id, what, st, config.get().keymaps.open or "open")
end

-- render returns the lines of tool call tc (its merged state), their
-- highlights { {line, group} } and the terminals it shows { [line] = id }
-- (0-based lines within the block).
function M.render(tc)
  local st = status_text[tc.status or "pending"] or { "?", tostring(tc.status), "AgentRunToolPending" }
  local head = string.format("%s %s", st[1], tc.title or "tool call")
  if tc.kind and tc.kind ~= "" then
    head = head .. string.format(" [%s]", tc.kind)
  end
  head = head .. " · " .. st[2]
  local lines, hls = { head }, { { 0, st[3] } }
  local terminals = {}
  for _, c in ipairs(type(tc.content) == "table" and tc.content or {}) do
    if c.type == "terminal" and c.terminalId then
      table.insert(lines, terminal_line(c.terminalId))
      table.insert(hls, { #lines - 1, "AgentRunTerminalLine" })
      terminals[#lines - 1] = c.terminalId
    elseif c.type == "diff" then
      table.insert(lines, "  diff " .. tostring(c.path))
      local old, new = c.oldText or "", c.newText or ""
      if type(old) ~= "string" then
        old = ""
      end
      local ok, d = pcall(compat.diff, old .. "\n", new .. "\n", { ctxlen = 1 })
      for _, l in ipairs(ok and split_lines(d) or {}) do
        if l ~= "" then
          table.insert(lines, "  " .. l)
          local ch = l:sub(1, 1)
          if ch == "+" then
            table.insert(hls, { #lines - 1, "AgentRunDiffAdd" })
          elseif ch == "-" then
            table.insert(hls, { #lines - 1, "AgentRunDiffDelete" })
          end
        end
      end
    elseif c.type == "content" then
      for _, l in ipairs(split_lines(M.content_text(c.content))) do
        table.insert(lines, "  " .. l)
      end
    end
  end
  -- Terminals our MCP tool ran for this call (the agent's content does
  -- not name them).
  for _, id in ipairs(tc.agentrun_terminals or {}) do
    if not vim.tbl_contains(vim.tbl_values(terminals), id) then
      table.insert(lines, terminal_line(id))
      table.insert(hls, { #lines - 1, "AgentRunTerminalLine" })
      terminals[#lines - 1] = id
    end
  end
  return lines, hls, terminals
end

return M
