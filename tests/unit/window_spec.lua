-- ui/window's sizes: what a chat and a split get of the screen.
local window = require("agentrun.ui.window")

local function screen(cols, lines)
  vim.o.columns, vim.o.lines = cols, lines
end

return {
  ["a chat beside the code takes at most half the columns"] = function()
    screen(80, 24)
    eq(true, window.chat_width() <= 40, "chat width at 80 columns")
    screen(240, 60)
    eq(true, window.chat_width() <= 120 and window.chat_width() >= 30, "chat width at 240 columns")
  end,
  ["a split below takes at most a third of the rows, never under 3"] = function()
    screen(80, 24)
    local third = math.floor((24 - vim.o.cmdheight) / 3)
    eq(true, window.split_height() <= third, "split height at 24 rows")
    screen(60, 8)
    eq(3, window.split_height(), "split height on a tiny screen")
  end,
  ["a chat below takes at most half the rows"] = function()
    screen(80, 24)
    eq(true, window.chat_height() <= math.floor((24 - vim.o.cmdheight) / 2), "chat height at 24 rows")
  end,
}
