-- The backend binary: where it is (g:agentrun_bin, else the plugin's
-- bin/agentrun), the version it must have (the plugin's VERSION file),
-- whether it runs, and where it logs. rpc starts it; install writes it.
local M = {}

local function plugin_root()
  local src = debug.getinfo(1, "S").source:sub(2)
  return vim.fn.fnamemodify(src, ":p:h:h:h")
end

M.root = plugin_root()

-- bin returns the path of the backend binary: vim.g.agentrun_bin if set,
-- else <plugin root>/bin/agentrun (what :AgentBuild and `make build` write).
function M.bin()
  local g = vim.g.agentrun_bin
  if type(g) == "string" and g ~= "" then
    return g
  end
  return M.root .. "/bin/agentrun"
end

-- log_path returns the backend's log file, in the state directory on
-- every Neovim (stdpath("log") of 0.8+ is that directory too).
function M.log_path()
  return require("agentrun.compat").state_dir() .. "/agentrun.log"
end

-- expected_version returns the plugin's VERSION file content, or nil.
function M.expected_version()
  local f = M.root .. "/VERSION"
  if vim.fn.filereadable(f) == 0 then
    return nil
  end
  return vim.trim(vim.fn.readfile(f)[1] or "")
end

-- check reports whether the binary exists, runs and matches VERSION:
-- ok, message (how to fix), the binary's version.
function M.check()
  local bin = M.bin()
  local fix = string.format(":AgentBuild installs it (the release binary, or built with Go; or run `make build` in %s)", M.root)
  if vim.fn.executable(bin) == 0 then
    return false, string.format("(agentrun) the backend binary %s is missing: %s", bin, fix)
  end
  local out = vim.fn.system({ bin, "version" })
  if vim.v.shell_error ~= 0 then
    return false, string.format("(agentrun) %s does not run (%s): %s", bin, vim.trim(out), fix)
  end
  local have, want = vim.trim(out), M.expected_version()
  if want and have ~= want then
    return false, string.format("(agentrun) the backend binary is stale (version %s, plugin %s): %s", have, want, fix)
  end
  return true, nil, have
end

return M
