package tests

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agentrun/agentrun.nvim/internal/lineshell"
)

// The user's limits on the agent's commands (terminal.allowed_cwd,
// approve, max_run_ms, byte_limit) and the audit log.

// stubSelect replaces vim.ui.select: it records what the picker showed in
// _G.picked and picks the item at index pick (0 closes the picker).
func (e *editor) stubSelect(pick int) {
	e.t.Helper()
	e.lua(`local pick = ...
		_G.picked = {}
		vim.ui.select = function(items, opts, cb)
			table.insert(_G.picked, { prompt = opts.prompt, items = items, kind = opts.kind })
			if pick == 0 then return cb(nil, nil) end
			cb(items[pick], pick)
		end`, nil, pick)
}

type picked struct {
	Prompt string   `msgpack:"prompt"`
	Items  []string `msgpack:"items"`
	Kind   string   `msgpack:"kind"`
}

func (e *editor) picked() []picked {
	e.t.Helper()
	var p []picked
	e.lua(`return _G.picked`, &p)
	return p
}

// cwd is the directory Neovim runs in (the session's cwd).
func (e *editor) cwd() string {
	e.t.Helper()
	var d string
	e.lua(`return vim.fn.getcwd()`, &d)
	return d
}

func TestApproveAlwaysAsksWithTheCommandLine(t *testing.T) {
	for _, tc := range []struct {
		name string
		pick int
		want string
	}{
		{"run", 1, "`echo approved` exited with code 0."},
		{"refuse", 2, "Could not run `echo approved`: the user did not allow the command"},
		{"close the picker", 0, "Could not run `echo approved`: the user did not allow the command"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := startEditor(t, `require("agentrun").setup({ terminal = { approve = "ask" } })`)
			e.stubSelect(tc.pick)
			e.startSession()
			e.cmd("AgentPrompt echo approved")
			e.waitChat(tc.want, 10*time.Second)
			p := e.picked()
			if len(p) != 1 {
				t.Fatalf("picker shown %d times: %+v", len(p), p)
			}
			want := fmt.Sprintf("(agentrun) demo wants to run (in %s):  $ echo approved", e.cwd())
			items := "Run it|Refuse|Always allow in this project: echo approved"
			if p[0].Prompt != want || strings.Join(p[0].Items, "|") != items || p[0].Kind != "agentrun.approve" {
				t.Errorf("picker %+v, want prompt %q with %s", p[0], want, items)
			}
			if tc.pick != 1 && len(e.terminals()) != 0 {
				t.Errorf("a refused command got a terminal: %+v", e.terminals())
			}
		})
	}
}

// TestApproveIsDecidedOnceAtStart: terminal.approve is read when a
// session starts, and only there: set to "run" later (setup() again), a
// session that started under "ask" still asks before a command runs. Lua
// repeated the backend's "run"/"agent" shortcut with the option as it was
// then, and ran the command unasked (fails without the fix).
func TestApproveIsDecidedOnceAtStart(t *testing.T) {
	e := startEditor(t, `require("agentrun").setup({ terminal = { approve = "ask" } })`)
	e.stubSelect(2)
	e.startSession()
	e.lua(`require("agentrun").setup({ terminal = { approve = "run" } })`, nil)
	e.cmd("AgentPrompt echo unasked")
	e.waitChat("Could not run `echo unasked`: the user did not allow the command", 10*time.Second)
	if p := e.picked(); len(p) != 1 || p[0].Kind != "agentrun.approve" {
		t.Errorf("picker shown %+v, want the approval once", p)
	}
	if len(e.terminals()) != 0 {
		t.Errorf("a refused command got a terminal: %+v", e.terminals())
	}
}

