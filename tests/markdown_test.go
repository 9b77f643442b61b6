package tests

import (
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"
)

// mdMark is one markdown extmark of the chat: its line's text, the group
// or conceal, and the text it covers.
type mdMark struct {
	Line    string `msgpack:"line"`
	Group   string `msgpack:"group"`
	Conceal bool   `msgpack:"conceal"`
	Text    string `msgpack:"text"`
}

// markdownMarks returns the chat's markdown extmarks.
func (e *editor) markdownMarks() []mdMark {
	e.t.Helper()
	var marks []mdMark
	e.lua(`
		local buf = require("agentrun.state").session().chat.buf
		local ns = vim.api.nvim_create_namespace("agentrun_markdown")
		local out = {}
		-- 0.7.2 does not report conceal: a mark without a group is one
		for _, m in ipairs(vim.api.nvim_buf_get_extmarks(buf, ns, 0, -1, { details = true })) do
			local row, col, d = m[2], m[3], m[4]
			local line = vim.api.nvim_buf_get_lines(buf, row, row + 1, false)[1] or ""
			local text = (d.end_row or row) == row and line:sub(col + 1, d.end_col or #line) or line:sub(col + 1)
			table.insert(out, { line = line, group = d.hl_group or "", conceal = d.conceal ~= nil or d.hl_group == nil, text = text })
		end
		return out`, &marks)
	return marks
}

// has reports whether marks has one of group (or a conceal when group is
// "conceal") covering text.
func has(marks []mdMark, group, text string) bool {
	for _, m := range marks {
		if m.Text == text && ((group == "conceal" && m.Conceal) || m.Group == group) {
			return true
		}
	}
	return false
}

// TestMarkdownInTheChat: the agent's markdown keeps its text but gets its
// highlights as it streams in 7-byte chunks: the heading, bold (its **
// concealed), inline code, italic, list markers, a link's text; the
// fence's lines, and its Lua code coloured by the language (tree-sitter
// groups where Neovim has the parser, else the syntax file's).
func TestMarkdownInTheChat(t *testing.T) {
	e := claudeLike(t, "")
	e.cmd("AgentPrompt md")
	chat := e.waitChat("done with md", 20*time.Second)
	for _, want := range []string{"# Plan of attack", "Some **bold words** and `inline code`", "```lua\nlocal answer = 42\nreturn answer\n```"} {
		if !strings.Contains(chat, want) {
			t.Errorf("the chat lacks %q (markdown must keep its text):\n%s", want, chat)
		}
	}
	marks := e.markdownMarks()
	for _, c := range []struct{ group, text string }{
		{"AgentRunHeading", "# Plan of attack"},
		{"AgentRunBold", "**bold words**"},
		{"conceal", "**"},
		{"AgentRunCode", "`inline code`"},
		{"AgentRunItalic", "*slanted*"},
		{"AgentRunListMarker", "- "},
		{"AgentRunLink", "[the docs](https://example.com/docs)"},
		{"conceal", "](https://example.com/docs)"},
		{"AgentRunCodeFence", "```lua"},
		{"AgentRunCode", "local answer = 42"},
	} {
		if !has(marks, c.group, c.text) {
			t.Errorf("no %s on %q; marks: %+v", c.group, c.text, marks)
		}
	}
	var ts bool
	e.lua(`return vim.fn.has("nvim-0.9") == 1`, &ts)
	want := "Statement" // lua.vim's `local`
	if ts {
		want = "@keyword.lua"
	}
	if !has(marks, want, "local") {
		t.Errorf("the fence's `local` is not coloured %s; marks: %+v", want, marks)
	}
}

