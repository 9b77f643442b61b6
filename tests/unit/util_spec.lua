-- util.fit_parts: a status line fitted without cutting a word.
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
}
