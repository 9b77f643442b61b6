-- probe.lua is loaded into the benchmark's headless Neovim. It measures,
-- from inside Neovim, when a terminal buffer first shows an expected last
-- line, and how late a 5 ms repeating timer fires (event-loop lag).
local M = {}
local uv = vim.loop

local function ms_since(t0)
  return (uv.hrtime() - t0) / 1e6
end

-- watch polls buf every 10 ms (the same cost for every contender) and records
-- when a line equal to `last` appears among its final lines.
function M.watch(buf, last, t0)
  M.found = nil
  local timer = uv.new_timer()
  timer:start(10, 10, vim.schedule_wrap(function()
    if M.found or not vim.api.nvim_buf_is_valid(buf) then
      timer:stop()
      return
    end
    local n = vim.api.nvim_buf_line_count(buf)
    for _, l in ipairs(vim.api.nvim_buf_get_lines(buf, math.max(0, n - 80), n, false)) do
      if l == last then
        M.found = ms_since(t0)
        timer:stop()
        return
      end
    end
  end))
end

-- last_number returns the last line of buf that is only digits (what a
-- `seq`/`cat` of numbered lines left on screen).
function M.last_number(buf)
  local n = vim.api.nvim_buf_line_count(buf)
  local lines = vim.api.nvim_buf_get_lines(buf, math.max(0, n - 200), n, false)
  for i = #lines, 1, -1 do
    if lines[i]:match("^%d+$") then
      return lines[i]
    end
  end
  return ""
end

-- native_start runs cmd in Neovim's own :terminal and returns the buffer.
function M.native_start(cmd, last)
  local buf = vim.api.nvim_create_buf(false, true)
  vim.api.nvim_set_current_buf(buf)
  M.exited = nil
  local t0 = uv.hrtime()
  if last then
    M.watch(buf, last, t0)
  end
  vim.fn.termopen(cmd, { on_exit = function() M.exited = ms_since(t0) end })
  return buf
end

-- lag_start starts a 5 ms repeating timer recording its lateness.
function M.lag_start()
  M.lags = {}
  local prev = uv.hrtime()
  M.lag_timer = uv.new_timer()
  M.lag_timer:start(5, 5, function()
    local now = uv.hrtime()
    table.insert(M.lags, math.max(0, (now - prev) / 1e6 - 5))
    prev = now
  end)
end

-- lag_stop stops the timer and returns the lateness samples in ms.
function M.lag_stop()
  M.lag_timer:stop()
  M.lag_timer:close()
  return M.lags
end

return M
