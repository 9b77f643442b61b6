-- What an agent asks the user through ACP elicitation: a form, each field
-- asked in turn with vim.ui.select (a choice, yes/no, several of a list)
-- or vim.ui.input (text, a number within its bounds), checked against its
-- schema before it is sent; or a URL, opened only when the user picks
-- "Open". Closing a picker (or <Esc> in an input) cancels the whole
-- question; "Decline" in a picker says no. The chat shows the question
-- and the answers.
local ask = require("agentrun.ui.ask")
local state = require("agentrun.state")

local M = {}

local urls = {} -- elicitation id -> host, for the note when it completes

-- host_of is the host a URL opens ("https://github.com/login" → github.com).
local function host_of(url)
  return (url or ""):match("^%a[%w+.-]*://([^/?#]+)") or url
end

-- choices are a field's options: { value, label } from enum (with
-- enumNames), oneOf / anyOf ({ const, title }), or an array's items.
local function choices(schema)
  local out = {}
  local src = schema
  if schema.type == "array" and type(schema.items) == "table" then
    src = schema.items
  end
  for _, o in ipairs(type(src.oneOf) == "table" and src.oneOf or type(src.anyOf) == "table" and src.anyOf or {}) do
    if type(o) == "table" and o.const ~= nil then
      table.insert(out, { value = o.const, label = o.title or tostring(o.const) })
    end
  end
  if #out == 0 and type(src.enum) == "table" then
    for i, v in ipairs(src.enum) do
      local names = type(src.enumNames) == "table" and src.enumNames or {}
      table.insert(out, { value = v, label = names[i] or tostring(v) })
    end
  end
  return out
end

-- count_wrong says what is wrong with count n against the bounds lo and
-- hi (nil: nothing): "at least 3 characters" (unit " characters").
local function count_wrong(n, lo, hi, unit)
  if lo and n < lo then
    return string.format("at least %d%s", lo, unit)
  end
  if hi and n > hi then
    return string.format("at most %d%s", hi, unit)
  end
end

