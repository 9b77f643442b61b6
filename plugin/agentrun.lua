-- agentrun.nvim user commands. Nothing else happens at startup: the Lua
-- modules load, and the backend starts, on first use.
if vim.g.loaded_agentrun then
  return
end
vim.g.loaded_agentrun = true

if vim.fn.has("nvim-0.7.2") == 0 then
  vim.api.nvim_echo({ { "(agentrun) needs Neovim 0.7.2 or newer", "ErrorMsg" } }, true, {})
  return
end

local function api()
  return require("agentrun")
end

local function arg(o)
  return o.args ~= "" and o.args or nil
end


local commands = {
  AgentRun = {
    desc = "agentrun: start a session with [agent] (! = continue its last one here; ssh://host: on that machine) or open its chat",
    usage = ":AgentRun[!] [ssh://host] [agent]",
    most = 2, -- a machine, then an agent
    bang = true,
    complete = function(lead)
      return api()._complete_agents(lead)
    end,
    run = function(o)
      local host
      if o.fargs[1] and o.fargs[1]:match("^ssh:") then
        host = table.remove(o.fargs, 1)
      end
      if #o.fargs > 1 then
        -- one line at 100 columns (a longer one stops at "Press ENTER")
        require("agentrun.util").notify({ string.format(":AgentRun takes [ssh://host] [agent], not: %s", o.args), "usage: :AgentRun [ssh://host] [agent]" })
        return
      end
      api().run(o.fargs[1], o.bang, host)
    end,
  },
  AgentPrompt = {
    desc = "agentrun: send {text} to the current session (#buffer, #selection, @path add context; a range sends those lines)",
    nargs = "*", -- without text: our sentence, not E471
    range = true,
    -- no "file" completion: it would expand # and % in the text; none at
    -- all would make <Tab> insert a literal ^I
    complete = function()
      return {}
    end,
    run = function(o)
      api().prompt(o.args, nil, o.range > 0 and { o.line1, o.line2 } or nil)
    end,
  },
  AgentCancel = {
    desc = "agentrun: cancel the current turn",
    usage = ":AgentCancel", -- no argument
    run = function()
      api().cancel()
    end,
  },
  AgentStop = {
    desc = "agentrun: stop the current session's agent",
    usage = ":AgentStop", -- no argument
    run = function()
      api().stop()
    end,
  },
  AgentTerminals = {
    desc = "agentrun: list the terminals",
    usage = ":AgentTerminals", -- no argument
    run = function()
      api().terminals()
    end,
  },
  AgentType = {
    desc = "agentrun: type into terminal [id] (default: the one that waits for input): its split, in terminal mode",
    usage = ":AgentType [id]",
    complete = function(lead)
      return api()._complete_terminals(lead)
    end,
    run = function(o)
      api().type_into(arg(o))
    end,
  },
  AgentQuickfix = {
    desc = "agentrun: load the failures terminal [id] printed (default: this split's, else the newest) into the quickfix list",
    usage = ":AgentQuickfix [id]",
    complete = function(lead)
      return api()._complete_terminals(lead)
    end,
    run = function(o)
      api().quickfix(arg(o))
    end,
  },
  AgentDiff = {
    desc = "agentrun: compare [file]'s unsaved edits (default: this buffer's) with the file on disk, which an agent's command changed",
    usage = ":AgentDiff [file]",
    most = 1,
    complete = "buffer",
    run = function(o)
      api().diff(arg(o))
    end,
  },
  AgentReview = {
    desc = "agentrun: review every hunk the current session's last turn (or the whole session) changed: accept or reject each",
    usage = ":AgentReview [turn|session]",
    complete = function(lead)
      return vim.tbl_filter(function(x)
        return x:sub(1, #lead) == lead
      end, { "turn", "session" })
    end,
    run = function(o)
      api().review(arg(o))
    end,
  },
  AgentRewind = {
    desc = "agentrun: put the files the current session's last turn changed back as they were before it (asks for each you changed since)",
    usage = ":AgentRewind", -- no argument
    run = function()
      api().rewind()
    end,
  },
  AgentAnswer = {
    desc = "agentrun: open the question that waits for your answer (one that came while you typed, or that you put aside with q)",
    usage = ":AgentAnswer",
    most = 0,
    run = function()
      api().answer()
    end,
  },
  AgentShell = {
    desc = "agentrun: open a shell you hold (or run [cmd] through it) in a terminal split",
    nargs = "*",
    complete = "shellcmd",
    run = function(o)
      api().shell(arg(o))
    end,
  },
  AgentTakeover = {
    desc = "agentrun: take terminal [id] over from the agent (it outlives the agent's release)",
    usage = ":AgentTakeover [id]", -- at most one argument
    complete = function(lead)
      return api()._complete_terminals(lead)
    end,
    run = function(o)
      api().takeover(arg(o))
    end,
  },
  AgentDetach = {
    desc = "agentrun: keep terminal [id] running after Neovim quits (reattach with :AgentAttach)",
    usage = ":AgentDetach [id]", -- at most one argument
    complete = function(lead)
      return api()._complete_terminals(lead)
    end,
    run = function(o)
      api().detach(arg(o))
    end,
  },
  AgentAttach = {
    desc = "agentrun: show terminal [PID:term-N] of another host (another Neovim's, one left detached, or ssh://host/PID:term-N) live",
    usage = ":AgentAttach [PID:term-N | ssh://[user@]host[:port][/PID:term-N]]", -- at most one argument
    complete = function(lead)
      return api()._complete_attach(lead)
    end,
    run = function(o)
      api().attach(arg(o))
    end,
  },
  AgentMode = {
    desc = "agentrun: switch the session to mode [mode] (its name as the picker shows it, or its id)",
    usage = ":AgentMode [mode]",
    whole = true, -- a name may have spaces: "Accept edits"
    complete = function(lead)
      return api()._complete_modes("mode", lead)
    end,
    run = function(o)
      api().mode(arg(o))
    end,
  },
  AgentModel = {
    desc = "agentrun: switch the session's model to [model] (its name as the picker shows it, or its id)",
    usage = ":AgentModel [model]",
    whole = true, -- a name may have spaces: "Sonnet 5.5"
    complete = function(lead)
      return api()._complete_modes("model", lead)
    end,
    run = function(o)
      api().model(arg(o))
    end,
  },
  AgentConfig = {
    desc = "agentrun: set the session's config option {id} to [value]",
    usage = ":AgentConfig {id} [value]", -- without an id: our sentence, not E471
    most = 2,
    complete = function(lead, line)
      local words = vim.split(line, "%s+")
      if #words <= 2 then
        return api()._complete_modes("config", lead)
      elseif #words == 3 then -- the option's values, as an unknown one is answered
        return api()._complete_modes("config:" .. words[2], lead)
      end
      return {}
    end,
    run = function(o)
      api().config(o.fargs[1], o.fargs[2])
    end,
  },
  AgentSessions = {
    desc = "agentrun: list [agent]'s earlier sessions in this directory and open one again",
    usage = ":AgentSessions [agent]", -- at most one argument
    complete = function(lead)
      return api()._complete_agents(lead)
    end,
    run = function(o)
      api().sessions(arg(o))
    end,
  },
  AgentLogin = {
    desc = "agentrun: sign in to the current session's agent",
    usage = ":AgentLogin", -- no argument
    run = function()
      api().login()
    end,
  },
  AgentBuild = {
    desc = "agentrun: install the backend binary [auto|download|go]",
    usage = ":AgentBuild [auto|download|go]", -- at most one argument
    complete = function(lead)
      return vim.tbl_filter(function(m)
        return m:sub(1, #lead) == lead
      end, require("agentrun.install").methods)
    end,
    run = function(o)
      require("agentrun.install").command(o.args)
    end,
  },
  AgentKill = {
    desc = "agentrun: kill terminal [id] (! = SIGKILL at once)",
    usage = ":AgentKill[!] [id]", -- at most one argument
    bang = true,
    complete = function(lead)
      return api()._complete_running(lead)
    end,
    run = function(o)
      api().kill(arg(o), o.bang)
    end,
  },
}

-- A command with a usage takes at most one argument (none when its usage
-- names none; `most` when it says: then run reads o.fargs; `whole`: the
-- words are one name, spaces and all). Its nargs is "*", not "?" or 0 (which would make "demo
-- extra" one name, or give Vim's E488): more words are refused with a
-- sentence that gives the usage.
for name, c in pairs(commands) do
  local run, nargs = c.run, c.nargs
  if c.usage then
    nargs = "*"
    local most = c.most or (c.usage:find("%[") and 1 or 0)
    run = function(o)
      if #o.fargs > most and not c.whole then
        -- one short line (at 80 columns): a longer one stops the screen
        -- at "Press ENTER"
        -- (a list: the shorter fit 60 columns, util.notify)
        local say = most >= 1 and { string.format("too many arguments; usage: %s", c.usage), string.format("usage: %s", c.usage), string.format(":%s takes at most %s", name, most == 1 and "one argument" or most .. " arguments") } or string.format(":%s takes no arguments", name)
        require("agentrun.util").notify(say)
        return
      end
      if c.whole then
        o.args = table.concat(o.fargs, " ")
      elseif not c.most then
        o.args = o.fargs[1] or ""
      end
      c.run(o)
    end
  end
  -- util.notify says an error of a command as a message, not an error
  -- (see there): it knows it runs under one by util.in_command
  local under = run
  run = function(o)
    local util = require("agentrun.util")
    util.in_command = util.in_command + 1
    local ok, err = pcall(under, o)
    util.in_command = util.in_command - 1
    if not ok then
      error(err, 0)
    end
  end
  vim.api.nvim_create_user_command(name, run, { desc = c.desc, nargs = nargs, bang = c.bang, range = c.range, complete = c.complete })
end
