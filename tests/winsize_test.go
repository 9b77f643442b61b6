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

// winsLua gives agentrun_wins(), the windows of this tab page as the user
// sees them: what each shows (code, chat, prompt, term), its size and its
// place on the screen (win_screenpos), whether it floats; and the screen's
// lines and 'cmdheight'.
const winsLua = `_G.agentrun_wins = function()
  local out = { lines = vim.o.lines, ch = vim.o.cmdheight, wins = {} }
  for _, w in ipairs(vim.api.nvim_tabpage_list_wins(0)) do
    local b = vim.api.nvim_win_get_buf(w)
    local name = vim.api.nvim_buf_get_name(b)
    local k = name:match("chat of ") and "chat" or name:match("prompt of ") and "prompt"
      or vim.b[b].agentrun_terminal and "term" or "code"
    local p = vim.fn.win_screenpos(w)
    table.insert(out.wins, { name = k, w = vim.api.nvim_win_get_width(w), h = vim.api.nvim_win_get_height(w),
      row = p[1], col = p[2], float = vim.api.nvim_win_get_config(w).relative ~= "" })
  end
  return out
end`

type win struct {
	Name     string
	W, H     int
	Row, Col int
	Float    bool
}

type wins struct {
	Lines, Ch int
	Wins      []win
}

// get returns the window showing name, and whether there is one.
func (l wins) get(name string) (win, bool) {
	for _, w := range l.Wins {
		if w.Name == name {
			return w, true
		}
	}
	return win{}, false
}

func (l wins) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "lines=%d ch=%d", l.Lines, l.Ch)
	for _, w := range l.Wins {
		fmt.Fprintf(&b, " %s:%dx%d@%d,%d", w.Name, w.W, w.H, w.Row, w.Col)
		if w.Float {
			b.WriteString("(float)")
		}
	}
	return b.String()
}

// fits reports whether every window and its status line are on the
// screen above the command line.
func (l wins) fits() bool {
	for _, w := range l.Wins {
		if !w.Float && w.Row+w.H > l.Lines-l.Ch {
			return false
		}
	}
	return true
}

func (s *screen) wins() wins {
	s.t.Helper()
	var l wins
	s.luaValue("agentrun_wins()", &l)
	return l
}

// TestScreenQuitInTheChatTakesItsPrompt: :q, :close or <C-w>c in the chat
// close its prompt with it, as its q does, and the split below keeps its
// rows (the prompt left alone beside the code took the code's rows and
// gave them to the split); :q in the prompt takes the chat. :AgentRun
// then opens both in their sizes again.
func TestScreenQuitInTheChatTakesItsPrompt(t *testing.T) {
	cases := []struct {
		name string
		keys []string
	}{
		{":q in the chat", []string{"C-w", "k", ":q", "Enter"}},
		{":close in the chat", []string{"C-w", "k", ":close", "Enter"}},
		{"<C-w>c in the chat", []string{"C-w", "k", "C-w", "c"}},
		{":q in the prompt", []string{":q", "Enter"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := startScreen(t, 160, 40, winsLua)
			s.keys(":e main.go", "Enter", ":AgentRun", "Enter")
			s.waitShows(10*time.Second, "agentrun · demo · ready")
			s.prompt("seq 1 50")
			s.waitShows(10*time.Second, "seq 1 50 exited with code 0.", splitOf("term-1"))
			before := s.wins()
			code, _ := before.get("code")
			term, _ := before.get("term")
			if term.H != 12 {
				t.Fatalf("the split opened %d rows high, want 12: %s", term.H, before)
			}
			s.keys(append([]string{"Escape"}, c.keys...)...)
			s.waitFor("the chat to close", 5*time.Second, func(sc string) bool {
				return !strings.Contains(sc, "agentrun · demo")
			})
			after := s.wins()
			if _, ok := after.get("prompt"); ok {
				t.Errorf("the prompt stayed: %s\n%s", after, s.capture())
			}
			if _, ok := after.get("chat"); ok {
				t.Errorf("the chat stayed: %s\n%s", after, s.capture())
			}
			if c2, _ := after.get("code"); c2.H != code.H {
				t.Errorf("the code's window went from %d rows to %d: %s\n%s", code.H, c2.H, after, s.capture())
			}
			if t2, _ := after.get("term"); t2.H != 12 {
				t.Errorf("the split went from 12 rows to %d: %s\n%s", t2.H, after, s.capture())
			}
			s.keys(":AgentRun", "Enter")
			s.waitShows(5*time.Second, "prompt of demo 1", "agentrun · demo · ready")
			again := s.wins()
			if again.String() != before.String() {
				t.Errorf(":AgentRun opened the chat as\n%s\nwant as before\n%s\n%s", again, before, s.capture())
			}
		})
	}
}

