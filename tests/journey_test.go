package tests

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// Journeys a user walks, on the screen (Neovim in tmux, keys as typed,
// the terminal read back), each to its end.

// ticker is a long command that prints a line every 200 ms: a dev server
// as the user runs one through the demo agent.
const ticker = `for i in $(seq 1 3000); do echo tick $i; sleep 0.2; done`

// startRunScreen starts Neovim in tmux with XDG_RUNTIME_DIR rt, its pid
// in <dir>/nvim.pid, and :AgentRun started on the demo agent.
func startRunScreen(t *testing.T, rt string, cols, rows int) *screen {
	t.Helper()
	s := startScreenIn(t, rt, cols, rows, `vim.fn.writefile({ tostring(vim.fn.getpid()) }, "nvim.pid")`)
	s.keys(":AgentRun", "Enter")
	s.waitShows(10*time.Second, "agentrun · demo · ready")
	return s
}

// nvimPid is the pid of the screen's Neovim.
func (s *screen) nvimPid() int {
	s.t.Helper()
	b, err := os.ReadFile(filepath.Join(s.dir, "nvim.pid"))
	pid, perr := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil || perr != nil {
		s.t.Fatalf("Neovim's pid: %v %v", err, perr)
	}
	return pid
}

// cli runs the agentrun binary with s's socket directory and returns its
// combined output.
func (s *screen) cli(args ...string) (string, error) {
	cmd := exec.Command(binary, args...)
	cmd.Env = append(os.Environ(), "XDG_RUNTIME_DIR="+s.rt)
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// lsLine waits until `agentrun ls` lists a terminal whose line matches re
// and returns that line.
func (s *screen) lsLine(re string, timeout time.Duration) string {
	s.t.Helper()
	rx := regexp.MustCompile(re)
	var line string
	eventually(s.t, "agentrun ls to list "+re, timeout, func() (bool, string) {
		out, err := s.cli("ls")
		for _, l := range strings.Split(out, "\n") {
			if rx.MatchString(l) {
				line = l
				return true, ""
			}
		}
		return false, fmt.Sprintf("%v\n%s", err, out)
	})
	return line
}

// detachTicker has the demo agent run ticker and detaches its terminal
// with :AgentDetach as typed; it returns the terminal's host-wide name
// (PID:term-1).
func (s *screen) detachTicker() string {
	s.t.Helper()
	s.prompt(ticker)
	s.waitShows(10*time.Second, "tick 3")
	s.keys("Escape", ":AgentDetach term-1", "Enter")
	sc := s.waitShows(5*time.Second, "term-1 is detached (it outlives Neovim): :AgentAttach ")
	m := regexp.MustCompile(`:AgentAttach (\d+:term-1)`).FindStringSubmatch(sc)
	if m == nil {
		s.t.Fatalf("the detach note names no host:\n%s", sc)
	}
	// A test that fails before it killed the detached terminal leaves
	// nothing running: its host is signalled (it then ends everything).
	backend, _ := strconv.Atoi(strings.SplitN(m[1], ":", 2)[0])
	s.t.Cleanup(func() {
		if alive(backend) {
			_ = syscall.Kill(backend, syscall.SIGTERM)
		}
	})
	return m[1]
}

// TestJourneyDetachSurvivesEveryQuit: a terminal the user detached keeps
// running however Neovim ends — :qa, :wqa, :wq and :q in the user's
// window, :qa!, :cq, the terminal
// emulator closing (SIGHUP), SIGTERM, SIGKILL — while the agent and the
// terminals not detached end; `agentrun ls` lists it running (its output
// going on) and `agentrun kill` ends it and its host.
func TestJourneyDetachSurvivesEveryQuit(t *testing.T) {
	ways := []struct {
		name string
		quit func(s *screen)
	}{
		{":qa", func(s *screen) { s.keys(":qa", "Enter") }},
		{":wqa", func(s *screen) { s.keys(":wqa", "Enter") }},
		// :wq in the user's window (a file): the chat and the splits beside
		// it do not keep Neovim open.
		{":wq", func(s *screen) {
			s.keys(":wincmd t", "Enter", ":e notes.txt", "Enter", "itext", "Escape", ":wq", "Enter")
		}},
		{":q", func(s *screen) { s.keys(":wincmd t", "Enter", ":q", "Enter") }},
		{":qa!", func(s *screen) { s.keys(":qa!", "Enter") }},
		{":cq", func(s *screen) { s.keys(":cq", "Enter") }},
		{"SIGHUP", func(s *screen) { _ = exec.Command("tmux", "-S", s.sock, "kill-server").Run() }},
		{"SIGTERM", func(s *screen) { _ = syscall.Kill(s.nvimPid(), syscall.SIGTERM) }},
		{"SIGKILL", func(s *screen) { _ = syscall.Kill(s.nvimPid(), syscall.SIGKILL) }},
	}
	for _, w := range ways {
		t.Run(w.name, func(t *testing.T) {
			s := startRunScreen(t, runtimeDir(t), 120, 35)
			pid := s.nvimPid()
			name := s.detachTicker()
			// A second command, not detached, must end with Neovim.
			s.keys("i")
			s.prompt("sleep 1234")
			s.waitShows(10*time.Second, "sleep 1234 [execute] · in progress")
			s.keys("Escape")
			w.quit(s)
			eventually(t, "Neovim to exit", 10*time.Second, func() (bool, string) { return !alive(pid), "alive" })
			line := s.lsLine(`^`+name+`\s.*running`, 10*time.Second)
			tick := regexp.MustCompile(`tick (\d+)`)
			first := tick.FindStringSubmatch(line)
			s.lsLine(`^`+name+`\s.*running`, time.Second) // still listed
			eventually(t, "the detached command to go on printing", 5*time.Second, func() (bool, string) {
				out, _ := s.cli("ls")
				now := tick.FindStringSubmatch(out)
				return first != nil && now != nil && now[1] != first[1], out
			})
			eventually(t, "the command that was not detached to end", 10*time.Second, func() (bool, string) {
				n := len(findProcesses("sleep 1234"))
				return n == 0, fmt.Sprintf("%d still run", n)
			})
			eventually(t, "the agent to end with Neovim", 10*time.Second, func() (bool, string) {
				n := len(findProcesses(binary + " demo-agent"))
				return n == 0, fmt.Sprintf("%d demo agents still run", n)
			})
			out, err := s.cli("kill", name)
			if err != nil || !strings.Contains(out, "killed "+name) {
				t.Fatalf("agentrun kill %s: %v %s", name, err, out)
			}
			backend, _ := strconv.Atoi(strings.SplitN(name, ":", 2)[0])
			eventually(t, "the host to exit once its detached terminal ended", 10*time.Second, func() (bool, string) {
				return !alive(backend), "alive"
			})
			if n := len(findProcesses(lineCmdline(ticker))); n != 0 {
				t.Errorf("%d tickers still run", n)
			}
		})
	}
}

// TestJourneyTakeoverTellsTheTruth: the user takes a running command
// over (T in its split, or :AgentTakeover): nothing claims it ended — no
// exitMarker(0) in the split, the chat's tool call shows it running and
// yours, status() says running — until :AgentKill (no id: the one in
// view) ends it, and then its real end shows everywhere.
func TestJourneyTakeoverTellsTheTruth(t *testing.T) {
	for _, how := range []string{"T", ":AgentTakeover", "agentrun attach --take"} {
		t.Run(how, func(t *testing.T) {
			s := startRunScreen(t, runtimeDir(t), 120, 35)
			s.prompt(ticker)
			s.waitShows(10*time.Second, "tick 3")
			s.keys("Escape")
			mine := "term-1 · running, yours ("
			switch how {
			case "T":
				s.keys("C-w", "j", "T")
				s.waitShows(5*time.Second, "term-1 is yours now")
			case ":AgentTakeover":
				s.keys(":AgentTakeover term-1", "Enter")
				s.waitShows(5*time.Second, "term-1 is yours now")
			default: // another client (a shell) takes it
				name := strings.Fields(s.lsLine(`term-1\s`, 5*time.Second))[0]
				pr, pw, err := os.Pipe()
				if err != nil {
					t.Fatal(err)
				}
				cli := exec.Command(binary, "attach", "--take", name)
				cli.Env = append(os.Environ(), "XDG_RUNTIME_DIR="+s.rt)
				cli.Stdin = pr
				if err := cli.Start(); err != nil {
					t.Fatal(err)
				}
				pr.Close()
				t.Cleanup(func() { pw.Close(); _ = cli.Wait() })
				mine = "term-1 · running ("
			}
			sc := s.waitShows(10*time.Second, "You took", mine)
			// The agent moved on; the command goes on printing.
			n := regexp.MustCompile(`tick (\d+)`).FindAllStringSubmatch(sc, -1)
			last, _ := strconv.Atoi(n[len(n)-1][1])
			s.waitShows(10*time.Second, fmt.Sprintf("tick %d", last+5))
			sc = s.capture()
			if strings.Contains(sc, "[exit") || strings.Contains(sc, "exit 0") {
				t.Fatalf("a command that still runs is shown as ended:\n%s", sc)
			}
			s.keys(":lua print('state=' .. require('agentrun').status().terminals[1].state)", "Enter")
			s.waitShows(5*time.Second, "state=running")
			s.keys(":AgentKill", "Enter")
			sc = s.waitShows(10*time.Second, signalMarker("SIGTERM"), "term-1 · killed · ")
			if strings.Contains(sc, "no running terminal") || strings.Contains(sc, "[exit") {
				t.Errorf(":AgentKill after the takeover:\n%s", sc)
			}
			s.keys(":lua print('state=' .. require('agentrun').status().terminals[1].state)", "Enter")
			s.waitShows(5*time.Second, "state=exited")
		})
	}
}

// sizesLua prints the sizes of agentrun's windows in this tab page as
// "sizes chat=H prompt=H term=H list=H" (0: not shown).
const sizesLua = `_G.agentrun_sizes = function()
  local h = { chat = 0, prompt = 0, term = 0, list = 0 }
  for _, w in ipairs(vim.api.nvim_tabpage_list_wins(0)) do
    local b = vim.api.nvim_win_get_buf(w)
    local name = vim.api.nvim_buf_get_name(b)
    local k = name:match("chat of ") and "chat" or name:match("prompt of ") and "prompt"
      or vim.b[b].agentrun_terminal and "term" or vim.b[b].agentrun_terminal_list and "list"
    if k then h[k] = vim.api.nvim_win_get_height(w) end
  end
  print(string.format("sizes chat=%d prompt=%d term=%d list=%d", h.chat, h.prompt, h.term, h.list))
end`

// layoutLua prints what the layout looks like as "layout ch=N fits=yes|no
// chatw=W termw=W listw=W" ('cmdheight', whether every window and its
// status line are on the screen above the command line, the widths of
// agentrun's windows; 0: not shown).
const layoutLua = `_G.agentrun_layout = function()
  local r = { chat = 0, term = 0, list = 0 }
  local fits = "yes"
  for _, w in ipairs(vim.api.nvim_tabpage_list_wins(0)) do
    local b = vim.api.nvim_win_get_buf(w)
    local name = vim.api.nvim_buf_get_name(b)
    local k = name:match("chat of ") and "chat" or vim.b[b].agentrun_terminal and "term"
      or vim.b[b].agentrun_terminal_list and "list"
    if k then r[k] = vim.api.nvim_win_get_width(w) end
    if vim.fn.win_screenpos(w)[1] + vim.api.nvim_win_get_height(w) > vim.o.lines - vim.o.cmdheight then fits = "no" end
  end
  print(string.format("layout ch=%d fits=%s chatw=%d termw=%d listw=%d", vim.o.cmdheight, fits, r.chat, r.term, r.list))
end`

// layout asks Neovim what agentrun_layout prints, as typed.
func (s *screen) layout() string {
	s.t.Helper()
	s.keys("Escape", ":lua agentrun_layout()", "Enter")
	re := regexp.MustCompile(`layout ch=\d+ fits=\w+ chatw=\d+ termw=\d+ listw=\d+`)
	l := re.FindString(s.waitFor("the layout", 5*time.Second, func(sc string) bool { return re.MatchString(sc) }))
	s.keys(":echo ''", "Enter")
	return l
}

// sizes asks Neovim for the heights of agentrun's windows, as typed.
func (s *screen) sizes() map[string]int {
	s.t.Helper()
	s.keys("Escape", ":lua agentrun_sizes()", "Enter")
	re := regexp.MustCompile(`sizes chat=(\d+) prompt=(\d+) term=(\d+) list=(\d+)`)
	sc := s.waitFor("the window sizes", 5*time.Second, func(sc string) bool { return re.MatchString(sc) })
	m := re.FindStringSubmatch(sc)
	out := map[string]int{}
	for i, k := range []string{"chat", "prompt", "term", "list"} {
		out[k], _ = strconv.Atoi(m[i+1])
	}
	s.keys(":echo ''", "Enter") // clear it for the next query
	return out
}

// TestJourneyLayoutHolds: the chat and its prompt keep their
// sizes through what a user does with terminal splits: a command's split
// opens, q closes it, <CR> on the tool call reopens it, a new command, a
// second session's chat, :AgentTerminals and closing it again. Then the
// chat opens again beside a split and the list (they go back under every
// window), the screen shrinks to 20×6 and grows to 160×40 while a command
// prints (everything fits, the configured sizes come back, a note's
// command name stays whole), and :only in the prompt leaves 'cmdheight'
// alone and :AgentRun brings the chat back, with its running command's
// split.
func TestJourneyLayoutHolds(t *testing.T) {
	s := startScreenIn(t, runtimeDir(t), 120, 35, sizesLua+"\n"+layoutLua+`
require("agentrun").setup({ agents = { other = { cmd = { vim.g.agentrun_bin, "demo-agent" } } } })`)
	s.keys(":AgentRun", "Enter")
	s.waitShows(10*time.Second, "agentrun · demo · ready")
	start := s.sizes()
	if start["prompt"] != 3 || start["chat"] < 20 {
		t.Fatalf("the chat opens as %v", start)
	}
	s.keys("i")
	s.prompt("echo one")
	s.waitShows(10*time.Second, "echo one exited with code 0.")
	split := s.sizes()
	if split["term"] < 8 || split["prompt"] != 3 || split["chat"] < 12 {
		t.Fatalf("with the split open: %v", split)
	}
	// want waits for the sizes of step to settle at w (Neovim lays the
	// windows out again once the keys typed so far are done).
	want := func(step string, w map[string]int) {
		t.Helper()
		eventually(t, step+": the sizes "+fmt.Sprint(w), 3*time.Second, func() (bool, string) {
			got := s.sizes()
			for _, k := range []string{"chat", "prompt", "term"} {
				if got[k] != w[k] {
					return false, fmt.Sprintf("%s is %d rows, want %d (%v)", k, got[k], w[k], got)
				}
			}
			return true, ""
		})
	}
	s.keys("C-w", "j", "q") // prompt -> the split; q closes it
	want("after q", start)
	// <CR> on the tool call's terminal line reopens the split.
	s.keys("C-w", "k", "G", "?▸ terminal term-1", "Enter", "Enter")
	s.waitShows(5*time.Second, splitOf("term-1"))
	want("reopened with <CR>", split)
	s.keys("C-w", "j", "q")
	want("after q again", start)
	// A command longer than the list is wide (its last line, "two").
	s.keys(":AgentPrompt echo two # "+strings.Repeat("a long comment ", 10), "Enter")
	s.waitShows(10*time.Second, splitOf("term-2"), "[released]")
	want("a new command", split)
	s.keys(":AgentRun other", "Enter")
	s.waitShows(10*time.Second, "agentrun · other · ready")
	want("a second session", split)
	s.keys("Escape", ":AgentTerminals", "Enter")
	sc := s.waitShows(5*time.Second, "agentrun terminals —", "│ two")
	// The columns line up on the screen (also the header's), and the long
	// command is cut with … so that its last line is shown.
	col := -1
	for _, l := range strings.Split(sc, "\n") {
		i := strings.Index(l, "│ ")
		if i < 0 || !regexp.MustCompile(`^(ID|term-)`).MatchString(l) {
			continue
		}
		c := len([]rune(l[:i]))
		if col >= 0 && c != col {
			t.Errorf("the list's │ is at column %d and %d:\n%s", col, c, sc)
		}
		col = c
		if strings.HasPrefix(l, "term-2") && !strings.Contains(l, "…  │ two") {
			t.Errorf("the long command is not cut with …: %q", l)
		}
	}
	if col < 0 {
		t.Errorf("the list has no │ column:\n%s", sc)
	}
	list := s.sizes()
	if list["prompt"] != 3 || list["list"] < 3 {
		t.Errorf("with the terminal list open: %v", list)
	}
	s.keys("q")
	want("the list closed", split)

	// The chat closed (q), the list opened under the code and the split:
	// the chat opens again full height on the right, and the split and the
	// list are under every window, full width (terminal.position below).
	s.keys(":AgentRun other", "Enter", "Escape", "C-w", "k", "q")
	s.waitFor("the chat to close", 5*time.Second, func(sc string) bool { return !strings.Contains(sc, "agentrun · other") })
	s.keys(":AgentTerminals", "Enter")
	s.waitShows(5*time.Second, "agentrun terminals —")
	s.keys(":AgentRun other", "Enter")
	s.waitShows(5*time.Second, "agentrun · other")
	if l := s.layout(); l != "layout ch=1 fits=yes chatw=60 termw=120 listw=120" {
		t.Errorf("the chat opened beside the split and the list: %s; want both full width under it\n%s", l, s.capture())
	}
	s.keys(":AgentTerminals", "Enter", "q") // the list closed again

	// A command prints while the screen shrinks to 20×6 and grows back to
	// 160×40: every window and status line fits the screen again, with the
	// configured sizes (chat.size 70, terminal.size 12, the prompt's 3).
	s.keys(`:AgentPrompt for i in $(seq 1 600); do echo "served $i"; sleep 0.1; done`, "Enter")
	s.waitShows(10*time.Second, "served 3")
	s.tmux("resize-window", "-t", "0", "-x", "20", "-y", "6")
	s.waitFor("the screen to shrink", 5*time.Second, func(sc string) bool { return len(strings.Split(sc, "\n")) <= 6 })
	s.tmux("resize-window", "-t", "0", "-x", "160", "-y", "40")
	s.waitFor("Neovim to draw 160×40", 5*time.Second, func(sc string) bool {
		rows := strings.Split(sc, "\n")
		return len(rows) >= 39 && shows(sc, splitOf("term-3")) // the command line may be blank (trimmed)
	})
	eventually(t, "the layout to fit 160×40 with its sizes", 5*time.Second, func() (bool, string) {
		l, h := s.layout(), s.sizes()
		return l == "layout ch=1 fits=yes chatw=70 termw=160 listw=0" && h["term"] == 12 && h["prompt"] == 3, fmt.Sprint(l, h)
	})
	rows := strings.Split(s.capture(), "\n")
	if len(rows) < 39 || !shows(rows[38], splitOf("term-3")) {
		t.Errorf("the split's status line is not the last row above the command line:\n%s", strings.Join(rows, "\n"))
	}
	// The note that the demo session runs on, in a chat 70 columns wide:
	// 'linebreak' would break it after the ':' of ":AgentRun".
	s.waitShows(5*time.Second, ":AgentRun demo shows its chat")

	// :only in the prompt: 'cmdheight' stays 1; :AgentRun gives the
	// prompt its chat back, and its running command's split below.
	s.keys(":AgentRun other", "Enter", "Escape", ":only", "Enter")
	if l := s.layout(); l != "layout ch=1 fits=yes chatw=0 termw=0 listw=0" {
		t.Errorf(":only in the prompt: %s; want 'cmdheight' 1\n%s", l, s.capture())
	}
	s.keys(":AgentRun other", "Enter")
	s.waitShows(5*time.Second, "agentrun · other")
	if l, h := s.layout(), s.sizes(); l != "layout ch=1 fits=yes chatw=160 termw=160 listw=0" || h["prompt"] != 3 || h["chat"] < 20 || h["term"] < 3 {
		t.Errorf(":AgentRun after :only in the prompt: %s %v; want the chat and its prompt, the running command's split below\n%s", l, h, s.capture())
	}
}

// chatText writes the current session's chat to a file through a typed
// command and returns it (the whole transcript, also what scrolled away).
func (s *screen) chatText() string {
	s.t.Helper()
	f := filepath.Join(s.dir, "chat.txt")
	_ = os.Remove(f)
	s.keys("Escape", `:lua vim.fn.writefile(vim.api.nvim_buf_get_lines(require("agentrun.state").session().chat.buf, 0, -1, false), "`+f+`")`, "Enter")
	var text string
	eventually(s.t, "the chat written to "+f, 5*time.Second, func() (bool, string) {
		b, err := os.ReadFile(f)
		text = string(b)
		return err == nil && strings.HasSuffix(text, "\n"), fmt.Sprint(err) // written to its end
	})
	return text
}

// TestJourneyQueuedPromptsReadInOrder: three prompts sent
// while the first command runs wait marked as queued (not in the
// transcript), then the transcript reads prompt, answer, next prompt, its
// answer, … — each answer on lines of its own.
func TestJourneyQueuedPromptsReadInOrder(t *testing.T) {
	s := startRunScreen(t, runtimeDir(t), 120, 40)
	s.prompt("sleep 2; echo first")
	s.waitShows(10*time.Second, "sleep 2; echo first [execute] · in progress")
	s.prompt("echo second")
	s.prompt("echo third")
	sc := s.waitShows(5*time.Second, "(queued: echo second — sent after this turn)", "(queued: echo third — sent after this turn)", "· 2 queued")
	if strings.Contains(sc, "> echo second") || strings.Contains(sc, "> echo third") {
		t.Errorf("a queued prompt stands in the transcript before it was sent:\n%s", sc)
	}
	s.waitShows(15*time.Second, "echo third exited with code 0.")
	text := s.chatText()
	order := []string{
		"> sleep 2; echo first", "Running `sleep 2; echo first`", "`sleep 2; echo first` exited with code 0.",
		"> echo second", "Running `echo second`", "`echo second` exited with code 0.",
		"> echo third", "Running `echo third`", "`echo third` exited with code 0.",
	}
	at := 0
	for _, w := range order {
		i := strings.Index(text[at:], w)
		if i < 0 {
			t.Fatalf("the transcript does not read %q after what came before:\n%s", w, text)
		}
		at += i + len(w)
	}
	for _, l := range strings.Split(text, "\n") {
		if strings.Count(l, "exited with code")+strings.Count(l, "Running `") > 1 || strings.HasPrefix(l, "(queued:") {
			t.Errorf("line %q: two messages share it, or a sent prompt is still shown as queued", l)
		}
	}
}

// TestJourneyTwoMessagesNeverShareALine: an agent's notice and then its
// answer (two messages, told apart by messageId) read as two paragraphs,
// also when the first has no line end.
func TestJourneyTwoMessagesNeverShareALine(t *testing.T) {
	s := claudeLikeScreen(t)
	s.keys(":AgentRun", "Enter")
	s.waitShows(20*time.Second, "agentrun · claudelike · ready")
	s.typeText("two messages")
	s.keys("C-s")
	sc := s.waitShows(10*time.Second, "The answer is 42.")
	if strings.Contains(sc, "limit.The answer") {
		t.Fatalf("two messages run together on one line:\n%s", sc)
	}
	s.waitShows(time.Second, "│Notice: you are near your usage limit.", "│The answer is 42.")
}

// TestJourneyDetachedTerminalInAFreshNeovim (TestJourneyDetachSurvivesEveryQuit, continued): after
// :qa the detached terminal is nobody's; a fresh Neovim, before any
// :AgentRun, lists it in :AgentTerminals (with column headers), T there
// takes it over, :AgentAttach <Tab> completes its id and shows it live —
// following its newest output — and X there kills it; then no command
// without an id picks it, its host exits, and `agentrun ls` says this
// Neovim's host runs with no terminals.
func TestJourneyDetachedTerminalInAFreshNeovim(t *testing.T) {
	rt := runtimeDir(t)
	a := startRunScreen(t, rt, 120, 35)
	name := a.detachTicker()
	// Four more, each ended below in another way from the fresh Neovim
	// (:AgentKill ID, X and dd on its row before it shows them; X in its
	// split after :AgentTakeover ID).
	others := map[string]string{}
	for i, word := range []string{"tock", "tuck", "tack", "tyck"} {
		id := fmt.Sprintf("term-%d", i+2)
		a.keys("i")
		a.prompt(strings.ReplaceAll(ticker, "tick", word))
		a.waitShows(10*time.Second, word+" 2")
		a.keys("Escape", ":AgentDetach "+id, "Enter")
		a.waitShows(5*time.Second, id+" is detached")
		others[word] = strings.Replace(name, ":term-1", ":"+id, 1)
	}
	a.keys(":qa", "Enter")
	a.lsLine(`^`+name+`\s.*running\s+nobody \(detached\)`, 10*time.Second)

	b := startScreenIn(t, rt, 120, 35, "")
	// Extra words are refused with the usage, not taken as one name.
	b.keys(":AgentRun demo extra", "Enter")
	b.waitShows(5*time.Second, "(agentrun) :AgentRun takes [ssh://host] [agent], not: demo extra")
	b.keys(":AgentSessions demo extra", "Enter")
	b.waitShows(5*time.Second, "(agentrun) too many arguments; usage: :AgentSessions [agent]")
	b.keys(":AgentRun my-agent", "Enter")
	b.waitShows(5*time.Second, `(agentrun) unknown agent "my-agent"; you have demo; to add one, see :h agentrun-config-agents`)
	b.keys(":AgentTerminals", "Enter")
	sc := b.waitShows(10*time.Second, "ID ", "STATE", "HOLDER", name)
	if !regexp.MustCompile(regexp.QuoteMeta(name) + `\s+running\s+nobody \(detached\)`).MatchString(sc) {
		t.Errorf("the list does not show %s running and nobody's:\n%s", name, sc)
	}
	// Its LAST LINE column shows the other host's terminal's last line, as
	// `agentrun ls` does.
	b.waitFor("the list to show "+name+"'s last line", 5*time.Second, regexp.MustCompile(regexp.QuoteMeta(name)+`\s.*│ tick \d+`).MatchString)
	// Every id the list shows is taken by every command and key, shown
	// here or not: :AgentDetach says what it means for another host's.
	b.keys(":AgentDetach "+name, "Enter")
	b.waitShows(5*time.Second, "(agentrun) "+name+" is detached already (its Neovim quit): it runs until it ends or is killed")
	b.keys(":AgentKill "+others["tock"], "Enter")
	b.waitShows(10*time.Second, "(agentrun) killed "+others["tock"])
	// X and dd on a row (dd: no E21, the list's dispose).
	b.keys(":AgentTerminals", "Enter", "/"+others["tuck"], "Enter", "X")
	b.waitShows(10*time.Second, "(agentrun) killed "+others["tuck"])
	// A d alone (or the second one later than 'timeoutlen') is no E21 but
	// says what dd does.
	b.keys(":AgentTerminals", "Enter", "/"+others["tack"], "Enter", "d")
	sc = b.waitShows(5*time.Second, "(agentrun) the list is not edited; dd wipe (typed quickly)")
	if strings.Contains(sc, "E21") {
		t.Errorf("d on a row of the list:\n%s", sc)
	}
	b.keys("d", "d")
	b.waitShows(5*time.Second, "(agentrun) "+others["tack"]+" still runs", "(K)ill it, [C]ancel") // asked first
	b.keys("k")
	sc = b.waitShows(10*time.Second, "(agentrun) killed "+others["tack"])
	if strings.Contains(sc, "E21") {
		t.Errorf("dd on a row of the list:\n%s", sc)
	}
	b.waitFor("the three killed to leave the list", 10*time.Second, func(sc string) bool {
		for _, id := range []string{others["tock"], others["tuck"], others["tack"]} {
			if regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(id) + `\s`).MatchString(sc) {
				return false
			}
		}
		return regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(name) + `\s`).MatchString(sc)
	})
	b.keys(":AgentTerminals", "Enter")
	// T on its line in the list takes it over (and shows it live), as the
	// README says.
	b.keys("/"+name, "Enter", "T")
	b.waitShows(5*time.Second, name+" is yours now", splitOf(name))
	b.keys("q")
	// <Tab> completes the other host's id.
	b.keys(":AgentAttach ", "Tab")
	b.waitShows(5*time.Second, ":AgentAttach "+name)
	b.keys("Enter")
	tickLine := regexp.MustCompile(`(?m)^tick (\d+)\s*$`)
	sc = b.waitFor("the split to show the ticks", 10*time.Second, tickLine.MatchString)
	n := tickLine.FindAllStringSubmatch(sc, -1)
	last, _ := strconv.Atoi(n[len(n)-1][1])
	// It follows: newer lines come into view without a key pressed.
	b.waitFor(fmt.Sprintf("tick %d in the split", last+10), 10*time.Second, regexp.MustCompile(fmt.Sprintf(`(?m)^tick %d\s*$`, last+10)).MatchString)
	// Taken over and killed, it is not picked again by a command without
	// an id.
	b.keys(":AgentTerminals", "Enter")
	b.waitFor("the list to show the last line of the terminal shown here", 5*time.Second, regexp.MustCompile(regexp.QuoteMeta(name)+`\s.*│ tick \d+`).MatchString)
	b.keys("q")
	b.keys("X")
	b.waitShows(10*time.Second, signalMarker("SIGTERM"))
	// Ended, it is said to have ended, by X and by :AgentTakeover.
	b.keys("X")
	b.waitShows(5*time.Second, "(agentrun) "+name+" ended (signal SIGTERM)")
	b.keys(":AgentTakeover "+name, "Enter")
	b.waitShows(5*time.Second, "(agentrun) "+name+" ended (signal SIGTERM)")
	// :AgentTakeover ID shows it first, as T does; :AgentDetach there
	// says it is detached already; X in its split ends it.
	b.keys(":AgentTakeover "+others["tyck"], "Enter")
	b.waitShows(10*time.Second, others["tyck"]+" is yours now", splitOf(others["tyck"]), "tyck ")
	b.keys(":AgentDetach", "Enter")
	b.waitShows(5*time.Second, "(agentrun) "+others["tyck"]+" is detached already (its Neovim quit)")
	b.keys("X")
	b.waitShows(10*time.Second, signalMarker("SIGTERM"))
	b.keys("q")
	for cmd, what := range map[string]string{":AgentKill": "kill", ":AgentTakeover": "take over", ":AgentDetach": "detach"} {
		b.keys(cmd, "Enter")
		b.waitShows(5*time.Second, "(agentrun) no running terminal to "+what)
	}
	backend, _ := strconv.Atoi(strings.SplitN(name, ":", 2)[0])
	eventually(t, "the detached terminal's host to exit", 10*time.Second, func() (bool, string) { return !alive(backend), "alive" })
	// This Neovim's backend runs, with no terminals of its own: ls says so.
	if out, err := b.cli("ls"); err != nil || !regexp.MustCompile(`^an agentrun host runs \(pid \d+\) but has no terminals now`).MatchString(out) {
		t.Errorf("agentrun ls with a host that has no terminals: %v\n%s", err, out)
	}
	if out, err := b.cli("ls", "extra"); err == nil || !strings.Contains(out, `not "extra"`) {
		t.Errorf("agentrun ls extra: %v\n%s", err, out)
	}
	// :AgentKill on the user's interactive shell: it ends with SIGHUP, as
	// the help says (it ignores SIGTERM).
	b.keys(":AgentShell", "Enter")
	b.typeText("echo in-my-shell\r")
	b.waitShows(10*time.Second, "in-my-shell")
	b.keys(`C-\`, "C-n", ":AgentKill", "Enter")
	b.waitShows(10*time.Second, signalMarker("SIGHUP"))
}

// TestJourneyReopenedSplitFollows: a split closed with q and opened again
// with <CR> on the tool call shows the newest output and keeps following;
// made as low as it goes and tall again, it has lost no row.
func TestJourneyReopenedSplitFollows(t *testing.T) {
	s := startRunScreen(t, runtimeDir(t), 120, 35)
	s.prompt("for i in $(seq 1 3000); do echo row $i; sleep 0.1; done")
	row := regexp.MustCompile(`(?m)^row (\d+)\s*$`)
	s.waitFor("the split to show rows", 10*time.Second, row.MatchString)
	s.keys("Escape", "C-w", "j", "q")
	time.Sleep(time.Second) // the command goes on while the split is closed
	s.keys("C-w", "k", "G", "?▸ terminal term-1", "Enter", "Enter")
	sc := s.waitFor("the reopened split to show rows", 10*time.Second, row.MatchString)
	n := row.FindAllStringSubmatch(sc, -1)
	last, _ := strconv.Atoi(n[len(n)-1][1])
	s.waitFor(fmt.Sprintf("row %d in the reopened split", last+20), 10*time.Second,
		regexp.MustCompile(fmt.Sprintf(`(?m)^row %d\s*$`, last+20)).MatchString)
	// Made as low as it goes (the split keeps 2 rows: a terminal 1 row
	// tall loses what scrolls off it) while rows go on; made tall again,
	// it shows every row printed meanwhile, none missing.
	s.keys("C-w", "j", ":resize 1", "Enter")
	sc = s.waitFor("the low split to go on", 10*time.Second, row.MatchString)
	n = row.FindAllStringSubmatch(sc, -1)
	low, _ := strconv.Atoi(n[len(n)-1][1])
	s.waitFor(fmt.Sprintf("row %d in the low split", low+20), 10*time.Second,
		regexp.MustCompile(fmt.Sprintf(`(?m)^row %d\s*$`, low+20)).MatchString)
	s.keys(":resize 15", "Enter")
	sc = s.waitFor("the split tall again", 10*time.Second, func(sc string) bool { return len(row.FindAllString(sc, -1)) >= 12 })
	n = row.FindAllStringSubmatch(sc, -1)
	for i := 1; i < len(n); i++ {
		a, _ := strconv.Atoi(n[i-1][1])
		b, _ := strconv.Atoi(n[i][1])
		if b != a+1 {
			t.Fatalf("rows %d to %d are missing from the split made tall again:\n%s", a+1, b-1, sc)
		}
	}
}

// TestJourneyTerminalOnTheRight: with terminal.position "right" and the
// chat on the right, a command's split opens full height between the code
// and the chat (the chat and its prompt stay where they were), half of
// what the chat leaves (terminal.size unset), not 12 columns; q closes it,
// <CR> on the tool call reopens it in the same place; after the screen
// shrank and grew, the same widths come back.
func TestJourneyTerminalOnTheRight(t *testing.T) {
	s := startScreenIn(t, runtimeDir(t), 160, 35, layoutLua+`
require("agentrun").setup({ terminal = { position = "right" } })`)
	s.keys(":AgentRun", "Enter")
	s.waitShows(10*time.Second, "agentrun · demo · ready")
	s.prompt("echo on-the-right")
	s.waitShows(10*time.Second, "echo on-the-right exited with code 0.", "[released]")
	// 160 columns: the chat 70, two separators, the split (160-70-1)/2.
	const want = "layout ch=1 fits=yes chatw=70 termw=44 listw=0"
	// (the split's status line, 44 columns, is cut from the left: its
	// name ends "/term-1 · exit 0")
	order := func(step string) {
		t.Helper()
		sc := s.capture()
		if !regexp.MustCompile(`(?m)^.*(All|Top|Bot|\d%) +term-1 · .*prompt of demo 1.*$`).MatchString(sc) { // the status lines' row
			t.Errorf("%s: the split is not between the code and the chat:\n%s", step, sc)
		}
	}
	if l := s.layout(); l != want {
		t.Errorf("the split opened as %s, want %s\n%s", l, want, s.capture())
	}
	order("opened")
	s.keys("C-w", "h", "q") // prompt -> the split; q closes it
	s.waitFor("the split to close", 5*time.Second, func(sc string) bool { return !shows(sc, splitOf("term-1")) })
	s.keys("C-w", "l", "C-w", "k", "G", "?▸ terminal term-1", "Enter", "Enter")
	s.waitShows(5*time.Second, splitOf("term-1"))
	if l := s.layout(); l != want {
		t.Errorf("reopened with <CR> as %s, want %s\n%s", l, want, s.capture())
	}
	order("reopened")
	s.tmux("resize-window", "-t", "0", "-x", "60", "-y", "10")
	s.waitFor("the screen to shrink", 5*time.Second, func(sc string) bool { return len(strings.Split(sc, "\n")) <= 10 })
	s.tmux("resize-window", "-t", "0", "-x", "160", "-y", "35")
	// Asked before Neovim has the new size, the answer would be of the
	// old one, and the redraw that follows would wipe it.
	s.waitFor("Neovim to draw 160×35", 5*time.Second, func(sc string) bool {
		rows := strings.Split(sc, "\n")
		// the status lines' row, full width: the prompt's name at the
		// chat's column (160-70)
		before, _, found := strings.Cut(regexp.MustCompile(`(?m)^.*prompt of demo 1.*$`).FindString(sc), "prompt of demo 1")
		return len(rows) >= 34 && found && len([]rune(before)) >= 89
	})
	eventually(t, "the widths to come back", 5*time.Second, func() (bool, string) {
		l := s.layout()
		return l == want, l
	})
	order("after the screen shrank and grew")
}

// TestJourneyCancelDropsTheQueueAfterTheTurn: send a command, queue one
// more, :AgentCancel: the queued prompt is never sent, and the note that
// says it was dropped follows the cancelled turn's last words instead of
// standing between its tool call and them.
func TestJourneyCancelDropsTheQueueAfterTheTurn(t *testing.T) {
	s := startRunScreen(t, runtimeDir(t), 120, 40)
	s.prompt("sleep 30")
	s.waitShows(10*time.Second, "sleep 30 [execute] · in progress")
	s.prompt("echo queued1")
	s.waitShows(5*time.Second, "(queued: echo queued1 — sent after this turn)")
	s.keys("Escape", ":AgentCancel", "Enter")
	s.waitShows(10*time.Second, "(dropped 1 queued prompt: echo queued1)")
	text := s.chatText()
	last := strings.LastIndex(text, "sleep 30")
	drop := strings.Index(text, "(dropped 1 queued prompt")
	if drop < last {
		t.Errorf("the dropped note stands before the turn's last words about sleep 30:\n%s", text)
	}
	if strings.Contains(text, "> echo queued1") {
		t.Errorf("the dropped prompt was sent:\n%s", text)
	}
}
