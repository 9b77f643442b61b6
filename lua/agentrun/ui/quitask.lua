-- A quit that would end your own commands (a terminal you took over, an
-- :AgentShell shell: they end with Neovim unless detached or
-- terminal.persist) says which and asks first, as an IDE asks before it
-- ends running tasks (terminal.ask_before_quit; false: they end without
-- a word). The agent's commands are not asked about: they end with its
-- session, as they always do. Neovim lets nothing but a changed buffer
-- stop a quit, so "Stay" marks a buffer of ours changed for that one
-- quit (the quit then stops as for unsaved text), and once it stopped
-- the window Neovim showed that buffer in gets its own back, with a
-- sentence saying why Neovim is still there. :qa! (any quit with !)
-- quits without asking.
local api = vim.api
local config = require("agentrun.config")
local state = require("agentrun.state")
local util = require("agentrun.util")

local M = {}

local watching = false
local forced = false -- the command line just left was a quit with !
local guard = nil -- the buffer a "Stay" marks changed

-- ending lists the running commands a quit now would end: { id, text }.
function M.ending()
  local c = config.get().terminal
  if c.persist or not c.ask_before_quit then
    return {}
  end
  local out = {}
  local ok, st = pcall(function()
    return require("agentrun.status").describe()
  end)
  if not ok or type(st) ~= "table" then
    return out
  end
  for _, t in ipairs(st.terminals or {}) do
    local l = state.terminals[t.id]
    if t.mine and t.state == "running" and l and not l.detached and not l.remote then
      local what = t.user and "your :AgentShell" or "you took it over"
      table.insert(out, { id = t.id, text = string.format("%s  %s  (%s)", t.id, t.command or l.command or "?", what) })
    end
  end
  return out
end

-- guard_buf is the buffer a "Stay" marks changed: named and written so
-- that Neovim's "No write since last change for buffer …" reads right.
local function guard_buf()
  if guard and api.nvim_buf_is_valid(guard) then
    return guard
  end
  guard = api.nvim_create_buf(false, true)
  vim.bo[guard].buftype = "acwrite"
  vim.bo[guard].bufhidden = "hide"
  vim.bo[guard].swapfile = false
  pcall(api.nvim_buf_set_name, guard, "agentrun://your commands still run")
  api.nvim_create_autocmd("BufWriteCmd", {
    buffer = guard,
    desc = "agentrun: nothing to write: the buffer only stops a quit",
    callback = function()
      vim.bo[guard].modified = false
    end,
  })
  return guard
end

-- stay stops the quit under way (Neovim's check for changed buffers, which
-- runs after ExitPre) and puts things back once it stopped.
local function stay(list)
  local b = guard_buf()
  local win = api.nvim_get_current_win()
  local shown = api.nvim_win_get_buf(win)
  api.nvim_buf_set_lines(b, 0, -1, false, vim.list_extend({ "These still run, and end when Neovim quits (:qa! quits):" }, vim.tbl_map(function(e)
    return "  " .. e.text
  end, list)))
  vim.bo[b].modified = true
  vim.schedule(function()
    if api.nvim_buf_is_valid(b) then
      vim.bo[b].modified = false
    end
    -- Neovim showed the changed buffer in the window: the user's back
    if api.nvim_win_is_valid(win) and api.nvim_buf_is_valid(shown) and api.nvim_win_get_buf(win) == b then
      pcall(api.nvim_win_set_buf, win, shown)
    end
    util.notify(string.format("not quit: %d of your commands still run (:qa! quits and ends them)", #list))
  end)
end

-- exit_pre asks, when a quit with no ! would end the user's commands.
local function exit_pre()
  if forced or #api.nvim_list_uis() == 0 then
    return -- :qa!, or nobody to ask (an embedded Neovim)
  end
  local list = M.ending()
  if #list == 0 then
    return
  end
  local lines = { string.format("(agentrun) Quitting ends %s:", #list == 1 and "your command" or ("your " .. #list .. " commands")) }
  for _, e in ipairs(list) do
    table.insert(lines, "  " .. e.text)
  end
  local ok, choice = pcall(vim.fn.confirm, table.concat(lines, "\n"), "&Quit and end them\n&Stay", 2)
  if ok and choice == 1 then
    return
  end
  stay(list)
end

-- watch installs the question (once).
function M.watch()
  if watching or vim.fn.exists("##ExitPre") == 0 then
    return
  end
  watching = true
  local group = api.nvim_create_augroup("agentrun_quitask", { clear = true })
  api.nvim_create_autocmd("CmdlineLeave", {
    group = group,
    desc = "agentrun: notes a quit with ! (it quits without asking)",
    callback = function()
      local line = vim.fn.getcmdtype() == ":" and vim.fn.getcmdline() or ""
      forced = not (vim.v.event or {}).abort and line:gsub("%s+$", ""):find("^[%s:]*%a+!$") ~= nil
      if forced then
        vim.schedule(function()
          forced = false
        end)
      end
    end,
  })
  api.nvim_create_autocmd("ExitPre", {
    group = group,
    desc = "agentrun: a quit that would end your own commands says which and asks first",
    callback = exit_pre,
  })
end

return M