-- check says what is wrong with value for schema (nil: nothing).
local function check(schema, value)
  local t = schema.type
  if t == "number" or t == "integer" then
    if type(value) ~= "number" or (t == "integer" and value ~= math.floor(value)) then
      return t == "integer" and "a whole number" or "a number"
    end
    if schema.minimum and value < schema.minimum then
      return "at least " .. tostring(schema.minimum)
    end
    if schema.maximum and value > schema.maximum then
      return "at most " .. tostring(schema.maximum)
    end
  elseif t == "string" then
    local wrong = count_wrong(vim.fn.strchars(value), schema.minLength, schema.maxLength, " characters")
    if wrong then
      return wrong
    end
    local f = schema.format
    if f == "email" and not value:match("^[^@%s]+@[^@%s]+$") then
      return "an email address"
    elseif f == "uri" and not value:match("^%a[%w+.-]*:") then
      return "a URI (scheme:…)"
    elseif f == "date" and not value:match("^%d%d%d%d%-%d%d%-%d%d$") then
      return "a date, YYYY-MM-DD"
    elseif f == "date-time" and not value:match("^%d%d%d%d%-%d%d%-%d%dT%d%d:%d%d") then
      return "a date and time, YYYY-MM-DDThh:mm…"
    end
  elseif t == "array" then
    return count_wrong(#value, schema.minItems, schema.maxItems, "")
  end
end

-- shown is an answer as the chat writes it.
local function shown(v)
  if type(v) == "table" then
    return table.concat(vim.tbl_map(tostring, v), ", ")
  elseif type(v) == "boolean" then
    return v and "yes" or "no"
  end
  return tostring(v)
end

-- choose is vim.ui.select over items ({ label, ... }) for an elicitation.
local function choose(items, prompt, cb, p)
  ask.pick(items, {
    prompt = prompt,
    kind = "agentrun.elicitation",
    format_item = function(c)
      return c.label
    end,
  }, cb, p.token, state.sessions[p.key or ""])
end

local DECLINE = { decline = true, label = "Decline (answer none of it)" }
local SKIP = { skip = true, label = "Skip (leave it unanswered)" }

-- form asks p's fields in turn and answers with what the user gave.
local function form(p, say)
  local fields = p.fields or {}
  local required = {}
  for _, r in ipairs(p.required or {}) do
    required[r] = true
  end
  local content = {}
  local function finish(action)
    if not ask.is_open(p.token) then
      return -- the agent's turn ended meanwhile: nothing to send
    end
    say("  → " .. ({ accept = "sent", decline = "declined", cancel = "cancelled" })[action])
    local answer = { action = action }
    if action == "accept" then
      answer.content = next(content) == nil and vim.empty_dict() or content
    end
    ask.finish(p.token, vim.json.encode(answer))
  end
  local step
  -- answered keeps value for field f, and the chat shows it as picked
  -- (label: the option's name, not its value)
  local function answered(f, value, label)
    if not ask.is_open(p.token) then
      return -- withdrawn meanwhile: a late answer goes nowhere, not even into the chat
    end
    content[f.name] = value
    say(string.format("  %s: %s", (f.schema or {}).title or f.name, label or shown(value)))
  end
  -- skipped moves on from optional field f left unanswered, which the
  -- chat lists as skipped (the agent gets no value for it)
  local function skipped(f, i)
    if not ask.is_open(p.token) then
      return
    end
    say(string.format("  %s: skipped", (f.schema or {}).title or f.name))
    return step(i + 1)
  end
  step = function(i, why)
    if not ask.is_open(p.token) then
      return
    end
    local f = fields[i]
    if not f then
      return finish("accept")
    end
    local sc = f.schema or {}
    local label = sc.title or f.name
    local bounds = ""
    if sc.minimum or sc.maximum then
      bounds = string.format(" [%s–%s]", sc.minimum and tostring(sc.minimum) or "", sc.maximum and tostring(sc.maximum) or "")
    end
    local prompt = string.format("(agentrun) %s — %s%s%s", p.message ~= "" and p.message or "the agent asks", label, bounds, sc.description and (" (" .. sc.description .. ")") or "")
    if why then
      prompt = prompt .. " — needs " .. why
    end
    local opts = choices(sc)
    local extra = { DECLINE }
    if not required[f.name] then
      table.insert(extra, 1, SKIP)
    end
    local function picked(c)
      if c == nil then
        return finish("cancel")
      elseif c.decline then
        return finish("decline")
      elseif c.skip then
        return skipped(f, i)
      end
    end
    if sc.type == "boolean" then
      opts = { { value = true, label = "Yes" }, { value = false, label = "No" } }
    end
    if sc.type == "array" then
      -- several of a list: each pick toggles one, "Done" sends them
      local chosen = {}
      local function again(reason)
        if not ask.is_open(p.token) then
          return
        end
        local items = {}
        for _, o in ipairs(opts) do
          table.insert(items, { value = o.value, label = (chosen[o.value] and "[x] " or "[ ] ") .. o.label })
        end
        local n = vim.tbl_count(chosen)
        table.insert(items, { done = true, label = string.format("Done (%d chosen)", n) })
        vim.list_extend(items, extra)
        choose(items, prompt .. (reason and (" — needs " .. reason) or ""), function(c)
          if c == nil or c.decline or c.skip then
            return picked(c)
          end
          if c.done then
            local list = {}
            for _, o in ipairs(opts) do
              if chosen[o.value] then
                table.insert(list, o.value)
              end
            end
            local bad = check(sc, list)
            if bad then
              return again(bad)
            end
            local names = {}
            for _, o in ipairs(opts) do
              if chosen[o.value] then
                table.insert(names, o.label)
              end
            end
            answered(f, list, table.concat(names, ", "))
            return step(i + 1)
          end
          chosen[c.value] = not chosen[c.value] or nil
          again()
        end, p)
      end
      again()
    elseif #opts > 0 then
      -- one of a list, or yes/no
      choose(vim.list_extend(vim.deepcopy(opts), extra), prompt, function(c)
        if c == nil or c.decline or c.skip then
          return picked(c)
        end
        answered(f, c.value, c.label)
        step(i + 1)
      end, p)
    else
      -- text or a number; empty leaves an optional one unanswered
      local default = sc.default ~= nil and tostring(sc.default) or nil
      ask.input({ prompt = prompt .. (required[f.name] and ": " or " (empty: skip): "), default = default }, function(text)
        if text == nil then
          return finish("cancel")
        end
        if text == "" and not required[f.name] then
          return skipped(f, i)
        end
        local value = text
        if sc.type == "number" or sc.type == "integer" then
          value = tonumber(text)
        end
        local bad = (text == "" and "an answer") or check(sc, value)
        if bad then
          return step(i, bad)
        end
        answered(f, value)
        step(i + 1)
      end, p.token, state.sessions[p.key or ""])
    end
  end
  step(1)
end

-- url offers to open p.url; nothing opens unless the user picks "Open".
local function url(p, say)
  local host = host_of(p.url)
  local items = { { open = true, label = "Open " .. p.url .. " in your browser" }, DECLINE }
  choose(items, string.format("(agentrun) %s — it opens %s", p.message ~= "" and p.message or "the agent asks you to open a page", host), function(c)
    if not ask.is_open(p.token) then
      return
    end
    if c == nil or c.decline then
      local action = c == nil and "cancel" or "decline"
      say("  → " .. (c == nil and "cancelled" or "declined"))
      return ask.finish(p.token, vim.json.encode({ action = action }))
    end
    local ok, why = require("agentrun.compat").open_url(p.url)
    urls[p.elicitation_id or ""] = host
    say(ok and ("  → opened " .. host .. "; the agent says when it is done") or ("  → " .. why))
    ask.finish(p.token, vim.json.encode({ action = "accept" }))
  end, p)
end

-- ask shows one elicitation from Go: { token, key, mode ("form" | "url"),
-- message, fields = { { name, schema } }, required, url, elicitation_id }.
---@param p agentrun.event.elicitation
function M.ask(p)
  local s = state.sessions[p.key or ""]
  local function say(text)
    ask.note(s, text)
  end
  local who = s and s.agent or "the agent"
  ask.hold(p.token, s)
  if p.mode == "url" then
    say(string.format("? %s asks you to open %s: %s", who, host_of(p.url), p.message or ""))
    return url(p, say)
  end
  say(string.format("? %s asks: %s", who, p.message or ""))
  form(p, say)
end

-- complete notes that a URL elicitation is done.
---@param p agentrun.event.elicitation_complete
function M.complete(p)
  local s = state.sessions[p.key or ""]
  ask.note(s, string.format("✓ done at %s", urls[p.elicitation_id or ""] or "the page the agent asked you to open"))
  urls[p.elicitation_id or ""] = nil
end

return M