func TestApproveFunctionDecides(t *testing.T) {
	e := startEditor(t, `require("agentrun").setup({ terminal = { approve = function(cmd)
		_G.asked = _G.asked or {}
		table.insert(_G.asked, cmd)
		for _, c in ipairs(cmd.commands) do
			if c.program == "rm" then return false end
		end
		if cmd.line:match("ask") then return "ask" end
		if cmd.line:match("boom") then error("boom in approve") end
		return true
	end } })`)
	e.stubSelect(2)
	e.startSession()
	steps := []struct{ line, want string }{
		{"echo fine", "`echo fine` exited with code 0."},
		// the function sees every simple command: an rm behind true; is found
		{"true; /bin/rm -rf nothing-here", "Could not run `true; /bin/rm -rf nothing-here`: agentrun did not run the command (terminal.approve): refused by terminal.approve (the function)"},
		// its true does not run what cannot be known before it runs
		{"$(echo echo) x", "Could not run `$(echo echo) x`: the user did not allow the command"},
		{"rm -rf nothing-here", "Could not run `rm -rf nothing-here`: agentrun did not run the command (terminal.approve): refused by terminal.approve (the function)"},
		{"echo ask me", "Could not run `echo ask me`: the user did not allow the command"},
		{"echo boom", "Could not run `echo boom`: agentrun did not run the command (terminal.approve): refused: terminal.approve failed"},
	}
	for _, s := range steps {
		e.cmd("AgentPrompt " + s.line)
		e.waitChat(s.want, 10*time.Second)
		e.idle(5 * time.Second)
	}
	if p := e.picked(); len(p) != 2 || !strings.Contains(p[0].Prompt, "$ $(echo echo) x") || !strings.Contains(p[1].Prompt, "$ echo ask me") {
		t.Errorf("picker shown %+v, want for the unknown program and the \"ask\" answer", p)
	}
	var asked []struct {
		Line     string   `msgpack:"line"`
		Argv     []string `msgpack:"argv"`
		Cwd      string   `msgpack:"cwd"`
		Agent    string   `msgpack:"agent"`
		Session  string   `msgpack:"session"`
		Commands []struct {
			Text    string `msgpack:"text"`
			Program string `msgpack:"program"`
		} `msgpack:"commands"`
		Unknown []string `msgpack:"unknown"`
	}
	e.lua(`return _G.asked`, &asked)
	if len(asked) != 6 {
		t.Fatalf("approve called %d times: %+v", len(asked), asked)
	}
	a := asked[0]
	if a.Line != "echo fine" || strings.Join(a.Argv, "|") != strings.Join(lineshell.Argv("echo fine"), "|") || a.Cwd != e.cwd() || a.Agent != "demo" || a.Session == "" {
		t.Errorf("approve got %+v", a)
	}
	if c := asked[1].Commands; len(c) != 2 || c[1].Program != "rm" || c[1].Text != "rm -rf nothing-here" {
		t.Errorf("approve got the commands %+v of %q, want true and rm", c, asked[1].Line)
	}
	if u := asked[2].Unknown; len(u) != 1 || !strings.Contains(u[0], "known only when it runs") {
		t.Errorf("approve got unknown %q for %q", u, asked[2].Line)
	}
	n := e.waitNote("terminal.approve failed", 5*time.Second)
	if !strings.HasPrefix(n.Msg, "(agentrun) terminal.approve failed, so the command was refused: ") || !strings.Contains(n.Msg, "boom in approve") {
		t.Errorf("notification %q", n.Msg)
	}
	e.waitChat("✗ refused by terminal.approve (the function)  $ rm -rf nothing-here", time.Second)
}

func TestAllowedCwd(t *testing.T) {
	other := t.TempDir()
	e := startEditor(t, fmt.Sprintf(`require("agentrun").setup({ terminal = { allowed_cwd = { %q } } })`, other))
	e.startSession()
	e.cmd("AgentPrompt echo where")
	want := fmt.Sprintf("Could not run `echo where`: Invalid params: cwd %q is outside the allowed directories (%s)", e.cwd(), other)
	e.waitChat(want, 10*time.Second)
	if ts := e.terminals(); len(ts) != 0 {
		t.Errorf("terminals %+v, want none", ts)
	}
}

// TestAllowedCwdDefaultIsTheSessionCwd: with no terminal.allowed_cwd, a
// command runs in the session's cwd (Neovim's) and is allowed there; one
// asking for a directory outside it is refused (acp's TestAllowedCwdRoots
// covers the refusal with an agent that asks for a cwd).
func TestAllowedCwdDefaultIsTheSessionCwd(t *testing.T) {
	e := startEditor(t, "")
	e.startSession()
	e.cmd("AgentPrompt pwd -P")
	term := e.waitTerminal("pwd -P", 10*time.Second)
	want, err := filepath.EvalSymlinks(e.cwd())
	if err != nil {
		t.Fatal(err)
	}
	e.waitBuf(term.Bufnr, 10*time.Second, want+"\n", exitMarker(0))
	e.waitChat("`pwd -P` exited with code 0.", 10*time.Second)
}

func TestMaxRunTime(t *testing.T) {
	e := startEditor(t, `require("agentrun").setup({ terminal = { max_run_ms = 300 } })`)
	e.startSession()
	began := time.Now()
	e.cmd("AgentPrompt sleep 30")
	term := e.waitTerminal("sleep 30", 10*time.Second)
	e.waitBuf(term.Bufnr, 10*time.Second, signalMarker("SIGTERM"))
	e.waitChat("`sleep 30` was killed by SIGTERM.", 5*time.Second)
	if took := time.Since(began); took > 10*time.Second {
		t.Errorf("took %v", took)
	}
}

func TestByteLimitCapsWhatTheAgentGets(t *testing.T) {
	e := startEditor(t, `require("agentrun").setup({ terminal = { byte_limit = 4 } })`)
	e.startSession()
	e.cmd("AgentPrompt printf 0123456789")
	term := e.waitTerminal("printf 0123456789", 10*time.Second)
	// The display shows everything; the agent gets the last 4 bytes.
	e.waitBuf(term.Bufnr, 10*time.Second, "0123456789", exitMarker(0))
	e.waitChat("exited with code 0 (output truncated)", 10*time.Second)
}

