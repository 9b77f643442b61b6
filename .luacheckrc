-- luacheck (Debian's lua-check), run by make test: undefined and unused
-- names. The plugin runs in Neovim's LuaJIT with the vim global.
std = "luajit"
globals = { "vim" }
read_globals = { table = { fields = { "unpack" } } } -- Lua 5.2+ (LuaJIT has unpack)
max_line_length = false
ignore = {
  "542", -- an empty if branch: a comment says why nothing is done there
  "42.", -- shadowing a local: a narrower one of the same meaning
  "43.", -- shadowing an upvalue: likewise
}
-- the Lua unit tests (tests/unit/run.lua) share one assertion
files["tests/unit"] = { globals = { "eq" } }
