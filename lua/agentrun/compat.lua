-- compat: the one place that knows which Neovim it runs on (0.7.2 to 0.12).
-- Each helper uses the newer API where it exists and the old one only
-- where it does not; the rest of the plugin calls these, never a version
-- check of its own.
local M = {}

-- user_event fires the User autocommand pattern, with data (the
-- autocommand's `data`, from 0.8; 0.7 fires it without).
function M.user_event(pattern, data)
  local opts = { pattern = pattern, modeline = false }
  if vim.fn.has("nvim-0.8") == 1 then
    opts.data = data
  end
  pcall(vim.api.nvim_exec_autocmds, "User", opts)
end

-- input is vim.ui.input(opts, on_confirm) where an empty answer is ""
-- and only a cancel (<Esc>) is nil: Neovim's own vim.ui.input before 0.9
-- gave nil for both (an optional field left empty cancelled a whole
-- form), so there input() is asked with a cancelreturn of our own. A
-- vim.ui.input of the user's (a plugin) is called as it is.
function M.input(opts, on_confirm)
  local info = debug.getinfo(vim.ui.input, "S")
  local builtin = info ~= nil and info.source:find("vim/ui%.lua$") ~= nil
  if not builtin or vim.fn.has("nvim-0.9") == 1 then
    return vim.ui.input(opts, on_confirm)
  end
  local cancelled = "\1agentrun: cancelled\1"
  local args = vim.tbl_extend("force", opts or {}, { cancelreturn = cancelled })
  local text = vim.fn.input(args)
  if text == cancelled then
    return on_confirm(nil)
  end
  on_confirm(text)
end

-- buffer_completeopt gives buf its own 'completeopt': a buffer-local
-- option from 0.11; before, the global one is set while buf's window is
-- in insert mode and put back when it leaves.
function M.buffer_completeopt(buf, value)
  if vim.fn.has("nvim-0.11") == 1 then
    vim.bo[buf].completeopt = value
    return
  end
  local saved
  vim.api.nvim_create_autocmd("InsertEnter", {
    buffer = buf,
    callback = function()
      saved = vim.o.completeopt
      vim.o.completeopt = value
    end,
  })
  vim.api.nvim_create_autocmd({ "InsertLeave", "BufLeave" }, {
    buffer = buf,
    callback = function()
      if saved then
        vim.o.completeopt, saved = saved, nil
      end
    end,
  })
end

-- uv is libuv's binding (vim.uv from 0.10, vim.loop before).
M.uv = vim.uv or vim.loop

-- browser opens url with $BROWSER (its first command, "%s" the URL, as
-- xdg-open reads it) when that names a program here; false when not.
local function browser(url)
  local b = vim.split(vim.env.BROWSER or "", ":", { plain = true })[1]
  local argv = vim.fn.split(b)
  if #argv == 0 or vim.fn.executable(argv[1]) ~= 1 then
    return false
  end
  local with = false
  for i, a in ipairs(argv) do
    if a:find("%s", 1, true) then
      argv[i], with = a:gsub("%%s", function()
        return url
      end), true
    end
  end
  if not with then
    table.insert(argv, url)
  end
  return vim.fn.jobstart(argv, { detach = true }) > 0
end

-- open_url opens url in the system's browser: vim.ui.open (0.10+), else
-- xdg-open or macOS's open; where none is found, $BROWSER. Returns false,
-- a sentence and a shorter one (for 60 columns) when it cannot: in our
-- words, not vim.ui.open's ("no handler found (tried: …)").
function M.open_url(url)
  local function none()
    return false, string.format("no browser found to open %s: install xdg-open (xdg-utils) or set $BROWSER", url), "no browser found: set $BROWSER"
  end
  if vim.ui.open then
    -- 0.10+: an error, or nil and why (no opener installed)
    local ok, res, why = pcall(vim.ui.open, url)
    if ok and not (res == nil and why) then
      return true -- (a vim.ui.open of the user's may return nothing)
    end
    if browser(url) then
      return true
    end
    if not ok then
      return false, string.format("could not open %s (%s); open it in your browser", url, tostring(res)), "could not open the URL"
    end
    return none()
  end
  local opener = vim.fn.has("mac") == 1 and "open" or "xdg-open"
  if vim.fn.executable(opener) ~= 1 then
    if browser(url) then
      return true
    end
    return none()
  end
  vim.fn.jobstart({ opener, url }, { detach = true })
  return true
end

-- diff is vim.text.diff (0.12), vim.diff before.
M.diff = (vim.text and vim.text.diff) or vim.diff

-- keymap.set takes the buffer as `buf` from 0.12 (`buffer` is on its way out).
local buf_key = vim.fn.has("nvim-0.12") == 1 and "buf" or "buffer"
-- buf_key is the name of vim.keymap.set's option for a buffer-local map.
M.buf_key = buf_key

-- set_filetype gives buf the filetype of a file named path: 0.8+ asks
-- vim.filetype.match; 0.7's takes other arguments, so there the
-- filetypedetect autocommands decide, as for a file read from disk.
function M.set_filetype(buf, path)
  if vim.fn.has("nvim-0.8") == 1 then
    local ok, ft = pcall(vim.filetype.match, { filename = path, buf = buf })
    if ok and ft then
      vim.bo[buf].filetype = ft
    end
    return
  end
  vim.api.nvim_buf_call(buf, function()
    pcall(vim.cmd, "doautocmd filetypedetect BufRead " .. vim.fn.fnameescape(path))
  end)
end

-- map sets a mapping local to buffer buf, in mode (default "n"; a list
-- for several).
function M.map(buf, lhs, rhs, desc, mode)
  vim.keymap.set(mode or "n", lhs, rhs, { [buf_key] = buf, nowait = true, silent = true, desc = desc })
end

-- highlight colours line (0-based) of buf from col_start to col_end (-1 or
-- nil: to the end of the line) with group, as an extmark in namespace ns
-- (nvim_buf_add_highlight is deprecated from 0.11; extmarks exist in all).
function M.highlight(buf, ns, group, line, col_start, col_end)
  if col_end == nil or col_end < 0 then
    col_end = #(vim.api.nvim_buf_get_lines(buf, line, line + 1, false)[1] or "")
  end
  pcall(vim.api.nvim_buf_set_extmark, buf, ns, line, col_start or 0, { end_row = line, end_col = col_end, hl_group = group })
end

-- open_term makes buf a terminal fed by nvim_chan_send, whose keys go to
-- on_input. From 0.10 nvim_open_term turns "\n" into "\r\n" unless told
-- not to (force_crlf); the pty's bytes must reach the screen unchanged.
local crlf_opt = vim.fn.has("nvim-0.10") == 1
function M.open_term(buf, on_input)
  local opts = { on_input = on_input }
  if crlf_opt then
    opts.force_crlf = false
  end
  return vim.api.nvim_open_term(buf, opts)
end

-- state_dir is stdpath("state") (0.8+); 0.7 has no "state", so there it
-- is the directory 0.8+ would give ($XDG_STATE_HOME/nvim): one path on
-- every version, so what is kept there (the always-allow rules, the log)
-- survives an upgrade of Neovim.
function M.state_dir()
  local ok, dir = pcall(vim.fn.stdpath, "state")
  if ok and type(dir) == "string" then
    return dir
  end
  local base = vim.env.XDG_STATE_HOME
  if base == nil or base == "" then
    base = vim.fn.expand("~") .. "/.local/state"
  end
  return base .. "/nvim"
end

-- old_state_dir is where agentrun kept its state on 0.7 before it used
-- state_dir there (stdpath("data")): read once, to move it over.
function M.old_state_dir()
  return vim.fn.stdpath("data")
end

-- health_links hides the bars of the |help-tag| links :checkhealth makes
-- of ":help tag" in its report (Neovim 0.7 shows them: its checkhealth
-- buffer sets no 'conceallevel', which later ones do). Called from the
-- report, in the checkhealth buffer's window.
function M.health_links()
  if vim.fn.has("nvim-0.8") == 0 and vim.bo.filetype == "checkhealth" then
    vim.wo.conceallevel = 2
    vim.wo.concealcursor = "nc"
  end
end

return M