// TestThoughtsAndLongOutputFold: a thought shows folded to its first line
// with how many more there are, a tool call's 30 lines of output show 8
// and the rest folded; <Tab> on either shows all of it, again folds it.
func TestThoughtsAndLongOutputFold(t *testing.T) {
	e := claudeLike(t, "")
	e.cmd("AgentPrompt md")
	chat := e.waitChat("done with md", 20*time.Second)
	for _, want := range []string{"┊ thinking: Let me think about this.  (+2 lines, <Tab> shows them)", "  output line 8\n  … (+22 lines, <Tab> shows them)"} {
		if !strings.Contains(chat, want) {
			t.Errorf("folded: the chat lacks %q:\n%s", want, chat)
		}
	}
	if strings.Contains(chat, "Second thought line") || strings.Contains(chat, "output line 9") {
		t.Errorf("folded content shows:\n%s", chat)
	}
	toggle := func(text string) {
		t.Helper()
		e.lua(`local s = require("agentrun.state").session()
			local win = vim.fn.bufwinid(s.chat.buf)
			vim.api.nvim_set_current_win(win)
			vim.cmd("stopinsert")
			local lnum = vim.fn.search(..., "w")
			vim.api.nvim_win_set_cursor(win, { lnum, 0 })`, nil, text)
		e.normalKeys("<Tab>")
	}
	toggle("thinking: ")
	toggle("output line 1$")
	chat = e.chat()
	for _, want := range []string{"┊ Let me think about this.\n┊ Second thought line.\n┊ Third thought line.", "  output line 29\n  output line 30\n"} {
		if !strings.Contains(chat, want) {
			t.Errorf("unfolded: the chat lacks %q:\n%s", want, chat)
		}
	}
	toggle("Let me think")
	if chat = e.chat(); strings.Contains(chat, "Second thought line") {
		t.Errorf("the thought did not fold again:\n%s", chat)
	}
}

// TestScreenRendersMarkdown: on the screen the agent's markdown reads as
// text (markers of bold, code and links hidden, the heading and the code
// in colour), the thought and the long output are folded, and <Tab> in
// the chat unfolds the thought where the cursor is.
func TestScreenRendersMarkdown(t *testing.T) {
	s := claudeLikeScreenSized(t, 120, 45)
	s.keys(":AgentRun", "Enter")
	s.waitShows(20*time.Second, "agentrun · claudelike · ready")
	s.typeText("md")
	s.keys("C-s")
	sc := s.waitShows(20*time.Second, "done with md")
	for _, want := range []string{
		"Some bold words and inline code and slanted text.",
		"See the docs.",
		"┊ thinking: Let me think about this.  (+2 lines, <Tab>", // wrapped
		"output line 8",
		"… (+22 lines, <Tab> shows them)",
	} {
		if !strings.Contains(sc, want) {
			t.Errorf("the screen lacks %q:\n%s", want, sc)
		}
	}
	if strings.Contains(sc, "**bold") || strings.Contains(sc, "output line 9") || strings.Contains(sc, "Second thought line") {
		t.Errorf("markers or folded lines show:\n%s", sc)
	}
	colour := s.tmux("capture-pane", "-e", "-p", "-t", "0")
	for _, text := range []string{"# Plan of attack", "local", "inline code"} {
		if !colouredLine(colour, text) {
			t.Errorf("%q is not coloured on the screen:\n%q", text, colour)
		}
	}
	s.keys("Escape", "C-w", "k")
	s.typeText("/thinking")
	s.keys("Enter", "Tab")
	s.waitShows(5*time.Second, "┊ Second thought line.", "┊ Third thought line.")
}

// colouredLine reports whether the screen line holding text (captured
// with its escapes) gives it a colour or boldness of its own (0.10's
// default colours make Title bold only): set between the window
// separator and the text, not the default (39).
func colouredLine(capture, text string) bool {
	fg := regexp.MustCompile(`\x1b\[(1|3[0-8]|9[0-7])(;[0-9;]*)?m`)
	for _, line := range strings.Split(capture, "\n") {
		if i := strings.Index(line, text); i >= 0 {
			before := line[:i]
			if j := strings.LastIndex(before, "│"); j >= 0 {
				before = before[j:]
			}
			return fg.MatchString(before)
		}
	}
	return false
}

