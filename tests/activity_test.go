package tests

import (
	"encoding/json"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
	"unicode/utf8"
)

// TestScreenWaitsForInputIsSaid: an agent's command that waits on `read`
// is said once ("waits for input", what it asked, :AgentType), its split's
// status line and :AgentTerminals say so; :AgentType takes you there in
// terminal mode and what you type answers it (the chat's note then says
// it waited). R in its split runs it
// again, as yours, in the same place.
func TestScreenWaitsForInputIsSaid(t *testing.T) {
	s := startDemoScreenSized(t, 120, 35, "")
	s.prompt(`printf 'name? '; read x; echo "hello $x"`)
	// in the chat (the prompt is in Insert mode: "-- INSERT --" hides
	// the message line) and in the split's status line
	s.waitShows(10*time.Second, "term-1 waits for input (:AgentType types into it):", "name?", splitOf("term-1", "waiting for input"))
	s.keys("Escape", ":AgentTerminals", "Enter")
	s.waitShows(5*time.Second, "waiting for input")
	s.keys("q")
	// said once: in the messages (the chat shows its note too)
	var said int
	s.luaValue(`select(2, vim.fn.execute("messages"):gsub("waits for input", ""))`, &said)
	if said != 1 {
		t.Errorf("said %d times in :messages, want once", said)
	}
	s.keys(":AgentType", "Enter")
	s.waitShows(5*time.Second, "-- TERMINAL --")
	s.typeText("bob\r")
	s.waitShows(10*time.Second, "hello bob", exitMarker(0))
	s.waitFor("the status line without the wait", 5*time.Second, func(sc string) bool { return !strings.Contains(sc, "waiting for input") })
	// the chat's note no longer says it waits
	s.waitFor("the chat's note to say the wait is over", 5*time.Second, func(sc string) bool {
		return strings.Contains(sc, "term-1 waited for input: name? (") && !strings.Contains(sc, "term-1 waits for input")
	})

	// R: again, as yours, where it was
	s.keys(`C-\`, "C-n", "R")
	s.waitShows(10*time.Second, splitOf("term-1", "run 2"), "-- TERMINAL --")
	s.typeText("amy\r")
	s.waitShows(10*time.Second, "hello amy")
	s.keys(":AgentType", "Enter")
	s.waitShows(5*time.Second, "no terminal waits for input; :AgentType term-N types into that one")
	s.keys(":AgentType term-9", "Enter")
	s.waitShows(5*time.Second, `unknown terminal "term-9"`)
}

// TestScreenDevServerPort: a dev server's port shows in its split's
// status line and in :AgentTerminals (a PORTS column); gx there opens
// http://localhost:PORT (vim.ui.open, recorded here); R restarts the
// agent's running server in place as yours (its first run ends by
// SIGTERM; R refused it, though the README says R restarts it), then
// again once yours, and its port shows again.
func TestScreenDevServerPort(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	opened := filepath.Join(t.TempDir(), "opened")
	s := startDemoScreenSized(t, 120, 35, fmt.Sprintf(`vim.ui.open = function(url) vim.fn.writefile({ url }, %q, "a") end`, opened))
	s.prompt(fmt.Sprintf("python3 -m http.server --bind 127.0.0.1 %d", port))
	s.waitShows(15*time.Second, splitOf("term-1", fmt.Sprintf("running · agent's :%d", port)))
	s.keys("Escape", ":AgentTerminals", "Enter")
	s.waitShows(5*time.Second, "PORTS", fmt.Sprintf(":%d", port))
	// agentrun ls: a PORTS column, whole at 80 columns; --json too
	ls := exec.Command(binary, "ls")
	ls.Env = append(os.Environ(), "XDG_RUNTIME_DIR="+s.rt, "COLUMNS=80")
	out, err := ls.CombinedOutput()
	if err != nil || !regexp.MustCompile(fmt.Sprintf(`(?m)^\d+:term-1 .* %d +Serving`, port)).Match(out) {
		t.Errorf("agentrun ls: %v\n%s", err, out)
	}
	for _, line := range strings.Split(strings.TrimRight(string(out), "\n"), "\n") {
		if n := utf8.RuneCountInString(line); n > 80 {
			t.Errorf("agentrun ls at 80 columns: a line of %d:\n%s", n, out)
		}
	}
	js := exec.Command(binary, "ls", "--json")
	js.Env = append(os.Environ(), "XDG_RUNTIME_DIR="+s.rt)
	out, err = js.Output()
	var rows []struct {
		ID    string `json:"id"`
		Ports []int  `json:"ports"`
	}
	if err := json.Unmarshal(out, &rows); err != nil || len(rows) != 1 || len(rows[0].Ports) != 1 || rows[0].Ports[0] != port {
		t.Errorf("agentrun ls --json: %v %v\n%s", err, rows, out)
	}
	s.keys("gx")
	eventually(t, "gx to open the port", 5*time.Second, func() (bool, string) {
		b, _ := os.ReadFile(opened)
		return strings.TrimSpace(string(b)) == fmt.Sprintf("http://localhost:%d", port), string(b)
	})
	// R on the agent's running server: restarted in place, yours now
	// (as the README says); its first run ends killed, as X would end it
	s.keys("R")
	s.waitShows(15*time.Second, splitOf("term-1", fmt.Sprintf("run 2 · running · yours :%d", port))) // the second run of term-1
	s.keys(`C-\`, "C-n", ":AgentTerminals", "Enter")
	s.waitShows(5*time.Second, "(run 2)") // in term-1's row, under its name
	// yours now: R restarts it in place again
	s.keys("R")
	s.waitShows(15*time.Second, splitOf("term-1", fmt.Sprintf("run 3 · running · yours :%d", port)))
	s.keys(`C-\`, "C-n")
	var how string
	s.luaValue(`vim.tbl_filter(function(t) return t.id == "term-1" end, require("agentrun").status().terminals)[1].how`, &how)
	if how != "restarted" {
		t.Errorf("the old server did not end by the restart: %q", how)
	}
}

// TestScreenFailuresByThemselves: with terminal.on_failure = { "quickfix",
// "diagnostics" }, an agent's failing Python test puts its failures in the
// quickfix list and as diagnostics on the open file, said in the chat,
// with no window opened and the cursor left in the prompt; the same
// program passing clears the diagnostics.
func TestScreenFailuresByThemselves(t *testing.T) {
	s := startScreen(t, 120, 35, `require("agentrun").setup({ terminal = { on_failure = { "quickfix", "diagnostics" } } })`)
	test := "import unittest\n\n\nclass T(unittest.TestCase):\n    def test_one(self):\n        self.assertEqual(1, 2)\n\n    def test_two(self):\n        self.assertEqual('a', 'b')\n"
	if err := os.WriteFile(filepath.Join(s.dir, "test_py.py"), []byte(test), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(s.dir, "test_ok.py"), []byte("import unittest\n\n\nclass T(unittest.TestCase):\n    def test_one(self):\n        pass\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	s.keys(":edit test_py.py", "Enter", ":AgentRun demo", "Enter")
	s.waitShows(10*time.Second, "agentrun · demo · ready")
	s.prompt("python3 -m unittest test_py")
	s.waitShows(20*time.Second, "term-1 failed: 2 entries in the quickfix list (:copen) and", "-- INSERT --")
	if sc := s.capture(); strings.Contains(sc, "[Quickfix List]") {
		t.Errorf("a quickfix window opened:\n%s", sc)
	}
	var n []int
	s.luaValue(`{ #vim.fn.getqflist(), #vim.diagnostic.get(vim.fn.bufnr("test_py.py")) }`, &n)
	if len(n) != 2 || n[0] != 2 || n[1] != 2 {
		t.Errorf("quickfix items and diagnostics: %v, want 2 and 2", n)
	}
	// the same program passing clears them
	s.keys("i")
	s.prompt("python3 -m unittest test_ok")
	s.waitShows(20*time.Second, "python3 -m unittest… exited with code 0.") // (the tool call says it whole)
	eventually(t, "the diagnostics to clear", 5*time.Second, func() (bool, string) {
		var c int
		s.luaValue(`#vim.diagnostic.get(vim.fn.bufnr("test_py.py"))`, &c)
		return c == 0, fmt.Sprint(c)
	})
}

// TestScreenRerunKeepsTheRules: R runs nothing a deny rule of
// terminal.approve refuses, also a command you ran yourself, and says so.
func TestScreenRerunKeepsTheRules(t *testing.T) {
	s := startScreen(t, 120, 35, `require("agentrun").setup({ terminal = { approve = { deny = { "rm *" }, otherwise = "run" } } })`)
	if err := os.WriteFile(filepath.Join(s.dir, "victim"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	s.keys(":AgentShell echo first; touch victim", "Enter")
	s.waitShows(10*time.Second, "first", exitMarker(0))
	s.keys(`C-\`, "C-n", ":AgentShell rm -v victim", "Enter")
	s.waitShows(10*time.Second, "removed 'victim'", exitMarker(0))
	if err := os.WriteFile(filepath.Join(s.dir, "victim"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	s.keys(`C-\`, "C-n", "R")
	s.waitShows(5*time.Second, "term-2 not run again: refused")
	if _, err := os.Stat(filepath.Join(s.dir, "victim")); err != nil {
		t.Errorf("R ran what a deny rule refuses: %v", err)
	}
}

// TestOpenURLSaysWhy: gx where nothing can open a browser (vim.ui.open
// answers nil and why, as 0.10+ does without xdg-open, and no $BROWSER)
// says so in our words, with the URL and what to do.
func TestOpenURLSaysWhy(t *testing.T) {
	e := startEditor(t, "")
	var res []any
	e.lua(`vim.env.BROWSER = nil
vim.ui.open = function() return nil, "vim.ui.open: no handler found" end
return { require("agentrun.compat").open_url("http://localhost:8000") }`, &res)
	if len(res) < 2 || res[0] != false || res[1] != "no browser found to open http://localhost:8000: install xdg-open (xdg-utils) or set $BROWSER" {
		t.Errorf("open_url: %v", res)
	}
}

// TestAnotherNeovimSeesThePorts: a dev server another Neovim's agent runs
// listens on a port; this Neovim's :AgentTerminals lists it with its
// command line and its port, and gx in its split here opens it.
func TestAnotherNeovimSeesThePorts(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	rt := runtimeDir(t)
	a := startEditorIn(t, rt, "")
	b := startEditorIn(t, rt, `vim.o.columns = 200; _G.opened = {}; vim.ui.open = function(url) table.insert(_G.opened, url); return {}, nil end`)
	a.startSession()
	line := fmt.Sprintf("python3 -m http.server --bind 127.0.0.1 %d", port)
	a.cmd("AgentPrompt " + line)
	term := a.waitTerminal(line, 10*time.Second)
	name := fmt.Sprintf("%d:%s", a.backendPid(), term.ID)
	b.cmd("AgentShell") // b's backend runs: it lists the other hosts
	b.waitFor("b to list a's server with its port", 20*time.Second, func() (bool, string) {
		var got []struct {
			ID      string `msgpack:"id"`
			Command string `msgpack:"command"`
			Ports   []int  `msgpack:"ports"`
		}
		b.lua(`return require("agentrun.rpc").request("remote_terminals")`, &got)
		for _, r := range got {
			if r.ID == name {
				return r.Command == line && len(r.Ports) == 1 && r.Ports[0] == port, fmt.Sprintf("%+v", r)
			}
		}
		return false, fmt.Sprintf("%+v", got)
	})
	b.cmd("AgentTerminals")
	var list string
	b.lua(`return table.concat(vim.api.nvim_buf_get_lines(vim.fn.bufnr("agentrun terminals"), 0, -1, false), "\n")`, &list)
	if !strings.Contains(list, fmt.Sprintf(":%d", port)) || !strings.Contains(list, "python3 -m http.server") {
		t.Errorf("b's list does not show the server's command and port:\n%s", list)
	}
	buf := b.remoteBuf(name)
	b.lua(`vim.api.nvim_set_current_win(vim.fn.bufwinid(...))`, nil, buf)
	b.normalKeys("gx")
	b.waitFor("gx to open the server's URL", 5*time.Second, func() (bool, string) {
		var opened []string
		b.lua(`return _G.opened`, &opened)
		return len(opened) == 1 && opened[0] == fmt.Sprintf("http://localhost:%d", port), fmt.Sprint(opened, " ", b.noteText())
	})
}

// TestScreenWaitInYourSplitIsNotedInTheChat: an agent's command that
// starts waiting for input while you are in its split already gets no
// message (you see it), but the chat still gets its note, which says it
// waited once you answered. R on its row in :AgentTerminals runs it again
// as yours, in its new split in terminal mode, as documented.
func TestScreenWaitInYourSplitIsNotedInTheChat(t *testing.T) {
	s := startDemoScreenSized(t, 120, 35, "")
	goOn := filepath.Join(s.dir, "go-on")
	s.prompt(fmt.Sprintf(`echo started; while [ ! -e %s ]; do sleep 0.1; done; printf 'age? '; read y; echo "got $y"`, goOn))
	s.waitShows(10*time.Second, splitOf("term-1"), "started")
	s.keys("Escape", ":lua vim.api.nvim_set_current_win(vim.fn.bufwinid(require('agentrun.state').terminals['term-1'].bufnr))", "Enter")
	var in string
	s.luaValue(`vim.b.agentrun_terminal or ""`, &in)
	if in != "term-1" {
		t.Fatalf("not in the split: %q", in)
	}
	if err := os.WriteFile(goOn, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	s.waitShows(10*time.Second, splitOf("term-1", "waiting for input"), "term-1 waits for input (:AgentType types into it): age?")
	var said int
	s.luaValue(`select(2, vim.fn.execute("messages"):gsub("waits for input", ""))`, &said)
	if said != 0 {
		t.Errorf("said %d times in :messages while in its split, want none (the chat's note is enough)", said)
	}
	s.keys("i")
	s.waitShows(5*time.Second, "-- TERMINAL --")
	s.typeText("41\r")
	s.waitShows(10*time.Second, "got 41", exitMarker(0), "term-1 waited for input: age? (")
	s.keys(`C-\`, "C-n", ":AgentTerminals", "Enter")
	s.waitShows(5*time.Second, "agentrun terminals —")
	s.keys("/term-1", "Enter", "R")
	s.waitShows(10*time.Second, splitOf("term-1", "run 2"), "-- TERMINAL --")
}

// TestScreenRerunInPlace: R on a server you took over restarts it in
// place: the list keeps one row for it, where it was, with the number of
// runs, which its split's status line shows too, and its stop is no failure to announce (R made a new terminal
// each time, the list grew a row per run, and "term-1 ended (signal
// SIGTERM)" was notified).
func TestScreenRerunInPlace(t *testing.T) {
	s := startDemoScreenSized(t, 120, 35, "")
	s.prompt("echo before")
	s.waitShows(10*time.Second, "echo before exited with code 0.")
	s.prompt("echo serving; sleep 300")
	s.waitShows(10*time.Second, splitOf("term-2"))
	s.keys("Escape", ":AgentTakeover term-2", "Enter")
	s.waitShows(5*time.Second, "term-2 is yours now")
	s.keys(":AgentTerminals", "Enter")
	s.waitShows(5*time.Second, "echo serving; sleep 300  ")
	s.keys("/sleep 300", "Enter", "R")
	s.waitShows(10*time.Second, splitOf("term-2", "run 2"), "serving")
	s.keys(`C-\`, "C-n", ":AgentTerminals", "Enter")
	s.waitShows(5*time.Second, "(run 2) echo serving; sleep 300")
	s.keys("/sleep 300", "Enter", "R")
	s.waitShows(10*time.Second, splitOf("term-2", "run 3"), "serving")
	s.keys(`C-\`, "C-n", ":AgentTerminals", "Enter")
	s.waitShows(10*time.Second, "(run 3) echo serving; sleep 300")
	var list string
	s.luaValue(`table.concat(vim.api.nvim_buf_get_lines(vim.fn.bufnr("agentrun terminals"), 0, -1, false), "\n")`, &list)
	if n := strings.Count(list, "sleep 300"); n != 1 {
		t.Errorf("the list shows %d rows of the server, want 1:\n%s", n, list)
	}
	var msgs string
	s.luaValue(`vim.fn.execute("messages")`, &msgs)
	if strings.Contains(msgs, "ended (signal") {
		t.Errorf("a restart was announced as an end:\n%s", msgs)
	}
}

// TestScreenYourCommandsAsTheAgents: a command you run (:AgentShell cmd,
// an R rerun) gets what the agent's get: its failures in the quickfix
// list and as diagnostics (terminal.on_failure), a passing run of the
// same program clearing them, and a notice when it ends out of sight.
// They got none of these.
func TestScreenYourCommandsAsTheAgents(t *testing.T) {
	s := startScreen(t, 120, 35, `require("agentrun").setup({ terminal = { on_failure = { "quickfix", "diagnostics" } } })`)
	if err := os.WriteFile(filepath.Join(s.dir, "notes.txt"), []byte("one\ntwo\nthree\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	s.keys(":edit notes.txt", "Enter")
	s.keys(`:AgentShell sh -c 'echo notes.txt:2:1: boom; exit 1'`, "Enter")
	s.waitShows(10*time.Second, "term-1 failed: 1 entry in the quickfix list (:copen) and diagnostics")
	var n []int
	s.luaValue(`{ #vim.fn.getqflist(), #vim.diagnostic.get(vim.fn.bufnr("notes.txt")) }`, &n)
	if len(n) != 2 || n[0] != 1 || n[1] != 1 {
		t.Errorf("quickfix items and diagnostics: %v, want 1 and 1", n)
	}
	// R: the rerun fails the same way, and says so under the name the list shows it by
	s.keys(`C-\`, "C-n", ":messages clear", "Enter", "R")
	s.waitShows(10*time.Second, "term-1 (run 2) failed: 1 entry in the quickfix list (:copen) and diagnostics") // named as the list shows it
	// the same program passing clears them
	s.keys(`C-\`, "C-n", `:AgentShell sh -c 'echo fine'`, "Enter")
	s.waitShows(10*time.Second, "fine", exitMarker(0))
	eventually(t, "the failures to clear", 5*time.Second, func() (bool, string) {
		s.luaValue(`{ #vim.fn.getqflist(), #vim.diagnostic.get(vim.fn.bufnr("notes.txt")) }`, &n)
		return len(n) == 2 && n[0] == 0 && n[1] == 0, fmt.Sprint(n)
	})
	// one that ends out of sight is told
	s.keys(`C-\`, "C-n", `:AgentShell sh -c 'sleep 1; echo last words; exit 3'`, "Enter")
	s.waitShows(10*time.Second, splitOf("term-4"))
	s.keys(`C-\`, "C-n", ":q", "Enter")
	s.waitShows(10*time.Second, "term-4 ended (exit 3): last words")
}

// TestScreenTracebackEveryFrame: a Python traceback puts every frame in
// the quickfix list, innermost first (it gave one item, the outermost
// frame, not the line where the error is).
func TestScreenTracebackEveryFrame(t *testing.T) {
	s := startScreen(t, 120, 35, `require("agentrun").setup({ terminal = { on_failure = { "quickfix" } } })`)
	app := "from lib.util import helper\n\n\ndef main():\n    helper(0)\n\n\nmain()\n"
	util := "def helper(n):\n    return 1 / n\n"
	if err := os.MkdirAll(filepath.Join(s.dir, "lib"), 0o755); err != nil {
		t.Fatal(err)
	}
	for name, text := range map[string]string{"app.py": app, "lib/__init__.py": "", "lib/util.py": util} {
		if err := os.WriteFile(filepath.Join(s.dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	s.keys(":AgentShell python3 app.py", "Enter")
	s.waitShows(5*time.Second, splitOf("term-1"))
	s.keys(`C-\`, "C-n") // (luaValue types its command)
	eventually(t, "the failure to be said", 30*time.Second, func() (bool, string) {
		var msgs string
		s.luaValue(`vim.fn.execute("messages")`, &msgs)
		return strings.Contains(msgs, "term-1 failed: 3 entries in the quickfix list (:copen)"), msgs
	})
	s.keys(":copen", "Enter")
	sc := s.waitShows(5*time.Second, "lib/util.py|2| ZeroDivisionError: division by zero (in helper)")
	if i, j, k := strings.Index(sc, "lib/util.py|2|"), strings.Index(sc, "app.py|5|"), strings.Index(sc, "app.py|8|"); !(i >= 0 && i < j && j < k) {
		t.Errorf("the frames are not innermost first:\n%s", sc)
	}
}

// TestScreenGxOpensTheURLUnderTheCursor: gx in a split on a URL opens
// that URL, as Neovim's own gx does; elsewhere it opens the server's
// port, with the path of the URL the server printed (gx opened
// http://localhost:PORT wherever the cursor was, without the path).
func TestScreenGxOpensTheURLUnderTheCursor(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	opened := filepath.Join(t.TempDir(), "opened")
	s := startScreen(t, 120, 35, fmt.Sprintf(`vim.ui.open = function(url) vim.fn.writefile({ url }, %q, "a") end`, opened))
	s.keys(fmt.Sprintf(`:AgentShell sh -c 'echo see https://example.com/docs/page.html, then; echo app at http://127.0.0.1:%d/app/; exec python3 -m http.server --bind 127.0.0.1 %d'`, port, port), "Enter")
	s.waitShows(20*time.Second, splitOf("term-1", fmt.Sprintf("running · yours :%d", port)))
	s.keys(`C-\`, "C-n", "gg", "/docs", "Enter", "gx")
	eventually(t, "gx to open the URL under the cursor", 5*time.Second, func() (bool, string) {
		b, _ := os.ReadFile(opened)
		return strings.TrimSpace(string(b)) == "https://example.com/docs/page.html", string(b)
	})
	s.keys("G", "gx")
	eventually(t, "gx to open the server's URL with its path", 5*time.Second, func() (bool, string) {
		b, _ := os.ReadFile(opened)
		lines := strings.Split(strings.TrimSpace(string(b)), "\n")
		return len(lines) == 2 && lines[1] == fmt.Sprintf("http://localhost:%d/app/", port), string(b)
	})
}