// TestAuditLog: every command leaves audit lines (time, session, cwd,
// argv, exit) in the log file that :checkhealth names.
func TestAuditLog(t *testing.T) {
	e := startEditor(t, "")
	e.startSession()
	e.cmd("AgentPrompt exit 7")
	e.waitChat("`exit 7` exited with code 7.", 10*time.Second)
	path := e.logPath()
	if report := e.checkhealth(); !strings.Contains(report, path) {
		t.Errorf("checkhealth does not show the log %s:\n%s", path, report)
	}
	var line string
	e.waitFor("the audit exit line", 5*time.Second, func() (bool, string) {
		data, _ := os.ReadFile(path)
		for _, l := range strings.Split(string(data), "\n") {
			if strings.Contains(l, "audit: terminal command") && strings.Contains(l, "event=exit") {
				line = l
				return true, ""
			}
		}
		return false, string(data)
	})
	var sid string
	e.lua(`return require("agentrun.state").session().id`, &sid)
	for _, want := range []string{"time=", "session=" + sid, "cwd=" + e.cwd(), fmt.Sprintf("argv=%q", fmt.Sprint(lineshell.Argv("exit 7"))), "exit_code=7"} {
		if !strings.Contains(line, want) {
			t.Errorf("audit line %q lacks %q", line, want)
		}
	}
}

func TestBadPolicyOptionsSayWhatIsWrong(t *testing.T) {
	e := startEditor(t, "")
	for _, tc := range []struct {
		opts string
		want []string
	}{
		{`{ terminal = { allowed_cwd = "/tmp" } }`, []string{"terminal.allowed_cwd", "a list of absolute directories"}},
		{`{ terminal = { allowed_cwd = { "relative/dir" } } }`, []string{"terminal.allowed_cwd", "a list of absolute directories"}},
		{`{ terminal = { approve = "sometimes" } }`, []string{"terminal.approve", `"agent", "ask", "run", rules { allow = { "go test ./..." }, deny = { "rm *" }, otherwise = "ask" | "run" | "refuse" } or a function(cmd) returning true, false or "ask"`}},
		{`{ terminal = { approve = { allow = "go test *" } } }`, []string{"terminal.approve", `rules { allow = { "go test ./..." }`}},
		{`{ terminal = { approve = { deny = { "" } } } }`, []string{"terminal.approve", `rules { allow = { "go test ./..." }`}},
		{`{ terminal = { approve = { allow = {}, otherwise = "maybe" } } }`, []string{"terminal.approve", `otherwise = "ask" | "run" | "refuse"`}},
		{`{ terminal = { approve = { alow = { "ls" } } } }`, []string{"terminal.approve", `rules { allow = `}},
		{`{ terminal = { max_run_ms = -1 } }`, []string{"terminal.max_run_ms", "an integer >= 0 (milliseconds; 0 = no limit)"}},
		{`{ terminal = { max_run_ms = 1.5 } }`, []string{"terminal.max_run_ms"}},
		{`{ terminal = { byte_limit = 0 } }`, []string{"terminal.byte_limit", "a positive integer"}},
	} {
		t.Run(tc.opts, func(t *testing.T) {
			e.t = t
			var res struct {
				OK  bool   `msgpack:"ok"`
				Msg string `msgpack:"msg"`
			}
			e.lua(`local ok, msg = require("agentrun").setup(`+tc.opts+`); return { ok = ok, msg = msg }`, &res)
			if res.OK {
				t.Fatalf("setup(%s) accepted", tc.opts)
			}
			for _, w := range append([]string{"(agentrun) setup: "}, tc.want...) {
				if !strings.Contains(res.Msg, w) {
					t.Errorf("message %q lacks %q", res.Msg, w)
				}
			}
		})
	}
	e.t = t
	var ok bool
	e.lua(`return require("agentrun").setup({ terminal = { approve = { allow = { "ls" }, deny = { "rm *" }, otherwise = "refuse" } } })`, &ok)
	if !ok {
		t.Errorf("setup rejected approval rules")
	}
	e.lua(`return require("agentrun").setup({ terminal = { allowed_cwd = { "~", "/tmp" }, approve = function() return true end, max_run_ms = 60000 } })`, &ok)
	if !ok {
		t.Errorf("setup rejected good policy options")
	}
	var roots []string
	e.lua(`return require("agentrun.config").policy().allowed_cwd`, &roots)
	if home, _ := os.UserHomeDir(); len(roots) != 2 || roots[0] != filepath.Clean(home) || roots[1] != "/tmp" {
		t.Errorf("allowed_cwd sent as %q", roots)
	}
}

// TestCancelWhileAskingToRun: :AgentCancel while the approval picker is
// up refuses the command; a late answer from the picker changes nothing.
func TestCancelWhileAskingToRun(t *testing.T) {
	e := startEditor(t, `require("agentrun").setup({ terminal = { approve = "ask" } })`)
	e.lua(`vim.ui.select = function(items, opts, cb) _G.late = cb end`, nil)
	e.startSession()
	e.cmd("AgentPrompt echo never")
	e.waitFor("the picker", 10*time.Second, func() (bool, string) {
		var up bool
		e.lua(`return _G.late ~= nil`, &up)
		return up, e.chat()
	})
	e.cmd("AgentCancel")
	e.waitChat("Could not run `echo never`: the user cancelled the turn; the command was not run", 10*time.Second)
	e.idle(5 * time.Second)
	e.lua(`_G.late("Run it", 1)`, nil)
	if ts := e.terminals(); len(ts) != 0 {
		t.Errorf("terminals %+v, want none", ts)
	}
	e.cmd("AgentPrompt !help")
	e.waitChat("Prompts: a shell command line", 10*time.Second)
}

