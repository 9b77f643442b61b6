package tests

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// statusLine is the chat's status line.
func (e *editor) statusLine() string {
	e.t.Helper()
	var line string
	e.lua(`local s = require("agentrun.state").session(); return s and s.chat and s.chat:status() or ""`, &line)
	return line
}

func (e *editor) waitHeader(want string) string {
	e.t.Helper()
	return e.waitFor("the status line to show "+want, 10*time.Second, func() (bool, string) {
		h := e.statusLine()
		return strings.Contains(h, want), h
	})
}

// TestModesAndModel: the agent's mode and model show in the chat's status
// line; :AgentMode and :AgentModel ask the agent (it then reports them
// set), complete the names the pickers show, each once, and take them or the ids
// ("Haiku 4.5"), refuse unknown ones with the known ones named;
// a mode change the agent makes itself shows at once.
func TestModesAndModel(t *testing.T) {
	e := claudeLike(t, "")
	e.waitHeader("· Default · Sonnet")
	var modes, models []string
	e.lua(`return vim.fn.getcompletion("AgentMode ", "cmdline")`, &modes)
	e.lua(`return vim.fn.getcompletion("AgentModel o", "cmdline")`, &models)
	if strings.Join(modes, ",") != "Default,Plan" || strings.Join(models, ",") != "Opus" {
		t.Errorf("completion: modes %q, models %q", modes, models)
	}
	e.cmd("AgentMode plan")
	e.cmd("AgentModel opus")
	e.waitHeader("· Plan · Opus")
	var st struct {
		Mode  string `msgpack:"mode"`
		Model string `msgpack:"model"`
		Label string `msgpack:"label"`
	}
	e.lua(`return require("agentrun").status().sessions[1]`, &st)
	if st.Mode != "plan" || st.Model != "opus" || st.Label != "Plan · Opus" {
		t.Errorf("status() says mode %q, model %q, label %q", st.Mode, st.Model, st.Label)
	}
	e.cmd("AgentPrompt state")
	e.waitChat("STATE mode=plan model=opus", 10*time.Second)
	e.idle(10 * time.Second)

	e.cmd("AgentMode default")
	e.waitHeader("· Default · Opus")
	e.cmd("AgentPrompt enter plan")
	e.waitHeader("· Plan · Opus") // the agent's own current_mode_update
	e.idle(10 * time.Second)

	e.cmd("AgentMode yolo")
	if n := e.noteText(); !strings.Contains(n, `claudelike has no mode "yolo"; it has: Default, Plan`) {
		t.Errorf("unknown mode: %q", n)
	}
	// by the names the pickers show, spaces and all
	e.cmd("AgentModel Haiku 4.5")
	e.waitHeader("· Plan · Haiku 4.5")
	e.cmd("AgentMode Default")
	e.waitHeader("· Default · Haiku 4.5")
	e.cmd("AgentConfig effort high")
	if n := e.noteText(); !strings.Contains(n, `claudelike has no option "effort"; it has: model`) {
		t.Errorf("unknown option: %q", n)
	}
	e.cmd("AgentConfig")
	if n := e.noteText(); !strings.Contains(n, "(agentrun) usage: :AgentConfig {id} [value]; options: model") {
		t.Errorf(":AgentConfig without an option: %q", n)
	}
}

