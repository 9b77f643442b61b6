-- Options: defaults, validation and the merged result. Every option is
-- checked; each bad one is reported by its full name ("terminal.position")
-- with what it expects (a misspelt name with the nearest known one), all
-- in one message, and nothing is applied.
-- Why this file is long: every option, its default and its check live
-- together, so that setup() can name each bad option with what it wants.
local M = {}

M.defaults = {
  -- name -> { cmd = { "prog", "arg", ... }, env = { NAME = "value" } }.
  -- The built-in "demo" agent is always available (see M.agents()).
  agents = {},
  default_agent = "demo",
  chat = {
    position = "right", -- "right" | "left" | "below" | "tab"
    -- size (M.unset): columns (right/left) or lines (below); unset, 70
    -- columns beside and 15 lines below: M.chat_size
    -- :AgentRun continues the agent's most recent session of the cwd
    -- (when the agent keeps them) instead of starting a new one
    continue_last = false,
  },
  terminal = {
    position = "below", -- "below" | "right" | "float" | "none"
    -- size (M.unset): lines (below) or columns (right); unset, 12 lines
    -- below and 80 columns (at most half the room) right: M.terminal_size
    -- kill_grace_ms (M.unset): SIGTERM -> SIGKILL delay for X /
    -- terminal/kill. rpc.lua sends it, and byte_limit, once: when the
    -- backend starts.
    -- byte_limit (M.unset): rendered text kept per terminal for the agent
    scrollback = 10000, -- 'scrollback' of terminal buffers (1..100000)
    -- ended splits kept as live terminals when out of sight (the newest);
    -- older ones are wiped and made again from the backend when opened
    live_ended = 3,
    -- kept_bytes (M.unset): ended terminals' output the backend keeps in
    -- memory for that (unset: 64 MiB); beyond it, in the state folder
    allowed_cwd = {}, -- directories commands may run in, and below; {} = the session's cwd
    -- "agent" (ask when the agent's mode asks first) | "ask" | "run" |
    -- rules { allow, deny, otherwise } | function(cmd) -> true | false | "ask"
    approve = "agent",
    max_run_ms = 0, -- kill a command after this long; 0 = no limit
    -- confine the agent's commands (bubblewrap): false | "project" |
    -- "project-net" | "strict" | { name, writable, network, home } |
    -- function(cmd) returning one of those
    sandbox = false,
    -- per command: { memory = "512M", processes = 256, cpu_seconds = 600,
    -- open_files = 1024, file_size = "1G" }; {} = no limits
    limits = {},
    -- terminals you take over (T) and :AgentShell shells keep running
    -- after Neovim quits, as with :AgentDetach
    persist = false,
    -- a quit that would end your own commands (an R rerun, a terminal you
    -- took over, an :AgentShell shell) or lose a prompt's text not sent
    -- names them and asks first; false: it does not
    ask_before_quit = true,
    -- when an agent's command fails (exits non-zero), what its output's
    -- file:line failures go to: { "quickfix", "diagnostics" }, either or
    -- none ({}); never a window opened or the cursor moved
    on_failure = {},
  },
  remote = {
    -- a backend on another machine (:AgentRun ssh://…) whose link
    -- dropped keeps its sessions running this long for a Neovim to take
    -- them up; then their agents stop (your commands there run on, for
    -- :AgentAttach)
    wait_hours = 24,
  },
  checkpoint = {
    -- outside a git work tree, the copies agentrun keeps of session
    -- folders (state folder, agentrun/checkpoint/*.git) take at most this
    copies_bytes = 100 * 1024 * 1024,
  },
  keymaps = {
    interrupt = "<C-c>", -- terminal split: SIGINT to the process group
    kill = "X", -- terminal split: kill (SIGTERM, then SIGKILL)
    close = "q", -- terminal split / chat: close the window
    close_float = "<Esc>", -- chat / prompt area, normal mode: close the terminal float
    send = "<CR>", -- prompt area, normal mode: send the prompt
    send_insert = "<C-s>", -- prompt area, insert mode: send the prompt
    open = "<CR>", -- chat / terminal list: open the terminal under the cursor
    takeover = "T", -- terminal split / terminal list: take the terminal over from the agent
    dispose = "dd", -- terminal list: kill, release and wipe the terminal
    quickfix = "Q", -- terminal split / terminal list: its failures to the quickfix list
    rerun = "R", -- terminal split / terminal list: run the command again (restart one of yours)
    browse = "gx", -- terminal split / terminal list: open http://localhost:PORT of a port it listens on
    toggle = "<Tab>", -- chat: show or fold a thought or a tool call's long output
    history_prev = "<Up>", -- prompt area, first line: the previous prompt sent
    history_next = "<Down>", -- prompt area, last line: the next one (then what you were typing)
  },
}

-- unset names the options that have no default here: unset, the backend
-- applies its own, the option's one default (terminal.byte_limit:
-- termhost.DefaultByteLimit, 16 MiB; terminal.kill_grace_ms:
-- termhost.DefaultKillGrace, 3000). No zero stands for "the default".
M.unset = { chat = { size = true }, terminal = { byte_limit = true, kill_grace_ms = true, kept_bytes = true, size = true } }

-- chat_size is chat.size for a chat at position, and whether the user set
-- it: unset, a chat beside the code is 70 columns wide and one below 15
-- lines high (one number cannot be both).
function M.chat_size(position)
  local size = M.get().chat.size
  if size then
    return size, true
  end
  return position == "below" and 15 or 70, false
end

-- terminal_size is terminal.size for a split at position, and whether the
-- user set it: unset, a split below is 12 lines high and one on the right
-- 80 columns wide (one number cannot be both).
function M.terminal_size(position)
  local size = M.get().terminal.size
  if size then
    return size, true
  end
  return position == "right" and 80 or 12, false
end

-- limit_kinds names terminal.limits' keys: "size" takes "512M".
local limit_kinds = { memory = "size", processes = "count", cpu_seconds = "count", open_files = "count", file_size = "size" }

-- size_bytes turns 1048576, "512K", "512M" or "2G" into bytes (nil when
-- absent or malformed).
local function size_bytes(v)
  if type(v) == "number" then
    return (v >= 1 and v == math.floor(v)) and v or nil
  end
  if type(v) ~= "string" then
    return nil
  end
  local n, unit = v:upper():match("^%s*(%d+)%s*([KMG]?)I?B?%s*$")
  if not n or tonumber(n) < 1 then
    return nil
  end
  return tonumber(n) * ({ [""] = 1, K = 1024, M = 1024 ^ 2, G = 1024 ^ 3 })[unit]
end

local current = vim.deepcopy(M.defaults)

local function is_list_of_strings(v)
  if type(v) ~= "table" or #v == 0 then
    return false
  end
  for k, s in pairs(v) do
    if type(k) ~= "number" or type(s) ~= "string" or s == "" then
      return false
    end
  end
  return true
end

local function is_string_map(v)
  if type(v) ~= "table" then
    return false
  end
  for k, s in pairs(v) do
    if type(k) ~= "string" or type(s) ~= "string" then
      return false
    end
  end
  return true
end

local function one_of(...)
  local set, names = {}, {}
  for _, v in ipairs({ ... }) do
    set[v] = true
    names[#names + 1] = string.format("%q", v)
  end
  return function(v)
    return set[v] == true
  end, "one of " .. table.concat(names, ", ")
end

local function int_in(lo, hi)
  return function(v)
    return type(v) == "number" and v == math.floor(v) and v >= lo and (not hi or v <= hi)
  end
end

local function absolute_dirs(v)
  if type(v) ~= "table" then
    return false
  end
  local n = 0
  for k, d in pairs(v) do
    n = n + 1
    if type(k) ~= "number" or type(d) ~= "string" or vim.fn.expand(d):sub(1, 1) ~= "/" then
      return false
    end
  end
  return n == #v
end

local function list_of_strings(v)
  if v == nil then
    return true
  end
  if type(v) ~= "table" then
    return false
  end
  for k, x in pairs(v) do
    if type(k) ~= "number" or type(x) ~= "string" or x == "" then
      return false
    end
  end
  return true
end

local function approve_mode(v)
  if type(v) == "table" then
    for k in pairs(v) do
      if k ~= "allow" and k ~= "deny" and k ~= "otherwise" then
        return false
      end
    end
    return list_of_strings(v.allow) and list_of_strings(v.deny)
      and (v.otherwise == nil or v.otherwise == "ask" or v.otherwise == "run" or v.otherwise == "refuse")
  end
  return v == "agent" or v == "ask" or v == "run" or v == "never" or v == "always" or type(v) == "function"
end

-- old_approve are the names terminal.approve's values had before they
-- said what they do ("never" read as "never approved").
local old_approve = { never = "run", always = "ask" }

local function key_or_false(v)
  return v == false or (type(v) == "string" and v ~= "")
end

-- distance is the edit distance of two short names, for "did you mean".
local function distance(a, b)
  local prev = {}
  for j = 0, #b do
    prev[j] = j
  end
  for i = 1, #a do
    local cur = { [0] = i }
    for j = 1, #b do
      local cost = a:sub(i, i) == b:sub(j, j) and 0 or 1
      cur[j] = math.min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + cost)
    end
    prev = cur
  end
  return prev[#b]
end

-- nearest returns the known name closest to name, if it is close.
local function nearest(name, known)
  local best, best_d = nil, math.huge
  for k in pairs(known) do
    local d = distance(name, k)
    if d < best_d then
      best, best_d = k, d
    end
  end
  if best and best_d <= math.max(2, math.floor(#name / 3)) then
    return best
  end
end

local function show(v)
  return type(v) == "string" and string.format("%q", v) or vim.inspect(v)
end

-- validate returns the merged options, or nil and every problem found.
local function validate(opts)
  local problems = {}
  local function bad(fmt, ...)
    table.insert(problems, string.format(fmt, ...))
  end
  local function check(name, value, fn, expected, optional)
    if value == nil then
      if not optional then
        bad("%s: expected %s, got nil", name, expected)
      end
    elseif not fn(value) then
      bad("%s: expected %s, got %s", name, expected, show(value))
    end
  end
  local function no_unknown_keys(prefix, tbl, known)
    local keys = vim.tbl_keys(tbl)
    table.sort(keys, function(a, b)
      return tostring(a) < tostring(b)
    end)
    for _, k in ipairs(keys) do
      if known[k] == nil then
        local guess = type(k) == "string" and nearest(k, known)
        if guess then
          bad("%s%s: unknown option (did you mean `%s%s`?)", prefix, tostring(k), prefix, guess)
        else
          local names = vim.tbl_keys(known)
          table.sort(names)
          bad("%s%s: unknown option (known: %s)", prefix, tostring(k), table.concat(names, ", "))
        end
      end
    end
  end
  local function section(name)
    local v = opts[name]
    if v ~= nil and type(v) ~= "table" then
      bad("%s: expected a table, got %s", name, show(v))
      opts[name] = nil
    end
  end

  if type(opts) ~= "table" then
    return nil, { "setup() takes a table of options, got " .. show(opts) }
  end
  opts = vim.deepcopy(opts)
  no_unknown_keys("", opts, M.defaults)
  for _, name in ipairs({ "agents", "chat", "terminal", "remote", "checkpoint", "keymaps" }) do
    section(name)
  end
  local c = vim.tbl_deep_extend("force", vim.deepcopy(M.defaults), opts)
  for name, a in pairs(c.agents) do
    local p = "agents." .. tostring(name)
    if type(name) ~= "string" or type(a) ~= "table" then
      bad("%s: expected a table { cmd = {...}, env = {...} } under a string name, got %s", p, show(a))
    else
      no_unknown_keys(p .. ".", a, { cmd = true, env = true, terminals = true, host = true })
      check(p .. ".host", a.host, M.is_host, "a machine to run it on over SSH: \"ssh://[user@]host[:port][/dir]\"", true)
      check(p .. ".cmd", a.cmd, is_list_of_strings, "a non-empty list of strings, e.g. { \"claude-agent-acp\" }")
      check(p .. ".env", a.env, is_string_map, "a table of NAME = \"value\" strings", true)
      check(p .. ".terminals", a.terminals, function(v)
        return v == "agentrun" or v == "agent"
      end, "\"agentrun\" (its commands run in our terminals, offered as an MCP tool) or \"agent\" (its own)", true)
    end
  end
  check("default_agent", c.default_agent, function(v)
    return type(v) == "string" and (v == "demo" or c.agents[v] ~= nil)
  end, "the name of an agent in `agents` (or \"demo\")")

  no_unknown_keys("chat.", c.chat, vim.tbl_extend("force", {}, M.defaults.chat, M.unset.chat))
  check("chat.position", c.chat.position, one_of("right", "left", "below", "tab"))
  check("chat.size", c.chat.size, int_in(1), "a positive integer", true)
  check("chat.continue_last", c.chat.continue_last, function(v)
    return type(v) == "boolean"
  end, "true or false")

  no_unknown_keys("terminal.", c.terminal, vim.tbl_extend("force", {}, M.defaults.terminal, M.unset.terminal))
  check("terminal.position", c.terminal.position, one_of("below", "right", "float", "none"))
  check("terminal.size", c.terminal.size, int_in(1), "a positive integer", true)
  check("terminal.kill_grace_ms", c.terminal.kill_grace_ms, int_in(1), "a positive integer (milliseconds)", true)
  check("terminal.byte_limit", c.terminal.byte_limit, int_in(1), "a positive integer (bytes)", true)
  check("terminal.scrollback", c.terminal.scrollback, int_in(1, 100000), "an integer from 1 to 100000")
  check("terminal.live_ended", c.terminal.live_ended, int_in(0), "an integer >= 0 (ended splits kept live out of sight)")
  check("terminal.kept_bytes", c.terminal.kept_bytes, int_in(1), "a positive integer (bytes)", true)
  check("terminal.allowed_cwd", c.terminal.allowed_cwd, absolute_dirs, "a list of absolute directories, e.g. { \"~/src\", \"/tmp\" } ({} = the session's cwd)")
  check("terminal.approve", c.terminal.approve, approve_mode, "\"agent\", \"ask\", \"run\", rules { allow = { \"go test ./...\" }, deny = { \"rm *\" }, otherwise = \"ask\" | \"run\" | \"refuse\" } or a function(cmd) returning true, false or \"ask\"")
  if old_approve[c.terminal.approve] then
    c.terminal.approve = old_approve[c.terminal.approve]
  end
  check("terminal.max_run_ms", c.terminal.max_run_ms, int_in(0), "an integer >= 0 (milliseconds; 0 = no limit)")
  check("terminal.persist", c.terminal.persist, function(v)
    return type(v) == "boolean"
  end, "true or false")
  check("terminal.ask_before_quit", c.terminal.ask_before_quit, function(v)
    return type(v) == "boolean"
  end, "true or false")
  check("terminal.on_failure", c.terminal.on_failure, function(v)
    if type(v) ~= "table" then
      return false
    end
    for k, x in pairs(v) do
      if type(k) ~= "number" or (x ~= "quickfix" and x ~= "diagnostics") then
        return false
      end
    end
    return true
  end, "a list of \"quickfix\" and \"diagnostics\" (or {})")
  check("terminal.sandbox", c.terminal.sandbox, M.sandbox_ok, "false, a profile name (\"project\", \"project-net\", \"strict\"), a table { name, writable, network, home } or a function(cmd) returning one of those")
  if type(c.terminal.limits) ~= "table" then
    bad("terminal.limits: expected a table such as { memory = \"512M\", processes = 256 }, got %s", show(c.terminal.limits))
  else
    no_unknown_keys("terminal.limits.", c.terminal.limits, limit_kinds)
    for name, kind in pairs(limit_kinds) do
      if kind == "size" then
        check("terminal.limits." .. name, c.terminal.limits[name], function(v)
          return size_bytes(v) ~= nil
        end, "a size in bytes or a string such as \"512M\" or \"2G\"", true)
      else
        check("terminal.limits." .. name, c.terminal.limits[name], int_in(1), "a positive integer", true)
      end
    end
  end

  no_unknown_keys("remote.", c.remote, M.defaults.remote)
  check("remote.wait_hours", c.remote.wait_hours, function(v)
    return type(v) == "number" and v > 0 and v <= 24 * 366
  end, "a number of hours above 0 (at most a year), such as 24 or 0.5")

  no_unknown_keys("checkpoint.", c.checkpoint, M.defaults.checkpoint)
  check("checkpoint.copies_bytes", c.checkpoint.copies_bytes, int_in(1), "a positive integer (bytes)")

  no_unknown_keys("keymaps.", c.keymaps, M.defaults.keymaps)
  for _, name in ipairs(vim.tbl_keys(M.defaults.keymaps)) do
    check("keymaps." .. name, c.keymaps[name], key_or_false, "a key string such as \"<C-c>\", or false to disable")
  end
  if #problems > 0 then
    return nil, problems
  end
  return c
end

-- set validates opts and makes them current. With bad options it applies
-- none of them and returns nil and one message listing every problem:
-- "(agentrun) setup: <option>: expected ..., got ..." (one per line).
function M.set(opts)
  local c, problems = validate(opts or {})
  if not c then
    M.rejected = true
    local head = #problems == 1 and "(agentrun) setup: " or "(agentrun) setup: " .. #problems .. " problems:\n  "
    return nil, head .. table.concat(problems, "\n  ") .. "\nThe configuration was not applied (the previous one stays); see :help agentrun-config"
  end
  current, M.rejected = c, false
  return current
end

-- sandbox_ok reports whether v is a terminal.sandbox value (a profile's
-- name is checked by the backend, which knows the profiles).
function M.sandbox_ok(v)
  if v == false or type(v) == "function" or (type(v) == "string" and v ~= "") then
    return true
  end
  if type(v) ~= "table" or type(v.name) ~= "string" or v.name == "" then
    return false
  end
  for k in pairs(v) do
    if not ({ name = true, writable = true, network = true, home = true })[k] then
      return false
    end
  end
  if v.network ~= nil and type(v.network) ~= "boolean" then
    return false
  end
  if v.home ~= nil and v.home ~= "read-only" and v.home ~= "hidden" then
    return false
  end
  if v.writable ~= nil then
    if type(v.writable) ~= "table" then
      return false
    end
    for _, d in ipairs(v.writable) do
      if type(d) ~= "string" or vim.fn.fnamemodify(vim.fn.expand(d), ":p"):sub(1, 1) ~= "/" then
        return false
      end
    end
  end
  return true
end

-- profile turns a terminal.sandbox value (name or table) into what the
-- backend takes: { name, writable, network, home }; nil for false.
local function profile(v)
  if v == false or v == nil then
    return nil
  end
  if type(v) == "string" then
    return { name = v }
  end
  local writable = {}
  for _, d in ipairs(v.writable or {}) do
    table.insert(writable, (vim.fn.fnamemodify(vim.fn.expand(d), ":p"):gsub("(.)/$", "%1")))
  end
  return { name = v.name, writable = writable, network = v.network, home = v.home }
end

-- sandbox_for asks a terminal.sandbox function how to confine cmd ({ line,
-- argv, cwd, session }): the backend calls it before each command. It
-- returns a profile table, nil to run unconfined, or raises when the
-- function fails or answers something else (the command is refused).
function M.sandbox_for(cmd)
  local fn = current.terminal.sandbox
  if type(fn) ~= "function" then
    return profile(fn)
  end
  local ok, v = pcall(fn, cmd)
  if not ok then
    error("its function failed: " .. tostring(v), 0)
  end
  if v == nil then
    return nil
  end
  if type(v) == "function" or not M.sandbox_ok(v) then
    error(string.format("its function returned %s, which is not a profile name, table or false", vim.inspect(v)), 0)
  end
  return profile(v)
end

-- get returns the current options (defaults when setup() was never called).
function M.get()
  return current
end

-- policy returns the terminal limits a new session gets, as the backend's
-- "start" request takes them.
function M.policy()
  local t = current.terminal
  local roots = {}
  for _, d in ipairs(t.allowed_cwd) do
    local dir = vim.fn.fnamemodify(vim.fn.expand(d), ":p"):gsub("(.)/$", "%1")
    table.insert(roots, dir)
  end
  local compat = require("agentrun.compat")
  -- agentrun's own state, which no agent's file write may change: the
  -- remembered answers and the log (state), the config (Neovim's, where
  -- setup() is called, and the file Neovim started with)
  local protect = { compat.state_dir() .. "/agentrun", compat.state_dir() .. "/agentrun.log", compat.old_state_dir() .. "/agentrun", vim.fn.stdpath("config") }
  if vim.env.MYVIMRC and vim.env.MYVIMRC ~= "" then
    table.insert(protect, vim.fn.fnamemodify(vim.env.MYVIMRC, ":p"))
  end
  return {
    protect = protect,
    allowed_cwd = #roots > 0 and roots or nil,
    approve = (type(t.approve) == "function" or type(t.approve) == "table") and "function" or old_approve[t.approve] or t.approve,
    max_run_ms = t.max_run_ms,
    sandbox = type(t.sandbox) == "function" and { kind = "function" } or (t.sandbox and { kind = "profile", profile = profile(t.sandbox) }) or nil,
    -- nil when empty: msgpack would send {} as an array
    limits = next(t.limits) and {
      memory = size_bytes(t.limits.memory),
      processes = t.limits.processes,
      cpu_seconds = t.limits.cpu_seconds,
      open_files = t.limits.open_files,
      file_size = size_bytes(t.limits.file_size),
    } or nil,
  }
end

-- terminals_of says where agent a's commands run: its `terminals`
-- option, else nil: the backend decides when the agent starts, by the
-- name it gives itself (Claude Code: ours). See :help
-- agentrun-agent-terminals.
function M.terminals_of(a)
  return a.terminals
end

-- cmd_problem is the one sentence for an agent command that cannot run
-- (:checkhealth and a start that failed say the same): agent name's
-- command cmd and why ("not found" or "not executable"). Returns the
-- sentence and what to do, apart (as :checkhealth shows them).
function M.cmd_problem(name, cmd, why)
  return string.format("agent %q: command %q %s", name, cmd, why), string.format("install it, or fix agents.%s.cmd in setup()", name)
end

-- cmd_runs says whether cmd runs as a command: nil when it does, else
-- why not ("not found", "not executable"), as cmd_problem takes it.
function M.cmd_runs(cmd)
  if vim.fn.executable(cmd) == 1 then
    return nil
  end
  if cmd:find("/", 1, true) and require("agentrun.compat").uv.fs_stat(cmd) then
    return "not executable" -- there, but no program it may run
  end
  return "not found"
end

-- is_host says whether v names a machine as agents.<name>.host takes it:
-- ssh://[user@]host[:port], maybe a directory there after it.
function M.is_host(v)
  return type(v) == "string" and v:match("^ssh://[%w%._%-]+@?[%w%._%-]*:?%d*/?[^%s]*$") ~= nil and not v:match("^ssh://[/:@]")
end

-- agents returns every configured agent plus the built-in "demo" agent.
function M.agents()
  local all = vim.deepcopy(current.agents)
  if all.demo == nil then
    all.demo = { cmd = { require("agentrun.binary").bin(), "demo-agent" } }
  end
  return all
end

-- unknown_agent says that there is no agent name: the ones there are and
-- how to add one, as ways to say it for util.notify, longest first (the
-- shortest keeps the agents).
function M.unknown_agent(name)
  local names = vim.tbl_keys(M.agents())
  table.sort(names)
  local no = string.format("no agent %s; you have %s", vim.inspect(name), table.concat(names, ", "))
  return {
    string.format("unknown agent %s; you have %s; to add one, see :h agentrun-config-agents", vim.inspect(name), table.concat(names, ", ")),
    no .. "; add one: :h agentrun-config-agents",
    no .. "; setup() adds more",
    no,
  }
end

return M