// TestOnePolicyForEveryAgent: terminal.approve's rules answer the agent's
// own permission requests that carry a command (as Claude Code's Bash and
// Codex's exec send them) as they answer for our terminals: an allowed
// command is allowed without a question, a denied one refused, another
// asked; "always allow" (the agent's option, or ours in our picker) is
// remembered for the project in a plain file, and the next time no one
// asks. A deny rule wins over a remembered answer. :checkhealth shows the
// rules and the file.
func TestOnePolicyForEveryAgent(t *testing.T) {
	e := claudeLike(t, `approve = { allow = { "echo *", "go test ./..." }, deny = { "rm -rf *" } }`)
	// The picker: counted; the agent's options are picked by kind, ours by
	// label.
	e.lua(`_G.asked = {}; vim.ui.select = function(items, opts, cb)
		table.insert(_G.asked, opts.prompt)
		for i, it in ipairs(items) do
			if (type(it) == "table" and it.kind == _G.want) or it == _G.want then return cb(it, i) end
		end
		cb(nil, nil)
	end`, nil)
	asked := func() int {
		var n int
		e.lua(`return #_G.asked`, &n)
		return n
	}
	say := func(prompt, want string) {
		t.Helper()
		e.cmd("AgentPrompt " + prompt)
		e.waitChat(want, 20*time.Second)
		e.idle(10 * time.Second)
	}
	say("askrun go test ./...", "PERMISSION go test ./...: allow")
	say("askrun rm -rf /tmp/x", "PERMISSION rm -rf /tmp/x: reject")
	// The chat's line for it names the command once (the reason quotes it).
	for _, l := range strings.Split(e.chat(), "\n") {
		if strings.Contains(l, "matches deny") && strings.Count(l, "rm -rf /tmp/x") != 1 {
			t.Errorf("the refused line names the command %d times: %q", strings.Count(l, "rm -rf /tmp/x"), l)
		}
	}
	if n := asked(); n != 0 {
		t.Fatalf("asked %d times for commands the rules decide", n)
	}
	e.lua(`_G.want = "allow_always"`, nil)
	say("askrun make lint", "PERMISSION make lint: always")
	if n := asked(); n != 1 {
		t.Fatalf("asked %d times, want once for a command no rule decides", n)
	}
	var file string
	e.lua(`return require("agentrun.policy").file(vim.fn.getcwd())`, &file)
	raw, err := os.ReadFile(file)
	if err != nil || !strings.Contains(string(raw), "\nmake lint\n") {
		t.Fatalf("the project's file %s: %q, %v", file, raw, err)
	}
	say("askrun make lint", "PERMISSION make lint: allow")
	if n := asked(); n != 1 {
		t.Errorf("asked again for a command always allowed in this project")
	}
	// The same rules for our terminals (the MCP tool): allowed, refused,
	// and "always allow" from our picker, kept in the same file.
	say("run echo ours", "RESULT Terminal term-1: exited with code 0.")
	say("run rm -rf /tmp/nothing-here", "RESULT error the command was not run: agentrun did not run the command (terminal.approve): refused: `rm -rf /tmp/nothing-here` matches deny")
	e.lua(`_G.want = "Always allow in this project: ls"`, nil)
	say("run ls >/dev/null; true", "RESULT Terminal term-2: exited with code 0.")
	say("askrun ls", "PERMISSION ls: allow")
	if n := asked(); n != 2 {
		t.Errorf("asked %d times, want twice", n)
	}
	// An edited file holds: a pattern added by hand, and a deny rule wins
	// over what the file allows.
	raw, _ = os.ReadFile(file)
	if err := os.WriteFile(file, append(raw, []byte("rm -rf *\nnpm run *\n")...), 0o644); err != nil {
		t.Fatal(err)
	}
	say("askrun npm run build", "PERMISSION npm run build: allow")
	say("askrun rm -rf /tmp/y", "PERMISSION rm -rf /tmp/y: reject")
	if n := asked(); n != 2 {
		t.Errorf("asked %d times after the file was edited, want still twice", n)
	}
	e.cmd("checkhealth agentrun")
	var lines []string
	e.lua(`return vim.api.nvim_buf_get_lines(0, 0, -1, false)`, &lines)
	report := strings.Join(lines, "\n")
	for _, want := range []string{
		`terminal.approve: rules (each matches one simple command; a line runs unasked only when every command in it is allowed, and a deny refuses it) — for every agent's commands`,
		`allow "echo *": echo, then any words (one simple command: never what follows ;, &&, || or |)`,
		`allow "go test ./...": exactly: go test ./... (one simple command)`,
		`deny "rm -rf *": refuses a line with rm, then -rf, then any words anywhere in it`,
		"always allowed in this project on this machine (" + file + "): make lint | ls | rm -rf * | npm run *",
	} {
		if !strings.Contains(report, want) {
			t.Errorf("the report lacks %q:\n%s", want, report)
		}
	}
}

