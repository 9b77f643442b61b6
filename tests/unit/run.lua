-- The Lua unit tests: pure Lua of the plugin (policy wording, quickfix
-- parsing, how a terminal ended, layout sizes) in a headless Neovim with
-- the plugin on its runtimepath, with no backend and no agent.
-- scripts/lua-unit.sh runs it on each Neovim; each *_spec.lua here
-- returns { ["what it checks"] = function() … end }, failing by error().
-- It prints a line per failure and "N passed, N failed" last, and quits
-- with exit code 1 when anything failed.
local dir = vim.fn.fnamemodify(debug.getinfo(1, "S").source:sub(2), ":h")

-- eq fails with what was wanted and got when a ~= b (deep for tables).
_G.eq = function(want, got, what)
  if not vim.deep_equal(want, got) then
    error(string.format("%s: want %s, got %s", what or "value", vim.inspect(want), vim.inspect(got)), 2)
  end
end

local passed, failed = 0, 0
local files = vim.fn.glob(dir .. "/*_spec.lua", false, true)
table.sort(files)
for _, file in ipairs(files) do
  local ok, spec = pcall(dofile, file)
  if not ok then
    failed = failed + 1
    io.stdout:write(string.format("FAIL %s: %s\n", vim.fn.fnamemodify(file, ":t"), spec))
  else
    local names = vim.tbl_keys(spec)
    table.sort(names)
    for _, name in ipairs(names) do
      local tok, err = pcall(spec[name])
      if tok then
        passed = passed + 1
      else
        failed = failed + 1
        io.stdout:write(string.format("FAIL %s: %s: %s\n", vim.fn.fnamemodify(file, ":t"), name, err))
      end
    end
  end
end
io.stdout:write(string.format("lua: %d passed, %d failed\n", passed, failed))
vim.cmd(failed > 0 and "cquit 1" or "qall!")
