-- Completion in the prompt area, built in (no completion plugin needed):
-- typing "/" at the start of the prompt opens the agent's slash commands
-- (its available_commands, with their descriptions and input hints);
-- "#" at the start of a word offers #buffer and #selection, "@" the open
-- buffers' files and then the paths under the cwd (agentrun.context).
-- The same lists are the prompt buffer's 'omnifunc' (<C-x><C-o>), which a
-- completion plugin can use as its source.
local api = vim.api

local M = {}

local trigger -- defined below

-- commands records the agent's commands (available_commands_update);
-- a slash the user already typed in the prompt gets its menu now.
function M.commands(s, list)
  s.commands = type(list) == "table" and list or {}
  local buf = s.chat and s.chat.prompt_buf
  if buf and api.nvim_get_current_buf() == buf and api.nvim_get_mode().mode == "i" then
    trigger(s)
  end
end

-- slash_items are the agent's commands that start with lead ("/com").
local function slash_items(s, lead)
  local out = {}
  for _, c in ipairs(s.commands or {}) do
    local word = "/" .. tostring(c.name)
    if vim.startswith(word, lead) then
      local hint = type(c.input) == "table" and c.input.hint or nil
      table.insert(out, {
        word = word,
        abbr = word .. (hint and (" " .. hint) or ""),
        menu = c.description,
        dup = 0,
      })
    end
  end
  return out
end

-- hash_items are the # words that start with lead ("#b").
local function hash_items(lead)
  local out = {}
  for _, w in ipairs({
    { "#buffer", "the file buffer you were in, as it is now" },
    { "#selection", "your last visual selection in it" },
  }) do
    if vim.startswith(w[1], lead) then
      table.insert(out, { word = w[1], menu = w[2] })
    end
  end
  return out
end

-- at_items are the files for "@" + lead: the listed buffers' files under
-- the cwd first, then what the file system has.
local function at_items(lead)
  local out, seen = {}, {}
  local path = lead:sub(2)
  for _, info in ipairs(vim.fn.getbufinfo({ buflisted = 1 })) do
    if info.name ~= "" and vim.bo[info.bufnr].buftype == "" then
      local rel = vim.fn.fnamemodify(info.name, ":.")
      if vim.startswith(rel, path) and not seen[rel] then
        seen[rel] = true
        table.insert(out, { word = "@" .. rel, menu = "buffer" })
      end
    end
  end
  for _, f in ipairs(vim.fn.getcompletion(path, "file")) do
    if not seen[f] then
      seen[f] = true
      table.insert(out, { word = "@" .. f, menu = f:sub(-1) == "/" and "dir" or "file" })
    end
  end
  return out
end

-- lead returns what is being completed at the cursor: its kind ("/",
-- "#" or "@"), its start column (0-based) and the text so far; nil when
-- nothing is.
local function lead()
  local line = api.nvim_get_current_line()
  local col = api.nvim_win_get_cursor(0)[2]
  local before = line:sub(1, col)
  if before:match("^/[%w%-_:]*$") then
    return "/", 0, before
  end
  local start, word = before:match("()([#@][^%s]*)$")
  if start and (start == 1 or before:sub(start - 1, start - 1):match("%s")) then
    if word:sub(1, 1) == "#" and not word:match("^#%a*$") then
      return nil
    end
    return word:sub(1, 1), start - 1, word
  end
end

-- items_for lists the completions of kind for the text so far.
local function items_for(s, kind, text)
  if kind == "/" then
    return slash_items(s, text)
  elseif kind == "#" then
    return hash_items(text)
  end
  return at_items(text)
end

-- attach sets up completion in session s's prompt buffer.
function M.attach(s, buf)
  vim.bo[buf].omnifunc = "v:lua.require'agentrun.ui.complete'.omnifunc"
  -- The menu narrows as you type and inserts nothing until you pick.
  require("agentrun.compat").buffer_completeopt(buf, "menuone,noinsert")
  vim.b[buf].agentrun_session = s.key
  api.nvim_create_autocmd("TextChangedI", {
    buffer = buf,
    desc = "agentrun: complete slash commands, #buffer/#selection and @files",
    callback = function()
      trigger(s)
    end,
  })
end

-- trigger opens the menu for what is being typed.
trigger = function(s)
  local kind, start, text = lead()
  if kind and vim.fn.pumvisible() == 0 then
    local list = items_for(s, kind, text)
    if #list > 0 and not (#list == 1 and list[1].word == text) then
      vim.fn.complete(start + 1, list)
    end
  end
end

-- omnifunc is the prompt buffer's 'omnifunc' (see :help complete-functions).
function M.omnifunc(findstart, base)
  if findstart == 1 then
    local kind, start = lead()
    return kind and start or -3
  end
  local s = require("agentrun.state").sessions[vim.b.agentrun_session or ""]
  local kind = base:sub(1, 1)
  if kind ~= "/" and kind ~= "#" and kind ~= "@" then
    return {}
  end
  return (kind ~= "/" or s) and items_for(s, kind, base) or {}
end

return M
