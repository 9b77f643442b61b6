-- A quit that would end your own commands (an R rerun, a terminal you
-- took over, an :AgentShell shell, a sign-in: they end with Neovim unless
-- detached or terminal.persist) or lose what a prompt holds and you did
-- not send says which and asks first, as an IDE asks before it ends
-- running tasks (terminal.ask_before_quit; false: they end without a
-- word). The agent's commands are not asked about: they end with its
-- session, as they always do. Every quit asks the same question, where it
-- first knows Neovim would quit: ui/window.lua's QuitPre (before it closes
-- the chat and the splits, or writes your files for a :wq typed in the
-- chat) calls ask(), else ExitPre does; :wqa and :xa, which run neither
-- on Neovim 0.7, are asked as their command line is left. :qa! (any quit
-- with !) quits without asking.
--
-- "Stay" stops the quit without a Vim error: Neovim gives up a quit when
-- QuitPre or ExitPre leaves the window it quits out of the current tab
-- page (it takes it as closed by an autocommand). So stay() goes, with
-- every autocommand ignored, to a tab page of its own for that moment,
-- and back to the window the user was in once the quit gave up. (A
-- changed buffer would stop it too, but Neovim then says E37/E162 with a
-- hit-enter prompt, naming the buffer.)
local api = vim.api
local config = require("agentrun.config")
local state = require("agentrun.state")
local util = require("agentrun.util")

local M = {}

local watching = false
local forced = false -- the command line just left was a quit with !
local answered = false -- this quit was asked about, and the answer was Quit

-- what says what a running command of the user's is, from its status()
-- row (state.describe_terminal): how it was started, and who holds it.
local function what(t)
  if t.origin == "rerun" then
    return t.runs and ("your rerun, run " .. t.runs) or "your rerun"
  elseif t.origin == "shell" then
    return "your :AgentShell"
  elseif t.origin == "sign_in" then
    return "your sign-in"
  end
  return "you took it over"
end

