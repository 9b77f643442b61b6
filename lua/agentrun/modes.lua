-- Modes and config options of a session (ACP session/set_mode and
-- session/set_config_option): what the agent offers, kept current from
-- session_started and the agent's own updates, shown in the chat's status
-- line, and changed with :AgentMode, :AgentModel and :AgentConfig.
local rpc = require("agentrun.rpc")
local util = require("agentrun.util")

local M = {}

local function table_or_nil(v)
  return type(v) == "table" and v or nil
end

-- started records what session_started said (p.modes, p.config_options).
function M.started(s, p)
  s.modes = table_or_nil(p.modes)
  s.config = table_or_nil(p.config_options) or {}
end

-- update follows the agent's own changes (current_mode_update,
-- config_option_update); it reports whether u was one of them.
function M.update(s, u)
  if u.sessionUpdate == "current_mode_update" and s.modes then
    s.modes.currentModeId = u.currentModeId
    return true
  elseif u.sessionUpdate == "config_option_update" and type(u.configOptions) == "table" then
    s.config = u.configOptions
    return true
  end
  return false
end

-- model_option is the config option that chooses the model: category
-- "model", else id "model".
local function model_option(s)
  for _, o in ipairs(s.config or {}) do
    if o.category == "model" then
      return o
    end
  end
  for _, o in ipairs(s.config or {}) do
    if o.id == "model" then
      return o
    end
  end
end

-- mode_option is the config option that chooses the mode (category
-- "mode", as opencode offers build/plan), for an agent without ACP modes.
local function mode_option(s)
  if s.modes then
    return nil
  end
  for _, o in ipairs(s.config or {}) do
    if o.category == "mode" then
      return o
    end
  end
end

-- option_values lists a select option's values (flattening groups).
local function option_values(o)
  local out = {}
  for _, v in ipairs(type(o.options) == "table" and o.options or {}) do
    if v.value ~= nil then
      table.insert(out, v)
    elseif type(v.options) == "table" then -- a group
      vim.list_extend(out, v.options)
    end
  end
  return out
end

-- label is what the status line shows: the mode's and the model's names.
-- current returns the session's mode id and model value (nil when the
-- agent has none), for status().
function M.current(s)
  local o, mo = model_option(s), mode_option(s)
  local mode = s.modes and s.modes.currentModeId or mo and mo.currentValue or nil
  return mode, o and o.currentValue or nil
end

-- value_name is the name of option o's current value (else the value).
local function value_name(o)
  local name = o.currentValue
  for _, v in ipairs(option_values(o)) do
    if v.value == o.currentValue then
      name = v.name or name
    end
  end
  return tostring(name)
end

function M.label(s)
  local parts = {}
  local m = s.modes
  if m and m.currentModeId then
    local name = m.currentModeId
    for _, mode in ipairs(m.availableModes or {}) do
      if mode.id == m.currentModeId then
        name = mode.name or name
      end
    end
    table.insert(parts, name)
  elseif mode_option(s) and mode_option(s).currentValue ~= nil then
    table.insert(parts, value_name(mode_option(s)))
  end
  local o = model_option(s)
  if o then
    table.insert(parts, value_name(o))
  end
  return table.concat(parts, " · ")
end

local function session_or_warn(s)
  if not s or s.ended then
    util.notify({ "no running session; start one with :AgentRun", "no session; :AgentRun starts one" })
    return nil
  end
  if not s.id then
    util.notify({ "the session is still starting; try again when it is ready", "still starting; try again soon" })
    return nil
  end
  return s
end

local function refresh(s)
  if s.chat then
    s.chat:render_header()
  end
end

-- resolve finds what in list the user named: by id exactly, else by name
-- or id whatever the case (names have spaces: "Sonnet 5.5"); keys(x)
-- returns x's id and name.
local function resolve(list, said, keys)
  said = vim.trim(tostring(said))
  for _, x in ipairs(list) do
    if keys(x) == said then
      return x
    end
  end
  for _, x in ipairs(list) do
    local id, name = keys(x)
    if (name and name:lower() == said:lower()) or tostring(id):lower() == said:lower() then
      return x
    end
  end
end

-- choices lists what :AgentMode ("mode"), :AgentModel ("model") or
-- :AgentConfig (option, with what nil) takes in session s, each as
-- {word, id, name}: word is what <Tab> offers and what an unknown value
-- is answered with (the name the pickers show for a mode or model, the
-- value itself for :AgentConfig, where a value is one argument), id what
-- the agent is sent. One list for both, so the two never differ.
local function choices(s, what, option)
  local out = {}
  local function add(list, id_key, by_name)
    for _, x in ipairs(list) do
      local id = x[id_key]
      local word = by_name and type(x.name) == "string" and x.name ~= "" and x.name or tostring(id)
      table.insert(out, { word = word, id = id, name = x.name })
    end
  end
  option = option or what == "mode" and mode_option(s) or what == "model" and model_option(s) or nil
  if option then
    add(option_values(option), "value", what ~= nil)
  elseif what == "mode" then
    add(s.modes and s.modes.availableModes or {}, "id", true)
  end
  return out
end

