-- util.fit_parts: a status line fitted without cutting a word; util.notify
-- says the longest of its forms that stops no screen at "Press ENTER";
-- util.cut keeps the "(agentrun) " prefix.
local util = require("agentrun.util")

local line = " agentrun · claude · ready · Auto · Default (recommended) · 12k/200k"

return {
  ["it fits as it is"] = function()
    eq(line, util.fit_parts(line, 80))
  end,
  ["the remarks in parentheses go first"] = function()
    eq(" agentrun · claude · ready · Auto · Default · 12k/200k", util.fit_parts(line, 56))
  end,
  ["then the last parts, whole"] = function()
    eq(" agentrun · claude · ready · Auto · Default", util.fit_parts(line, 45))
    eq(" agentrun · claude · ready", util.fit_parts(line, 30))
  end,
  ["the state is cut only when it alone does not fit"] = function()
    eq(" agentrun · claude · re…", util.fit_parts(line, 24))
  end,
  ["notify says the longest form within v:echospace"] = function()
    local said = function(forms)
      return "(agentrun) " .. util.form(forms)
    end
    for _, cols in ipairs({ 60, 100 }) do
      vim.o.columns = cols
      -- 'showcmd' keeps the last 11 columns of the line: v:echospace
      local room = vim.v.echospace - #"(agentrun) "
      eq(cols - 12 - 11, room, "room at " .. cols)
      local long, fits = string.rep("a", room + 1), string.rep("b", room)
      eq("(agentrun) " .. fits, said({ long, fits, "c" }), "at " .. cols)
      eq("(agentrun) c", said({ long, "c" }), "at " .. cols)
      eq("(agentrun) " .. long, said({ long }), "the only form, at " .. cols)
      vim.o.cmdheight = 2 -- a line more above
      eq("(agentrun) " .. long, said({ long, "c" }), "with cmdheight 2, at " .. cols)
      vim.o.cmdheight = 1
    end
  end,
  ["cut keeps the prefix: every message reads alike"] = function()
    for _, cols in ipairs({ 60, 80 }) do
      vim.o.columns = cols
      local room = util.room()
      -- wider than the room, but not without the prefix (it was dropped)
      local msg = "(agentrun) " .. string.rep("a", room + 3)
      local got = util.cut(msg)
      eq("(agentrun) ", got:sub(1, #"(agentrun) "), "at " .. cols)
      eq(room + #"(agentrun) ", util.width(got), "at " .. cols)
      local fits = msg:sub(1, room + #"(agentrun) ")
      eq(fits, util.cut(fits), "one that fits, at " .. cols)
    end
  end,
}