-- commands lists the running commands of the user's that a quit now would
-- end: { text }.
local function commands()
  if config.get().terminal.persist then
    return {}
  end
  local ok, st = pcall(function()
    return require("agentrun.status").describe()
  end)
  if not ok or type(st) ~= "table" then
    return {}
  end
  local out = {}
  for _, t in ipairs(st.terminals or {}) do
    local l = state.terminals[t.id]
    if t.mine and t.state == "running" and l and not l.detached and not l.remote then
      -- (a rerun by the name the list shows it by: its first run's id)
      table.insert(out, { text = string.format("%s  %s  (%s)", state.label(l), t.command or l.command or "?", what(t)) })
    end
  end
  return out
end

-- prompts lists the prompts that hold text not sent, which a quit loses:
-- { text } ("demo 1: fix the test (+2 lines)").
local function prompts()
  local out = {}
  for _, key in ipairs(state.session_order) do
    local s = state.sessions[key]
    local lines = s and s.chat and s.chat:unsent()
    if lines then
      local first = vim.trim(lines[1])
      if vim.fn.strchars(first) > 50 then
        first = vim.fn.strcharpart(first, 0, 49) .. "…"
      end
      local more = #lines > 1 and string.format(" (+%d lines)", #lines - 1) or ""
      table.insert(out, { text = string.format("%s %s: %s%s", s.agent or "session", tostring(key), first, more) })
    end
  end
  return out
end

-- asks reports whether a quit now would be asked about (when there is
-- something to ask): the question is on, someone can answer it, and the
-- quit has no !.
function M.asks()
  return config.get().terminal.ask_before_quit and not forced and #api.nvim_list_uis() > 0
end

-- stay stops the quit under way (see the header) and says so.
local function stay()
  local win = api.nvim_get_current_win()
  local buf = api.nvim_create_buf(false, true)
  vim.bo[buf].bufhidden = "wipe"
  local ei = vim.o.eventignore
  vim.o.eventignore = "all"
  pcall(vim.cmd, "tab sbuffer " .. buf)
  vim.o.eventignore = ei
  vim.schedule(function()
    local ei2 = vim.o.eventignore
    vim.o.eventignore = "all"
    if api.nvim_get_current_buf() == buf and #api.nvim_list_tabpages() > 1 then
      pcall(vim.cmd, "tabclose")
    end
    if api.nvim_win_is_valid(win) then
      pcall(api.nvim_set_current_win, win)
    end
    vim.o.eventignore = ei2
    -- (short: one line at 60 columns, no hit-enter prompt)
    util.notify("not quit (:qa! quits without asking)")
  end)
end

-- confirm asks msg with choices ("&Quit", "&Stay": the letter after &
-- is its key) as confirm() shows it, and returns the number of the one
-- chosen: its key, <CR> for the default (def), 0 for <Esc> or <C-c>.
-- Unlike confirm(), which waits without a word on any other key, another
-- key says hint (the keys, once: it stays in sight).
function M.confirm(msg, choices, def, hint)
  local keys, shown = {}, {}
  for i, c in ipairs(choices) do
    local at = c:find("&", 1, true) or 0
    local key = c:sub(at + 1, at + 1)
    keys[key:lower()] = i
    local open, close = "(", ")"
    if i == def then
      open, close = "[", "]"
    end
    table.insert(shown, c:sub(1, math.max(at - 1, 0)) .. open .. key .. close .. c:sub(at + 2))
  end
  api.nvim_echo({ { msg .. "\n" }, { table.concat(shown, ", ") .. ": ", "Question" } }, false, {})
  local hinted = false
  local function done(n)
    -- the question's lines leave the screen as confirm()'s do, without a
    -- "Press ENTER" (a redraw cancels it)
    vim.cmd("redraw")
    return n
  end
  while true do
    local ok, c = pcall(vim.fn.getchar)
    if not ok then
      return done(0) -- <C-c> (an interrupt)
    end
    c = type(c) == "number" and vim.fn.nr2char(c) or c
    if c == "\r" or c == "\n" then
      return done(def)
    elseif c == "\27" or c == "\3" then
      return done(0)
    elseif keys[c:lower()] then
      return done(keys[c:lower()])
    elseif not hinted and c:sub(1, 1) ~= "\128" then -- (not a mouse event)
      hinted = true
      api.nvim_echo({ { hint .. ": ", "Question" } }, false, {})
    end
  end
end

-- ask asks, when a quit now would end the user's commands or lose a
-- prompt's text, and returns true to go on quitting; false when the user
-- chose Stay (the quit under way then stops, see stay; with cmdline, the
-- caller drops the command line instead). Asked once per quit: QuitPre's
-- answer holds for the ExitPre that follows.
function M.ask(cmdline)
  if answered or not M.asks() then
    return true
  end
  local cmds, texts = commands(), prompts()
  if #cmds == 0 and #texts == 0 then
    return true
  end
  local lines = {}
  if #cmds > 0 then
    table.insert(lines, string.format("(agentrun) Quitting ends %s:", #cmds == 1 and "your command" or ("your " .. #cmds .. " commands")))
    for _, e in ipairs(cmds) do
      -- (one line each, cut to the screen's width: a long command wrapped
      -- in the middle of a word)
      table.insert(lines, util.fit("  " .. e.text, vim.o.columns - 1))
    end
  end
  if #texts > 0 then
    local what_lost = #texts == 1 and "what you typed in the prompt and did not send" or "what you typed in the prompts and did not send"
    table.insert(lines, (#cmds > 0 and "and loses " or "(agentrun) Quitting loses ") .. what_lost .. ":")
    for _, e in ipairs(texts) do
      -- (one line each, cut to the screen's width: a long command wrapped
      -- in the middle of a word)
      table.insert(lines, util.fit("  " .. e.text, vim.o.columns - 1))
    end
  end
  local quit = (#texts == 0 and (#cmds == 1 and "&Quit and end it" or "&Quit and end them")) or (#cmds == 0 and "&Quit and lose it") or "&Quit"
  local ok, choice = pcall(M.confirm, table.concat(lines, "\n"), { quit, "&Stay" }, 2, string.format("press q to %s; s, Enter or Esc to stay", (quit:gsub("&", "")):lower()))
  if ok and choice == 1 then
    answered = true
    vim.schedule(function()
      answered = false
    end)
    return true
  end
  if cmdline then
    -- the command line is dropped: nothing to stop, nothing moved (said
    -- once it is gone, which clears the message line)
    vim.schedule(function()
      util.notify("not quit (:qa! quits without asking)")
    end)
  else
    stay()
  end
  return false
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
      local aborted = (vim.v.event or {}).abort
      forced = not aborted and line:gsub("%s+$", ""):find("^[%s:]*%a+!$") ~= nil
      if forced then
        vim.schedule(function()
          forced = false
        end)
      end
      -- :wqa and :xa run no QuitPre or ExitPre on Neovim 0.7: asked
      -- here, Stay drops the command line (the answer holds for the
      -- ExitPre a later Neovim runs)
      local cmd = line:gsub("^[%s:]+", ""):gsub("%s+$", "")
      if not aborted and (cmd:find("^wqa%a*$") or cmd:find("^xa%a*$")) and not M.ask(true) then
        vim.cmd("let v:event.abort = v:true")
      end
    end,
  })
  api.nvim_create_autocmd("ExitPre", {
    group = group,
    desc = "agentrun: a quit that would end your own commands or lose a prompt's text says which and asks first",
    callback = function()
      M.ask()
    end,
  })
end

return M
