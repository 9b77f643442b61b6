-- Markdown in the chat: the agent's messages are highlighted as they
-- stream, without changing their text (copying from the chat copies the
-- markdown). Headings, emphasis, inline code, links, list markers and
-- code fences; the markers of emphasis and inline code are concealed
-- (the chat windows set 'conceallevel'). A fence's code, once it closes,
-- gets its language's colours: a tree-sitter parser and its highlights
-- query where Neovim has them (0.9+), else the language's Vim syntax
-- file; without either it stays AgentRunCode. Pure: the chat applies
-- the spans.
local api = vim.api

local M = {}

-- Fences whose code is coloured: the biggest with tree-sitter, the
-- biggest with the syntax fallback (one synID per character: 200 lines
-- of Python take some 50 ms, once, as the fence closes), and at most this
-- many characters per line looked at there.
M.max_fence_lines = 1000
M.max_syntax_lines = 200
local max_syntax_cols = 200

-- aliases maps a fence's info word to a tree-sitter language name.
local aliases = {
  py = "python", js = "javascript", ts = "typescript", sh = "bash", shell = "bash", zsh = "bash",
  console = "bash", golang = "go", rs = "rust", yml = "yaml", md = "markdown", ["c++"] = "cpp", vimscript = "vim",
}
-- syntax_names maps a tree-sitter language name to its Vim syntax file.
local syntax_names = { bash = "sh" }

-- emphasis: { pattern, group, marker width }, strongest first (a span
-- already taken is not taken again).
local emphasis = {
  { "()%*%*[^%*%s][^%*]-%*%*()", "AgentRunBold", 2 },
  { "()__[^_%s][^_]-__()", "AgentRunBold", 2 },
  { "()%*[^%*%s][^%*]-%*()", "AgentRunItalic", 1 },
  { "%f[%w_]()_[^_%s][^_]-_()%f[^%w_]", "AgentRunItalic", 1 },
}

