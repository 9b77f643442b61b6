package tests

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// These tests are the chat window as a user sees it: shown again, after a
// resize, after :bd in it. A chat that follows its end shows it as a
// terminal does: the newest line on its last row, the rows above filled
// with the lines before it.

// chatRows returns the rows of the chat window as the screen shows them
// (its text area, not its status line), read with the window's place from
// Neovim and its text from the terminal.
func (s *screen) chatRows() []string {
	s.t.Helper()
	l := s.wins()
	c, ok := l.get("chat")
	if !ok {
		s.t.Fatalf("no chat window: %s\n%s", l, s.capture())
	}
	// the command line that asked (longer than a row) scrolled the
	// screen: the windows are drawn again before they are read
	s.keys("C-l")
	var lines []string
	eventually(s.t, "the screen drawn again", 5*time.Second, func() (bool, string) {
		sc := s.capture()
		lines = strings.Split(sc, "\n")
		return !strings.Contains(sc, "value.json"), sc
	})
	var rows []string
	for r := c.Row - 1; r < c.Row-1+c.H && r < len(lines); r++ {
		line := []rune(lines[r])
		from, to := c.Col-1, c.Col-1+c.W
		if from > len(line) {
			from = len(line)
		}
		if to > len(line) {
			to = len(line)
		}
		rows = append(rows, strings.TrimRight(string(line[from:to]), " "))
	}
	return rows
}

// waitChatEnds waits until the chat window's text ends on a row holding
// last, with no row left empty ("~") below it unless the whole transcript
// fits (its first line on the first row): the chat fills its window.
func (s *screen) waitChatEnds(what, last string) {
	s.t.Helper()
	eventually(s.t, what, 10*time.Second, func() (bool, string) {
		rows := s.chatRows()
		why := fmt.Sprintf("the chat's rows:\n%s\nthe screen:\n%s", strings.Join(rows, "\n"), s.capture())
		text := rows
		for len(text) > 0 && text[len(text)-1] == "~" {
			text = text[:len(text)-1]
		}
		if len(text) == 0 || !strings.Contains(text[len(text)-1], last) {
			return false, why
		}
		if len(text) < len(rows) && !strings.HasPrefix(text[0], "agentrun · ") {
			return false, why // rows left empty below a transcript that does not fit
		}
		return true, why
	})
}

// TestChatShownAgainEndsOnItsNewestLine: a chat closed (q, :q in the
// prompt) and opened again with :AgentRun fills its window and ends on its
// newest line. On 0.7 and 0.10 it showed only its last line, at the top,
// the rows below it empty.
func TestChatShownAgainEndsOnItsNewestLine(t *testing.T) {
	for _, c := range []struct {
		name string
		keys []string
	}{
		{"q in the chat", []string{"Escape", "C-w", "k", "q"}},
		{":q in the prompt", []string{"Escape", ":q", "Enter"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel() // each its own Neovim, screen and runtime directory
			s := startDemoScreenSized(t, 120, 35, winsLua)
			for _, w := range []string{"one", "two", "three"} {
				s.prompt("echo " + w)
				s.waitShows(10*time.Second, "echo "+w+" exited with code 0.")
			}
			s.keys(c.keys...)
			s.waitFor("the chat to close", 5*time.Second, func(sc string) bool { return !strings.Contains(sc, "agentrun · demo") })
			s.keys(":AgentRun", "Enter")
			s.waitShows(5*time.Second, "agentrun · demo · ready")
			s.waitChatEnds("the chat shown again to end on its newest line", "echo three exited with code 0.")
			rows := s.chatRows()
			if !strings.Contains(strings.Join(rows, "\n"), "> echo three") {
				t.Errorf("the last prompt is not in sight:\n%s", strings.Join(rows, "\n"))
			}
		})
	}
}

