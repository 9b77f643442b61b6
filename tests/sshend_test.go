package tests

import (
	"fmt"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/agentrun/agentrun.nvim/internal/shquote"
)

// How a session on another machine ends when the link to it is down or
// its backend there is gone: every message a sentence that says what
// happened and what to do.

// noteCount counts the notifications so far that contain want.
func (e *editor) noteCount(want string) int {
	e.t.Helper()
	n := 0
	for _, x := range e.notes() {
		if strings.Contains(x.Msg, want) {
			n++
		}
	}
	return n
}

// eventSince reports whether the User autocommand pattern fired after
// the first since events.
func (e *editor) eventSince(pattern string, since int) bool {
	e.events.mu.Lock()
	defer e.events.mu.Unlock()
	for _, p := range e.events.seen[min(since, len(e.events.seen)):] {
		if p == pattern {
			return true
		}
	}
	return false
}

// TestRemoteAgentEndsHonestly: with the link to a remote agent down, an
// approval answered says that the answer did not reach the agent and
// that the question comes again (it does, once the session is taken up);
// <C-c> in the prompt (Insert mode) and X in the chat say the link is
// down and how to take the session up, in the chat too. Then the link
// drops again and the backend there dies meanwhile (kill -9, as an OOM
// or a reboot would; with the link up: TestRemoteAgentBackendKilled): :AgentRun ssh://…
// says the session is gone with it, its chat says so and reads "ended",
// its command's split reads ended (not "link lost"), and no new session
// starts in its place; the next :AgentRun starts one.
func TestRemoteAgentEndsHonestly(t *testing.T) {
	r := startSSHRemote(t)
	e := startEditor(t, fmt.Sprintf(`vim.env.AGENTRUN_SSH_CONFIG = %q; require("agentrun").setup({ terminal = { approve = "ask" } })`, r.Config))
	e.lua(`_G.asked = 0; vim.ui.select = function(items, opts, cb) _G.asked = _G.asked + 1; _G.late = cb end`, nil)
	asked := func(n int) {
		t.Helper()
		e.waitFor(fmt.Sprintf("the approval asked %d times", n), 20*time.Second, func() (bool, string) {
			var got int
			e.lua(`return _G.asked`, &got)
			return got == n, e.chat()
		})
	}
	url := r.URL()
	e.runDemoOn(r)
	cmd := `bash -c 'echo started-there; sleep 300'`
	e.cmd("AgentPrompt " + cmd)
	asked(1)

	// The link drops while the question is up; the user answers.
	e.killLink()
	e.waitNote("(agentrun) link lost; its sessions go on there: :AgentRun "+url, 15*time.Second)
	e.lua(`_G.late("Run it", 1)`, nil)
	lost := "the link to " + url + " is down, so your answer did not reach the agent: the question is asked again when :AgentRun " + url + " takes the session up"
	e.waitNote(lost, 5*time.Second)
	chat := e.waitChat(lost, 5*time.Second)
	if strings.Contains(chat, "→ run") {
		t.Errorf("the chat says the command was run, though the answer never reached the agent:\n%s", chat)
	}

	// <C-c> in the prompt, in Insert mode, and X in the chat.
	down := "(agentrun) link lost; the session goes on there: :AgentRun " + url
	e.lua(`_G.notes = {}; local s = require("agentrun.state").session(); vim.api.nvim_set_current_win(vim.fn.bufwinid(s.chat.prompt_buf))`, nil)
	e.lua(`vim.api.nvim_feedkeys(vim.api.nvim_replace_termcodes("i<C-c>", true, false, true), "m", false)`, nil)
	e.waitNote(down, 5*time.Second)
	e.lua(`local s = require("agentrun.state").session(); vim.cmd("stopinsert"); vim.api.nvim_set_current_win(vim.fn.bufwinid(s.chat.buf))`, nil)
	e.lua(`vim.api.nvim_feedkeys("X", "m", false)`, nil)
	e.waitFor("X said the link is down", 5*time.Second, func() (bool, string) {
		return e.noteCount(down) == 2, fmt.Sprintf("%+v", e.notes())
	})
	if n := e.noteCount("no running session"); n != 0 {
		t.Errorf("<C-c> or X said \"no running session\" of a session that goes on there: %+v", e.notes())
	}
	if c := strings.Count(strings.ReplaceAll(e.chat(), "\n", " "), down); c != 2 {
		t.Errorf("the chat says the link is down %d times after <C-c> and X, want 2 (a message alone hides behind -- INSERT --):\n%s", c, e.chat())
	}

	// Taken up again: the question comes again, and its answer runs it.
	e.cmd("AgentRun! " + url)
	asked(2)
	e.lua(`_G.late("Run it", 1)`, nil)
	term := e.waitTerminal(cmd, 15*time.Second)
	e.waitBuf(term.Bufnr, 15*time.Second, "started-there")

	// The link drops again, and the backend there dies meanwhile.
	backends := r.remoteBackends()
	if len(backends) != 1 {
		t.Fatalf("want one backend there, have %+v", backends)
	}
	e.lua(`_G.notes = {}`, nil)
	e.killLink()
	e.waitNote("link lost", 15*time.Second)
	if err := syscall.Kill(backends[0].PID, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	since := e.mark()
	e.cmd("AgentRun " + url + " demo")
	e.waitNote("(agentrun) the demo session on "+url+" is gone (its chat says why); :AgentRun "+url+" demo starts a new one", 20*time.Second)
	chat = e.waitChat("(agentrun) the backend on "+url+" is gone (it was killed, the machine restarted, or its agent ended while the link was down): this session ended there, and its commands with it. :AgentRun "+url+" demo starts a new one", 5*time.Second)
	if h := e.statusLine(); !strings.HasSuffix(h, "· ended") {
		t.Errorf("the gone session's chat reads %q, want it ended", h)
	}
	if e.eventSince("AgentRunSessionStarted", since) {
		t.Errorf("a new session started in place of the one that is gone")
	}
	var st struct {
		State    string `msgpack:"state"`
		LinkLost bool   `msgpack:"link_lost"`
	}
	e.lua(`for _, x in ipairs(require("agentrun").status().terminals) do if x.id == ... then return x end end`, &st, term.ID)
	if st.State != "exited" || st.LinkLost {
		t.Errorf("the gone backend's command reads %+v, want exited and no link lost", st)
	}
	e.waitBuf(term.Bufnr, 5*time.Second, "[agentrun: ended: the backend on "+remoteAlias+" is gone]")
	e.cmd("AgentTerminals")
	var listed []string
	e.lua(`return vim.api.nvim_buf_get_lines(0, 0, -1, false)`, &listed)
	if l := strings.Join(listed, "\n"); strings.Contains(l, "link lost") || !strings.Contains(l, "backend gone") {
		t.Errorf(":AgentTerminals lists it as:\n%s", l)
	}
	e.cmd("close")

	// The next :AgentRun starts a new session there.
	since = e.mark()
	e.cmd("AgentRun " + url + " demo")
	e.waitEvent("AgentRunSessionStarted", since, 20*time.Second)
	var key string
	e.lua(`return require("agentrun.state").current`, &key)
	if key == "1@"+remoteAlias {
		t.Errorf("the new session is the old one's key %q", key)
	}
}

// paneSSH returns the ssh running serve-backend under the screen's pane
// (0 when none).
func (s *screen) paneSSH() int {
	s.t.Helper()
	pane, err := strconv.Atoi(strings.TrimSpace(s.tmux("display", "-p", "-t", "0", "#{pane_pid}")))
	if err != nil {
		s.t.Fatal(err)
	}
	for _, p := range descendants(pane) {
		if strings.HasPrefix(p.Cmdline, "ssh ") && strings.Contains(p.Cmdline, "serve-backend") {
			return p.PID
		}
	}
	return 0
}

// TestRemoteQuitWhileTheMachineIsAwayOnScreen: :qa while the machine of a
// remote agent cannot be reached (its link dropped, sshd down) says,
// before Neovim is gone, what goes on running there and that the next
// :AgentRun there ends it first; it does: with the machine back, the
// next Neovim's :AgentRun ssh://… ends that session and its command
// there (and says so), and starts a new one rather than taking the old
// one up.
func TestRemoteQuitWhileTheMachineIsAwayOnScreen(t *testing.T) {
	onceAcrossNeovims(t)
	r := startSSHRemote(t)
	s := startShellScreen(t, 120, 40, fmt.Sprintf("vim.env.AGENTRUN_SSH_CONFIG = %q", r.Config))
	s.waitShows(10*time.Second, "~")
	url := r.URL()
	s.keys(":AgentRun "+url+" demo", "Enter")
	s.waitShows(20*time.Second, "demo on "+remoteAlias)
	s.typeText(`bash -c 'echo up-there; sleep 300'`)
	s.keys("C-s")
	eventually(t, "the command running there", 20*time.Second, func() (bool, string) { return r.running("sleep 300"), "" })
	s.waitShows(10*time.Second, "\nup-there")

	r.StopSSHD()
	ssh := s.paneSSH()
	if ssh == 0 {
		t.Fatal("no ssh running serve-backend under Neovim")
	}
	if err := syscall.Kill(ssh, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	s.waitShows(15*time.Second, "link lost")
	s.keys("Escape", `C-\`, "C-n", ":qa", "Enter")
	sc := s.waitShows(20*time.Second, "(agentrun) "+url+" could not be reached to end what runs there", "Press ENTER to quit")
	unwrapped := func(s string) string { return strings.Join(strings.Fields(s), "") } // the message wraps anywhere
	if want := "the demo session (1@" + remoteAlias + ") with `bash -c 'echo up-there; sleep 300'` goes on there until agentrun reaches " + url + " again; the next :AgentRun " + url + " ends it first."; !strings.Contains(unwrapped(sc), unwrapped(want)) {
		t.Errorf("the message at quit does not say %q:\n%s", want, sc)
	}
	if !r.running("sleep 300") {
		t.Errorf("the command there ended, though its machine could not be reached")
	}
	s.keys("Enter")
	s.waitFor("Neovim gone, the shell back", 15*time.Second, func(string) bool { return s.paneSSH() == 0 && !s.nvimRuns() })

	// The machine is back; the same user's next Neovim, the same command.
	r.StartSSHD()
	s.keys("C-l", "Up", "Enter")
	s.waitShows(10*time.Second, "~")
	s.keys(":AgentRun "+url+" demo", "Enter")
	r.waitGone("the session the quit Neovim left there ended", 30*time.Second, "sleep 300", "up-there")
	sc = s.waitShows(20*time.Second, "demo on "+remoteAlias)
	if strings.Contains(sc, "up-there") || strings.Contains(sc, "took up") {
		t.Errorf("the next Neovim took up the session the quit one left to end:\n%s", sc)
	}
	if backends := r.remoteBackends(); len(backends) != 1 {
		t.Errorf("want the one new backend there, have %+v", backends)
	}
	// and it says so
	s.keys("Escape", ":messages", "Enter")
	s.waitFor("the note that the session left running was ended", 10*time.Second, func(sc string) bool {
		return strings.Contains(unwrapped(sc), unwrapped("ended the agent sessions on "+url+" that a Neovim left running there when it quit"))
	})
}

// nvimRuns reports whether a Neovim runs under the screen's pane.
func (s *screen) nvimRuns() bool { return s.runs(nvimBin) }

// TestRemoteAgentSaysWhereWhatIsWrong: what is wrong on another machine
// is said as being there, with what a person runs to check it: ssh's
// hint names the ssh_config the links use ($AGENTRUN_SSH_CONFIG); a file
// given as the directory there is said to be a file; an agent command
// missing there is said missing there, with where to install it.
func TestRemoteAgentSaysWhereWhatIsWrong(t *testing.T) {
	onceAcrossNeovims(t)
	r := startSSHRemote(t)
	e := remoteAgentEditor(t, r)
	port := freePort(t)
	e.cmd(fmt.Sprintf("AgentRun %s:%d demo", r.URL(), port))
	e.waitNote(fmt.Sprintf("Connection refused; try `ssh -F %s -p %d %s true`", shquote.Quote(r.Config), port, remoteAlias), 30*time.Second)

	e.lua(`_G.notes = {}`, nil)
	e.cmd("AgentRun " + r.URL() + "/etc/passwd demo")
	e.waitNote("(agentrun) /etc/passwd on "+remoteAlias+" is a file, not a directory: give a directory (or none, for the home directory)", 30*time.Second)

	e.lua(`_G.notes = {}`, nil)
	e.lua(`require("agentrun").setup({ agents = { ghost = { cmd = { "no-such-agent-xyz" }, host = ... } } })`, nil, r.URL())
	e.cmd("AgentRun ghost")
	n := e.waitNote(`agent "ghost": command "no-such-agent-xyz" not found on `+remoteAlias+"; install it there", 30*time.Second)
	for _, bad := range []string{"stack traceback", "rpc error", "jsonrpc", ".go:", "exec:"} {
		if strings.Contains(n.Msg, bad) {
			t.Errorf("the missing command there is said as %q", n.Msg)
		}
	}
}

// TestRemoteAgentTerminalNamedOnce: a remote agent's command is named
// with its machine once, ssh://host/PID:term-N as the README writes it:
// `agentrun ls ssh://host` lists it so, in 120 columns without wrapping;
// :AgentAttach takes that name (and the longer one with @host) — in the
// Neovim whose agent runs it, by opening its own split (not listing it a
// second time), in another Neovim by attaching it; `agentrun kill` takes
// it too.
func TestRemoteAgentTerminalNamedOnce(t *testing.T) {
	onceAcrossNeovims(t)
	r, e := remoteDemo(t)
	cmd := `bash -c 'echo named-once; sleep 300'`
	term := e.promptRunning(cmd, "named-once")
	backends := r.remoteBackends()
	if len(backends) != 1 {
		t.Fatalf("want one backend there, have %+v", backends)
	}
	name := fmt.Sprintf("%s/%d:term-1", r.URL(), backends[0].PID)

	ls := r.CLI("ls", r.URL())
	ls.Env = append(ls.Env, "COLUMNS=120")
	out, err := ls.CombinedOutput()
	if err != nil {
		t.Fatalf("agentrun ls %s: %v\n%s", r.URL(), err, out)
	}
	if !strings.Contains(string(out), name+" ") || strings.Contains(string(out), "@"+remoteAlias) {
		t.Errorf("agentrun ls does not name the command %s (the machine once):\n%s", name, out)
	}
	for _, l := range strings.Split(strings.TrimRight(string(out), "\n"), "\n") {
		if n := len([]rune(l)); n > 120 {
			t.Errorf("agentrun ls at 120 columns writes a line of %d:\n%s", n, out)
		}
	}

	// Here, both names open the command's own split.
	for _, n := range []string{name, name + "@" + remoteAlias} {
		e.cmd("wincmd t")
		e.cmd("AgentAttach " + n)
		var cur int
		e.lua(`return vim.api.nvim_get_current_buf()`, &cur)
		if cur != term.Bufnr {
			t.Errorf(":AgentAttach %s shows buffer %d, not the command's own split (%d)", n, cur, term.Bufnr)
		}
	}
	count := 0
	for _, x := range e.terminals() {
		if x.Command == cmd {
			count++
		}
	}
	if count != 1 {
		t.Errorf("the command is listed %d times after :AgentAttach of it: %+v", count, e.terminals())
	}

	// Another Neovim attaches it by the README's name.
	e2 := remoteAgentEditor(t, r)
	e2.cmd("AgentAttach " + name)
	e2.waitFor("the split of "+name, 20*time.Second, func() (bool, string) {
		var b int
		e2.lua(`local t = require("agentrun.state").terminals[...]; return t and t.bufnr or 0`, &b, name)
		return b > 0 && strings.Contains(e2.bufLines(b), "named-once"), fmt.Sprintf("%+v %+v", e2.terminals(), e2.notes())
	})

	kill := r.CLI("kill", name)
	if out, err := kill.CombinedOutput(); err != nil {
		t.Fatalf("agentrun kill %s: %v\n%s", name, err, out)
	}
	r.waitGone("the command killed by its name", 15*time.Second, "sleep 300")
}

// TestRemoteApprovalAfterTheLinkDroppedOnScreen: the approval picker of a
// remote agent's command is up when the link drops; the answer typed
// then says, on the screen and in the chat, that it did not reach the
// agent and that the question comes again: not "→ run" or "→ refused"
// as if it had, nor an internal error.
func TestRemoteApprovalAfterTheLinkDroppedOnScreen(t *testing.T) {
	r := startSSHRemote(t)
	s := startShellScreen(t, 120, 40, fmt.Sprintf(`vim.env.AGENTRUN_SSH_CONFIG = %q; require("agentrun").setup({ terminal = { approve = "ask" } })`, r.Config))
	s.waitShows(10*time.Second, "~")
	s.keys(":AgentRun "+r.URL()+" demo", "Enter")
	s.waitShows(20*time.Second, "demo on "+remoteAlias)
	s.typeText(`echo hello-approve`)
	s.keys("C-s")
	s.waitShows(20*time.Second, "the question waits while you type")
	s.keys("Escape")
	s.waitShows(20*time.Second, "1  Run it")
	ssh := s.paneSSH()
	if ssh == 0 {
		t.Fatal("no ssh running serve-backend under Neovim")
	}
	if err := syscall.Kill(ssh, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	s.waitFor("the link's ssh-backend gone", 15*time.Second, func(string) bool { return !s.runs("ssh-backend") })
	s.keys("1")
	said := "(agentrun) the link to " + r.URL() + " is down, so your answer did not reach the agent"
	sc := s.waitFor("the answer said not to have reached the agent", 15*time.Second, func(sc string) bool {
		if !strings.Contains(sc, said) && strings.HasSuffix(strings.TrimSpace(sc), "Press ENTER or type command to continue") {
			s.keys("Enter") // Neovim said the link was lost over the picker (0.7 may): read, on
		}
		return strings.Contains(sc, said) || strings.Contains(strings.ReplaceAll(sc, "\n", " "), "your answer did not reach")
	})
	for _, bad := range []string{"internal error", "→ run", "→ refused", "traceback"} {
		if strings.Contains(sc, bad) {
			t.Errorf("the answer after the link dropped shows %q:\n%s", bad, sc)
		}
	}
}

// runs reports whether a process under the screen's pane has mark in its
// command line.
func (s *screen) runs(mark string) bool {
	s.t.Helper()
	pane, err := strconv.Atoi(strings.TrimSpace(s.tmux("display", "-p", "-t", "0", "#{pane_pid}")))
	if err != nil {
		s.t.Fatal(err)
	}
	for _, p := range descendants(pane) {
		if strings.Contains(p.Cmdline, mark) {
			return true
		}
	}
	return false
}

// localSSH lists the ssh processes here that reach r (ours: they name
// its ssh_config).
func (r *sshRemote) localSSH() []proc {
	var out []proc
	for _, p := range allProcs() {
		if strings.HasPrefix(p.Cmdline, "ssh ") && strings.Contains(p.Cmdline, r.Config) {
			out = append(out, p)
		}
	}
	return out
}

// TestRemoteNothingOfOursOutlivesNeovim: no ssh of ours is left here
// once Neovim is gone, however it went: killed by the hangup of its
// terminal (its session goes on there, for :AgentRun to take up), or
// quit with :qa after :AgentDetach of a command there (the command goes
// on there, for :AgentAttach; the ssh that reached it ends).
func TestRemoteNothingOfOursOutlivesNeovim(t *testing.T) {
	onceAcrossNeovims(t)
	r, e := remoteDemo(t)
	cmd := `bash -c 'echo hup-there; sleep 300'`
	e.promptRunning(cmd, "hup-there")
	if err := syscall.Kill(e.pid, syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	eventually(t, "no ssh of ours left after Neovim's hangup", 10*time.Second, func() (bool, string) {
		return len(r.localSSH()) == 0, fmt.Sprintf("%+v", r.localSSH())
	})
	if !r.running("sleep 300") {
		t.Errorf("the session there did not go on after Neovim's hangup: %+v", r.remoteProcs())
	}

	// A new Neovim takes it up, detaches the command and quits.
	e2 := remoteAgentEditor(t, r)
	e2.cmd("AgentRun " + r.URL() + " demo")
	t2 := e2.waitTerminal(cmd, 20*time.Second)
	// by its id as :AgentTerminals shows it under the machine's line
	// (term-N): no other machine has a term-N
	e2.cmd("AgentDetach " + strings.SplitN(t2.ID, "@", 2)[0])
	e2.waitNote("detached", 10*time.Second)
	// The hint names it as ls does: ssh://host/PID:term-N, the host once.
	hint := regexp.MustCompile(`^\(agentrun\) ` + regexp.QuoteMeta(t2.ID) + ` is detached \(it outlives Neovim\): :AgentAttach (` + regexp.QuoteMeta(r.URL()) + `/\d+:term-\d+)$`)
	var name string
	for _, n := range e2.notes() {
		if m := hint.FindStringSubmatch(n.Msg); m != nil {
			name = m[1]
		}
	}
	if name == "" {
		t.Errorf("no detach hint of the form %s in %+v", hint, e2.notes())
	} else if ls, err := r.CLI("ls", r.URL()).CombinedOutput(); err != nil || !strings.Contains(string(ls), name+" ") {
		t.Errorf("the hint's %s is not how agentrun ls names it (%v):\n%s", name, err, ls)
	} else {
		// agentrun ls on the box names it the same, the URL left out:
		// PID:term-N, not PID:term-N@host.
		onBox := strings.TrimPrefix(name, r.URL()+"/")
		ls, err := exec.Command("ssh", "-F", r.Config, remoteAlias, "--", r.Bin, "ls").CombinedOutput()
		if err != nil || !regexp.MustCompile(`(?m)^`+regexp.QuoteMeta(onBox)+` `).Match(ls) || strings.Contains(string(ls), onBox+"@") {
			t.Errorf("agentrun ls on the box does not name it %s (%v):\n%s", onBox, err, ls)
		}
	}
	_ = e2.v.Command("qa")
	eventually(t, "no ssh of ours left after :AgentDetach and :qa", 10*time.Second, func() (bool, string) {
		return len(r.localSSH()) == 0, fmt.Sprintf("%+v", r.localSSH())
	})
	if !r.running("sleep 300") {
		t.Errorf("the detached command there ended with Neovim: %+v", r.remoteProcs())
	}
	if r.running("demo-agent") {
		t.Errorf("the agent there outlived the Neovim that quit: %+v", r.remoteProcs())
	}
}

// TestRemoteAgentSessionEndedWhileTheLinkWasDown: of two sessions on a
// machine whose link dropped, one ends there meanwhile (its agent
// killed): :AgentRun ssh://… takes the other up, and the chat of the one
// that ended says so and reads ended, its command's split ended (not
// "link lost", not gone).
func TestRemoteAgentSessionEndedWhileTheLinkWasDown(t *testing.T) {
	onceAcrossNeovims(t)
	r := startSSHRemote(t)
	e := remoteAgentEditor(t, r)
	url := r.URL()
	e.runDemoOn(r)
	cmd := `bash -c 'echo first-there; sleep 300'`
	term := e.promptRunning(cmd, "first-there")
	var agents []int
	for _, p := range r.remoteProcs() {
		if strings.Contains(p.Cmdline, "demo-agent") {
			agents = append(agents, p.PID)
		}
	}
	since := e.mark()
	e.lua(`require("agentrun.launch").start("demo", { host = ... })`, nil, url)
	e.waitEvent("AgentRunSessionStarted", since, 20*time.Second)
	var second string
	e.lua(`return require("agentrun.state").current`, &second)
	if len(agents) != 1 || second == "1@"+remoteAlias {
		t.Fatalf("the first session's agent there: %v; the second session: %q", agents, second)
	}

	e.killLink()
	e.waitNote("link lost; its sessions go on there", 15*time.Second)
	if err := syscall.Kill(agents[0], syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	r.waitGone("the first session's command there, ended with its agent", 15*time.Second, "sleep 300")
	e.cmd("AgentRun " + url + " demo")
	e.waitFor("the first session said ended there", 20*time.Second, func() (bool, string) {
		var c string
		// its chat says why, its status line (where the state is said) "· ended"
		e.lua(`local s = require("agentrun.state").sessions["1@" .. ...]; return table.concat(vim.api.nvim_buf_get_lines(s.chat.buf, 0, -1, false), " ") .. " | " .. s.chat:status()`, &c, remoteAlias)
		return strings.Contains(c, "(agentrun) this session ended on "+url+" while the link was down (its agent ended), and its commands with it.") && strings.HasSuffix(c, "· ended"), c
	})
	var st struct {
		FirstEnded, FirstLost, SecondEnded, SecondLost bool
		State                                          string
	}
	e.lua(`local S = require("agentrun.state"); local a, b = S.sessions["1@" .. select(1, ...)], S.sessions[select(2, ...)]
local t = S.terminals[select(3, ...)]
return { FirstEnded = a.ended, FirstLost = a.link_dropped ~= nil, SecondEnded = b.ended, SecondLost = b.link_dropped ~= nil, State = t and t.state or "gone" }`, &st, remoteAlias, second, term.ID)
	if !st.FirstEnded || st.FirstLost || st.SecondEnded || st.SecondLost || st.State != "exited" {
		t.Errorf("after :AgentRun: %+v; want the first ended (not lost) with its command exited, the second taken up", st)
	}
	e.waitBuf(term.Bufnr, 5*time.Second, "[agentrun: ended there while the link was down]")
}

// TestRemoteQuitWithTheListOpenOnScreen: :qa with :AgentTerminals open
// while a command of an agent on another machine runs quits without an
// error, again and again (0.7.2 printed E322 from the list's drawing in
// 2 of 4 quits).
func TestRemoteQuitWithTheListOpenOnScreen(t *testing.T) {
	r := startSSHRemote(t)
	s := startShellScreen(t, 80, 30, fmt.Sprintf("vim.env.AGENTRUN_SSH_CONFIG = %q", r.Config))
	for i := range 4 {
		if i > 0 {
			s.keys("C-l", "Up", "Enter")
		}
		s.waitShows(10*time.Second, "~")
		s.keys(":AgentRun "+r.URL()+" demo", "Enter")
		s.waitShows(20*time.Second, "demo on "+remoteAlias)
		s.typeText(fmt.Sprintf(`bash -c 'echo up-%d; sleep 300'`, i))
		s.keys("C-s")
		s.waitShows(20*time.Second, fmt.Sprintf("\nup-%d", i))
		s.keys("Escape", `C-\`, "C-n", ":AgentTerminals", "Enter")
		s.waitShows(10*time.Second, "agentrun terminals —")
		s.keys(":qa", "Enter")
		sc := s.waitFor("Neovim gone, the shell back", 20*time.Second, func(sc string) bool {
			if strings.Contains(sc, "Press ENTER") {
				return true
			}
			return s.paneSSH() == 0 && !s.nvimRuns()
		})
		for _, bad := range []string{"E322", "Error", "line number out of range"} {
			if strings.Contains(sc, bad) {
				t.Fatalf("quit %d with the list open shows %q:\n%s", i+1, bad, sc)
			}
		}
	}
}

// TestRemoteAgentsStopWhenNoLinkComesBack: a machine whose link dropped
// and is never reached again does not keep its agent running for ever:
// after remote.wait_hours (here 0.002, 7.2 s) with no new link, the agent
// there stops, while the command the agent ran there runs on (its backend
// stays only for it), listed by agentrun ls for :AgentAttach.
func TestRemoteAgentsStopWhenNoLinkComesBack(t *testing.T) {
	onceAcrossNeovims(t)
	r := startSSHRemote(t)
	e := startEditor(t, fmt.Sprintf("vim.env.AGENTRUN_SSH_CONFIG = %q\nrequire(\"agentrun\").setup({ remote = { wait_hours = 0.002 } })", r.Config))
	e.runDemoOn(r)
	e.promptRunning(`bash -c 'echo kept-there; sleep 300'`, "kept-there")
	e.killLink()
	e.waitNote("link lost; its sessions go on there", 15*time.Second)
	if !r.running("demo-agent") {
		t.Fatalf("the agent there ended with the link, before remote.wait_hours: %+v", r.remoteProcs())
	}
	r.waitGone("the agent there, remote.wait_hours after the link dropped", 30*time.Second, "demo-agent")
	if !r.running("sleep 300") {
		t.Errorf("the agent's command there ended with it: %+v", r.remoteProcs())
	}
	if ls, err := r.CLI("ls", r.URL()).CombinedOutput(); err != nil || !regexp.MustCompile(`term-1 +bash -c 'echo kept-there.* running +nobody \(detached\)`).Match(ls) {
		t.Errorf("agentrun ls does not list the command that runs on there (%v):\n%s", err, ls)
	}
}
