-- The agent's streamed text in the chat, as methods of Chat (install):
-- message chunks appended to the last line and highlighted as markdown
-- (ui/markdown.lua) as they come, thoughts kept whole and shown folded to
-- their first line, prompts a loaded session replays. Only the end of the
-- transcript is touched per chunk, so a long message costs the same per
-- chunk as a short one.
local api = vim.api
local compat = require("agentrun.compat")
local fold_hint = require("agentrun.ui.toolcall").fold_hint
local markdown = require("agentrun.ui.markdown")

local M = {}

-- the chat's own highlights (same name: the same namespace as chat.lua's)
local ns = api.nvim_create_namespace("agentrun_chat")
-- markdown's spans live apart, so re-scanning a message's last lines
-- clears only them
local ns_md = api.nvim_create_namespace("agentrun_markdown")

local function split_lines(text)
  return vim.split(text or "", "\n", { plain = true })
end

local Chat = {}

local stream_style = {
  user_echo = { "> ", "AgentRunUser" },
  message = { "", nil },
}

-- pause_ms is how long a message without an id may pause before what
-- follows a finished sentence starts a message of its own.
local pause_ms = 1500

-- stream appends a chunk to the last block of kind, or starts one. Only
-- the block's last line and the new lines are touched, so a long streamed
-- message costs the same per chunk as a short one.
-- message_id (ACP's messageId, when the agent sends one) tells messages
-- apart: a new one starts on a line of its own, as one after a turn
-- ended or a prompt was sent does (end_message), never on the line where
-- the last one stopped.
function Chat:stream(kind, text, message_id)
  self:ensure_buffers() -- (after :bd in the chat its lines are gone)
  if kind == "thought" then
    return self:thought(text)
  end
  local style = stream_style[kind] or stream_style.message
  local prefix, hl = style[1], style[2]
  local last = self.blocks[#self.blocks]
  local now = vim.loop.now()
  -- Without message ids, a pause after a finished sentence ends a message
  -- (Claude Code's usage notice, then its answer a while later); never a
  -- pause mid-sentence, which a slow model makes too.
  local paused = kind == "message" and not message_id and last and last.kind == kind and last.at
    and now - last.at > pause_ms and (last.lines[#last.lines] or ""):match("[%.!?:]%s*$") ~= nil
  -- a message with an id after another, or after text with none (Claude
  -- Code's notices carry none, its answers do), starts a message
  local new_message = last and last.kind == kind and (last.ended or paused or (message_id and message_id ~= last.message_id))
  if new_message then
    -- the same kind of block, but another message: on a line of its own
    local gap = kind == "message" or kind == "user_echo"
    last = self:add({ kind = kind, message_id = message_id })
    self:put(last, gap and { "", prefix } or { prefix }, hl and { { gap and 1 or 0, hl } } or {})
  elseif not last or last.kind ~= kind then
    -- an answer after a tool call, a thought or a note, and a replayed
    -- prompt after anything, get a blank line above them, so they read
    -- as paragraphs of their own (as a prompt sent here does)
    local after_prompt = last and (last.kind == "user" or last.kind == "user_echo")
    local gap = last and last.kind ~= "header" and (kind == "user_echo" or (kind == "message" and not after_prompt))
    last = self:add({ kind = kind, message_id = message_id })
    self:put(last, gap and { "", prefix } or { prefix }, hl and { { gap and 1 or 0, hl } } or {})
  end
  last.message_id = last.message_id or message_id
  last.at = now
  local parts = split_lines(text)
  -- the streamed block is the last one: its lines end the buffer
  local first = api.nvim_buf_line_count(self.buf) - 1
  local changed = #last.lines
  local lines = { last.lines[#last.lines] .. parts[1] }
  for i = 2, #parts do
    table.insert(lines, prefix .. parts[i])
  end
  vim.bo[self.buf].modifiable = true
  api.nvim_buf_clear_namespace(self.buf, ns, first, first + 1)
  api.nvim_buf_set_lines(self.buf, first, first + 1, false, lines)
  self:written()
  last.lines[#last.lines] = lines[1]
  for i = 2, #lines do
    table.insert(last.lines, lines[i])
  end
  if hl then
    for i = 0, #lines - 1 do
      compat.highlight(self.buf, ns, hl, first + i, 0, -1)
    end
  end
  if kind == "message" then
    self:markdown(last, changed)
  end
  self:scroll()
end

-- apply_spans sets markdown's spans (rows relative to base) with priority.
function Chat:apply_spans(spans, base, priority)
  for _, sp in ipairs(spans) do
    local r, c, er, ec, group, open, close = sp[1], sp[2], sp[3], sp[4], sp[5], sp[6], sp[7]
    pcall(api.nvim_buf_set_extmark, self.buf, ns_md, base + r, c, { end_row = base + er, end_col = ec, hl_group = group, priority = priority })
    if open and open > 0 then
      pcall(api.nvim_buf_set_extmark, self.buf, ns_md, base + r, c, { end_row = base + r, end_col = c + open, conceal = "" })
    end
    if close and close > 0 then
      pcall(api.nvim_buf_set_extmark, self.buf, ns_md, base + er, ec - close, { end_row = base + er, end_col = ec, conceal = "" })
    end
  end
end

-- markdown highlights message block b (the last block) from its line
-- from (1-based) on, and colours the code of fences that closed there.
-- base is b's first line (0-based) when b is not the last block.
function Chat:markdown(b, from, base)
  b.md = b.md or { states = { false }, coloured = {} }
  base = base or api.nvim_buf_line_count(self.buf) - #b.lines
  api.nvim_buf_clear_namespace(self.buf, ns_md, base + from - 1, base + #b.lines)
  local spans, closed = markdown.scan(b.lines, b.md.states, from)
  self:apply_spans(spans, base, 100)
  for _, f in ipairs(closed) do
    if not b.md.coloured[f.first] then
      b.md.coloured[f.first] = true
      local code = markdown.code_spans(f.lang, vim.list_slice(b.lines, f.first, f.last))
      if code then
        self:apply_spans(code, base + f.first - 1, 110)
      end
    end
  end
end

-- thought appends to the agent's current thought, shown folded to its
-- first line until the user opens it (|agentrun-keymap-toggle|).
function Chat:thought(text)
  local last = self.blocks[#self.blocks]
  if not last or last.kind ~= "thought" then
    last = self:add({ kind = "thought", text = "" })
  end
  last.text = last.text .. text
  self:render_thought(last)
end

function Chat:render_thought(b)
  local all = split_lines(b.text)
  if #all > 1 and all[#all] == "" then
    table.remove(all)
  end
  local lines, hls = {}, {}
  if b.open then
    for i, l in ipairs(all) do
      lines[i] = "┊ " .. l
      hls[i] = { i - 1, "AgentRunThought" }
    end
  else
    local first = all[1] or ""
    if vim.fn.strchars(first) > 60 then
      first = vim.fn.strcharpart(first, 0, 59) .. "…"
    end
    lines[1] = "┊ thinking: " .. first .. (#all > 1 and ("  " .. fold_hint(#all - 1)) or "")
    hls[1] = { 0, "AgentRunThought" }
  end
  self:put(b, lines, hls)
end

-- tidy_prompt makes a replayed prompt readable: Claude Code keeps the
-- local commands it ran before a prompt (/model at the session's start)
-- in it as markup, "<command-name>/model</command-name>…
-- <local-command-stdout>Set model to …</local-command-stdout>"; they read
-- as "/model default" and "(Set model to …)" on lines of their own.
function M.tidy_prompt(text)
  text = text:gsub("<command%-name>(.-)</command%-name>%s*<command%-message>.-</command%-message>%s*<command%-args>(.-)</command%-args>", function(name, args)
    return vim.trim(name .. " " .. args) .. "\n"
  end)
  text = text:gsub("<local%-command%-stdout>(.-)</local%-command%-stdout>", function(out)
    return "(" .. vim.trim(out) .. ")\n"
  end)
  return text
end

-- install adds the methods above to the Chat class.
function M.install(class)
  for name, fn in pairs(Chat) do
    class[name] = fn
  end
end

return M