// TestChatFollowsItsEndThroughAResize: a chat that followed its end still
// shows it after the screen shrank and grew again (120×35, 80×24,
// 120×35), with no new output to bring it back. On 0.7 the chat below
// (terminal on the right) jumped to its top, its last line cut; beside a
// terminal float the prompt just sent was out of sight.
func TestChatFollowsItsEndThroughAResize(t *testing.T) {
	for _, c := range []struct {
		name, setup string
	}{
		{"chat below and terminal right", `require("agentrun").setup({ chat = { position = "below" }, terminal = { position = "right" } })`},
		{"chat left and terminal float", `require("agentrun").setup({ chat = { position = "left" }, terminal = { position = "float" } })`},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel() // each its own Neovim, screen and runtime directory
			s := startDemoScreenSized(t, 120, 35, winsLua+"\n"+c.setup)
			for _, w := range []string{"one", "two", "three"} { // more than the window holds
				s.prompt("echo " + w)
				s.waitShows(10*time.Second, "echo "+w+" exited with code 0.")
			}
			s.prompt("seq 1 50; sleep 60")
			s.waitShows(10*time.Second, "[execute] · in progress")
			s.waitChatEnds("the chat to end on the running command", "opens it)")
			for _, size := range [][2]int{{80, 24}, {120, 35}} {
				s.tmux("resize-window", "-t", "0", "-x", fmt.Sprint(size[0]), "-y", fmt.Sprint(size[1]))
				eventually(t, "Neovim to take the screen's new size", 5*time.Second, func() (bool, string) {
					l := s.wins()
					return l.Lines == size[1], l.String()
				})
				s.waitChatEnds(fmt.Sprintf("the chat at %dx%d to end on the running command", size[0], size[1]), "opens it)")
			}
		})
	}
}

// TestChatSurvivesBufferDelete: :bd or :bw in the chat or its prompt
// closes them but loses nothing: :AgentRun shows the whole conversation
// again, the prompt's unsent text with it, and a tool call's updates stay
// in its one block. The chat's buffer was left empty (only the demo hint
// written again), and each update appended a new block.
func TestChatSurvivesBufferDelete(t *testing.T) {
	for _, c := range []struct {
		name string
		keys []string
	}{
		{"bd in the chat", []string{"Escape", "C-w", "k", ":bd", "Enter"}},
		{"bw in the chat", []string{"Escape", "C-w", "k", ":bw", "Enter"}},
		{"bd in the prompt", []string{"Escape", ":bd", "Enter"}},
		{"bw in the prompt", []string{"Escape", ":bw!", "Enter"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel() // each its own Neovim, screen and runtime directory
			s := startDemoScreenSized(t, 120, 35, "")
			s.prompt("echo x")
			s.waitShows(10*time.Second, "echo x exited with code 0.")
			s.typeText("half typed")
			s.keys(c.keys...)
			s.waitFor("the chat to close", 5*time.Second, func(sc string) bool { return !strings.Contains(sc, "agentrun · demo") })
			s.keys(":AgentRun", "Enter")
			s.waitShows(5*time.Second, "agentrun · demo · ready", "> echo x", "echo x exited with code 0.", "half typed")
			s.keys("C-u") // (insert mode) the kept text goes
			s.prompt("sleep 2; echo after-bd")
			s.waitShows(10*time.Second, "sleep 2; echo after-bd exited with code 0.")
			text := s.chatText()
			if n := strings.Count(text, "sleep 2; echo after-bd [execute]"); n != 1 {
				t.Errorf("the tool call shows in %d blocks, want 1:\n%s", n, text)
			}
			if strings.Contains(text, "in progress") {
				t.Errorf("a block still says in progress:\n%s", text)
			}
			if !strings.Contains(text, "`echo x` exited with code 0.\n\n> sleep 2; echo after-bd\n") {
				t.Errorf("the conversation does not read on from where it was:\n%s", text)
			}
			if strings.Count(text, "Demo agent: each prompt") != 1 {
				t.Errorf("the header is not there once:\n%s", text)
			}
		})
	}
}