// TestEditDiffOpensSideBySide: an edit the agent shows as a diff reads as
// a unified diff in the chat; <CR> on it opens the file before and after
// side by side in Vim's diff mode, in a tab page of their own, with the
// file's filetype; q there closes it.
func TestEditDiffOpensSideBySide(t *testing.T) {
	e := claudeLike(t, "")
	e.cmd("AgentPrompt edit /src/app/main.go")
	chat := e.waitChat("\nedited", 20*time.Second)
	for _, want := range []string{"● Edit /src/app/main.go [edit] · completed", "  diff /src/app/main.go (<CR> opens it side by side)", `  -	println("old")`, `  +	println("new")`} {
		if !strings.Contains(chat, want) {
			t.Errorf("the chat lacks %q:\n%s", want, chat)
		}
	}
	e.lua(`local s = require("agentrun.state").session()
		local win = vim.fn.bufwinid(s.chat.buf)
		vim.api.nvim_set_current_win(win)
		vim.cmd("stopinsert")
		vim.api.nvim_win_set_cursor(win, { vim.fn.search("diff /src/app/main.go", "w"), 0 })`, nil)
	e.normalKeys("<CR>")
	var sides []struct {
		Diff     bool     `msgpack:"diff"`
		Filetype string   `msgpack:"filetype"`
		Lines    []string `msgpack:"lines"`
	}
	e.lua(`local out = {}
		for _, w in ipairs(vim.api.nvim_tabpage_list_wins(0)) do
			local b = vim.api.nvim_win_get_buf(w)
			table.insert(out, { diff = vim.wo[w].diff, filetype = vim.bo[b].filetype, lines = vim.api.nvim_buf_get_lines(b, 0, -1, false) })
		end
		return out`, &sides)
	if len(sides) != 2 {
		t.Fatalf("the diff tab has %d windows, want 2: %+v", len(sides), sides)
	}
	for i, want := range []string{`	println("old")`, `	println("new")`} {
		if !sides[i].Diff || sides[i].Filetype != "go" || len(sides[i].Lines) != 5 || sides[i].Lines[3] != want {
			t.Errorf("side %d: %+v, want diff mode, filetype go, line 4 %q", i, sides[i], want)
		}
	}
	var tabs int
	e.normalKeys("q")
	e.lua(`return #vim.api.nvim_list_tabpages()`, &tabs)
	if tabs != 1 {
		t.Errorf("q left %d tab pages", tabs)
	}
}

// TestPermissionForAnEditShowsItsDiff: asked to allow an edit, the user
// can view its diff side by side first; closing that view brings the
// same question back, and the answer then goes to the agent.
func TestPermissionForAnEditShowsItsDiff(t *testing.T) {
	e := claudeLike(t, "")
	// The first question: view the diff (the last item); the second: allow.
	e.lua(`_G.asked = {}
		vim.ui.select = function(items, opts, cb)
			local labels = vim.tbl_map(opts.format_item, items)
			table.insert(_G.asked, labels)
			if #_G.asked == 1 then
				vim.schedule(function() cb(items[#items], #items) end)
			else
				vim.schedule(function() cb(items[1], 1) end)
			end
		end`, nil)
	e.cmd("AgentPrompt askedit /src/app/notes.txt")
	e.waitFor("the diff view", 20*time.Second, func() (bool, string) {
		var diffs int
		e.lua(`local n = 0 for _, w in ipairs(vim.api.nvim_tabpage_list_wins(0)) do if vim.wo[w].diff then n = n + 1 end end return n`, &diffs)
		return diffs == 2, fmt.Sprint(diffs, " diff windows")
	})
	var asked [][]string
	e.lua(`return _G.asked`, &asked)
	if len(asked) != 1 || strings.Join(asked[0], "|") != "Allow — this time|Reject — this time|View the diff side by side first (q there brings this question back)" {
		t.Fatalf("asked %q", asked)
	}
	e.normalKeys("q")
	e.waitChat("PERMISSION allow", 20*time.Second)
	e.lua(`return _G.asked`, &asked)
	if len(asked) != 2 {
		t.Errorf("asked %d times, want 2 (again after the diff view)", len(asked))
	}
}

// TestScreenPermissionViewsTheDiff: as a user sees it: asked to allow an
// edit while typing in the prompt, they leave Insert mode (the question
// waited for that), pick "view the diff", read it side by side, press q,
// get the same question and allow it.
func TestScreenPermissionViewsTheDiff(t *testing.T) {
	s := claudeLikeScreen(t)
	s.keys(":AgentRun", "Enter")
	s.waitShows(20*time.Second, "agentrun · claudelike · ready")
	s.typeText("askedit /src/notes.txt")
	s.keys("C-s")
	s.waitShows(20*time.Second, "? permission: Edit /src/notes.txt", "the question waits while you type")
	s.keys("Escape")
	s.waitShows(20*time.Second, "asks permission: Edit /src/notes.txt", "3  View the diff side by side first")
	s.keys("3")
	s.waitShows(10*time.Second, "notes.txt (before)", "notes.txt (after)")
	s.keys("q")
	s.waitShows(10*time.Second, "asks permission: Edit /src/notes.txt", "1  Allow — this time")
	s.keys("1")
	s.waitShows(10*time.Second, "PERMISSION allow")
}
