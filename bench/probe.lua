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

-- Latency a person feels. Each terminal buffer that opens (TermOpen: ours
-- through nvim_open_term, native through termopen) is watched with
-- nvim_buf_attach, so a change is seen the moment Neovim puts it in the
-- buffer, not at the next poll. The same callback serves both contenders.

local function now_s()
  local s, us = uv.gettimeofday()
  return s + us / 1e6
end

-- first_start records, for every terminal buffer opened from now on, how
-- long after its command printed it its first line "FO<unix time>" (the
-- command's own clock, `date +FO%s.%N`) entered the buffer, in ms; and
-- in M.opened when the buffer opened (TermOpen), relative to that print
-- (negative: before it).
function M.first_start()
  M.first = {}
  M.opened = {}
  if M.first_au then
    return
  end
  M.first_au = vim.api.nvim_create_autocmd("TermOpen", {
    callback = function(a)
      local done = false
      local opened = now_s()
      vim.api.nvim_buf_attach(a.buf, false, {
        on_lines = function(_, b, _, first, _, last)
          if done then
            return true
          end
          for _, l in ipairs(vim.api.nvim_buf_get_lines(b, first, last, false)) do
            local ts = l:match("^FO(%d+%.%d+)")
            if ts then
              done = true
              table.insert(M.first, (now_s() - tonumber(ts)) * 1000)
              table.insert(M.opened, (opened - tonumber(ts)) * 1000)
              return true
            end
          end
        end,
      })
    end,
  })
end

-- echo_attach watches buf for the line the echo test types: "#r<round>:"
-- followed by the x's typed so far; echo_key types one key and records
-- the time until the buffer shows it.
function M.echo_attach(buf)
  M.echo = {}
  vim.api.nvim_buf_attach(buf, false, {
    on_lines = function(_, b, _, first, _, last)
      local want = M.echo_want
      if not want then
        return
      end
      for _, l in ipairs(vim.api.nvim_buf_get_lines(b, first, last, false)) do
        local xs = l:match(want.prefix .. "(x*)%s*$")
        if xs and #xs == want.n then
          M.echo_want = nil
          if want.t0 then
            table.insert(M.echo, (uv.hrtime() - want.t0) / 1e6)
          end
          return
        end
      end
    end,
  })
end

-- echo_key types keys (nvim_input, as typed) and waits in the buffer for
-- the line prefix followed by n x's; timed unless untimed.
function M.echo_key(keys, prefix, n, untimed)
  M.echo_want = { prefix = prefix:gsub("%p", "%%%0"), n = n }
  if not untimed then
    M.echo_want.t0 = uv.hrtime()
  end
  vim.api.nvim_input(keys)
end

function M.echo_waiting()
  return M.echo_want ~= nil
end

-- catch_up is Neovim's own floor for a display's catch-up: it feeds text
-- (the lines a split has to take after a flood) to a new terminal buffer
-- of cols x rows with the given 'scrollback', inside this Neovim (no RPC,
-- no sender), chunk bytes at a time with the event loop run between two,
-- and returns the ms until the line `last` shows among its final lines
-- (looked for every 10 ms, as watch does).
function M.catch_up(text, cols, rows, scrollback, last, chunk)
  local api = vim.api
  local buf = api.nvim_create_buf(false, true)
  local win = api.nvim_open_win(buf, false, { relative = "editor", row = 0, col = 0, width = cols, height = rows, style = "minimal" })
  local chan = api.nvim_open_term(buf, {})
  vim.bo[buf].scrollback = scrollback
  local t0 = uv.hrtime()
  for i = 1, #text, chunk do
    api.nvim_chan_send(chan, text:sub(i, i + chunk - 1))
    vim.wait(0)
  end
  vim.wait(10000, function()
    local n = api.nvim_buf_line_count(buf)
    for _, l in ipairs(api.nvim_buf_get_lines(buf, math.max(0, n - rows - 5), n, false)) do
      if l == last then
        return true
      end
    end
    return false
  end, 10) -- as watch() finds it in a split: every 10 ms
  local took = (uv.hrtime() - t0) / 1e6
  api.nvim_win_close(win, true)
  api.nvim_buf_delete(buf, { force = true })
  return took
end

return M