-- inline finds the inline spans of one text line (not in a fence): each
-- { col_start, col_end, group, conceal_open, conceal_close } (0-based,
-- end exclusive; the conceal widths are the markers' at each end).
local function inline(line, row, out)
  local taken = {}
  local function free(s, e)
    for c = s, e do
      if taken[c] then
        return false
      end
    end
    return true
  end
  local function add(s, e, group, open, close)
    if not free(s, e) then
      return
    end
    for c = s, e do
      taken[c] = true
    end
    table.insert(out, { row, s - 1, row, e, group, open, close })
  end
  -- inline code first: nothing inside it is markup. A span opens with a
  -- run of backticks and closes with the next run of as many (CommonMark),
  -- so ``a `b` c`` holds its backticks; one space inside each fence is
  -- part of the fence when both are there.
  local i = 1
  while true do
    local s, e = line:find("`+", i)
    if not s then
      break
    end
    local n, j, cs, ce = e - s + 1, e + 1, nil, nil
    while true do
      local a, b = line:find("`+", j)
      if not a then
        break
      end
      if b - a + 1 == n then
        cs, ce = a, b
        break
      end
      j = b + 1
    end
    if not cs then
      i = e + 1
    else
      local pad = (cs - 1 > e + 1 and line:sub(e + 1, e + 1) == " " and line:sub(cs - 1, cs - 1) == " ") and 1 or 0
      add(s, ce, "AgentRunCode", n + pad, n + pad)
      i = ce + 1
    end
  end
  for _, em in ipairs(emphasis) do
    for s, e in line:gmatch(em[1]) do
      add(s, e - 1, em[2], em[3], em[3])
    end
  end
  for s, text, e in line:gmatch("()%[([^%]]+)%]%([^%)%s]+%)()") do
    -- [text](url): the text underlined, the brackets and url concealed
    add(s, e - 1, "AgentRunLink", 1, e - s - #text - 1)
  end
end

-- fence_open returns the info word of a fence's opening line ("" for
-- none), or nil when line opens none.
local function fence_open(line)
  local marks, info = line:match("^%s*(```+)%s*([%w_+#%-%.]*)")
  if not marks then
    marks, info = line:match("^%s*(~~~+)%s*([%w_+#%-%.]*)")
  end
  if marks then
    return marks, info:lower()
  end
end

-- scan highlights lines[from..] of a message. states[i] is the state at
-- the start of line i (false: text; { marks, lang, start }: in a fence
-- opened by marks, whose code starts at line start); scan fills it in
-- for the lines it reads. It returns the spans { row, col, end_row,
-- end_col, group, conceal_open, conceal_close } (rows 0-based within the
-- message) and the fences that closed in these lines ({ lang, first,
-- last } 1-based lines of their code).
function M.scan(lines, states, from)
  local spans, closed = {}, {}
  for i = from, #lines do
    local st = states[i] or false
    local line = lines[i]
    local row = i - 1
    local nxt = st
    if st then
      local marks = line:match("^%s*([`~]+)%s*$")
      if marks and marks:sub(1, 1) == st.marks:sub(1, 1) and #marks >= #st.marks then
        table.insert(spans, { row, 0, row, #line, "AgentRunCodeFence" })
        table.insert(closed, { lang = st.lang, first = st.start, last = i - 1 })
        nxt = false
      else
        table.insert(spans, { row, 0, row, #line, "AgentRunCode" })
      end
    else
      local marks, lang = fence_open(line)
      if marks then
        table.insert(spans, { row, 0, row, #line, "AgentRunCodeFence" })
        nxt = { marks = marks, lang = lang, start = i + 1 }
      elseif line:match("^#+%s") then
        table.insert(spans, { row, 0, row, #line, "AgentRunHeading" })
      else
        local bullet = line:match("^%s*[%-%*%+]%s") or line:match("^%s*%d+[%.%)]%s")
        if bullet then
          table.insert(spans, { row, 0, row, #bullet, "AgentRunListMarker" })
        end
        if line:match("^>") then
          table.insert(spans, { row, 0, row, #line, "AgentRunQuote" })
        end
        inline(line, row, spans)
      end
    end
    states[i + 1] = nxt
  end
  return spans, closed
end

-- has_parser reports whether Neovim has a tree-sitter parser for lang
-- (0.9+: language.add returns nothing and errors when it has none on
-- 0.9/0.10, returns true, or nil and why, from 0.11).
local function has_parser(lang)
  local ts = vim.treesitter
  if not (ts and ts.get_string_parser and ts.query and ts.language) then
    return false
  end
  local ok, found, why = pcall(ts.language.add or ts.language.require_language, lang)
  return ok and found ~= false and why == nil
end

-- ts_spans colours code (a string) with the tree-sitter parser of lang
-- and its highlights query; nil when Neovim has neither.
local function ts_spans(lang, code)
  local ts = vim.treesitter
  if not has_parser(lang) then
    return nil
  end
  local get = ts.query.get or ts.query.get_query
  local qok, query = pcall(get, lang, "highlights")
  if not qok or not query then
    return nil
  end
  local pok, parser = pcall(ts.get_string_parser, code, lang)
  if not pok then
    return nil
  end
  local tree = parser:parse()[1]
  if not tree then
    return nil
  end
  local spans = {}
  for id, node in query:iter_captures(tree:root(), code, 0, -1) do
    local name = query.captures[id]
    if name:sub(1, 1) ~= "_" and name ~= "spell" and name ~= "nospell" and name ~= "conceal" then
      local sr, sc, er, ec = node:range()
      table.insert(spans, { sr, sc, er, ec, "@" .. name .. "." .. lang })
    end
  end
  return spans
end

-- syntax_spans colours lines with lang's Vim syntax file (in a hidden
-- scratch buffer, one synID per character); nil without one.
local function syntax_spans(lang, lines)
  local name = syntax_names[lang] or lang
  if #lines > M.max_syntax_lines or vim.g.syntax_on == nil or not name:match("^[%w_]+$") or #api.nvim_get_runtime_file("syntax/" .. name .. ".vim", false) == 0 then
    return nil
  end
  local buf = api.nvim_create_buf(false, true)
  api.nvim_buf_set_lines(buf, 0, -1, false, lines)
  local spans = {}
  api.nvim_buf_call(buf, function()
    vim.cmd("setlocal syntax=" .. name)
    for r, l in ipairs(lines) do
      local cur, start = "", 0
      local n = math.min(#l, max_syntax_cols)
      for c = 1, n + 1 do
        local group = c <= n and vim.fn.synIDattr(vim.fn.synIDtrans(vim.fn.synID(r, c, 1)), "name") or ""
        if group ~= cur then
          if cur ~= "" then
            table.insert(spans, { r - 1, start, r - 1, c - 1, cur })
          end
          cur, start = group, c - 1
        end
      end
    end
  end)
  api.nvim_buf_delete(buf, { force = true })
  return spans
end

-- colouring says how a fence of lang gets its colours here:
-- "tree-sitter", "syntax file" or nil (none).
function M.colouring(lang)
  lang = aliases[lang] or lang
  if has_parser(lang) then
    return "tree-sitter"
  end
  if #api.nvim_get_runtime_file("syntax/" .. (syntax_names[lang] or lang) .. ".vim", false) > 0 then
    return "syntax file"
  end
end

-- code_spans colours a closed fence's code lines (rows 0-based within
-- them); nil when its language is unknown here.
function M.code_spans(lang, lines)
  if lang == "" or #lines == 0 or #lines > M.max_fence_lines then
    return nil
  end
  lang = aliases[lang] or lang
  return ts_spans(lang, table.concat(lines, "\n") .. "\n") or syntax_spans(lang, lines)
end

return M