// TestScreenShrunkGetsItsSizesBack: a screen grown and shrunk again while
// a command runs (80×16, 100×30, 80×16) gives the split below its size on
// that screen back (a third of it): its status line on the screen, the
// chat readable, the prompt three rows, as when it opened at 80×16. Neovim
// itself leaves the split 9 rows high, past the screen's end.
func TestScreenShrunkGetsItsSizesBack(t *testing.T) {
	s := startScreen(t, 80, 16, winsLua)
	s.keys(":e main.go", "Enter", ":AgentRun", "Enter")
	s.waitShows(10*time.Second, "agentrun · demo · ready")
	s.prompt("seq 1 50; sleep 60")
	s.waitShows(10*time.Second, splitOf("term-1"), "50")
	first := s.wins()
	check := func(step string, l wins) {
		t.Helper()
		term, _ := l.get("term")
		chat, _ := l.get("chat")
		prompt, _ := l.get("prompt")
		if !l.fits() || l.Ch != 1 || term.H < 3 || term.H > (16-1)/3 || chat.H < 2 || prompt.H != 3 {
			t.Errorf("%s: %s (want every window on the screen, the split at most %d rows, the chat 2 at least, the prompt 3)\n%s",
				step, l, (16-1)/3, s.capture())
		}
	}
	check("opened at 80×16", first)
	s.tmux("resize-window", "-t", "0", "-x", "100", "-y", "30")
	s.waitFor("Neovim to draw 100×30", 5*time.Second, func(sc string) bool { return len(strings.Split(sc, "\n")) >= 29 })
	s.tmux("resize-window", "-t", "0", "-x", "80", "-y", "16")
	s.waitFor("Neovim to draw 80×16 with the split's status line", 5*time.Second, func(sc string) bool {
		rows := strings.Split(sc, "\n")
		return len(rows) <= 16 && len([]rune(rows[0])) <= 80 && shows(sc, splitOf("term-1"))
	})
	back := s.wins()
	check("shrunk again", back)
	if back.String() != first.String() {
		t.Errorf("shrunk again the layout is\n%s\nwant as it opened at 80×16\n%s", back, first)
	}
}

// TestScreenFloatLeavesThePromptInSight: with terminal.position "float"
// the command's float lies over the code beside the chat, not over the
// prompt where the user goes on typing (nor the chat), and follows the
// screen's size; <Esc> in normal mode in the prompt closes it, the
// command running on.
func TestScreenFloatLeavesThePromptInSight(t *testing.T) {
	s := startScreen(t, 100, 30, winsLua+`
require("agentrun").setup({ terminal = { position = "float" } })`)
	s.keys(":AgentRun", "Enter")
	s.waitShows(10*time.Second, "agentrun · demo · ready")
	s.prompt(`for i in $(seq 1 200); do echo "float $i"; sleep 0.2; done`)
	s.waitShows(10*time.Second, "│float 3")
	s.typeText("typed-while-it-runs")
	sc := s.waitShows(5*time.Second, "typed-while-it-runs", "-- INSERT --", "prompt of demo 1", "agentrun · demo · working…")
	for _, line := range strings.Split(sc, "\n") {
		if strings.Contains(line, "typed-while-it-runs") && strings.Contains(line, "float") {
			t.Errorf("the float and the prompt share a row:\n%s", sc)
		}
	}
	l := s.wins() // (its <Esc> leaves insert mode)
	float, ok := l.get("term")
	chat, _ := l.get("chat")
	if !ok || !float.Float {
		t.Fatalf("no float: %s\n%s", l, sc)
	}
	// the float and its border end left of the chat's column
	if float.Col+float.W+1 > chat.Col || float.W < 40 || float.H < 20 {
		t.Errorf("the float lies at %s, want it over the code, left of the chat at column %d\n%s", l, chat.Col, sc)
	}
	s.tmux("resize-window", "-t", "0", "-x", "140", "-y", "40")
	s.waitFor("Neovim to draw 140×40", 5*time.Second, func(sc string) bool { return len(strings.Split(sc, "\n")) >= 39 })
	s.keys("i")
	l = s.wins()
	float, _ = l.get("term")
	chat, _ = l.get("chat")
	if !float.Float || float.Col+float.W+1 > chat.Col || float.W < 60 || float.H < 30 {
		t.Errorf("at 140×40 the float lies at %s, want it over the code, left of the chat\n%s", l, s.capture())
	}
	s.keys("Escape")
	s.waitFor("the float to close", 5*time.Second, func(sc string) bool { return !strings.Contains(sc, "│float") })
	s.keys("i")
	l = s.wins()
	if _, ok := l.get("term"); ok {
		t.Errorf("<Esc> in the prompt left the float: %s\n%s", l, s.capture())
	}
	s.waitShows(5*time.Second, "agentrun · demo · working…") // the command runs on
}

