-- Ports of commands on another machine, reached from here: url(t, port)
-- returns the local URL that reaches port on terminal t's machine, or nil
-- and a sentence saying why not.
local M = {}

function M.url(t, port)
  local url = require("agentrun.policy").machine_of(t.session or "") or "another machine"
  return nil, string.format("%s listens on %d on %s; it is not forwarded here yet (ssh -L %d:localhost:%d to that host reaches it)", t.id, port, url, port, port)
end

return M
