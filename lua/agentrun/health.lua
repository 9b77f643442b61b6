-- :checkhealth agentrun
local M = {}

local h = vim.health or require("health")
local start = h.start or h.report_start
local ok = h.ok or h.report_ok
local info = h.info or h.report_info
local warn = h.warn or h.report_warn
local error = h.error or h.report_error

function M.check()
  start("agentrun")
  require("agentrun.compat").health_links()
  local v = vim.version()
  local version = string.format("%d.%d.%d", v.major, v.minor, v.patch)
  if vim.fn.has("nvim-0.7.2") == 1 then
    ok("Neovim " .. version)
  else
    error("Neovim " .. version .. " is too old", { "agentrun needs Neovim 0.7.2 or newer" })
  end
  if vim.fn.has("nvim-0.8") == 0 then
    warn("Neovim 0.7 can crash when a terminal window that holds wide characters (CJK, emoji) gets narrower and then taller", {
      "a bug of Neovim 0.7 itself (native :terminal too, with plain `cat`): no filter of the output can prevent it",
      "Neovim 0.10 or newer does not have it; see :help agentrun-neovim-0.7",
    })
  end

  local binary = require("agentrun.binary")
  local rpc = require("agentrun.rpc")
  local install = require("agentrun.install")
  local good, msg, have = binary.check()
  if good then
    ok(string.format("backend %s runs, version %s (matches the plugin's VERSION)", binary.bin(), have))
  else
    error(msg, { ":AgentBuild downloads the release binary of the plugin's VERSION (or builds it with Go)", "or run `make build` in " .. binary.root })
  end
  local origin = install.origin()
  if origin then
    info("the backend binary is " .. origin)
  end
  local platform, why = install.platform()
  if platform then
    info(string.format("release binaries come from %s/v%s/agentrun-%s", install.release_url(), binary.expected_version() or "?", platform))
  else
    warn(why, { "build the binary with Go: :AgentBuild go" })
  end
  info("log file: " .. binary.log_path())
  -- the CLI (agentrun ls / attach / kill) is the same binary
  if good and vim.fn.exepath("agentrun") == "" then
    info(string.format("the agentrun CLI (ls, attach, kill) is %s; for a shell, put it on PATH: ln -s %s ~/.local/bin/agentrun", binary.bin(), binary.bin()))
  end
  if rpc.running() then
    info("backend running on channel " .. tostring(rpc.channel()))
  end

  local config = require("agentrun.config")
  local agents = config.agents()
  local names = vim.tbl_keys(agents)
  table.sort(names)
  for _, name in ipairs(names) do
    local cmd = agents[name].cmd[1]
    local mode = config.terminals_of(agents[name])
    local where = mode == "agentrun" and "its commands run in agentrun's terminals (the MCP terminal tool)"
      or mode == "agent" and "it runs its commands itself (agentrun runs those it asks for with terminal/create)"
      or name == "demo" and "the built-in demo agent asks for each command with terminal/create: they run in agentrun's terminals"
      or "decided when it starts: Claude Code (claude-agent-acp) and Gemini CLI get agentrun's terminal tool (Gemini's own shell left out where Gemini allows it); any other agent runs commands its own way, and those it asks for with terminal/create run in agentrun's terminals"
    local why = config.cmd_runs(cmd)
    local host = agents[name].host
    if host then
      -- Its command runs there: what can be checked from here is that
      -- the machine answers over SSH with agentrun of this version.
      local machine = rpc.machine(host)
      -- ssh-backend with no input: starts the backend there and ends it
      local out = good and vim.trim(vim.fn.system({ binary.bin(), "ssh-backend", machine }, "")):gsub("^agentrun: ", "") or "the backend here does not run"
      if good and vim.v.shell_error == 0 then
        ok(string.format("agent %q runs on %s: agentrun %s answers there over SSH; %q is looked for there when it starts", name, machine, have, cmd))
      else
        error(string.format("agent %q runs on %s, which does not answer: %s", name, machine, out), { "check `ssh " .. machine:gsub("^ssh://", ""):gsub("/.*$", "") .. " agentrun version` prints " .. tostring(binary.expected_version()) })
      end
    elseif not why then
      ok(string.format("agent %q: %s found; %s", name, vim.fn.exepath(cmd), where))
    else
      local msg, advice = config.cmd_problem(name, cmd, why)
      warn(msg, { advice })
    end
  end
  info("default agent: " .. config.get().default_agent)
  -- What the running sessions' agents did with our terminal tool: what
  -- they did, not what was configured.
  local st = require("agentrun.state")
  for _, key in ipairs(st.session_order) do
    local sess = st.sessions[key]
    if sess and not sess.ended and sess.our_tool then
      local say = string.format("session %s (%s): agentrun's terminal tool %s", key, tostring(sess.agent), sess.our_tool)
      if sess.our_tool == "not listed" then
        warn(say .. ": the agent never listed it, so its commands run its own way", { "see :help agentrun-agent-terminals for what this agent needs" })
      else
        ok(say)
      end
    end
    if sess and not sess.ended and sess.own_shell then
      local say = string.format("session %s (%s): its own shell %s", key, tostring(sess.agent), sess.own_shell)
      if sess.own_shell:find("^kept") and sess.our_tool then
        warn(say, { "its own shell sends no output: see :help agentrun-agent-terminals" })
      else
        ok(say)
      end
    end
  end
  -- The machines reached with :AgentRun ssh://… (those of agents.<name>.host
  -- are above): how their links stand.
  for _, m in ipairs(rpc.machines()) do
    local n = 0
    for key, s in pairs(require("agentrun.state").sessions) do
      if not s.ended and require("agentrun.state").site_of(key) == m.site then
        n = n + 1
      end
    end
    if m.up then
      ok(string.format("%s: the link is up (%d session%s there)", m.url, n, n == 1 and "" or "s"))
    elseif m.lost then
      warn(string.format("%s: the link was lost; its sessions go on there", m.url), { ":AgentRun " .. m.url .. " takes them up again" })
    else
      info(string.format("%s: no link now (:AgentRun %s starts one)", m.url, m.url))
    end
  end

  local sb = config.get().terminal.sandbox
  local out, works = "the backend (which checks it) does not run", false
  if good then
    out = vim.fn.system({ binary.bin(), "check-sandbox" })
    works = vim.v.shell_error == 0
    out = vim.trim(out):gsub("^agentrun: ", "")
  end
  if sb then
    local what = type(sb) == "function" and "a function" or type(sb) == "table" and ("profile " .. tostring(sb.name)) or ("profile " .. sb)
    if works then
      ok(string.format("terminal.sandbox is %s: %s", what, out))
    else
      error(string.format("terminal.sandbox is %s, but %s", what, out), { "sessions will not start (no command runs unconfined) until this is fixed or terminal.sandbox is false" })
    end
  elseif works then
    info("terminal.sandbox is off; it would work here (" .. out .. ")")
  else
    info("terminal.sandbox is off; it could not work here: " .. out)
  end
  -- How the chat colours the code in the agent's answers.
  local md = require("agentrun.ui.markdown")
  local by = {}
  for _, lang in ipairs({ "bash", "python", "javascript", "typescript", "go", "rust", "lua", "c" }) do
    local how = md.colouring(lang) or "none (plain)"
    by[how] = by[how] or {}
    table.insert(by[how], lang)
  end
  local hows = vim.tbl_keys(by)
  table.sort(hows)
  for _, how in ipairs(hows) do
    info(string.format("code in the chat coloured by %s: %s", how, table.concat(by[how], ", ")))
  end
  if vim.g.syntax_on == nil then
    warn("syntax is off: code fences without a tree-sitter parser stay plain", { ":syntax on" })
  end

  -- The one approval policy: our terminals' commands and the agents' own
  -- permission requests that carry a command.
  local policy = require("agentrun.policy")
  local described = vim.split(policy.describe(), "\n")
  info("terminal.approve: " .. described[1] .. " — for every agent's commands: those in our terminals and the agents' own permission requests that carry a command")
  for i = 2, #described do
    info(described[i])
  end
  local kept = policy.remembered(vim.fn.getcwd())
  local file = policy.file(vim.fn.getcwd())
  if #kept > 0 then
    info(string.format("always allowed in this project on this machine (%s): %s", file, table.concat(kept, " | ")))
  else
    info(string.format("nothing always allowed in this project yet (%s)", file))
  end

  local lim = config.get().terminal.limits
  if next(lim) then
    local parts = {}
    for k, v in pairs(lim) do
      table.insert(parts, k .. " = " .. tostring(v))
    end
    table.sort(parts)
    info("terminal.limits: " .. table.concat(parts, ", "))
  else
    info("terminal.limits: none")
  end

  -- What finished splits cost (issue 48): the newest few stay live
  -- terminals, the rest are made again from the backend's copy.
  local tc = config.get().terminal
  local kept_bytes = tc.kept_bytes or 64 * 1024 * 1024
  info(string.format(
    "finished splits: the newest %d stay live terminals; older ones out of sight are wiped and made again when opened. "
      .. "The backend keeps their output within terminal.kept_bytes = %s%s in memory, the rest in %s (removed when it ends)",
    tc.live_ended,
    tostring(kept_bytes),
    tc.kept_bytes and "" or " (unset: 64 MiB)",
    require("agentrun.compat").state_dir() .. "/agentrun/output"
  ))
end

return M