// TestUnknownModelRefused: :AgentModel and :AgentConfig with a value the
// agent did not advertise answer as :AgentMode does, naming the values it
// has in the words the command's <Tab> offers (:AgentModel the names,
// :AgentConfig, whose value is one word, the values), and change
// nothing: the status line and the agent keep the model.
func TestUnknownModelRefused(t *testing.T) {
	e := claudeLike(t, "")
	e.waitHeader("· Default · Sonnet")
	e.cmd("AgentModel gpt-9")
	if n := e.noteText(); !strings.Contains(n, `claudelike has no model "gpt-9"; it has: Sonnet, Opus, Haiku 4.5`) {
		t.Errorf("unknown model: %q", n)
	}
	var models, values []string
	e.lua(`return vim.fn.getcompletion("AgentModel ", "cmdline")`, &models)
	e.lua(`return vim.fn.getcompletion("AgentConfig model ", "cmdline")`, &values)
	if strings.Join(models, ", ") != "Sonnet, Opus, Haiku 4.5" || strings.Join(values, ", ") != "sonnet, opus, haiku-4-5" {
		t.Errorf("<Tab> offers %q for :AgentModel, %q for :AgentConfig model", models, values)
	}
	e.cmd("AgentConfig model nosuch")
	if n := e.noteText(); !strings.Contains(n, `claudelike has no model "nosuch"; it has: sonnet, opus, haiku-4-5`) {
		t.Errorf("unknown config value: %q", n)
	}
	if h := e.statusLine(); !strings.Contains(h, "· Default · Sonnet") {
		t.Errorf("the status line changed: %q", h)
	}
	e.cmd("AgentPrompt state")
	e.waitChat("STATE mode=default model=sonnet", 10*time.Second)
	e.idle(10 * time.Second)
	e.cmd("AgentModel opus") // an advertised one still goes through
	e.waitHeader("· Default · Opus")
}

// TestModeWithoutArgumentAsks: :AgentMode without an id offers the modes
// with vim.ui.select and sets the one picked.
func TestModeWithoutArgumentAsks(t *testing.T) {
	e := claudeLike(t, "")
	e.waitHeader("· Default")
	e.lua(`vim.ui.select = function(items, opts, cb) _G.offered = vim.tbl_map(function(m) return m.id end, items); cb(items[2], 2) end`, nil)
	e.cmd("AgentMode")
	e.waitHeader("· Plan")
	var offered []string
	e.lua(`return _G.offered`, &offered)
	if strings.Join(offered, ",") != "default,plan" {
		t.Errorf("offered %q", offered)
	}
}

// TestScreenShowsModeAndModel: on the screen, the chat's status line
// shows the mode and the model, and follows :AgentMode; an unknown model
// is answered with the very words <Tab> offered (issue 50: <Tab> said
// "Haiku 4.5", the answer "haiku-4-5").
func TestScreenShowsModeAndModel(t *testing.T) {
	s := claudeLikeScreen(t)
	s.keys(":AgentRun", "Enter")
	s.waitShows(20*time.Second, "agentrun · claudelike · ready · Default · Sonnet")
	s.keys("Escape", ":AgentMode plan", "Enter")
	s.waitShows(10*time.Second, "agentrun · claudelike · ready · Plan · Sonnet")
	s.keys(":AgentModel ", "Tab")
	s.waitShows(5*time.Second, ":AgentModel Sonnet", " Sonnet ", " Opus ", " Haiku 4.5 ")
	s.keys("Escape", ":AgentModel nosuch", "Enter")
	s.waitShows(5*time.Second, `(agentrun) claudelike has no model "nosuch"; it has: Sonnet, Opus, Haiku 4.5`)
}

// TestSlashCommandsComplete: typing "/" in the prompt opens the agent's
// slash commands with their descriptions; more letters narrow them; the
// prompt buffer's 'omnifunc' gives the same list.
func TestSlashCommandsComplete(t *testing.T) {
	s := claudeLikeScreen(t)
	s.keys(":AgentRun", "Enter")
	s.waitShows(20*time.Second, "agentrun · claudelike · ready")
	s.typeText("/") // the commands may arrive after: the menu opens then
	s.waitFor("the slash command menu", 10*time.Second, func(sc string) bool {
		return strings.Contains(sc, "/compact [instructions]") && strings.Contains(sc, "Summarize the conversation") && strings.Contains(sc, "/review")
	})
	s.typeText("co")
	sc := s.waitFor("the narrowed menu", 5*time.Second, func(sc string) bool {
		return strings.Contains(sc, "/context") && !strings.Contains(sc, "/review ")
	})
	if !strings.Contains(sc, "/compact") {
		t.Errorf("the narrowed menu lacks /compact:\n%s", sc)
	}
}

