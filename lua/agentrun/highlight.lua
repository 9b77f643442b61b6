-- Highlight groups, linked with default = true so colorschemes and users
-- can override them.
local M = {}

M.links = {
  AgentRunHeader = "Title",
  AgentRunHint = "Comment",
  AgentRunNote = "Comment",
  AgentRunError = "ErrorMsg",
  AgentRunUser = "Question",
  AgentRunThought = "Comment",
  AgentRunPlan = "Special",
  AgentRunToolPending = "Comment",
  AgentRunToolRunning = "WarningMsg",
  AgentRunToolDone = "String",
  AgentRunToolFailed = "ErrorMsg",
  AgentRunDiffAdd = "DiffAdd",
  AgentRunDiffDelete = "DiffDelete",
  AgentRunTerminalLine = "Underlined",
  AgentRunPermission = "WarningMsg",
  -- markdown in the agent's messages (ui/markdown.lua)
  AgentRunHeading = "Title",
  AgentRunCode = "String",
  AgentRunCodeFence = "Comment",
  AgentRunLink = "Underlined",
  AgentRunListMarker = "Special",
  AgentRunQuote = "Comment",
}

-- styles are groups with attributes of their own (no group to link to
-- in every Neovim), also set with default = true.
M.styles = {
  AgentRunBold = { bold = true },
  AgentRunItalic = { italic = true },
}

local done = false

-- setup links the groups (again after every :colorscheme).
function M.setup()
  for name, target in pairs(M.links) do
    vim.api.nvim_set_hl(0, name, { link = target, default = true })
  end
  for name, attrs in pairs(M.styles) do
    vim.api.nvim_set_hl(0, name, vim.tbl_extend("force", attrs, { default = true }))
  end
  if done then
    return
  end
  done = true
  vim.api.nvim_create_autocmd("ColorScheme", {
    group = vim.api.nvim_create_augroup("agentrun_highlight", { clear = true }),
    desc = "agentrun: re-link highlight groups",
    callback = M.setup,
  })
end

return M