// TestScreenChatSurvivesEdit: :e or :e! in the chat or its prompt reads
// no file: the transcript stays whole (it was emptied to one line, u gave
// E21), the prompt keeps its unsent text, and the next tool call is drawn
// once, in its own block (it was drawn three times with stale states).
func TestScreenChatSurvivesEdit(t *testing.T) {
	for _, c := range []struct {
		name string
		keys []string
	}{
		{"e in the chat", []string{"Escape", "C-w", "k", ":e", "Enter", "C-w", "j"}},
		{"e! in the chat", []string{"Escape", "C-w", "k", ":e!", "Enter", "C-w", "j"}},
		{"e in the prompt", []string{"Escape", ":e", "Enter"}},
		{"e! in the prompt", []string{"Escape", ":e!", "Enter"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel() // each its own Neovim, screen and runtime directory
			s := startDemoScreenSized(t, 120, 35, "")
			s.prompt("echo x")
			s.waitShows(10*time.Second, "echo x exited with code 0.")
			s.typeText("half typed")
			s.keys(c.keys...)
			s.waitShows(5*time.Second, "agentrun · demo · ready", "> echo x", "echo x exited with code 0.", "half typed")
			s.keys("A", "C-u")
			s.prompt("sleep 2; echo after-e")
			s.waitShows(10*time.Second, "sleep 2; echo after-e exited with code 0.")
			text := s.chatText()
			if n := strings.Count(text, "sleep 2; echo after-e [execute]"); n != 1 {
				t.Errorf("the tool call shows in %d blocks, want 1:\n%s", n, text)
			}
			if strings.Contains(text, "in progress") {
				t.Errorf("a block still says in progress:\n%s", text)
			}
			if !strings.Contains(text, "`echo x` exited with code 0.\n\n> sleep 2; echo after-e\n") {
				t.Errorf("the conversation does not read on from where it was:\n%s", text)
			}
			if strings.Count(text, "Demo agent: each prompt") != 1 {
				t.Errorf("the header is not there once:\n%s", text)
			}
		})
	}
}

// TestScreenChatTabLabel: at 80 columns, with a second tab page open, the
// tab line names the chat's tab page in words: "prompt of demo 1" with the
// prompt focused, "chat of demo 1" in the chat. It read "3+ a//p/1"
// (Neovim shortens a buffer name at each "/": the buffers were
// agentrun://prompt/1 and agentrun://chat/1; "+": the transcript, written
// while the prompt was the current buffer, stayed 'modified'). A second
// session of the same agent reads "demo 2".
func TestScreenChatTabLabel(t *testing.T) {
	s := startScreen(t, 80, 24, "")
	s.keys(":AgentRun demo", "Enter")
	s.waitShows(10*time.Second, "agentrun · demo · ready", "-- INSERT --")
	s.keys("Escape", ":tabnew", "Enter", "gT") // back in the chat's tab page, in its prompt
	// tabLine waits for the screen's first row, both tab pages' labels
	tabLine := func(want string) {
		t.Helper()
		s.waitFor(want+" and [No Name] in the tab line, no a// and no +", 5*time.Second, func(sc string) bool {
			first := strings.SplitN(sc, "\n", 2)[0]
			return strings.Contains(first, want) && strings.Contains(first, "[No Name]") && !strings.Contains(first, "a//") && !strings.Contains(first, "+ ")
		})
	}
	tabLine("prompt of demo 1")
	// the prompt's own status line, 40 columns, shows it whole ("agentrun
	// prompt of demo 1" read "<un prompt of demo 1" there)
	s.waitFor("the prompt's status line to name it whole", 5*time.Second, func(sc string) bool {
		for _, row := range strings.Split(sc, "\n")[1:] {
			if regexp.MustCompile(` prompt of demo 1( |$)`).MatchString(row) && !strings.Contains(row, "<") {
				return true
			}
		}
		return false
	})
	s.keys("C-w", "k") // the chat
	tabLine("chat of demo 1")
	s.keys("C-w", "j", ":AgentStop", "Enter")
	s.waitShows(10*time.Second, "you stopped this session")
	s.keys(":AgentRun demo", "Enter")
	s.waitShows(10*time.Second, "agentrun · demo · ready", "-- INSERT --")
	tabLine("prompt of demo 2")
}