// TestContextWordsComplete: in the prompt, "#" offers #buffer and
// #selection, "@" the files of the cwd (narrowing as you type), and the
// one picked lands in the prompt.
func TestContextWordsComplete(t *testing.T) {
	s := claudeLikeScreen(t)
	for _, f := range []string{"notes.txt", "notebook.md", "other.go"} {
		if err := os.WriteFile(filepath.Join(s.dir, f), []byte("x\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	s.keys(":AgentRun", "Enter")
	s.waitShows(20*time.Second, "agentrun · claudelike · ready")
	s.typeText("explain #")
	s.waitShows(5*time.Second, "#buffer", "#selection", "your last visual selection")
	s.typeText("s")
	s.keys("C-y") // the first match is selected: <C-y> takes it
	s.typeText(" and @no")
	sc := s.waitShows(5*time.Second, "@notes.txt", "@notebook.md")
	if strings.Contains(sc, "@other.go") {
		t.Errorf("the @ menu did not narrow to \"no\":\n%s", sc)
	}
	s.typeText("tes")
	s.keys("C-y")
	s.waitShows(5*time.Second, "explain #selection and @notes.txt")
}

// claudeLikeScreen is the tmux screen of a Neovim whose default agent is
// the Claude-like test agent.
func claudeLikeScreen(t *testing.T) *screen {
	t.Helper()
	return claudeLikeScreenSized(t, 120, 30)
}

// claudeLikeScreenSized is claudeLikeScreen of cols x rows.
func claudeLikeScreenSized(t *testing.T, cols, rows int) *screen {
	t.Helper()
	return claudeLikeScreenEnv(t, cols, rows, "")
}

// claudeLikeScreenEnv is claudeLikeScreenSized with agent environment
// entries (Lua).
func claudeLikeScreenEnv(t *testing.T, cols, rows int, env string) *screen {
	t.Helper()
	node, err := exec.LookPath("node")
	if err != nil {
		t.Fatal("node is not installed")
	}
	agent := filepath.Join(root, "tests", "node", "claudelike.mjs")
	// approve = "run": its default mode asks first (claudeLikeEditor)
	return startScreen(t, cols, rows, fmt.Sprintf(`require("agentrun").setup({ default_agent = "claudelike",
		agents = { claudelike = { cmd = { %q, %q }, terminals = "agentrun", env = { %s } } }, terminal = { approve = "run" } })`, node, agent, env))
}

// TestPromptHistory: in the prompt, <Up> on its first line brings back
// the prompts sent before, newest first; <Down> goes forward and, past
// the newest, back to what was being typed.
func TestPromptHistory(t *testing.T) {
	s := claudeLikeScreen(t)
	s.keys(":AgentRun", "Enter")
	s.waitShows(20*time.Second, "agentrun · claudelike · ready")
	for _, p := range []string{"say first prompt", "say second prompt"} {
		s.typeText(p)
		s.keys("C-s")
		s.waitShows(20*time.Second, "│"+strings.TrimPrefix(p, "say "))
	}
	promptLine := func() string {
		sc := s.capture()
		lines := strings.Split(sc, "\n")
		// the prompt area is the last window's first line, right of the split
		for i := len(lines) - 1; i >= 0; i-- {
			if strings.Contains(lines[i], "agentrun · claudelike") {
				if i+1 < len(lines) {
					if _, right, ok := strings.Cut(lines[i+1], "│"); ok {
						return strings.TrimSpace(right)
					}
				}
			}
		}
		return ""
	}
	waitPrompt := func(want string) {
		t.Helper()
		s.waitFor("the prompt to read "+want, 5*time.Second, func(string) bool { return promptLine() == want })
	}
	s.typeText("a draft")
	s.keys("Up")
	waitPrompt("say second prompt")
	s.keys("Up")
	waitPrompt("say first prompt")
	s.keys("Up") // nothing older: stays
	waitPrompt("say first prompt")
	s.keys("Down")
	waitPrompt("say second prompt")
	s.keys("Down")
	waitPrompt("a draft")
}

// TestSessionTitle: the title an agent gives its session
// (session_info_update) shows under the chat's header and in status().
func TestSessionTitle(t *testing.T) {
	e := claudeLike(t, "")
	e.waitHeader("· Default · Sonnet")
	e.cmd("AgentPrompt title Fix the failing Mul test")
	e.waitChat("“Fix the failing Mul test”", 10*time.Second)
	var title string
	e.lua(`return require("agentrun").status().sessions[1].title`, &title)
	if title != "Fix the failing Mul test" {
		t.Errorf("status() title %q", title)
	}
}

// TestModeAsConfigOption: an agent whose modes are a config option of
// category "mode" (opencode's build/plan) has them in the status line,
// status().mode, :AgentMode (by name or value) and its completion.
func TestModeAsConfigOption(t *testing.T) {
	e := claudeLikeEditor(t, "", `AGENTRUN_TEST_MODE_AS_OPTION = "1"`, "")
	e.startSession()
	e.waitHeader("· Build · Sonnet")
	var modes []string
	e.lua(`return vim.fn.getcompletion("AgentMode ", "cmdline")`, &modes)
	if strings.Join(modes, ",") != "Build,Plan" {
		t.Errorf("completion: %q", modes)
	}
	e.switchMode("Plan", "· Plan · Sonnet", "plan")
	e.cmd("AgentMode nosuch")
	if n := e.noteText(); !strings.Contains(n, `has no mode "nosuch"; it has: Build, Plan`) {
		t.Errorf("unknown mode: %q", n)
	}
}

// switchMode picks mode name with :AgentMode, waits for the chat's header
// to show header, and checks status() names the mode by its id.
func (e *editor) switchMode(name, header, id string) {
	e.t.Helper()
	e.cmd("AgentMode " + name)
	e.waitHeader(header)
	var mode string
	e.lua(`return require("agentrun").status().sessions[1].mode`, &mode)
	if mode != id {
		e.t.Errorf("status().mode %q, want %s", mode, id)
	}
}

// TestScreenModeMarkRangeAndSecondAgent: :AgentMode marks the current mode; a
// range of a scratch buffer (a pasted log) goes out as text; a second
// :AgentRun of another agent says the first session still runs.
func TestScreenModeMarkRangeAndSecondAgent(t *testing.T) {
	s := claudeLikeScreenSized(t, 120, 40)
	s.keys(":AgentRun", "Enter")
	s.waitShows(20*time.Second, "agentrun · claudelike · ready")
	s.keys("Escape", ":AgentMode", "Enter")
	// one space each (it read "Default  (current)  — …")
	if sc := s.waitShows(5*time.Second, "Default (current)"); strings.Contains(sc, "  (current)") || strings.Contains(sc, "  — ") {
		t.Errorf("the mode picker has doubled spaces:\n%s", sc)
	}
	s.keys("Escape")

	s.keys(":wincmd t", "Enter", ":enew", "Enter", "i")
	s.typeText("error: boom at line 3")
	s.keys("Escape", ":%AgentPrompt say the log reads", "Enter")
	sc := s.waitShows(10*time.Second, "│the log reads")
	s.waitShows(10*time.Second, "│error: boom at line 3")
	if strings.Contains(sc, "#buffer and #selection name the file buffer") {
		t.Errorf("the scratch buffer's lines were refused:\n%s", sc)
	}

	s.keys(":AgentRun demo", "Enter")
	s.waitShows(10*time.Second, "agentrun · demo · ready", "the claudelike session (1) still runs in the")
	s.keys("Escape", ":AgentRun claudelike", "Enter")
	s.waitShows(10*time.Second, "agentrun · claudelike · ready")
}

// TestNarrowChatStatusLineKeepsWholeWords: a chat window too narrow for
// its status line drops its last parts whole, not a word cut in two
// ("Auto · Default (recommende…").
func TestNarrowChatStatusLineKeepsWholeWords(t *testing.T) {
	e := claudeLike(t, "")
	full := e.waitHeader("· Default · Sonnet")
	var sl string
	e.lua(`local s = require("agentrun.state").session()
local w = vim.fn.bufwinid(s.chat.buf)
vim.api.nvim_win_set_width(w, #(...) - 4)
s.chat:set_statusline()
return vim.wo[w].statusline`, &sl, " "+full)
	if strings.Contains(sl, "…") || !strings.HasSuffix(strings.TrimSpace(sl), "Default") {
		t.Errorf("the status line of %q in a narrow window reads %q", full, sl)
	}
}
