-- lazy.nvim runs this file as the plugin's build step (when the spec has
-- no `build`): it installs the backend binary, the release of the
-- plugin's VERSION for this platform (sha256 checked), or builds it with
-- Go when that download fails. :AgentBuild does the same any time.
local root = vim.fn.fnamemodify(debug.getinfo(1, "S").source:sub(2), ":p:h")
if not vim.tbl_contains(vim.api.nvim_list_runtime_paths(), root) then
  vim.opt.runtimepath:prepend(root)
end
local say = function(msg)
  if coroutine.running() then
    pcall(coroutine.yield, msg) -- lazy.nvim shows it as the build's progress
  else
    print(msg)
  end
end
say("agentrun: installing the backend binary")
local ok, msg = require("agentrun.install").run("auto")
if not ok then
  error("agentrun: " .. msg, 0)
end
say("agentrun: " .. msg)