// TestRulesCannotBeWalkedAround: the README's rules through the real
// plugin (the demo agent runs each prompt as a command line): a line is
// judged by every simple command in it, so a second command cannot ride
// along on an allowed one, and a deny rule refuses its program however
// it is spelled. What the refused lines would have removed is still
// there.
func TestRulesCannotBeWalkedAround(t *testing.T) {
	type tcase struct{ line, want string }
	for _, tc := range []struct {
		name, rules string
		cases       []tcase
	}{
		{"the README's rules", `{ allow = { "go test ./...", "git status*" }, deny = { "rm -rf *" }, otherwise = "ask" }`, []tcase{
			{"git status --short; rm -rf victim-1", "✗ refused: `rm -rf victim-1` matches deny \"rm -rf *\""},
			{"git status --short && touch made-1", "? run command (in "},
			{"git status $(touch made-2)", "? run command (in "},
			{"git status > made-3", "? run command (in "},
		}},
		{"deny with otherwise run", `{ deny = { "rm -rf *" }, otherwise = "run" }`, []tcase{
			{"/bin/rm -rf victim-2", "✗ refused: `rm -rf victim-2` matches deny"},
			{"cd . && rm -rf victim-3", "✗ refused: `rm -rf victim-3` matches deny"},
			{"true; rm -rf victim-4", "✗ refused: `rm -rf victim-4` matches deny"},
			{"sh -c 'rm -rf victim-5'", "✗ refused: `rm -rf victim-5` matches deny"},
			{"command rm -rf victim-6", "✗ refused: `rm -rf victim-6` matches deny"},
			{"env rm -rf victim-7", "✗ refused: `rm -rf victim-7` matches deny"},
			{"X=rm; $X -rf victim-8", "? run command (in "},
		}},
		// issue 47: lines built for the analyzer's blind spots are asked
		// (the stub refuses), or refused by the deny rule they hid from
		{"issue 47's lines", `{ allow = { "ls *", "echo *", "git status*" }, deny = { "rm *" }, otherwise = "ask" }`, []tcase{
			{"[[ a || rm -r == victim-1 ]]", "? run command (in "},
			{"echo x | xargs -i rm -r victim-2", "✗ refused: `rm -r victim-2` matches deny \"rm *\""},
			{"echo x | xargs -i touch ls made-1", "? run command (in "},
			{"x='a[$(touch made-2)]'; b[x]=1; ls", "? run command (in "},
			{"x='a[$(touch made-3)]'; for ((i=x;0;)); do ls; done", "? run command (in "}, // (${x@P}: AgentPrompt reads @P as a file)
			{"HOME=.; git status", "? run command (in "},
			{"env -C .. ls", "? run command (in "},
			{"script -qc 'rm -r victim-3' /dev/null", "✗ refused: `rm -r victim-3` matches deny \"rm *\""},
		}},
		{"issue 47's lines with otherwise run", `{ allow = { "ls *" }, deny = { "rm *" }, otherwise = "run" }`, []tcase{
			{"[[ a || rm -r == victim-4 ]]", "? run command (in "},
			{"echo x | xargs -i rm -r victim-5", "✗ refused: `rm -r victim-5` matches deny \"rm *\""},
			{"flock lockf rm -r victim-6", "✗ refused: `rm -r victim-6` matches deny \"rm *\""},
			{"env -S 'rm\\_-r\\_victim-7'", "✗ refused: `rm -r victim-7` matches deny \"rm *\""},
			{"x='a[$(touch made-4)]'; (( x ))", "? run command (in "},
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := startEditor(t, `require("agentrun").setup({ terminal = { approve = `+tc.rules+` } })`)
			e.stubSelect(2) // refuse whatever is asked
			dir := e.cwd()
			for i := 1; i <= 8; i++ {
				if err := os.MkdirAll(filepath.Join(dir, fmt.Sprintf("victim-%d", i)), 0o755); err != nil {
					t.Fatal(err)
				}
			}
			e.startSession()
			for _, c := range tc.cases {
				e.cmd("AgentPrompt " + c.line)
				e.waitChat(c.want, 10*time.Second)
				e.waitChat("Could not run `"+c.line+"`", 10*time.Second)
				e.idle(10 * time.Second)
			}
			for i := 1; i <= 8; i++ {
				if _, err := os.Stat(filepath.Join(dir, fmt.Sprintf("victim-%d", i))); err != nil {
					t.Errorf("victim-%d is gone: %v", i, err)
				}
				if _, err := os.Stat(filepath.Join(dir, fmt.Sprintf("made-%d", i))); err == nil {
					t.Errorf("made-%d was made by a refused line", i)
				}
			}
			if ts := e.terminals(); len(ts) != 0 {
				t.Errorf("refused lines got terminals: %+v", ts)
			}
		})
	}
}

