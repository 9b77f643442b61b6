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
  -- a command <C-c> stopped (SIGINT, or a shell's exit 130): stopped, not
  -- failed
  interrupted = { "⊘", "interrupted", "AgentRunToolPending" },
  -- the agent's command you took over (T) or R stopped and ran again
  -- as yours: the agent's call ended there, the command did not
  taken = { "●", "taken over by you", "AgentRunToolDone" },
  rerun = { "●", "run again by you", "AgentRunToolDone" },
  killed = { "⊘", "killed by you", "AgentRunToolPending" },
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

-- merge applies a tool_call or tool_call_update u to the state tc (what
-- agents say in _meta of terminals they run themselves arrives decoded,
-- as agent_terminal events: nothing here reads it).
function M.merge(tc, u)
  for _, k in ipairs({ "title", "kind", "status", "content", "locations", "rawInput", "rawOutput" }) do
    if u[k] ~= nil then
      tc[k] = u[k]
    end
  end
end

-- ran_text says how long a command ran: "<0.1s", "1.2s", "12s", "3m05s".
function M.ran_text(ms)
  if type(ms) ~= "number" then
    return nil
  end
  if ms < 100 then
    return "<0.1s"
  elseif ms < 10000 then
    return string.format("%.1fs", ms / 1000)
  elseif ms < 60000 then
    return string.format("%ds", math.floor(ms / 1000))
  end
  local s = math.floor(ms / 1000)
  return string.format("%dm%02ds", math.floor(s / 60), s % 60)
end

-- run_state says how terminal t stands for the chat: "running", "exit 0
-- · 1.2s", "interrupted · 0.4s", "running, yours" (taken over: the
-- agent's tool call may have ended).
function M.run_state(t)
  local state = require("agentrun.state")
  local how = state.how_ended(t)
  if how then
    local ran = t.state ~= "running" and M.ran_text(t.ran_ms)
    return ran and (how .. " · " .. ran) or how
  elseif t.state ~= "running" then
    return t.state
  elseif t.user then
    return "running, yours"
  end
  return "running"
end

-- terminal_line describes terminal id for the transcript: how it stands,
-- then its command when the tool call's head line (head) does not say it
-- already ("▸ terminal term-1 · exit 0 · 1.2s (<CR> opens it)"): a
-- command's whole text once per tool call, so that a small chat still
-- shows the turn; the state comes first, so that a command longer than
-- the chat window is tall leaves it in sight (the chat shows such a line
-- from its start on 0.7). It says this run alone: a run R started later
-- is a line of its own where it happened (Chat:rerun_changed), below
-- what the agent said of this one.
local function terminal_line(id, head)
  local state = require("agentrun.state")
  local t = state.terminals[id]
  local gone = not t and state.disposed[id]
  local what = t and t.command or gone and gone.command or id
  local st = gone and gone.was or "running"
  if t then
    st = M.run_state(t)
  end
  local cmd = ""
  if what ~= id and not (head or ""):find(what:match("^[^\n]*"), 1, true) then
    cmd = ": " .. what
  end
  return string.format("  ▸ terminal %s · %s%s (%s opens it)", id, st, cmd, config.get().keymaps.open or "open")
end

-- Long output is folded to its first lines until the user opens it
-- (tc.open, toggled in the chat): content over fold_at lines shows
-- fold_keep of them, a diff over 4 * fold_at lines shows 3 * fold_at.
M.fold_at, M.fold_keep = 12, 8

-- open_diff shows diff content c (an edit the agent made or proposes:
-- { path, oldText, newText }, and old_label/new_label for the two sides,
-- "before" and "after" unless given) side by side in a new tab page, in
-- Vim's diff mode, with the file's filetype; q closes the tab. closed,
-- when given, runs once the view is gone (however it was closed).
function M.open_diff(c, closed)
  local path = tostring(c.path or "file")
  if vim.api.nvim_get_mode().mode:sub(1, 1) == "i" then
    -- asked from a permission request while the user typed a prompt: the
    -- view is for reading and q, in Normal mode
    vim.cmd("stopinsert")
  end
  local function side(text, what, split)
    vim.cmd(split)
    local buf = vim.api.nvim_get_current_buf()
    vim.bo[buf].buftype, vim.bo[buf].bufhidden, vim.bo[buf].swapfile = "nofile", "wipe", false
    local lines = vim.split(type(text) == "string" and text or "", "\n", { plain = true })
    if #lines > 1 and lines[#lines] == "" then
      table.remove(lines)
    end
    vim.api.nvim_buf_set_lines(buf, 0, -1, false, lines)
    vim.bo[buf].modifiable = false
    pcall(vim.api.nvim_buf_set_name, buf, string.format("agentrun://diff%s%s (%s)", path:sub(1, 1) == "/" and "" or "/", path, what))
    compat.set_filetype(buf, path)
    compat.map(buf, "q", function()
      vim.cmd("tabclose")
    end, "agentrun: close the diff")
    vim.cmd("diffthis")
  end
  side(c.oldText, c.old_label or "before", "tabnew")
  side(c.newText, c.new_label or "after", "rightbelow vnew")
  if closed then
    vim.api.nvim_create_autocmd("BufWipeout", {
      buffer = vim.api.nvim_get_current_buf(),
      once = true,
      desc = "agentrun: the diff view was closed",
      callback = function()
        vim.schedule(closed)
      end,
    })
  end
end

-- fold_hint is the hint that folded content has n more lines.
function M.fold_hint(n)
  return string.format("(+%d line%s, %s shows them)", n, n == 1 and "" or "s", config.get().keymaps.toggle or "unfold")
end

-- add_folded appends rows (each { text, group or nil }) to lines and hls,
-- folded to keep rows with a hint when there are more than limit and the
-- call is not opened.
local function add_folded(tc, lines, hls, rows, limit, keep)
  local shown = rows
  if #rows > limit and not tc.open then
    shown = vim.list_slice(rows, 1, keep)
  end
  for _, r in ipairs(shown) do
    table.insert(lines, r[1])
    if r[2] then
      table.insert(hls, { #lines - 1, r[2] })
    end
  end
  if #shown < #rows then
    table.insert(lines, "  … " .. M.fold_hint(#rows - #shown))
    table.insert(hls, { #lines - 1, "AgentRunHint" })
  end
end

-- render returns the lines of tool call tc (its merged state), their
-- highlights { {line, group} }, the terminals it shows { [line] = id }
-- and its diffs { [line] = the diff content } (0-based lines within the
-- block).
function M.render(tc)
  local title, status, kind = tc.title, tc.status or "pending", tc.kind
  -- A call of our terminal tool reads as what it does: the command it
  -- runs, in progress while it runs (Claude Code titles it with the
  -- tool's name and leaves it pending).
  local ours = tc.agentrun_terminals and tc.agentrun_terminals[#tc.agentrun_terminals]
  local t = ours and require("agentrun.state").terminals[ours]
  if t then
    if (title == nil or title:match("^mcp__agentrun__") or title:match("^agentrun_")) and t.command then
      title, kind = t.command, nil
    end
    if t.state == "running" and status == "pending" then
      status = "in_progress"
    end
  end
  -- A call of our tool that ran nothing (a rule or the user refused it)
  -- reads as the command it asked for, not as the tool's name and kind.
  local asked = type(tc.rawInput) == "table" and tc.rawInput.command
  if not t and title and (title:match("^mcp__agentrun__") or title:match("^agentrun_")) and type(asked) == "string" and asked ~= "" then
    title, kind = asked:match("^[^\n]*") .. (asked:find("\n") and " …" or ""), nil
  end
  -- A command titled with the model's description of it (Copilot CLI:
  -- "Run the test suite", its own shell's or our tool's) reads as the
  -- command it runs, as its split is named.
  local line = type(tc.rawInput) == "table" and tc.rawInput.command
  if kind == "execute" and type(line) == "string" and line ~= "" and not (title or ""):find(line, 1, true) then
    title = line:match("^[^\n]*")
    if title ~= line then
      title = title .. " …"
    end
  end
  -- A command the agent ran itself, or ran with our tool, that ended
  -- otherwise than with exit 0 failed, or was cancelled, whatever status
  -- the agent gave its tool call (opencode calls a command that exited 3,
  -- or that a cancel stopped, "completed"): the chat says how it ended,
  -- as its split does.
  -- One it called "completed" without saying how it ended (Gemini CLI,
  -- whatever the exit) reads as its split ends, not as a success.
  local shown = tc.shown_by and require("agentrun.state").terminals[tc.shown_by] or t
  if not shown and (status == "failed" or status == "completed") then
    -- the agent's terminal (ACP terminal/create) it says failed: stopped
    -- with <C-c>, X or a cancel, it reads as its split says
    for _, c in ipairs(type(tc.content) == "table" and tc.content or {}) do
      local ct = c.type == "terminal" and c.terminalId and require("agentrun.state").terminals[c.terminalId]
      local how = ct and ct.state ~= "running" and require("agentrun.state").how_ended(ct)
      if how == "interrupted" or how == "killed" or how == "cancelled" then
        shown = ct
      end
    end
  end
  local how, unsaid = "", nil
  if shown and shown.state ~= "running" and (status == "completed" or status == "failed") then
    if shown.restarting then
      status = "rerun" -- R stopped it to run it again as yours
    elseif require("agentrun.state").interrupted(shown) then
      status = "interrupted" -- as its split and the list say it
    elseif shown.killed and require("agentrun.state").how_ended(shown) == "killed" then
      status = "killed" -- X, :AgentKill: yours, not a failure
    elseif shown.cancelled and require("agentrun.state").how_ended(shown) == "cancelled" then
      status = "cancelled"
    elseif (shown.signal and shown.signal ~= "") or (shown.exit_code ~= nil and shown.exit_code ~= 0) then
      status, how = "failed", " (" .. require("agentrun.state").how_ended(shown) .. ")"
    elseif shown.exit_code == nil and (shown.ended_by == "cancelled" or shown.ended_by == "stopped") then
      -- its split ended with the turn or the session: so does the chat,
      -- whatever the agent says of it afterwards
      status = shown.ended_by
    elseif status == "completed" and shown.exit_code == nil and shown.ended_by then
      unsaid = shown.ended_by
    end
  end
  -- The agent's command you took over or ran again while it waited on
  -- it: the agent's tool call ends there (its "completed" only means it
  -- moved on), the command is yours.
  if not shown and (status == "completed" or status == "failed") then
    for _, c in ipairs(type(tc.content) == "table" and tc.content or {}) do
      local ct = c.type == "terminal" and c.terminalId and require("agentrun.state").terminals[c.terminalId]
      if ct and ct.restarting then
        status = "rerun"
      elseif ct and ct.user and status ~= "rerun" then
        status = "taken"
      end
    end
  end
  local st = status_text[status] or { "?", tostring(status), "AgentRunToolPending" }
  if unsaid then
    st = { "●", unsaid, "AgentRunToolDone" }
  end
  local head = string.format("%s %s", st[1], title or "tool call")
  if kind and kind ~= "" then
    head = head .. string.format(" [%s]", kind)
  end
  head = head .. " · " .. st[2] .. how
  local lines, hls = { head }, { { 0, st[3] } }
  local terminals, diffs = {}, {}
  for _, c in ipairs(type(tc.content) == "table" and tc.content or {}) do
    if c.type == "terminal" and c.terminalId then
      table.insert(lines, terminal_line(c.terminalId, head))
      table.insert(hls, { #lines - 1, "AgentRunTerminalLine" })
      terminals[#lines - 1] = c.terminalId
    elseif c.type == "diff" then
      table.insert(lines, string.format("  diff %s (%s opens it side by side)", tostring(c.path), config.get().keymaps.open or "open"))
      table.insert(hls, { #lines - 1, "AgentRunTerminalLine" })
      local first = #lines - 1
      local old, new = c.oldText or "", c.newText or ""
      if type(old) ~= "string" then
        old = ""
      end
      local ok, d = pcall(compat.diff, old .. "\n", new .. "\n", { ctxlen = 1 })
      local rows = {}
      for _, l in ipairs(ok and split_lines(d) or {}) do
        if l ~= "" then
          local group = ({ ["+"] = "AgentRunDiffAdd", ["-"] = "AgentRunDiffDelete", ["@"] = "AgentRunHint" })[l:sub(1, 1)]
          table.insert(rows, { "  " .. l, group })
        end
      end
      add_folded(tc, lines, hls, rows, 4 * M.fold_at, 3 * M.fold_at)
      for l = first, #lines - 1 do
        diffs[l] = c
      end
    elseif c.type == "content" then
      local rows = {}
      for _, l in ipairs(split_lines(M.content_text(c.content))) do
        -- the fences agents put around output (the chat shows it as
        -- output already), and Copilot's "<shellId: 0 completed with exit
        -- code 0>" (the head line says how it ended)
        if not (l:match("^%s*```+[%w_+-]*%s*$") or l:match("^%s*~~~+[%w_+-]*%s*$") or l:match("^<shellId: [^>]*>%s*$")) then
          table.insert(rows, { "  " .. l })
        end
      end
      if #rows > 1 and rows[#rows][1] == "  " then
        table.remove(rows) -- the newline that ends the output
      end
      add_folded(tc, lines, hls, rows, M.fold_at, M.fold_keep)
    end
  end
  -- Terminals our MCP tool ran for this call (the agent's content does
  -- not name them).
  for _, id in ipairs(tc.agentrun_terminals or {}) do
    if not vim.tbl_contains(vim.tbl_values(terminals), id) then
      table.insert(lines, terminal_line(id, head))
      table.insert(hls, { #lines - 1, "AgentRunTerminalLine" })
      terminals[#lines - 1] = id
    end
  end
  return lines, hls, terminals, diffs
end

return M
