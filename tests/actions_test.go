package tests

import (
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"
)

// TestActionsRefuseWhereTheyCannotApply: the one action table decides
// what a key or command may do to a terminal. Taking over the agent's own
// terminal (T in its split) or a released one (:AgentTakeover) is refused
// with the reason, and nothing changes hands.
func TestActionsRefuseWhereTheyCannotApply(t *testing.T) {
	e := startEditor(t, "")
	e.startSession()

	e.cmd("AgentPrompt echo released-soon")
	term := e.waitTerminal("echo released-soon", 10*time.Second)
	e.waitFor("the agent to release the terminal", 10*time.Second, func() (bool, string) {
		for _, x := range e.terminals() {
			if x.ID == term.ID {
				return x.State == "released", x.State
			}
		}
		return false, "gone from status()"
	})
	var ok bool
	e.lua(`return require("agentrun").takeover(...)`, &ok, term.ID)
	if ok || !strings.Contains(e.noteText(), term.ID+" was released; nothing of it runs any more") {
		t.Errorf("takeover of a released terminal: returned %v, notes:\n%s", ok, e.noteText())
	}

	e.cmd("AgentPrompt !meta sleep 3412")
	buf := e.waitAgentShownTerminal()
	var win int
	e.lua(`local w = vim.fn.bufwinid(...); vim.api.nvim_set_current_win(w); return w`, &win, buf)
	e.normalKeys("T")
	e.waitFor("the refusal", 5*time.Second, func() (bool, string) {
		n := e.noteText()
		return strings.Contains(n, "is the agent's own (it ran the command itself); it cannot be taken over, only cancelled"), n
	})
	var user bool
	e.lua(`for _, t in pairs(require("agentrun.state").terminals) do if t.display_only then return t.user or false end end return false`, &user)
	if user {
		t.Error("the agent's own terminal was marked as the user's")
	}
	e.cmd("AgentStop")
}

// TestTerminalListKeysFollowTheKeymaps: the terminal list's hint line and
// keys come from the same table: a key set to false is neither shown nor
// mapped, a renamed one is shown under its new key.
func TestTerminalListKeysFollowTheKeymaps(t *testing.T) {
	e := startEditor(t, `require("agentrun").setup({ keymaps = { takeover = false, dispose = "D" } })`)
	e.cmd("AgentTerminals")
	var hint string // the key line (the empty list says so on its first row)
	e.lua(`for _, l in ipairs(vim.api.nvim_buf_get_lines(0, 0, -1, false)) do if l:find("kill") then return l end end return ""`, &hint)
	if strings.Contains(hint, "take") || !(strings.Contains(hint, "D dispose") || strings.Contains(hint, "D wipe")) || !strings.Contains(hint, "X kill") {
		t.Errorf("hint line %q: want no take over, D dispose (or wipe, in short), X kill", hint)
	}
	var maps []string
	e.lua(`local out = {}; for _, m in ipairs(vim.api.nvim_buf_get_keymap(0, "n")) do table.insert(out, m.lhs) end; return out`, &maps)
	joined := " " + strings.Join(maps, " ") + " "
	if strings.Contains(joined, " T ") || !strings.Contains(joined, " D ") {
		t.Errorf("list keys %q: want D mapped and T not", maps)
	}
}

// TestKillInAnEndedSplitTouchesNothingElse: :AgentKill without an id,
// typed in the split of a command that ended, says so and kills nothing
// (it used to kill the newest running terminal, out of sight); from the
// chat it kills the newest running one and names it.
func TestKillInAnEndedSplitTouchesNothingElse(t *testing.T) {
	e := startEditor(t, "")
	e.startSession()
	e.cmd("AgentShell sleep 300")
	long := e.waitTerminal("sleep 300", 10*time.Second)
	e.cmd("AgentShell echo quick")
	quick := e.waitTerminal("echo quick", 10*time.Second)
	e.waitBuf(quick.Bufnr, 10*time.Second, exitMarker(0))
	e.lua(`vim.api.nvim_set_current_win(vim.fn.bufwinid(...)); vim.cmd("stopinsert")`, nil, quick.Bufnr)
	for _, cmd := range []string{"AgentKill", "AgentDetach", "AgentTakeover"} {
		e.cmd(cmd)
		if n := e.noteText(); !strings.Contains(n, quick.ID+" already ended (exit 0)") {
			t.Errorf(":%s in the ended split: notes\n%s", cmd, n)
		}
	}
	for _, x := range e.terminals() {
		if x.ID == long.ID && x.State != "running" {
			t.Fatalf("%s was touched: %+v", long.ID, x)
		}
	}
	e.lua(`vim.api.nvim_set_current_win(vim.fn.bufwinid(require("agentrun.state").session().chat.buf))`, nil)
	e.cmd("AgentKill")
	e.waitFor("the newest running terminal killed and named", 10*time.Second, func() (bool, string) {
		n := e.noteText()
		for _, x := range e.terminals() {
			if x.ID == long.ID && x.State != "running" {
				// its split is out of sight: one line says what was done, and to which
				return strings.Contains(n, long.ID+" (newest running): SIGTERM sent; SIGKILL in 3 s"), n
			}
		}
		return false, n
	})
}

