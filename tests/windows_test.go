package tests

import (
	"fmt"
	"testing"
	"time"
)

// TestNewChatTakesTheOldChatsWindows: after :AgentStop, the next session's
// chat opens in the windows of the old one (it left the old chat one
// column wide and opened a full-height one beside it).
func TestNewChatTakesTheOldChatsWindows(t *testing.T) {
	e := startEditor(t, "")
	e.startSession()
	var before int
	e.lua(`return #vim.api.nvim_tabpage_list_wins(0)`, &before)
	e.cmd("AgentStop")
	e.waitChat("you stopped this session (:AgentStop)", 5*time.Second)
	e.cmd("AgentPrompt echo two")
	e.waitChat("`echo two` exited with code 0.", 10*time.Second)
	var layout struct {
		Wins   int `msgpack:"wins"`
		Chats  int `msgpack:"chats"`
		Width  int `msgpack:"width"`
		Height int `msgpack:"height"`
	}
	e.lua(`local chats, width, height = 0, 0, 0
		for _, w in ipairs(vim.api.nvim_tabpage_list_wins(0)) do
			local name = vim.api.nvim_buf_get_name(vim.api.nvim_win_get_buf(w))
			if name:match("chat of ") then
				chats, width, height = chats + 1, vim.api.nvim_win_get_width(w), vim.api.nvim_win_get_height(w)
			end
		end
		return { wins = #vim.api.nvim_tabpage_list_wins(0), chats = chats, width = width, height = height }`, &layout)
	// The terminal split of "echo two" is the one window more.
	if layout.Chats != 1 || layout.Wins != before+1 || layout.Width < 30 {
		t.Errorf("after a new session: %+v (windows before: %d); want one chat window, as wide as before", layout, before)
	}
}

// TestQuitKeyReturnsWhereTheUserWas: q in a terminal split goes back to
// the window the user came from.
func TestQuitKeyReturnsWhereTheUserWas(t *testing.T) {
	e := startEditor(t, "")
	e.startSession()
	e.cmd("AgentPrompt echo q-test")
	term := e.waitTerminal("echo q-test", 10*time.Second)
	var from int
	e.lua(`vim.cmd("stopinsert")
		vim.cmd("wincmd t") -- the user's own window, top left
		local w = vim.api.nvim_get_current_win()
		require("agentrun").open_terminal(...)
		return w`, &from, term.ID)
	e.normalKeys("q")
	e.waitFor("focus back in the user's window", 2*time.Second, func() (bool, string) {
		var cur int
		e.lua(`return vim.api.nvim_get_current_win()`, &cur)
		return cur == from, fmt.Sprintf("current window %d, want %d", cur, from)
	})
}

// TestCommandEndLeavesTerminalMode: a user typing in the split (terminal
// mode) when the command ends is back in normal mode, where keys work.
func TestCommandEndLeavesTerminalMode(t *testing.T) {
	e := startEditor(t, "")
	e.startSession()
	e.cmd("AgentPrompt sleep 3")
	term := e.waitTerminal("sleep 3", 10*time.Second)
	e.lua(`vim.api.nvim_set_current_win(vim.fn.bufwinid(...))`, nil, term.Bufnr)
	e.normalKeys("i") // as a user enters terminal mode
	e.waitFor("terminal mode in the split", 2*time.Second, func() (bool, string) {
		var mode string
		e.lua(`return vim.api.nvim_get_mode().mode`, &mode)
		return mode == "t", mode
	})
	e.waitBuf(term.Bufnr, 10*time.Second, exitMarker(0))
	e.waitFor("normal mode after the exit", 2*time.Second, func() (bool, string) {
		var mode string
		e.lua(`return vim.api.nvim_get_mode().mode`, &mode)
		return mode == "nt" || mode == "n", mode
	})
}