// TestApproveAskJudgesTheShellThatRuns (issue 47): under approve = "ask"
// a line runs unasked only when bash, which runs it, runs builtins alone,
// and the chat does not call that "allowed": `: &>/dev/null touch x` is
// `:` with words in bash (dash read `: &` and then touch); `[[ a || rm
// … ]]` has no command and is asked; an env with a sensitive name is
// asked and shown in the question.
func TestApproveAskJudgesTheShellThatRuns(t *testing.T) {
	e := startEditor(t, `require("agentrun").setup({ terminal = { approve = "ask" } })`)
	e.stubSelect(2) // refuse whatever is asked
	dir := e.cwd()
	if err := os.WriteFile(filepath.Join(dir, "victim"), []byte("keep\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	e.startSession()
	e.cmd("AgentPrompt : &>/dev/null touch made")
	e.waitChat("✓ not asked: it runs only builtins that change nothing (`: touch made`)", 10*time.Second)
	e.idle(10 * time.Second)
	e.cmd("AgentPrompt [[ a || rm == victim ]]")
	e.waitChat("? run command (in "+dir+"): $ [[ a || rm == victim ]]  (asked: the line runs no command agentrun can name)", 10*time.Second)
	e.waitChat("Could not run `[[ a || rm == victim ]]`", 10*time.Second)
	e.idle(10 * time.Second)
	e.cmd("AgentPrompt !env GIT_CONFIG_COUNT=1,FOO=bar git status")
	e.waitChat("? run command (in "+dir+", env GIT_CONFIG_COUNT=1 FOO=bar): $ git status  (asked: its environment sets GIT_CONFIG_COUNT, which changes what it runs)", 10*time.Second)
	e.waitChat("Could not run `git status`", 10*time.Second)
	e.idle(10 * time.Second)
	if _, err := os.Stat(filepath.Join(dir, "made")); err == nil {
		t.Errorf("made was made: the line ran in a shell that reads it otherwise than the rules did")
	}
	if _, err := os.Stat(filepath.Join(dir, "victim")); err != nil {
		t.Errorf("victim is gone: %v", err)
	}
	if strings.Contains(e.chat(), "allowed: only builtins") {
		t.Errorf("the chat calls builtins alone allowed:\n%s", e.chat())
	}
}

// TestAgentsOwnCommandInItsDialect (issue 47): an agent's own command is
// judged as it runs: Codex's exec argv word by word (bash -lc runs its
// script, which the deny rule refuses; an argument is one word, however
// it reads), Claude's Bash line as bash reads it.
func TestAgentsOwnCommandInItsDialect(t *testing.T) {
	e := claudeLike(t, `approve = { allow = { "ls *" }, deny = { "rm -rf *" } }`)
	e.lua(`_G.asked = {}; vim.ui.select = function(items, opts, cb)
		table.insert(_G.asked, opts.prompt)
		cb(nil, nil)
	end`, nil)
	say := func(prompt, want string) {
		t.Helper()
		e.cmd("AgentPrompt " + prompt)
		e.waitChat(want, 20*time.Second)
		e.idle(10 * time.Second)
	}
	say(`askargv ["/bin/bash","-lc","rm -rf x"]`, "PERMISSION /bin/bash -lc rm -rf x: reject")
	say(`askargv ["ls","-la","; rm -rf x"]`, "PERMISSION ls -la ; rm -rf x: allow")
	var n int
	e.lua(`return #_G.asked`, &n)
	if n != 0 {
		t.Fatalf("asked %d times for argvs the rules decide", n)
	}
	say(`askrun [[ a || rm -rf x ]]`, "PERMISSION [[ a || rm -rf x ]]: cancelled")
	say(`askargv ["bash","-c","x='a[$(touch P)]'; b[x]=1; ls"]`, "PERMISSION bash -c x='a[$(touch P)]'; b[x]=1; ls: cancelled")
	e.lua(`return #_G.asked`, &n)
	if n != 2 {
		t.Errorf("asked %d times, want twice (a line with no command, an array)", n)
	}
}

// TestRefusedLineNamesTheCommandOnce: the chat's line for a command a
// rule refused quotes it once, in the reason; the whole line follows
// ("$ …") only when the rule judged a part of it.
func TestRefusedLineNamesTheCommandOnce(t *testing.T) {
	e := startEditor(t, `require("agentrun").setup({ terminal = { approve = { deny = { "echo *" } } } })`)
	e.startSession()
	for _, c := range []struct{ line, want string }{
		{"echo hello there", "✗ refused: `echo hello there` matches deny \"echo *\""},
		{"true; echo second", "✗ refused: `echo second` matches deny \"echo *\"  $ true; echo second"},
	} {
		e.cmd("AgentPrompt " + c.line)
		e.waitChat("Could not run `"+c.line+"`", 10*time.Second)
		e.idle(10 * time.Second)
		var got string
		for _, l := range strings.Split(e.chat(), "\n") {
			if strings.HasPrefix(l, "✗ refused: `") && strings.Contains(l, c.line[len(c.line)-6:]) {
				got = l
			}
		}
		if got != c.want {
			t.Errorf("%s: the refused line is %q, want %q\n%s", c.line, got, c.want, e.chat())
		}
	}
}

// TestScreenRefusedCommandIsSaidWhole: a command line with backticks,
// refused by a rule, reads whole on the screen (the demo agent fences it
// with enough backticks, the chat conceals exactly the fences), and the
// agent is told a rule refused it, not the user.
func TestScreenRefusedCommandIsSaidWhole(t *testing.T) {
	s := startDemoScreenSized(t, 160, 30, `require("agentrun").setup({ terminal = { approve = { deny = { "rm *" } } } })`)
	line := "git status `rm -rf x`"
	s.prompt(line)
	sc := s.waitShows(10*time.Second, "Could not run "+line+": agentrun did not run the")
	if strings.Contains(sc, "the user did not allow") {
		t.Errorf("the chat says the user refused a command a rule refused:\n%s", sc)
	}
	if strings.Contains(sc, "Running "+line) {
		t.Errorf("the agent says it runs a command that never ran:\n%s", sc)
	}
}

// TestScreenQuestionShowsEnv (issue 47): the env an agent gives a
// terminal is part of the command: a sensitive name makes the line asked
// even where it would run, and the question shows the env on the screen.
func TestScreenQuestionShowsEnv(t *testing.T) {
	s := startDemoScreenSized(t, 200, 40, `require("agentrun").setup({ terminal = { approve = { allow = { "git status*" } } } })`)
	s.prompt("!env GIT_CONFIG_COUNT=1,FOO=bar git status")
	s.waitShows(10*time.Second, "(the question waits while you type")
	s.keys("Escape") // the user stops typing: the question opens
	// (agentrun's own picker wraps the question at its width, between
	// words: read it joined)
	s.waitFor("the question with the env", 10*time.Second, func(sc string) bool {
		rows := strings.Split(sc, "\n")
		for i := 0; i+1 < len(rows); i++ {
			if j := strings.Index(rows[i], "wants to run (in "); j >= 0 {
				inside := func(r string) string { return strings.Trim(strings.TrimLeft(r, " ~"), " │") }
				joined := inside(rows[i][j:]) + " " + inside(rows[i+1])
				return joined == "wants to run (in "+s.dir+", env GIT_CONFIG_COUNT=1 FOO=bar):  $ git status" && strings.Contains(sc, "2  Refuse")
			}
		}
		return false
	})
	s.keys("2")
	// the chat's line wraps where the folder's name ends: read the chat's
	// column joined
	s.waitFor("the refusal in the chat", 10*time.Second, func(sc string) bool {
		var chat []string
		for _, r := range strings.Split(sc, "\n") {
			if i := strings.LastIndex(r, "│"); i >= 0 {
				chat = append(chat, strings.TrimSpace(r[i+len("│"):]))
			}
		}
		joined := strings.Join(strings.Fields(strings.Join(chat, " ")), " ")
		return strings.Contains(joined, "env GIT_CONFIG_COUNT=1 FOO=bar): $ git status (asked: its environment sets GIT_CONFIG_COUNT") &&
			strings.Contains(joined, "Could not run git status: the user did not allow the command")
	})
}

// TestAlwaysAllowNotOfferedForACdOut: a line asked because it leaves the
// project (env -C /tmp, judged as cd /tmp) is offered no "Always allow":
// keeping only its other commands would not stop it being asked again
// (on 0.7 it offered to keep `touch v`, then asked again). A line asked
// for a command of its own still offers to keep it.
func TestAlwaysAllowNotOfferedForACdOut(t *testing.T) {
	e := startEditor(t, `require("agentrun").setup({ terminal = { approve = { allow = { "ls*" } } } })`)
	e.stubSelect(2)
	e.startSession()
	e.cmd("AgentPrompt env -C /tmp touch v")
	e.waitChat("Could not run `env -C /tmp touch v`: the user did not allow the command", 10*time.Second)
	e.cmd("AgentPrompt touch w")
	e.waitChat("Could not run `touch w`: the user did not allow the command", 10*time.Second)
	p := e.picked()
	if len(p) != 2 {
		t.Fatalf("picker shown %d times: %+v", len(p), p)
	}
	if got := strings.Join(p[0].Items, "|"); got != "Run it|Refuse" {
		t.Errorf("a cd out of the project offered %q, want Run it|Refuse", got)
	}
	if got := strings.Join(p[1].Items, "|"); got != "Run it|Refuse|Always allow in this project: touch w" {
		t.Errorf("touch w offered %q", got)
	}
}

// stubSelectSeq is stubSelect answering the pickers in turn with picks
// (0 closes one; past the end, 0).
func (e *editor) stubSelectSeq(picks ...int) {
	e.t.Helper()
	e.lua(`local picks = ...
		_G.picked = {}
		vim.ui.select = function(items, opts, cb)
			table.insert(_G.picked, { prompt = opts.prompt, items = items, kind = opts.kind })
			local pick = picks[#_G.picked] or 0
			if pick == 0 then return cb(nil, nil) end
			cb(items[pick], pick)
		end`, nil, picks)
}

// TestParallelCommandsAskedAsOne (issue 50): commands an agent runs at
// once, each asked (no rule allows echo), come as one question naming
// each; "Always allow" keeps every one of them (it kept only the first,
// and the others were asked again), the chat says each answer with its
// command, and the same commands run again unasked.
func TestParallelCommandsAskedAsOne(t *testing.T) {
	e := startEditor(t, `require("agentrun").setup({ terminal = { approve = { allow = { "ls*" } } } })`)
	e.stubSelectSeq(3)
	e.startSession()
	e.cmd("AgentPrompt !parallel 3 echo p{i}")
	e.waitChat("parallel n=3 exit0=3", 10*time.Second)
	p := e.picked()
	if len(p) != 1 {
		t.Fatalf("%d questions for 3 commands, want one: %+v", len(p), p)
	}
	if !strings.Contains(p[0].Prompt, "demo wants to run 3 commands (in "+e.cwd()+"):") {
		t.Errorf("the question reads %q", p[0].Prompt)
	}
	for i := 1; i <= 3; i++ {
		if !strings.Contains(p[0].Prompt, fmt.Sprintf(". $ echo p%d\n", i)) && !strings.HasSuffix(p[0].Prompt, fmt.Sprintf(". $ echo p%d", i)) {
			t.Errorf("the question does not name echo p%d: %q", i, p[0].Prompt)
		}
	}
	items := strings.Join(p[0].Items, "|")
	if !strings.HasPrefix(items, "Run all 3|Refuse all 3|Always allow in this project: echo p") || !strings.HasSuffix(items, ", and run all 3|One by one") {
		t.Errorf("the answers offered: %q", items)
	}
	chat := e.chat()
	for i := 1; i <= 3; i++ {
		if !strings.Contains(chat, fmt.Sprintf("→ run: $ echo p%d", i)) {
			t.Errorf("the chat does not tie an answer to echo p%d:\n%s", i, chat)
		}
	}
	e.idle(5 * time.Second)
	e.cmd("AgentPrompt !parallel 3 echo p{i}")
	e.waitFor("the second run", 10*time.Second, func() (bool, string) {
		c := e.chat()
		return strings.Count(c, "parallel n=3 exit0=3") == 2, c
	})
	if p := e.picked(); len(p) != 1 {
		t.Errorf("commands always allowed were asked again: %+v", p[1:])
	}
}

// TestParallelCommandsOneByOne: "One by one" asks each command of the
// question on its own; "Always allow" on the first answers the others
// it allows (the same command) without asking them.
func TestParallelCommandsOneByOne(t *testing.T) {
	e := startEditor(t, `require("agentrun").setup({ terminal = { approve = { allow = { "ls*" } } } })`)
	e.stubSelectSeq(4, 3)
	e.startSession()
	e.cmd("AgentPrompt !parallel 3 echo same")
	e.waitChat("parallel n=3 exit0=3", 10*time.Second)
	p := e.picked()
	if len(p) != 2 {
		t.Fatalf("%d questions, want the group and one on its own: %+v", len(p), p)
	}
	if got := strings.Join(p[1].Items, "|"); got != "Run it|Refuse|Always allow in this project: echo same" {
		t.Errorf("asked on its own with %q", got)
	}
	chat := e.chat()
	if strings.Count(chat, "→ run, and always allowed here: echo same") != 1 || strings.Count(chat, "✓ allowed") != 2 {
		t.Errorf("want one answer and two allowed by it:\n%s", chat)
	}
}

// TestParallelPermissionsAskedAsOne (issue 50): an agent's own commands
// asked at the same moment (Claude's parallel Bash calls, each a
// permission request) come as one question naming each; "Always allow"
// keeps every command and answers each request with the agent's "Always
// Allow"; the chat says each answer above its tool call; the same
// commands are then allowed without a question.
func TestParallelPermissionsAskedAsOne(t *testing.T) {
	e := claudeLike(t, `approve = { allow = { "ls*" } }`)
	e.stubSelectSeq(3)
	e.cmd("AgentPrompt askrunmany make a ;; make b ;; make c")
	e.waitChat("PERMISSIONS make a: always | make b: always | make c: always", 15*time.Second)
	p := e.picked()
	if len(p) != 1 {
		t.Fatalf("%d questions for 3 commands, want one: %+v", len(p), p)
	}
	for _, c := range []string{"a", "b", "c"} {
		if !strings.Contains(p[0].Prompt, ". $ make "+c) {
			t.Errorf("the question does not name make %s: %q", c, p[0].Prompt)
		}
	}
	if items := strings.Join(p[0].Items, "|"); !strings.HasPrefix(items, "Allow all 3|Refuse all 3|Always allow in this project: make ") || !strings.HasSuffix(items, ", and allow all 3|One by one") {
		t.Errorf("the answers offered: %q", items)
	}
	chat := e.chat()
	for _, c := range []string{"a", "b", "c"} {
		if !strings.Contains(chat, "→ allowed: $ make "+c) {
			t.Errorf("the chat does not tie an answer to make %s:\n%s", c, chat)
		}
	}
	e.idle(10 * time.Second)
	e.cmd("AgentPrompt askrunmany make a ;; make c")
	e.waitChat("PERMISSIONS make a: allow | make c: allow", 15*time.Second)
	if p := e.picked(); len(p) != 1 {
		t.Errorf("commands always allowed were asked again: %+v", p[1:])
	}
}
