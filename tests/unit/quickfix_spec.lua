-- ui/quickfix: which program ran, and its output parsed into items whose
-- files exist, as gf finds them from the command's cwd.
local quickfix = require("agentrun.ui.quickfix")
local state = require("agentrun.state")

-- output makes a project with files and a terminal-like buffer holding
-- lines, registered as a terminal of cmd run in that project.
local function output(cmd, files, lines)
  local dir = vim.fn.tempname()
  for name, text in pairs(files) do
    local path = dir .. "/" .. name
    vim.fn.mkdir(vim.fn.fnamemodify(path, ":h"), "p")
    vim.fn.writefile(vim.split(text, "\n"), path)
  end
  local buf = vim.api.nvim_create_buf(false, true)
  vim.api.nvim_buf_set_lines(buf, 0, -1, false, lines)
  local t = { id = "unit-" .. buf, bufnr = buf, command = cmd, cwd = dir }
  state.terminals[t.id] = t
  return t, dir
end

return {
  ["the program behind runners and assignments"] = function()
    eq("jest", quickfix.program("npx jest --watch"))
    eq("go", quickfix.program("CGO_ENABLED=0 go test ./..."))
    eq("python", quickfix.program("python3 -m pytest"))
    eq("cargo", quickfix.program("/usr/bin/env cargo build"))
    -- what agents run: a cd first, a timeout, a file written first
    eq("go", quickfix.program("cd pkg && go test ./..."))
    eq("go", quickfix.program("timeout 60 go vet m.go"))
    eq("python", quickfix.program("cd /tmp/p && python3 broken.py"))
    eq("python", quickfix.program("printf 'x' > broken.py && python3 broken.py"))
    eq("go", quickfix.program("go test ./... | tee out.txt"))
    eq("make", quickfix.program("cd build; make -j4"))
    -- a separator inside quotes cuts nothing
    eq("sh", quickfix.program("sh -c 'echo notes.txt:2:1: boom; exit 1'"))
  end,
  ["go test's failures, files found below the cwd"] = function()
    local t, dir = output("go test ./...", { ["pkg/a_test.go"] = "package pkg" }, {
      "--- FAIL: TestA (0.00s)",
      "    a_test.go:7: want 1, got 2",
      "FAIL",
      "FAIL\texample.com/pkg\t0.002s",
    })
    local items = quickfix.items(t)
    eq(1, #items, "items")
    eq(dir .. "/pkg/a_test.go", items[1].filename, "file")
    eq(7, items[1].lnum, "line")
  end,
  ["a file that does not exist gives no item"] = function()
    local t = output("go test ./...", {}, { "    nosuch_test.go:3: boom" })
    eq(0, #quickfix.items(t), "items")
  end,
  ["gcc's file:line:col"] = function()
    local t, dir = output("make", { ["main.c"] = "int main;" }, { "main.c:4:2: error: expected ';'" })
    local items = quickfix.items(t)
    eq(1, #items, "items")
    eq(dir .. "/main.c", items[1].filename, "file")
    eq({ 4, 2 }, { items[1].lnum, items[1].col }, "line and column")
  end,
  ["a Python traceback: every frame, innermost first"] = function()
    local t, dir = output("python3 app.py", { ["app.py"] = "x", ["lib/util.py"] = "y" }, {
      "Traceback (most recent call last):",
      '  File "app.py", line 15, in <module>',
      "    main()",
      '  File "app.py", line 11, in main',
      "    helper(0)",
      "    ~~~~~~^^^",
      '  File "lib/util.py", line 5, in helper',
      "    return 1 / n",
      "           ~~^~~",
      "ZeroDivisionError: division by zero",
    })
    local items = quickfix.items(t)
    eq(3, #items, "items")
    eq({ dir .. "/lib/util.py", 5 }, { items[1].filename, items[1].lnum }, "innermost")
    eq({ dir .. "/app.py", 11 }, { items[2].filename, items[2].lnum }, "middle")
    eq({ dir .. "/app.py", 15 }, { items[3].filename, items[3].lnum }, "outermost")
    eq("ZeroDivisionError: division by zero (in helper)", items[1].text, "text")
  end,
  ["chained tracebacks and a frame outside the project"] = function()
    local frames = quickfix.tracebacks({
      "Traceback (most recent call last):",
      '  File "/usr/lib/python3/json/__init__.py", line 346, in loads',
      "ValueError: bad",
      "",
      "During handling of the above exception, another exception occurred:",
      "",
      "Traceback (most recent call last):",
      '  File "a.py", line 2',
      "    x = (",
      "SyntaxError: '(' was never closed",
    })
    eq(2, #frames, "frames")
    eq({ "/usr/lib/python3/json/__init__.py", 346, "ValueError: bad (in loads)" }, { frames[1].name, frames[1].lnum, frames[1].text })
    eq({ "a.py", 2, "SyntaxError: '(' was never closed" }, { frames[2].name, frames[2].lnum, frames[2].text })
  end,
  ["pytest's file:line beside its tracebacks"] = function()
    local t, dir = output("pytest -q", { ["test_a.py"] = "x" }, {
      "test_a.py:7: AssertionError",
    })
    local items = quickfix.items(t)
    eq(1, #items, "items")
    eq({ dir .. "/test_a.py", 7 }, { items[1].filename, items[1].lnum })
  end,
}