// TestScreenChatSaysItsStateOnce (issue 50): the chat's first line says
// the agent and its folder, and the state ("· ready", then "·
// working…") is said once, in the status line (both read "agentrun ·
// demo · ready").
func TestScreenChatSaysItsStateOnce(t *testing.T) {
	s := startDemoScreen(t)
	sc := s.waitShows(5*time.Second, "│agentrun · demo in ~")
	if n := strings.Count(sc, "· ready"); n != 1 {
		t.Errorf("the screen says the state %d times:\n%s", n, sc)
	}
	s.prompt("sleep 2")
	sc = s.waitShows(10*time.Second, "agentrun · demo · working…")
	if n := strings.Count(sc, "· working…"); n != 1 {
		t.Errorf("the screen says the state %d times:\n%s", n, sc)
	}
}

// TestScreenLongCommandKeepsItsStateInSight (issue 50): at 60x15 a
// command whose line in the chat wraps over more rows than the chat has
// keeps its state in sight while it runs: the chat shows such a line
// from its start, and the ▸ line says the state, not the command again
// (TestScreenLongCommandOnceInTheChat). It showed
// "…goes on; sleep 0.5; done —", its state below the window.
func TestScreenLongCommandKeepsItsStateInSight(t *testing.T) {
	s := startDemoScreenSized(t, 60, 15, "")
	s.prompt("for i in 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20; do echo this line of output goes on; sleep 1; done")
	s.waitShows(10*time.Second, "this line of output goes on")
	// (the command is its tool call's head line's: the ▸ line says the
	// state alone)
	sc := s.waitShows(10*time.Second, "│  ▸ terminal term-1 · running")
	if strings.Contains(sc, "exited with code") {
		t.Fatalf("the command ended before its state was read:\n%s", sc)
	}
}

// chatSeen is the chat window's rows as one text, the rows a wrapped
// line takes joined, spaces collapsed: what the user reads there now.
func (s *screen) chatSeen() string {
	s.t.Helper()
	return strings.Join(strings.Fields(strings.Join(s.chatRows(), " ")), " ")
}

// TestScreenLongCommandOnceInTheChat (issue 50): at 60x15 (a chat of 4
// rows, 29 columns) and at 80x24, a long command's turn is read in the
// chat's window once it ends: the agent's end sentence names the command
// by its start, and at 80x24 its state line ("▸ terminal term-1 · exit 0
// · …") is in sight above it, because the command's whole text is in the
// chat once, on its tool call's head line; the prompt's echo and the
// agent's messages name it by its start. The prompt echo, "Running …",
// the head line, the ▸ line and the end sentence each said the whole
// command: the chat's window showed "…exit 0' exited with code 0.".
func TestScreenLongCommandOnceInTheChat(t *testing.T) {
	const cmd = "sh -c 'echo building the whole thing now; echo done; exit 0'"
	for _, size := range [][2]int{{60, 15}, {80, 24}} {
		t.Run(fmt.Sprintf("%dx%d", size[0], size[1]), func(t *testing.T) {
			s := startDemoScreenSized(t, size[0], size[1], winsLua)
			s.prompt(cmd)
			s.waitShows(10*time.Second, "[exit 0]", "demo · ready")
			// what ran, by its start, and how it ended; where the chat has
			// more than 4 rows, the command's state line too
			want := []string{"sh -c 'echo building… exited with code 0."}
			if size[1] > 15 {
				want = append(want, "▸ terminal term-1 · exit 0 · ")
			}
			var seen string
			eventually(t, "the chat's window to show the command's end", 10*time.Second, func() (bool, string) {
				seen = s.chatSeen()
				for _, w := range want {
					if !strings.Contains(seen, w) {
						return false, seen + "\n" + s.capture()
					}
				}
				return true, ""
			})
			chat := s.chatText()
			if n := strings.Count(chat, cmd); n != 1 {
				t.Errorf("the chat says the whole command %d times, want once (its tool call):\n%s", n, chat)
			}
			if !strings.Contains(chat, "● "+cmd+" [execute] · completed") {
				t.Errorf("the tool call's head line does not say the whole command:\n%s", chat)
			}
			for _, want := range []string{"> sh -c 'echo building…", "Running `sh -c 'echo building…`", "`sh -c 'echo building…` exited with code 0."} {
				if !strings.Contains(chat, want) {
					t.Errorf("the chat lacks %q (the command by its start):\n%s", want, chat)
				}
			}
		})
	}
}

