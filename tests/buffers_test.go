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

// TestScreenBuffersStayTrue: a file open and saved in one window and a
// file with unsaved edits in another; the agent's command changes both
// on disk. When the command ends, the saved one shows the new text; the
// one with unsaved edits keeps them, the user is told, and :w cannot
// write over the agent's change without Neovim asking; the turn's end
// lists both files, <CR> on one shows its diff against how it was before
// the turn, and :AgentDiff shows the unsaved edits against the file.
func TestScreenBuffersStayTrue(t *testing.T) {
	s := startScreen(t, 120, 35, "")
	dir := s.dir
	write := func(name, text string) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("calc.go", "package calc\n\nfunc Add(a, b int) int { return a + b }\n")
	write("notes.txt", "notes\n")
	write(".gitignore", "/state/\n/cache/\n/data/\n/config/\n/tmux.sock\n/init.lua\n") // the screen's own files
	for _, args := range [][]string{{"init", "-q"}, {"add", "."}, {"-c", "user.email=t@t", "-c", "user.name=t", "commit", "-qm", "init"}} {
		cmd := exec.Command("git", args...)
		cmd.Dir = dir
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	s.keys(":e calc.go", "Enter", ":vsplit notes.txt", "Enter")
	s.keys("G", "o", "added by me", "Escape", ":wincmd l", "Enter")
	s.keys(":AgentRun demo", "Enter")
	s.waitShows(10*time.Second, "agentrun · demo · ready")
	s.prompt(`sed -i 's/+/*/' calc.go; echo agent-line >> notes.txt`)
	// the saved buffer shows the agent's change; the other keeps its edits
	s.waitShows(10*time.Second, "return a * b", "files changed this turn (2; <CR> on one shows its diff", "⚠ you have unsaved edits in it")
	// the notes window is the left one: what stands before the first │
	var left []string
	for _, l := range strings.Split(s.capture(), "\n") {
		if i := strings.Index(l, "│"); i >= 0 {
			left = append(left, l[:i])
		}
	}
	if l := strings.Join(left, "\n"); !strings.Contains(l, "added by me") || strings.Contains(l, "agent-line") {
		t.Errorf("the buffer with unsaved edits did not keep them as they were:\n%s", l)
	}
	s.keys("Escape", ":messages", "Enter")
	s.waitShows(5*time.Second, "notes.txt changed on disk under your edits: :AgentDiff")
	s.keys("Enter")

	// <CR> on the saved file's line in the chat: its diff against before the turn
	s.keys(":wincmd k", "Enter", "/^  calc.go", "Enter", "Enter")
	s.waitShows(5*time.Second, "calc.go (now)", "return a + b", "return a * b")
	s.keys("q")
	// :AgentDiff in the notes window: the unsaved edits against the file
	s.keys(":wincmd t", "Enter", ":AgentDiff", "Enter")
	s.waitShows(5*time.Second, "notes.txt (your unsaved edits)", "agent-line", "added by me")
	s.keys("q")
	// :w asks before it writes over the agent's change; n keeps it
	s.keys(":wincmd t", "Enter", ":w", "Enter")
	s.waitShows(5*time.Second, "WARNING: The file has been changed since reading it!!!")
	s.keys("n", "Enter")
	raw, _ := os.ReadFile(filepath.Join(dir, "notes.txt"))
	if !strings.Contains(string(raw), "agent-line") {
		t.Errorf("notes.txt lost the agent's change: %q", raw)
	}
}

// TestScreenFileLineOpensInTheEditor: gF on a file:line a command printed
// in its split opens the file at that line in the editor window, not in
// the split (which still shows the terminal); <CR> on one in the chat
// does the same; gf where there is no file says so.
func TestScreenFileLineOpensInTheEditor(t *testing.T) {
	s := startScreen(t, 120, 35, "")
	if err := os.MkdirAll(filepath.Join(s.dir, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(s.dir, "sub", "f.txt"), []byte("one\ntwo\nthree-here\nfour\nfive\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	s.keys(":AgentRun demo", "Enter")
	s.waitShows(10*time.Second, "agentrun · demo · ready")
	s.prompt("printf 'x\\nf.txt:3:7: boom\\ngone.txt:9: nope\\n'")
	s.waitShows(10*time.Second, exitMarker(0))
	// in the split: the second line, its first WORD (found below the cwd)
	s.keys("Escape", ":wincmd j", "Enter", ":2", "Enter", "gF")
	s.waitShows(5*time.Second, "three-here", "sub/f.txt", "3,7")
	if sc := s.capture(); !shows(sc, splitOf("term-1")) {
		t.Errorf("the split no longer shows the terminal:\n%s", sc)
	}
	// in the chat: <CR> on the command's line that names it
	s.keys(":e #", "Enter", ":wincmd l", "Enter", "/f.txt:3", "Enter", "Enter")
	s.waitShows(5*time.Second, "three-here", "3,7")
	s.keys(":wincmd j", "Enter", ":wincmd j", "Enter", ":1", "Enter", "gf")
	s.waitShows(5*time.Second, "no file:line under the cursor (x); put it on one")
	s.keys(":3", "Enter", "gf")
	s.waitShows(5*time.Second, "gone.txt is not a file in ~ or below it")
	// the editor window's buffer has unsaved edits and 'nohidden': the
	// file opens beside it, the edits stay, no error
	s.keys(":set nohidden", "Enter", ":wincmd t", "Enter", ":enew", "Enter", "i", "my unsaved words", "Escape")
	s.keys(":wincmd b", "Enter", ":2", "Enter", "gF")
	sc := s.waitShows(5*time.Second, "three-here", "my unsaved words")
	for _, bad := range []string{"E37", "Error", "stack traceback"} {
		if strings.Contains(sc, bad) {
			t.Errorf("gF beside unsaved edits shows %q:\n%s", bad, sc)
		}
	}
}

// TestScreenQuickfixOneEntrySmallScreen (issue 50): at 60x15, Q in the
// split of a command that printed one file:line says so in one line
// without a ":cnext" hint (there is no next), and no "Press ENTER" stops
// the screen (it said "1 in the quickfix list (go; :cnext goes on)").
func TestScreenQuickfixOneEntrySmallScreen(t *testing.T) {
	s := startScreen(t, 60, 15, "")
	if err := os.WriteFile(filepath.Join(s.dir, "notes.txt"), []byte("one\ntwo\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	s.keys(":AgentRun demo", "Enter")
	s.waitShows(10*time.Second, "agentrun · demo · ready")
	s.prompt("sh -c 'echo notes.txt:2:1: boom; exit 1'")
	s.waitShows(10*time.Second, exitMarker(1))
	s.keys("Escape", ":wincmd j", "Enter", "Q")
	sc := s.waitShows(5*time.Second, "notes.txt|2 col 1| boom", "(agentrun) term-1: 1 entry in the quickfix list")
	if strings.Contains(sc, "Press ENTER") || strings.Contains(sc, "cnext") {
		t.Errorf("Q's message:\n%s", sc)
	}
}

// TestScreenQuickfixFitsBesideListAndSplit (issue 50): at 100x30 and
// 80x24, with a failing command's split and :AgentTerminals open, Q opens
// the quickfix window at the bottom, full width, as tall as its 2 items
// (2-3 rows; it was 10), and the split, the list (key line, headers and
// its row) and the code above keep usable heights (at 80x24 the split
// was left 2 rows and the code 5).
func TestScreenQuickfixFitsBesideListAndSplit(t *testing.T) {
	for _, size := range [][2]int{{100, 30}, {80, 24}} {
		cols, rows := size[0], size[1]
		t.Run(fmt.Sprintf("%dx%d", cols, rows), func(t *testing.T) {
			s := startDemoScreenSized(t, cols, rows, "")
			if err := os.WriteFile(filepath.Join(s.dir, "notes.txt"), []byte("one\ntwo\nthree\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			s.prompt("sh -c 'echo notes.txt:2:1: boom; echo notes.txt:3:1: bang; exit 1'")
			s.waitShows(10*time.Second, exitMarker(1))
			s.keys("Escape", ":AgentTerminals", "Enter")
			s.waitShows(5*time.Second, "ID      STATE")
			s.keys("Q")
			sc := s.waitShows(5*time.Second, "notes.txt|2 col 1| boom", "notes.txt|3 col 1| bang", "term-1: 2 entries in the quickfix list")
			lines := strings.Split(strings.TrimPrefix(sc, "the screen:\n"), "\n")
			row := func(what string, match func(string) bool) int {
				t.Helper()
				for i, l := range lines {
					if match(l) {
						return i
					}
				}
				t.Fatalf("no row of %s on the screen:\n%s", what, sc)
				return 0
			}
			code := row("the code's status line", func(l string) bool { return strings.Contains(l, "prompt of demo 1") })
			split := row("the split's status line", func(l string) bool { return strings.HasPrefix(l, "term-1 · exit 1") })
			list := row("the list's status line", func(l string) bool { return strings.HasPrefix(l, "agentrun terminals ") && !strings.Contains(l, "—") }) // (0.7.2: no [-])
			qf := row("the first quickfix item", func(l string) bool { return strings.HasPrefix(l, "notes.txt|2 col 1| boom") })
			heights := fmt.Sprintf("code %d, split %d, list %d, quickfix %d rows", code, split-code-1, list-split-1, rows-2-qf)
			if h := rows - 2 - qf; h < 2 || h > 3 {
				t.Errorf("the quickfix window of 2 items: %s:\n%s", heights, sc)
			}
			if code < 6 || split-code-1 < 3 || list-split-1 < 3 || !shows(sc, "term-1  exit 1") {
				t.Errorf("the code, the split and the list keep usable heights: %s:\n%s", heights, sc)
			}
		})
	}
}

// TestScreenFailuresToQuickfix: Q in the split of a failing go test and
// of a failing Python unittest loads the right files and lines into the
// quickfix list (a go test names its file relative to its package) and
// shows the first in the editor window, where :cnext goes on; Q where
// nothing failed says so.
func TestScreenFailuresToQuickfix(t *testing.T) {
	s := startScreen(t, 120, 35, "")
	write := func(name, text string) {
		t.Helper()
		p := filepath.Join(s.dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("go.mod", "module example.com/q\n\ngo 1.21\n")
	write("calc/calc.go", "package calc\n\nfunc Mul(a, b int) int { return a + b }\n")
	write("calc/calc_test.go", "package calc\n\nimport \"testing\"\n\nfunc TestMul(t *testing.T) {\n\tif got := Mul(2, 3); got != 6 {\n\t\tt.Errorf(\"Mul(2, 3) = %d, want 6\", got)\n\t}\n}\n")
	write("test_py.py", "import unittest\n\n\nclass T(unittest.TestCase):\n    def test_one(self):\n        self.assertEqual(1, 2)\n\n    def test_two(self):\n        self.assertEqual('a', 'b')\n")
	s.keys(":AgentRun demo", "Enter")
	s.waitShows(10*time.Second, "agentrun · demo · ready")
	// the machine's build cache: the screen's HOME is new, and a cold one
	// compiles the testing package for many seconds
	cache, err := exec.Command("go", "env", "GOCACHE").Output()
	if err != nil {
		t.Fatalf("go env GOCACHE: %v", err)
	}
	s.prompt("GOCACHE=" + strings.TrimSpace(string(cache)) + " go test -count=1 ./calc/")
	s.waitShows(60*time.Second, exitMarker(1))
	s.keys("Escape", ":wincmd j", "Enter", "Q")
	s.waitShows(5*time.Second, "calc/calc_test.go|7| Mul(2, 3) = 5, want 6", "term-1: 1 entry in the quickfix list (go)")
	s.keys(`:lua print("in " .. vim.fn.expand("%:t") .. " at " .. vim.fn.line("."))`, "Enter")
	s.waitShows(5*time.Second, "in calc_test.go at 7")

	s.keys(":wincmd l", "Enter", "i")
	s.prompt("python3 -m unittest test_py")
	s.waitShows(20*time.Second, "python3 -m unittest… exited with code 1.") // (the tool call says it whole)
	// out of Insert mode in the prompt first, as a person sees it go
	s.keys("Escape")
	s.waitFor("Normal mode", 5*time.Second, func(sc string) bool { return !strings.Contains(sc, "-- INSERT --") })
	s.keys(":AgentQuickfix term-2", "Enter")
	s.waitShows(5*time.Second, "test_py.py|6| AssertionError: 1 != 2", "test_py.py|9| AssertionError: 'a' != 'b'", "term-2: 2 entries in the quickfix list (python); :cnext goes to the next")
	s.keys(":cnext", "Enter", `:lua print("in " .. vim.fn.expand("%:t") .. " at " .. vim.fn.line("."))`, "Enter")
	s.waitShows(5*time.Second, "in test_py.py at 9")

	s.keys(":AgentQuickfix term-3", "Enter")
	s.waitShows(5*time.Second, `unknown terminal "term-3"`)
	s.keys(":wincmd l", "Enter", "i")
	s.prompt("echo all fine")
	s.waitShows(10*time.Second, "echo all fine exited with code 0.")
	s.keys("Escape", ":AgentQuickfix term-3", "Enter")
	s.waitShows(5*time.Second, "term-3: no file:line in its output")
}

// TestScreenEndOutOfSightIsSaid: a command that ends while no window
// shows it (its split closed) is said once, with how it ended and its
// last line; one that ends in sight is not.
func TestScreenEndOutOfSightIsSaid(t *testing.T) {
	s := startDemoScreenSized(t, 120, 35, "")
	s.prompt("echo in-sight; exit 4")
	s.waitShows(10*time.Second, exitMarker(4))
	// it ends when the test says so: once its split is closed
	s.prompt("while [ ! -e go ]; do sleep 0.1; done; echo last-words; exit 3")
	s.waitShows(10*time.Second, splitOf("term-2"))
	s.keys("Escape", ":wincmd j", "Enter", "q") // the split closes; it runs on
	s.waitFor("the split to close", 5*time.Second, func(sc string) bool { return !shows(sc, splitOf("term-2")) })
	if err := os.WriteFile(filepath.Join(s.dir, "go"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	s.waitShows(10*time.Second, "term-2 ended (exit 3): last-words — while [ ! -e go ]")
	s.keys(":messages", "Enter")
	sc := s.waitShows(5*time.Second, "term-2 ended (exit 3)")
	if n := strings.Count(sc, "term-2 ended"); n != 1 {
		t.Errorf("the end was said %d times:\n%s", n, sc)
	}
	if strings.Contains(sc, "term-1 ended") {
		t.Errorf("an end in sight was said too:\n%s", sc)
	}
}

// TestFailureFormats: the errorformat chosen by the command reads what
// each tool prints as a person reads it: file, line, column, message.
func TestFailureFormats(t *testing.T) {
	e := startEditor(t, "")
	tests := []struct{ command, output, want string }{
		{"go vet ./bad/", "# example.com/v/bad\nvet: bad/bad.go:4:9: cannot use \"x\" as int value", `bad/bad.go|4 col 9| cannot use "x" as int value`},
		{"go test ./calc/", "--- FAIL: TestMul (0.00s)\n    calc_test.go:7: Mul(2, 3) = 5, want 6", "calc_test.go|7| Mul(2, 3) = 5, want 6"},
		{"python3 -m unittest test_py", "Traceback (most recent call last):\n  File \"test_py.py\", line 6, in test_one\n    self.assertEqual(1, 2)\nAssertionError: 1 != 2", "test_py.py|6| AssertionError: 1 != 2 (in test_one)"},
		{"pytest -q", "test_x.py:12: AssertionError", "test_x.py|12| AssertionError"},
	}
	for _, tc := range tests {
		var got []string
		e.lua(`local cmd, out = ...
			local q = require("agentrun.ui.quickfix")
			local efm = q.errorformat(cmd)
			local res = {}
			if q.program(cmd) == "python" then -- Python's tracebacks, frame by frame
				for _, it in ipairs(q.tracebacks(vim.split(out, "\n"))) do
					table.insert(res, string.format("%s|%d| %s", it.name, it.lnum, it.text))
				end
			end
			for _, it in ipairs(vim.fn.getqflist({ lines = vim.split(out, "\n"), efm = efm }).items) do
				if it.valid == 1 then
					local text = vim.trim((it.text or ""):gsub("%s*\n%s*", " "))
					table.insert(res, string.format("%s|%d%s| %s", vim.fn.bufname(it.bufnr), it.lnum, it.col > 0 and (" col " .. it.col) or "", text))
				end
			end
			return res`, &got, tc.command, tc.output)
		if len(got) != 1 || got[0] != tc.want {
			t.Errorf("%s: read %q, want %q", tc.command, got, tc.want)
		}
	}
}
