-- Completion in the prompt area, built in (no completion plugin needed):
-- typing "/" at the start of the prompt opens the agent's slash commands
-- (its available_commands, with their descriptions and input hints).
-- The same list is the prompt buffer's 'omnifunc' (<C-x><C-o>), which a
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

-- items are the completion items for the slash command being typed.
local function items(s, lead)
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

-- slash_lead returns the slash command typed so far on the cursor's line
-- ("/com"), or nil when the line is not one being typed.
local function slash_lead()
  local line = api.nvim_get_current_line()
  local col = api.nvim_win_get_cursor(0)[2]
  local lead = line:sub(1, col)
  if lead:match("^/[%w%-_:]*$") then
    return lead
  end
end

-- attach sets up completion in session s's prompt buffer.
function M.attach(s, buf)
  vim.bo[buf].omnifunc = "v:lua.require'agentrun.ui.complete'.omnifunc"
  -- The menu narrows as you type and inserts nothing until you pick.
  require("agentrun.compat").buffer_completeopt(buf, "menuone,noinsert")
  vim.b[buf].agentrun_session = s.key
  api.nvim_create_autocmd("TextChangedI", {
    buffer = buf,
    desc = "agentrun: the agent's slash commands",
    callback = function()
      trigger(s)
    end,
  })
end

-- trigger opens the menu of slash commands for what is typed.
trigger = function(s)
  local lead = slash_lead()
  if lead and vim.fn.pumvisible() == 0 then
    local list = items(s, lead)
    if #list > 0 then
      vim.fn.complete(1, list)
    end
  end
end

-- omnifunc is the prompt buffer's 'omnifunc' (see :help complete-functions).
function M.omnifunc(findstart, base)
  if findstart == 1 then
    return slash_lead() and 0 or -3
  end
  local s = require("agentrun.state").sessions[vim.b.agentrun_session or ""]
  return s and items(s, base) or {}
end

return M
