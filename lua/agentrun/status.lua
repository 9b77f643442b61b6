-- What status() answers: the sessions and terminals this editor knows,
-- as the backend last said (its view may be a moment ahead) and this
-- editor has handled them. The terminal list (ui/terminals.lua) renders
-- it; require("agentrun").status() returns it.
local modes = require("agentrun.modes")
local rpc = require("agentrun.rpc")
local state = require("agentrun.state")

local M = {}

-- describe describes sessions and terminals:
-- { sessions = {{ id, key, agent, busy, ... }}, terminals = {{ id, session, key,
--   command, state, exit_code, signal, ran_ms, how ("exit 1"), bufnr, claim, bytes, truncated,
--   title, cwd, cols, rows, supports_command_detection, commands = {{
--   command_line, exit_code, duration_ms, is_complete }}, pid, user }} }.
function M.describe()
  local go = { sessions = {}, terminals = {} }
  for _, c in ipairs(rpc.channels()) do
    local ok, res = pcall(vim.rpcrequest, c, "status")
    if ok and type(res) == "table" then
      vim.list_extend(go.sessions, res.sessions or {})
      vim.list_extend(go.terminals, res.terminals or {})
      if c == rpc.channel() then
        go.client_id = res.client_id -- the local backend's
      end
    end
  end
  local busy, tool = {}, {}
  for _, s in ipairs(go.sessions or {}) do
    busy[s.key] = s.busy
    tool[s.key] = s.our_tool ~= "" and s.our_tool or nil
  end
  local out = { sessions = {}, terminals = {}, client_id = go.client_id }
  for _, key in ipairs(state.session_order) do
    local s = state.sessions[key]
    -- busy until both say the turn is over: the backend knows first, but
    -- the chat is this editor's, and shows the turn until it handled its end
    local b = busy[key] or s.busy
    local mode, model = modes.current(s)
    table.insert(out.sessions, {
      id = s.id,
      key = key,
      agent = s.agent,
      busy = b and not s.ended or false,
      starting = s.starting,
      ended = s.ended or false,
      current = key == state.current,
      mode = mode,
      model = model,
      label = modes.label(s), -- "Plan · Opus", as the chat shows them
      title = s.title, -- the agent's name for the session (session_info_update)
      usage = s.usage, -- { used, size, cost = { amount, currency } } as the agent last said
      waiting_for_sign_in = s.signin or false,
      terminals = s.terminals, -- "agentrun" (our MCP terminal tool) or "agent" (its own), once started
      -- what became of our MCP terminal tool: "offered over stdio" or "offered over HTTP",
      -- then "listed" or "used" by the agent, or "not listed" (nil: none offered)
      our_tool = tool[key] or s.our_tool,
      -- what became of the agent's own shell (Gemini CLI's): "left out for this
      -- session" or "kept: why" (nil: not looked at)
      own_shell = s.own_shell,
    })
  end
  -- Only the terminals this editor knows (whose events it has handled):
  -- the backend knows a new one a moment earlier, and every id listed
  -- here must work at once with every command.
  local seen = {}
  for _, t in ipairs(go.terminals or {}) do
    local l = state.terminals[t.id]
    if l then
      t = state.describe_terminal(l, t)
      t.mine = type(t.claim) == "table" and t.claim.kind == "client" and t.claim.client_id == go.client_id
      seen[t.id] = true
      table.insert(out.terminals, t)
    end
  end
  for _, id in ipairs(state.terminal_order) do
    local t = state.terminals[id]
    if not seen[id] and not t.remote then
      table.insert(out.terminals, state.describe_terminal(t))
    end
  end
  return out
end

return M
