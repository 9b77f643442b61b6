-- The command-line window (q:, q/): while it is open no other window may
-- be entered, opened or closed (E11). Window work that arrives meanwhile
-- (a command's split) waits for it to close; the public commands that
-- open windows refuse with a sentence.
local api = vim.api
local rpc = require("agentrun.rpc")

local M = {}

-- open reports whether the command-line window is open.
function M.open()
  return vim.fn.getcmdwintype() ~= ""
end

local after_cmdwin = {}
local waiting = false -- a CmdwinLeave autocommand is set

local function wait_cmdwin()
  if waiting then
    return
  end
  waiting = true
  api.nvim_create_autocmd("CmdwinLeave", {
    once = true,
    desc = "agentrun: the window work that waited for the command-line window to close",
    callback = function()
      -- it still stands during CmdwinLeave: just after
      vim.schedule(function()
        waiting = false
        if M.open() then
          return wait_cmdwin() -- left one and opened another: that one too
        end
        local fns = after_cmdwin
        after_cmdwin = {}
        for _, fn in ipairs(fns) do
          local ok, err = pcall(fn)
          if not ok then
            rpc.log("error", "window work after the command-line window: " .. tostring(err))
          end
        end
      end)
    end,
  })
end

-- after runs fn now, or, while the command-line window is open,
-- once it closed. Window work that arrives meanwhile (a command's split)
-- waits so.
function M.after(fn)
  if not M.open() then
    return fn()
  end
  if not vim.tbl_contains(after_cmdwin, fn) then
    table.insert(after_cmdwin, fn)
  end
  wait_cmdwin()
end

-- refuses tells the user that what (":AgentRun") opens windows,
-- which the command-line window forbids, and returns true while it is
-- open: the public commands that open windows ask first.
function M.refuses(what)
  if not M.open() then
    return false
  end
  require("agentrun.util").notify(string.format("%s cannot open windows from the command-line window; leave it (:q) first", what))
  return true
end

return M