-- no_such says that session s has no `kind` `said`, naming the ones it
-- has (words): every such message names the agent alike ("cl has no
-- mode "x"; it has: Default, Plan"), with shorter forms for 60 columns
-- (util.notify).
local function no_such(s, kind, said, words)
  said = vim.trim(tostring(said))
  local has = table.concat(words, ", ")
  return {
    string.format("%s has no %s %q; it has: %s", s.agent, kind, said, has),
    string.format("no %s %q; it has: %s", kind, said, has),
    string.format("no %s %q; <Tab> lists them", kind, said),
  }
end

-- unknown says that session s has no `kind` `said`, naming the ones it
-- has as <Tab> offers them.
local function unknown(s, kind, said, list)
  util.notify(no_such(s, kind, said, vim.tbl_map(function(c)
    return c.word
  end, list)))
end

-- set_mode switches session s to mode id (asks which without an id).
function M.set_mode(s, id)
  s = session_or_warn(s)
  if not s then
    return false
  end
  local mo = mode_option(s)
  if mo then
    return M.set_config(s, mo.id, id, "mode") -- the mode is one of its config options
  end
  local modes = s.modes and s.modes.availableModes or {}
  if #modes == 0 then
    util.notify(string.format("%s offers no modes", s.agent))
    return false
  end
  if not id then
    vim.ui.select(modes, {
      prompt = "(agentrun) mode",
      format_item = function(m)
        return m.name .. (m.id == s.modes.currentModeId and " (current)" or "") .. (m.description and (" — " .. m.description) or "")
      end,
    }, function(m)
      if m then
        M.set_mode(s, m.id)
      end
    end)
    return true
  end
  -- by id, or by the name the picker shows ("Accept edits")
  local list = choices(s, "mode")
  local found = resolve(list, id, function(c)
    return c.id, c.name
  end)
  if not found then
    unknown(s, "mode", id, list)
    return false
  end
  id = found.id
  local _, err = rpc.request("set_mode", s.key, id)
  if err then
    util.notify(err)
    return false
  end
  s.modes.currentModeId = id
  refresh(s)
  return true
end

-- set_config sets config option id of session s to value (asks which
-- value without one). words is the command whose <Tab> the user had
-- ("mode", "model"; nil: :AgentConfig's), whose words an unknown value
-- is answered with.
function M.set_config(s, id, value, words)
  s = session_or_warn(s)
  if not s then
    return false
  end
  local option
  for _, o in ipairs(s.config or {}) do
    if o.id == id then
      option = o
    end
  end
  if not option then
    local ids = vim.tbl_map(function(o)
      return o.id
    end, s.config or {})
    if #ids == 0 then
      util.notify(string.format("%s has no options to set", s.agent))
    elseif id == nil or id == "" then
      -- short: at 80 columns a longer line stops at "Press ENTER"
      util.notify({ string.format("usage: :AgentConfig {id} [value]; options: %s", table.concat(ids, ", ")), "usage: :AgentConfig {id} [value]" })
    else
      util.notify(no_such(s, "option", id, ids))
    end
    return false
  end
  if not value then
    vim.ui.select(option_values(option), {
      prompt = "(agentrun) " .. option.name,
      format_item = function(v)
        return v.name .. (v.value == option.currentValue and " (current)" or "")
      end,
    }, function(v)
      if v then
        M.set_config(s, id, v.value, words)
      end
    end)
    return true
  end
  local list = choices(s, words, option)
  if #list > 0 then
    -- by value, or by the name the picker shows ("Sonnet 5.5")
    local found = resolve(list, value, function(c)
      return c.id, c.name
    end)
    if not found then
      unknown(s, id, value, list)
      return false
    end
    value = found.id
  end
  local opts, err = rpc.request("set_config", s.key, id, value)
  if err then
    util.notify(err)
    return false
  end
  if type(opts) == "table" then
    s.config = opts
  end
  refresh(s)
  return true
end

-- set_model sets the model option (the one with category "model").
function M.set_model(s, value)
  s = session_or_warn(s)
  if not s then
    return false
  end
  local o = model_option(s)
  if not o then
    util.notify(string.format("%s offers no choice of model", s.agent))
    return false
  end
  return M.set_config(s, o.id, value, "model")
end

-- complete lists what a command can take: "mode" (mode names and ids),
-- "model" (the model option's value names and values), "config" (option
-- ids), "config:ID" (option ID's values).
function M.complete(s, what, lead)
  local out = {}
  if not s then
    return out
  end
  lead = (lead or ""):lower()
  local function matches(x)
    return type(x) == "string" and vim.startswith(x:lower(), lead)
  end
  if what == "config" then
    for _, o in ipairs(s.config or {}) do
      table.insert(out, o.id)
    end
  else
    -- each once: its word, or its id when only the id starts with what
    -- was typed (either is taken)
    local opt_id = what:match("^config:(.*)")
    local option
    for _, o in ipairs(opt_id and s.config or {}) do
      option = o.id == opt_id and o or option
    end
    for _, c in ipairs((not opt_id or option) and choices(s, not opt_id and what or nil, option) or {}) do
      table.insert(out, (matches(c.word) or not matches(c.id)) and c.word or c.id)
    end
  end
  local seen = {}
  return vim.tbl_filter(function(x)
    local keep = matches(x) and not seen[x]
    if keep then
      seen[x] = true
    end
    return keep
  end, out)
end

return M
