-- :AgentTerminals: a list of every terminal with its state. Keys: open
-- (<CR>) opens its split, kill (X) kills it, close (q) closes the list.
local api = vim.api
local config = require("agentrun.config")

local M = {}

local buf = nil
local ids = {} -- line (1-based) -> terminal id

local function describe(t)
  local st = t.state or "?"
  if t.state == "exited" or t.state == "released" then
    if t.signal and t.signal ~= "" then
      st = st .. " (signal " .. t.signal .. ")"
    elseif t.exit_code ~= nil then
      st = st .. " (exit " .. tostring(t.exit_code) .. ")"
    end
  end
  local extra = t.display_only and "  [agent's own terminal]" or ""
  return string.format("%-6s %-26s %s%s", t.id, st, t.command or "", extra)
end

local function render()
  local st = require("agentrun").status()
  local lines = { "agentrun terminals — <CR> open · X kill · q close" }
  ids = {}
  for _, t in ipairs(st.terminals) do
    table.insert(lines, describe(t))
    ids[#lines] = t.id
  end
  if #lines == 1 then
    table.insert(lines, "(no terminals yet)")
  end
  vim.bo[buf].modifiable = true
  api.nvim_buf_set_lines(buf, 0, -1, false, lines)
  vim.bo[buf].modifiable = false
  api.nvim_buf_add_highlight(buf, -1, "AgentRunHeader", 0, 0, -1)
end

local function under_cursor()
  return ids[api.nvim_win_get_cursor(0)[1]]
end

local function create()
  buf = api.nvim_create_buf(false, true)
  pcall(api.nvim_buf_set_name, buf, "agentrun://terminals")
  vim.bo[buf].filetype = "agentrun_terminals"
  vim.bo[buf].bufhidden = "hide"
  local km = config.get().keymaps
  local function map(key, fn, desc)
    if key then
      vim.keymap.set("n", key, fn, { buffer = buf, nowait = true, silent = true, desc = "agentrun: " .. desc })
    end
  end
  map(km.open, function()
    local id = under_cursor()
    if id then
      require("agentrun.ui.term").open(id, { focus = true })
    end
  end, "open the terminal")
  map(km.kill, function()
    local id = under_cursor()
    if id then
      require("agentrun.ui.term").kill(id, false)
    end
  end, "kill the terminal")
  map(km.close, function()
    if #api.nvim_tabpage_list_wins(0) > 1 then
      api.nvim_win_close(0, false)
    end
  end, "close the list")
end

-- open shows the list (refreshing it) and enters it.
function M.open()
  if not (buf and api.nvim_buf_is_valid(buf)) then
    create()
  end
  render()
  local w = vim.fn.bufwinid(buf)
  if w == -1 then
    vim.cmd("botright sbuffer " .. buf)
    w = api.nvim_get_current_win()
    api.nvim_win_set_height(w, math.min(12, math.max(3, #ids + 2)))
  end
  api.nvim_set_current_win(w)
end

-- refresh re-renders the list when it is visible.
function M.refresh()
  if buf and api.nvim_buf_is_valid(buf) and vim.fn.bufwinid(buf) ~= -1 then
    render()
  end
end

return M
