-- :w, :wq and :x in the chat and the prompt: our buffers are no files,
-- so a write of them writes nothing (or refuses with a sentence when it
-- would lose text), and :wq there does what it does in the user's window.
local api = vim.api

local M = {}

-- nothing holds the buffers of ours that take :w as a write of
-- nothing (the chat's, the prompt's): buffer → function returning why a
-- write must fail (text it would lose), or nil.
M.nothing = {}

-- accept_write makes buf (the chat's, the prompt's) take :w as a write of
-- nothing ('buftype' acwrite, not nofile which refuses with E382), so
-- :wq and :x in it quit as in the user's window. refuse(buf) returns a
-- sentence when a write must fail instead: the prompt's unsent text,
-- which :wq would otherwise lose without a word. :e and :e! there read
-- no file (Neovim empties the buffer first): reread(buf) puts its text
-- back.
function M.accept_write(buf, refuse, reread)
  M.nothing[buf] = refuse or function() end
  vim.bo[buf].buftype = "acwrite"
  local group = api.nvim_create_augroup("agentrun_reread_" .. buf, { clear = true })
  api.nvim_create_autocmd("BufReadCmd", {
    group = group,
    buffer = buf,
    desc = "agentrun: :e here reads no file, it draws the buffer again",
    callback = function()
      if reread then
        reread(buf)
      end
      vim.bo[buf].modified = false
    end,
  })
  api.nvim_create_autocmd("BufWriteCmd", {
    buffer = buf,
    desc = "agentrun: nothing to write here (the chat and the prompt are no files)",
    callback = function()
      -- :w {file}: the text goes to that file, as from any buffer
      local target = vim.fn.expand("<amatch>")
      if target ~= "" and target ~= api.nvim_buf_get_name(buf) and not target:find("^agentrun://") then
        if vim.fn.filereadable(target) == 1 and vim.v.cmdbang == 0 then
          require("agentrun.util").notify(string.format("%s exists: :w! %s overwrites it", target, vim.fn.fnamemodify(target, ":~:.")))
        elseif vim.fn.writefile(api.nvim_buf_get_lines(buf, 0, -1, false), target) ~= 0 then
          require("agentrun.util").notify(string.format("could not write %s", target), vim.log.levels.ERROR)
        else
          -- as Neovim says it of a file it writes
          local n = api.nvim_buf_line_count(buf)
          require("agentrun.util").notify(string.format("%q written, %d line%s", vim.fn.fnamemodify(target, ":~:."), n, n == 1 and "" or "s"), vim.log.levels.INFO)
        end
        return
      end
      local why = M.nothing[buf](buf)
      if why then
        require("agentrun.util").notify(why)
        vim.bo[buf].modified = true -- Neovim takes the write as failed: :wq stays
        vim.schedule(function() -- and then no [+]: it is no file
          if api.nvim_buf_is_valid(buf) then
            vim.bo[buf].modified = false
          end
        end)
        return
      end
      vim.bo[buf].modified = false
    end,
  })
  -- Never 'modified' (as a nofile buffer): no [+], no quit that asks.
  -- BufModifiedSet comes once Neovim is back in its loop, after a write
  -- failed on purpose above has been taken as failed.
  api.nvim_create_autocmd("BufModifiedSet", {
    buffer = buf,
    callback = function()
      if vim.bo[buf].modified then
        vim.bo[buf].modified = false
      end
    end,
  })
  api.nvim_create_autocmd("BufWipeout", {
    buffer = buf,
    callback = function()
      M.nothing[buf] = nil
    end,
  })
end

-- write_and_leave does for :wq or :x typed in win (the chat or the
-- prompt) what it does in the user's window beside them: the user's
-- files shown in this tab page are written, and every other window
-- closes, so Neovim quits with win. A file that cannot be written keeps
-- its window open (Neovim says why), and only win closes.
function M.write_and_leave(win)
  local others = {}
  for _, w in ipairs(api.nvim_tabpage_list_wins(0)) do
    if w ~= win then
      local b = api.nvim_win_get_buf(w)
      if vim.bo[b].buftype == "" and vim.bo[b].modified and not M.nothing[b] then
        local ok, err = pcall(api.nvim_win_call, w, function()
          vim.cmd("update")
        end)
        if not ok then
          require("agentrun.util").notify(string.format("could not write %s: %s", api.nvim_buf_get_name(b), tostring(err):gsub("^Vim%(%a+%):", "")), vim.log.levels.ERROR)
          return
        end
      end
      table.insert(others, w)
    end
  end
  for _, w in ipairs(others) do
    pcall(api.nvim_win_close, w, false)
  end
end

return M