// TestScreenRerunReadsInOrder (issue 50): R on a command the user
// interrupted runs it again, and the chat reads in the order things
// happened: run 1's end as the agent said it, then run 2's own line
// where it started, which says how run 2 ended; the tool call's line
// keeps saying run 1. The tool call's line said run 2, above run 1's end
// sentence ("… was killed by SIGINT.").
func TestScreenRerunReadsInOrder(t *testing.T) {
	const cmd = "sh -c 'if test -e again; then echo second run; else touch again; sleep 30; fi'"
	for _, size := range [][2]int{{60, 15}, {80, 24}} {
		t.Run(fmt.Sprintf("%dx%d", size[0], size[1]), func(t *testing.T) {
			s := startDemoScreenSized(t, size[0], size[1], winsLua)
			s.prompt(cmd)
			// (its split says it runs: this Neovim knows it, and <C-c>
			// interrupts it rather than cancel the turn)
			s.waitShows(10*time.Second, "demo · working…", "term-1 · running")
			eventually(t, "the command to start", 10*time.Second, func() (bool, string) {
				_, err := os.Stat(filepath.Join(s.dir, "again"))
				return err == nil, fmt.Sprint(err)
			})
			s.keys("C-c") // in the prompt, in Insert mode, where the user is
			s.waitShows(10*time.Second, "[interrupted]", "demo · ready")
			s.keys("Escape")
			// R in the command's split, reached from its line in the chat
			s.keys(":lua vim.api.nvim_set_current_win(vim.fn.bufwinid(require('agentrun.state').session().chat.buf))", "Enter")
			s.keys("G", "?▸ terminal term-1", "Enter", "Enter")
			s.waitShows(5*time.Second, splitOf("term-1", "interrupted"))
			s.keys(`C-\`, "C-n", "R")
			s.waitShows(10*time.Second, "second run", "[exit 0]")
			s.keys(`C-\`, "C-n")
			var seen string
			eventually(t, "the chat's window to end on run 2's line", 10*time.Second, func() (bool, string) {
				seen = s.chatSeen()
				return strings.Contains(seen, "▸ terminal term-1 (run 2) · exit 0"), seen + "\n" + s.capture()
			})
			chat := s.chatText()
			end1 := strings.Index(chat, "was killed by SIGINT.")
			run2 := strings.Index(chat, "▸ terminal term-1 (run 2) · exit 0 · ")
			if end1 < 0 || run2 < 0 || run2 < end1 {
				t.Errorf("the chat does not read run 1's end, then run 2 (at %d, %d):\n%s", end1, run2, chat)
			}
			if !strings.Contains(chat, "▸ terminal term-1 · interrupted · ") {
				t.Errorf("the tool call's line does not keep saying run 1:\n%s", chat)
			}
			if strings.Count(chat, "(run 2)") != 1 {
				t.Errorf("run 2 is said %d times, want once:\n%s", strings.Count(chat, "(run 2)"), chat)
			}
			// dd on its row of the list: its line says so, in place
			s.keys(":AgentTerminals", "Enter")
			s.waitShows(5*time.Second, "(run 2)")
			s.keys("/(run 2)", "Enter", "d", "d")
			eventually(t, "run 2's line to say it was disposed of", 10*time.Second, func() (bool, string) {
				chat = s.chatText()
				return strings.Contains(chat, "▸ terminal term-1 (run 2) · disposed of (dd) (") && strings.Count(chat, "(run 2)") == 1, chat
			})
		})
	}
}