// TestKillSaysWhatItDidOutOfSight: :AgentKill on a terminal whose split
// is not in sight (closed, or typed in :AgentTerminals) says in one line
// what it did; with the split in sight the split says it ("[signal …]")
// and nothing else does.
func TestKillSaysWhatItDidOutOfSight(t *testing.T) {
	e := startEditor(t, "")
	e.startSession()
	for i, c := range []struct {
		kill, says, ends string
		inSight          bool
	}{
		{"AgentKill", ": SIGTERM sent; SIGKILL in 3 s", signalMarker("SIGTERM"), false},
		{"AgentKill!", " is killed (SIGKILL)", signalMarker("SIGKILL"), false},
		{"AgentKill", "", signalMarker("SIGTERM"), true}, // the split says it
	} {
		cmd := fmt.Sprintf("sleep %d", 300+i)
		e.cmd("AgentShell " + cmd)
		term := e.waitTerminal(cmd, 10*time.Second)
		e.lua(`vim.cmd("stopinsert"); local buf, keep = ...; local w = vim.fn.bufwinid(buf); if w ~= -1 and not keep then vim.api.nvim_win_close(w, true) end`, nil, term.Bufnr, c.inSight)
		e.cmd(c.kill + " " + term.ID)
		if c.says != "" {
			e.waitNote(term.ID+c.says, 10*time.Second)
		}
		e.waitBuf(term.Bufnr, 10*time.Second, c.ends)
		if n := e.noteText(); c.inSight && strings.Contains(n, term.ID+": SIGTERM sent") {
			t.Errorf("the split in sight shows the kill, yet a note says it too:\n%s", n)
		}
	}
}

// TestScreenDisposedTerminalSaysSoFromTheChat: after dd on a terminal in
// :AgentTerminals, <CR> on its command in the chat (and :AgentKill of its
// id) says it was disposed of, not that no such terminal is known.
func TestScreenDisposedTerminalSaysSoFromTheChat(t *testing.T) {
	s := startDemoScreen(t)
	s.prompt("echo gone-soon")
	s.waitShows(10*time.Second, "echo gone-soon exited with code 0.")
	s.keys("Escape", ":AgentTerminals", "Enter")
	s.waitShows(5*time.Second, "agentrun terminals —", "term-1 ")
	s.keys("/term-1", "Enter", "d", "d")
	s.waitShows(5*time.Second, "(no terminals now; :AgentShell opens one)")
	s.keys("q")
	s.waitFor("the list to close", 5*time.Second, func(sc string) bool { return !strings.Contains(sc, "agentrun terminals —") })
	s.keys(":lua vim.api.nvim_set_current_win(vim.fn.bufwinid('chat of demo 1'))", "Enter", "gg", "/gone-soon \\[execute", "Enter", "Enter")
	want := "(agentrun) term-1 was disposed of (dd" // in words that fit this width
	sc := s.waitShows(5*time.Second, want)
	if strings.Contains(sc, "unknown terminal") {
		t.Errorf("<CR> on the disposed terminal's line:\n%s", sc)
	}
	s.keys(":echo ''", "Enter")
	s.waitFor("the message to go", 5*time.Second, func(sc string) bool { return !strings.Contains(sc, want) })
	s.keys(":AgentKill term-1", "Enter")
	s.waitShows(5*time.Second, want)
}

// TestScreenDisposedRunningTerminalInTheChat: dd on a running command in
// :AgentTerminals asks first (a key typed by mistake kills nothing: Cancel
// leaves it running), then kills it; the chat's line of it then names the
// command and says it was killed and disposed of (it read "term-1 —
// running", the command's name gone with its record).
func TestScreenDisposedRunningTerminalInTheChat(t *testing.T) {
	s := startDemoScreen(t)
	s.prompt("sleep 100")
	s.waitShows(10*time.Second, "[execute] · in progress")
	s.keys("Escape", ":AgentTerminals", "Enter")
	s.waitShows(5*time.Second, "agentrun terminals —", "term-1 ")
	s.keys("/term-1", "Enter", "d", "d")
	question := "(agentrun) term-1 still runs: sleep 100"
	s.waitShows(5*time.Second, question, "dd kills it and wipes its output.", "(K)ill it, [C]ancel")
	s.keys("c")
	s.waitFor("the question to go", 5*time.Second, func(sc string) bool { return !strings.Contains(sc, question) })
	if sc := s.capture(); !regexp.MustCompile(`(?m)^term-1\s+running\s`).MatchString(sc) {
		t.Fatalf("after Cancel the command should still run:\n%s", sc)
	}
	s.keys("d", "d")
	s.waitShows(5*time.Second, question)
	s.keys("k")
	s.waitShows(5*time.Second, "(no terminals now; :AgentShell opens one)")
	s.keys("q")
	s.waitFor("the chat to say what became of it", 10*time.Second, func(string) bool {
		return strings.Contains(s.chatText(), "▸ terminal term-1 · killed and disposed of (dd) (<CR> opens it)")
	})
	if text := s.chatText(); strings.Contains(text, "· running") {
		t.Errorf("the chat still says it runs:\n%s", text)
	}
}
