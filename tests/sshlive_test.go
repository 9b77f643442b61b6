package tests

import (
	"fmt"
	"io"
	"net/http"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"
)

// A link to another machine that dies without a word, and a backend
// there that dies: the beats and keepalives of sshlink/beat.go find the
// first on both sides, and the user is told the truth about each.

// linkSSHD returns the box's sshd process that serves the link of the
// one backend there (the parent of serve-backend).
func (r *sshRemote) linkSSHD() int {
	r.t.Helper()
	backends := r.remoteBackends()
	if len(backends) != 1 {
		r.t.Fatalf("want one backend on the remote, have %+v", backends)
	}
	p, ok := readProc(backends[0].PPID)
	if !ok || !strings.HasPrefix(p.Cmdline, "sshd") {
		r.t.Fatalf("the backend's parent is %+v (%v), not the link's sshd", p, ok)
	}
	return p.PID
}

// TestRemoteAgentHalfOpenLink: the box's sshd of the link frozen (as a
// network gone without a word: neither end's TCP says anything) is found
// within about half a minute; the plain :AgentRun ssh://host the note
// suggests then takes up the same session of the agent that ran there
// (not the default one) in the same backend, with its command, and no
// second backend starts, even before the box has noticed the old link
// is dead, and when the frozen sshd wakes up again.
func TestRemoteAgentHalfOpenLink(t *testing.T) {
	r := startSSHRemote(t)
	e := remoteAgentEditor(t, r)
	e.lua(`require("agentrun").setup({ agents = { second = { cmd = { "agentrun", "demo-agent" }, host = ... } } })`, nil, r.URL())
	since := e.mark()
	e.cmd("AgentRun second")
	e.waitEvent("AgentRunSessionStarted", since, 20*time.Second)
	cmd := `bash -c 'for i in $(seq 1 1500); do echo "n $i"; sleep 0.05; done'`
	term := e.promptRunning(cmd, "n 3\n")
	backend := r.remoteBackends()[0].PID
	sshd := r.linkSSHD()

	if err := syscall.Kill(sshd, syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	woken := false
	wake := func() {
		if !woken {
			woken = true
			_ = syscall.Kill(sshd, syscall.SIGCONT)
		}
	}
	t.Cleanup(wake)
	start := time.Now()
	e.waitNote("link lost; its sessions go on there: :AgentRun "+r.URL(), 45*time.Second)
	if took := time.Since(start); took > 32*time.Second {
		t.Errorf("the half-open link was found after %v, want about 30 s at most", took.Round(time.Second))
	}

	// Taken up at once, the box's sshd still frozen.
	since = e.mark()
	e.cmd("AgentRun " + r.URL())
	e.waitNote("took up 1 session of "+r.URL(), 30*time.Second)
	var agent, key string
	e.lua(`local s = require("agentrun.state").session(); return s.agent`, &agent)
	e.lua(`return require("agentrun.state").current`, &key)
	if agent != "second" || key != "1@"+remoteAlias {
		t.Errorf(":AgentRun %s shows the session %q of %q, want the one that ran there, 1@%s of second", r.URL(), key, agent, remoteAlias)
	}
	if chat := e.chat(); strings.Count(chat, "> "+cmd[:20]) != 1 { // (the echo says its start)
		t.Errorf("the chat taken up does not show the prompt once:\n%s", chat)
	}
	var buf int
	e.waitFor("the split of "+term.ID+" again", 15*time.Second, func() (bool, string) {
		e.lua(`local t = require("agentrun.state").terminals[...]; return t and t.bufnr or 0`, &buf, term.ID)
		return buf > 0 && buf != term.Bufnr, ""
	})
	e.waitBuf(buf, 15*time.Second, "n 200\n")
	if bs := r.remoteBackends(); len(bs) != 1 || bs[0].PID != backend {
		t.Errorf("taking the session up left %+v on the remote, want the one backend %d", bs, backend)
	}

	// The frozen sshd wakes up: nothing changes for the new link.
	wake()
	e.cmd("AgentPrompt echo after-the-wake")
	e.waitChat("after-the-wake", 15*time.Second)
	if bs := r.remoteBackends(); len(bs) != 1 || bs[0].PID != backend {
		t.Errorf("after the old sshd woke: %+v on the remote, want the one backend %d", bs, backend)
	}
	var dropped bool
	e.lua(`return require("agentrun.state").session().link_dropped == true`, &dropped)
	if dropped {
		t.Errorf("the old link waking up marked the session's link lost")
	}
}

// TestRemoteAgentBackendKilled: the backend on the box killed is said as
// its death (not "it goes on there"): the chat reads ended, the command's
// split and :AgentTerminals say the backend is gone; the plain :AgentRun
// ssh://host then starts a new session there.
func TestRemoteAgentBackendKilled(t *testing.T) {
	r, e := remoteDemo(t)
	url := r.URL()
	term := e.promptRunning(`bash -c 'while :; do echo alive; sleep 0.1; done'`, "alive")
	backend := r.remoteBackends()[0].PID
	if err := syscall.Kill(backend, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	n := e.waitNote("the agentrun backend on "+url+" is gone", 30*time.Second)
	if !strings.Contains(n.Msg, "its agents and their commands there ended") {
		t.Errorf("the backend's death reads %q", n.Msg)
	}
	for _, x := range e.notes() {
		if strings.Contains(x.Msg, "go on there") || strings.Contains(x.Msg, "goes on there") {
			t.Errorf("a note says what died goes on: %q", x.Msg)
		}
	}
	chat := e.waitChat("(agentrun) the agentrun backend on "+url+" is gone", 5*time.Second)
	if strings.Contains(chat, "takes it up again") {
		t.Errorf("the chat offers to take the dead session up:\n%s", chat)
	}
	if h := e.statusLine(); !strings.HasSuffix(h, "· ended") {
		t.Errorf("the dead backend's session's chat reads %q, want it ended", h)
	}
	var st struct {
		State    string `msgpack:"state"`
		LinkLost bool   `msgpack:"link_lost"`
	}
	e.lua(`for _, x in ipairs(require("agentrun").status().terminals) do if x.id == ... then return x end end`, &st, term.ID)
	if st.State != "exited" || st.LinkLost {
		t.Errorf("the dead backend's command reads %+v, want exited and no link lost", st)
	}
	e.waitBuf(term.Bufnr, 5*time.Second, "[agentrun: ended: the backend on "+remoteAlias+" is gone]")
	r.waitGone("the command gone with its backend", 15*time.Second, "sleep 0.1")
	e.cmd("AgentTerminals")
	var listed []string
	e.lua(`return vim.api.nvim_buf_get_lines(0, 0, -1, false)`, &listed)
	if l := strings.Join(listed, "\n"); strings.Contains(l, "link lost") || !strings.Contains(l, "backend gone") {
		t.Errorf(":AgentTerminals lists it as:\n%s", l)
	}
	e.cmd("close")

	// The plain :AgentRun ssh://host starts a new session there.
	since := e.mark()
	e.cmd("AgentRun " + url)
	e.waitEvent("AgentRunSessionStarted", since, 20*time.Second)
	var key string
	e.lua(`return require("agentrun.state").current`, &key)
	if key == "1@"+remoteAlias {
		t.Errorf("the new session is the dead one's key %q", key)
	}
}

// TestRemoteQuickfixOpensTheBoxsFile: the failures of a command that ran
// on the box open the box's file, read over the link into a buffer named
// for the machine, not the local buffer of the same path (with other,
// unsaved text); Q, gf and <CR> alike; a file:line that is not on the box
// is said so, and :w of the box's file says it is read-only here.
func TestRemoteQuickfixOpensTheBoxsFile(t *testing.T) {
	r, e := remoteDemo(t)
	url := r.URL()
	path := r.Home + "/calc.go"
	cmd := `bash -c 'printf "box one\nbox two\nbox three\n" > calc.go; echo "calc.go:3: boom"; echo "nothere/gone.go:2: bad"; exit 1'`
	term := e.promptRunning(cmd, "nothere/gone.go:2: bad")
	e.waitEvent("AgentRunTerminalExited", 0, 15*time.Second)

	// A local buffer of the same path, with other text, unsaved.
	e.cmd("set hidden")
	e.cmd("edit " + path)
	e.lua(`vim.api.nvim_buf_set_lines(0, 0, -1, false, { "local edit" })`, nil)
	var localBuf int
	e.lua(`return vim.api.nvim_get_current_buf()`, &localBuf)

	shown := func(how string) {
		t.Helper()
		var name, line string
		e.lua(`return vim.api.nvim_buf_get_name(0)`, &name)
		e.lua(`return vim.api.nvim_get_current_line()`, &line)
		if name != url+path || line != "box three" {
			t.Errorf("%s shows %q at a line reading %q, want the box's %s at line 3 (box three)", how, name, line, url+path)
		}
	}
	e.lua(`require("agentrun.ui.quickfix").load(require("agentrun.state").terminals[...])`, nil, term.ID)
	shown("Q")
	var qf []string
	e.lua(`local out = {}; for _, it in ipairs(vim.fn.getqflist()) do table.insert(out, vim.api.nvim_buf_get_name(it.bufnr) .. ":" .. it.lnum) end; return out`, &qf)
	if len(qf) != 1 || qf[0] != url+path+":3" {
		t.Errorf("the quickfix list is %q, want only the box's %s:3", qf, path)
	}

	// gf and <CR> on the split's line.
	for _, key := range []string{"gf", "<CR>"} {
		e.cmd("buffer " + fmt.Sprint(localBuf))
		e.lua(`local t = require("agentrun.state").terminals[...]; vim.cmd("sbuffer " .. t.bufnr)`, nil, term.ID)
		e.pressMapped(key, `calc.go:3: boom`)
		shown(fmt.Sprintf("%q", key))
		e.cmd("only")
	}
	e.lua(`local t = require("agentrun.state").terminals[...]; vim.cmd("sbuffer " .. t.bufnr); _G.notes = {}`, nil, term.ID)
	e.pressMapped("gf", "nothere/gone.go")
	e.waitNote("nothere/gone.go is not a file in "+r.Home+" or below it (on "+url+")", 5*time.Second)
	e.cmd("only")

	// The local buffer is as the user left it.
	var lines []string
	var modified bool
	e.lua(`return vim.api.nvim_buf_get_lines(...)`, &lines, localBuf, 0, -1, false)
	e.lua(`return vim.bo[...].modified`, &modified, localBuf)
	if strings.Join(lines, "\n") != "local edit" || !modified {
		t.Errorf("the local buffer of %s reads %q (modified %v), want the user's unsaved text", path, lines, modified)
	}
	// The box's file is not written from here.
	e.cmd("buffer " + url + path)
	e.lua(`_G.notes = {}; vim.cmd("silent! write")`, nil)
	e.waitNote(path+" is "+url+"'s file, read over the link and shown here read-only", 5*time.Second)
}

// pressMapped runs what key is mapped to in the current buffer (a split's
// own gf and <CR>) with the cursor on the
// first line matching pattern (in one go: an ended split's text may be
// drawn again meanwhile).
func (e *editor) pressMapped(key, pattern string) {
	e.t.Helper()
	e.lua(`local key, pat = ...
vim.cmd("stopinsert")
vim.api.nvim_win_set_cursor(0, { 1, 0 })
assert(vim.fn.search(pat) > 0, "no line matches " .. pat)
local m = vim.fn.maparg(key, "n", false, true)
assert(m.buffer == 1, "no mapping of " .. key)
if type(m.callback) == "function" then
  m.callback() -- (a split entered may be in Terminal mode still)
else
  vim.cmd("normal " .. vim.api.nvim_replace_termcodes(key, true, false, true)) -- 0.7: the callback is not given
end`, nil, key, pattern)
}

// TestRemotePortAfterTakeUp: a dev server on the box whose session a new
// Neovim takes up (the first one killed) is known to listen on its port
// there, and gx forwards it: the ports its command listens on are among
// what the backend there replays.
func TestRemotePortAfterTakeUp(t *testing.T) {
	r, e := remoteDemo(t)
	if out, err := r.SSH(`cd && echo after-take-up > fwd-marker.txt`).CombinedOutput(); err != nil {
		t.Fatalf("a file on the remote: %v\n%s", err, out)
	}
	port := freePort(t)
	cmd := fmt.Sprintf("python3 -m http.server --bind 127.0.0.1 %d", port)
	e.cmd("AgentPrompt " + cmd)
	term := e.waitTerminal(cmd, 15*time.Second)
	hasPort := func(e *editor) {
		t.Helper()
		e.waitFor("the server's port in Lua's state", 20*time.Second, func() (bool, string) {
			var ports []int
			e.lua(`local t = require("agentrun.state").terminals[...]; return t and t.ports or {}`, &ports, term.ID)
			return slices.Contains(ports, port), fmt.Sprint(ports)
		})
	}
	hasPort(e)
	if err := syscall.Kill(e.pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	e2 := remoteAgentEditor(t, r)
	e2.lua(`_G.opened = {}; vim.ui.open = function(url) table.insert(_G.opened, url) end`, nil)
	e2.waitFor("the backend there lingering", 15*time.Second, func() (bool, string) {
		names, _ := filepath.Glob(filepath.Join(r.RT, "agentrun", "*.backend"))
		return len(names) == 1, fmt.Sprint(names)
	})
	e2.cmd("AgentRun " + r.URL())
	e2.waitTerminal(cmd, 20*time.Second)
	hasPort(e2)
	e2.lua(`require("agentrun.ui.activity").browse(require("agentrun.state").terminals[...])`, nil, term.ID)
	var opened []string
	e2.lua(`return _G.opened`, &opened)
	if len(opened) != 1 {
		t.Fatalf("gx opened %q, want one URL (notes: %+v)", opened, e2.notes())
	}
	client := &http.Client{Timeout: 20 * time.Second}
	resp, err := client.Get(opened[0] + "/fwd-marker.txt")
	if err != nil {
		t.Fatalf("GET through the forward: %v", err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if strings.TrimSpace(string(body)) != "after-take-up" {
		t.Errorf("GET through the forward: %q", body)
	}
}

// TestRemoteReplayKeepsTheApprovals: the chat a new Neovim shows after
// taking a session up keeps the approval records of the first: what was
// asked, refused, and remembered (always allowed here).
func TestRemoteReplayKeepsTheApprovals(t *testing.T) {
	r := startSSHRemote(t)
	setup := fmt.Sprintf(`vim.env.AGENTRUN_SSH_CONFIG = %q; require("agentrun").setup({ terminal = { approve = "ask" } })`, r.Config)
	e := startEditor(t, setup)
	e.lua(`_G.asked = 0; vim.ui.select = function(items, opts, cb) _G.asked = _G.asked + 1; _G.late = cb end`, nil)
	e.runDemoOn(r)
	answer := func(n, idx int) {
		t.Helper()
		e.waitFor(fmt.Sprintf("the approval asked %d times", n), 20*time.Second, func() (bool, string) {
			var got int
			e.lua(`return _G.asked`, &got)
			return got == n, e.chat()
		})
		e.lua(`_G.late(nil, ...)`, nil, idx)
	}
	e.cmd("AgentPrompt echo refused-one")
	answer(1, 2) // Refuse
	e.waitChat("→ refused", 15*time.Second)
	e.idle(15 * time.Second)
	e.cmd("AgentPrompt echo kept-one; sleep 300")
	answer(2, 3) // Always allow
	e.waitChat("→ run, and always allowed here", 15*time.Second)
	e.waitTerminal("echo kept-one; sleep 300", 15*time.Second)
	before := e.chat()

	if err := syscall.Kill(e.pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	e2 := startEditor(t, setup)
	e2.waitFor("the backend there lingering", 15*time.Second, func() (bool, string) {
		names, _ := filepath.Glob(filepath.Join(r.RT, "agentrun", "*.backend"))
		return len(names) == 1, fmt.Sprint(names)
	})
	e2.cmd("AgentRun " + r.URL())
	chat := e2.waitChat("→ run, and always allowed here", 20*time.Second)
	for _, want := range []string{"? run command (on " + remoteAlias, "$ echo refused-one", "→ refused", "$ echo kept-one; sleep 300", "→ run, and always allowed here"} {
		if strings.Count(chat, want) != strings.Count(before, want) {
			t.Errorf("the chat taken up shows %q %d times, the first showed it %d times:\n%s\n--- the first:\n%s", want, strings.Count(chat, want), strings.Count(before, want), chat, before)
		}
	}
}