// TestScreenChatBelowKeepsTheCodeReadable: chat.position = "below" with
// chat.size unset opens a chat of 15 lines (not the 70 that is a width
// beside the code), and never more than half the rows.
func TestScreenChatBelowKeepsTheCodeReadable(t *testing.T) {
	for _, tc := range []struct{ cols, rows, want int }{{100, 40, 15}, {100, 24, 11}} {
		t.Run(fmt.Sprintf("%dx%d", tc.cols, tc.rows), func(t *testing.T) {
			s := startScreen(t, tc.cols, tc.rows, winsLua+`
require("agentrun").setup({ chat = { position = "below" } })`)
			s.keys(":e main.go", "Enter", ":AgentRun", "Enter")
			s.waitShows(10*time.Second, "agentrun · demo · ready")
			l := s.wins()
			chat, _ := l.get("chat")
			code, _ := l.get("code")
			if chat.H != tc.want || code.H < 5 {
				t.Errorf("%s: want the chat %d rows and the code 5 at least\n%s", l, tc.want, s.capture())
			}
		})
	}
}

// TestScreenFloodEndsInATinyWindow: a flood (seq 1 5000000) that ends
// while the screen is 5×3, then grows back to 120×35: the split ends with
// the command's last line and [exit 0] — or, where Neovim dropped the
// lines of its tiny terminal window, with a line saying so and naming the
// last line — never silently mid-output.
func TestScreenFloodEndsInATinyWindow(t *testing.T) {
	s := startDemoScreenSized(t, 120, 35, "")
	s.prompt("seq 1 5000000")
	s.waitFor("the flood to be under way", 15*time.Second, func(sc string) bool { return regexp.MustCompile(`(?m)^\d{6,7}\s*$`).MatchString(sc) })
	s.tmux("resize-window", "-t", "0", "-x", "5", "-y", "3")
	logf := filepath.Join(s.dir, "state", "nvim", "agentrun.log")
	eventually(t, "the command to end (the log says so)", 60*time.Second, func() (bool, string) {
		b, _ := os.ReadFile(logf)
		return strings.Contains(string(b), "event=exit"), "not yet"
	})
	// the person looks away a few seconds before growing the screen
	// again (the steps): the end, and [released], reach the tiny
	// window meanwhile
	time.Sleep(3 * time.Second)
	s.tmux("resize-window", "-t", "0", "-x", "120", "-y", "35")
	sc := s.waitShows(10*time.Second, exitMarker(0), "[released]")
	lines := strings.Split(sc, "\n")
	for i, l := range lines {
		if strings.TrimSpace(l) != exitMarker(0) || i == 0 {
			continue
		}
		before := strings.TrimSpace(lines[i-1])
		if before != "5000000" && !strings.Contains(before, "the command's last line: 5000000]") {
			t.Errorf("the split's end reads %q then %s: output lost without a word:\n%s", before, exitMarker(0), sc)
		}
	}
}

// TestScreenReopenedShortSplitShowsItsText: a command that printed
// nothing, its split closed (q) and reopened from :AgentTerminals, shows
// its end, not a blank split with the end above its top (Neovim 0.7 kept
// a terminal window on the terminal's screen); also after the screen is
// resized.
func TestScreenReopenedShortSplitShowsItsText(t *testing.T) {
	s := startDemoScreenSized(t, 120, 35, "")
	s.prompt("true")
	s.waitShows(10*time.Second, exitMarker(0), "[released]")
	s.keys("Escape", "C-w", "j", "q")
	s.waitFor("the split closed", 5*time.Second, func(sc string) bool { return !strings.Contains(sc, "[released]") })
	s.keys(":AgentTerminals", "Enter")
	s.waitShows(5*time.Second, "agentrun terminals")
	s.keys("Enter")
	s.waitShows(10*time.Second, exitMarker(0), "[released]")
	for _, size := range [][2]int{{100, 30}, {120, 35}} {
		s.tmux("resize-window", "-t", "0", "-x", fmt.Sprint(size[0]), "-y", fmt.Sprint(size[1]))
		s.waitShows(5*time.Second, exitMarker(0), "[released]")
	}
}

// TestScreenListKeepsTheSplitsText: opening :AgentTerminals makes an
// ended command's split lower; it still shows the command's output up to
// its end, not its end above blank rows.
func TestScreenListKeepsTheSplitsText(t *testing.T) {
	s := startDemoScreenSized(t, 80, 24, "")
	// (the issue came with the fourth command's split)
	for i, line := range []string{"ls -la", "seq 1 50", "sh -c 'echo boom; exit 3'", "echo after"} {
		s.prompt(line)
		s.waitShows(10*time.Second, fmt.Sprintf("term-%d", i+1), "[released]")
	}
	s.waitShows(10*time.Second, "\nafter", exitMarker(0), "[released]")
	s.keys("Escape", ":AgentTerminals", "Enter")
	s.waitShows(5*time.Second, "agentrun terminals")
	// every key of the list's hint whole at 80 columns (its title gives way)
	s.waitShows(5*time.Second, "\nafter", exitMarker(0), "R rerun gx web q close")
}
