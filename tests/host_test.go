package tests

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/agentrun/agentrun.nvim/internal/syncbuf"
)

// A dev server as an agent starts one: it prints a line every 100 ms.
const devServer = `for i in $(seq 1 600); do echo "served $i"; sleep 0.1; done`

// startDevServer has e's agent run devServer and returns its terminal.
func (e *editor) startDevServer() termInfo {
	e.t.Helper()
	e.startSession()
	e.cmd("AgentPrompt " + devServer)
	return e.waitTerminal(devServer, 10*time.Second)
}

// remoteBuf attaches e to terminal name of another host and returns the
// buffer that shows it.
func (e *editor) remoteBuf(name string) int {
	e.t.Helper()
	var buf int
	e.lua(`require("agentrun").attach(...); return vim.api.nvim_get_current_buf()`, &buf, name)
	return buf
}

// cli runs the agentrun binary with e's socket directory.
func (e *editor) cli(stdin io.Reader, args ...string) *exec.Cmd {
	cmd := exec.Command(binary, args...)
	cmd.Env = append(os.Environ(), "XDG_RUNTIME_DIR="+e.rt)
	cmd.Stdin = stdin
	return cmd
}

// TestTwoNeovimsSeeTheSameLiveOutput: the second Neovim (same user, same
// socket directory) lists the first one's agent terminal and shows it
// live: both splits get the lines while the command still runs.
func TestTwoNeovimsSeeTheSameLiveOutput(t *testing.T) {
	rt := runtimeDir(t)
	a := startEditorIn(t, rt, "")
	b := startEditorIn(t, rt, "")
	term := a.startDevServer()
	b.cmd("AgentShell") // b's backend runs too
	name := fmt.Sprintf("%d:%s", a.backendPid(), term.ID)
	var listed []map[string]any
	b.lua(`return require("agentrun.rpc").request("remote_terminals")`, &listed)
	if len(listed) != 1 || listed[0]["id"] != name || listed[0]["title"] != devServer {
		t.Fatalf("b lists %v, want %s", listed, name)
	}
	buf := b.remoteBuf(name)
	b.waitBuf(buf, 10*time.Second, "served 3\n")
	a.waitBuf(term.Bufnr, 10*time.Second, "served 3\n")
	later := b.waitBuf(buf, 10*time.Second, "served 12\n")
	if strings.Contains(later, "[exit") {
		t.Fatal("the command ended before the second Neovim saw it live")
	}
	a.waitBuf(term.Bufnr, 10*time.Second, "served 12\n")
	// Detaching it here says what that means for another Neovim's terminal.
	var ok bool
	b.lua(`return require("agentrun").detach(...)`, &ok, name)
	want := fmt.Sprintf("%s is host %d's: quitting this Neovim leaves it; it ends with its own unless detached there", name, a.backendPid())
	if !ok || !strings.Contains(b.noteText(), want) {
		t.Errorf("detach of another Neovim's terminal: %v, notes:\n%s", ok, b.noteText())
	}
}

// TestTakeoverRaceBetweenNeovims: both Neovims take the agent's terminal
// over at once; exactly one holds it, the other hears why not.
func TestTakeoverRaceBetweenNeovims(t *testing.T) {
	rt := runtimeDir(t)
	a := startEditorIn(t, rt, "")
	b := startEditorIn(t, rt, "")
	term := a.startDevServer()
	b.cmd("AgentShell")
	name := fmt.Sprintf("%d:%s", a.backendPid(), term.ID)
	b.remoteBuf(name)
	var wg sync.WaitGroup
	var okA, okB bool
	wg.Add(2)
	go func() { defer wg.Done(); a.lua(`return require("agentrun").takeover(...)`, &okA, term.ID) }()
	go func() { defer wg.Done(); b.lua(`return require("agentrun").takeover(...)`, &okB, name) }()
	wg.Wait()
	if okA == okB {
		t.Fatalf("takeover: a %v, b %v; want exactly one", okA, okB)
	}
	loser, winner := b, a
	if okB {
		loser, winner = a, b
	}
	var wid string
	winner.lua(`return require("agentrun").status().client_id`, &wid)
	var wpid int
	winner.lua(`return vim.fn.jobpid(require("agentrun.rpc").channel())`, &wpid)
	held := fmt.Sprintf("is held by another Neovim (host %d); q in its split there lets go of it", wpid)
	if loser == b {
		held = "is held by its own Neovim; :AgentDetach, then :qa there, frees it" // a runs it
	}
	if n := loser.noteText(); !strings.Contains(n, held) {
		t.Errorf("the loser was told %q; want it to name the holder %s", n, wid)
	}
	var claim map[string]any
	a.lua(`for _, t in ipairs(require("agentrun").status().terminals) do if t.id == ... then return t.claim end end`, &claim, term.ID)
	if claim["client_id"] != wid {
		t.Errorf("the terminal's claim %v, want the winner %s", claim, wid)
	}
}

// TestDetachedTerminalSurvivesNeovim: a detached terminal outlives its
// Neovim killed with SIGKILL; a new Neovim lists it, reattaches and reads
// its scrollback; killing it from there ends the process, and the old
// backend, with nothing left to serve, exits and removes its socket.
func TestDetachedTerminalSurvivesNeovim(t *testing.T) {
	rt := runtimeDir(t)
	a := startEditorIn(t, rt, "")
	term := a.startDevServer()
	a.waitBuf(term.Bufnr, 10*time.Second, "served 2\n")
	backend := a.backendPid()
	var ok bool
	var logFile string
	a.lua(`return require("agentrun.binary").log_path()`, &logFile)
	a.lua(`return require("agentrun").detach(...)`, &ok, term.ID)
	if !ok {
		t.Fatalf("detach failed: %s", a.noteText())
	}
	if err := syscall.Kill(a.nvimPid(), syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the backend to notice Neovim left and stay for the detached terminal", 10*time.Second, func() (bool, string) {
		b, err := os.ReadFile(logFile)
		return bytes.Contains(b, []byte("editor gone; serving detached terminals")), fmt.Sprintf("%s (%v)\n%s", logFile, err, b)
	})
	if len(findProcesses(lineCmdline(devServer))) == 0 {
		t.Fatal("the detached dev server died with Neovim")
	}
	if !alive(backend) {
		t.Fatal("the backend serving the detached terminal is gone")
	}

	c := startEditorIn(t, rt, "")
	c.cmd("AgentShell")
	name := fmt.Sprintf("%d:%s", backend, term.ID)
	buf := c.remoteBuf(name)
	text := c.waitBuf(buf, 10*time.Second, "served 1\n", "served 2\n")
	if !strings.Contains(text, "served 1\nserved 2\n") {
		t.Errorf("the scrollback does not start at the beginning:\n%s", text)
	}
	c.waitBuf(buf, 10*time.Second, "served 40\n") // live, after the reattach
	c.lua(`return require("agentrun").kill(...)`, &ok, name)
	if !ok {
		t.Fatalf("kill %s from the new Neovim failed: %s", name, c.noteText())
	}
	eventually(t, "the dev server to end", 10*time.Second, func() (bool, string) {
		b, _ := os.ReadFile(logFile)
		return len(findProcesses(lineCmdline(devServer))) == 0, "still running; the old backend's log:\n" + string(b)
	})
	eventually(t, "the old backend to exit", 10*time.Second, func() (bool, string) {
		return !alive(backend), "alive"
	})
	if _, err := os.Stat(filepath.Join(rt, "agentrun", fmt.Sprintf("%d.sock", backend))); err == nil {
		t.Error("the old backend's socket is still there")
	}
}

// TestCLIAttachesToAnAgentsDevServer: `agentrun ls` lists the dev server
// the agent started, `agentrun attach` shows its scrollback and then its
// new lines live, and detaches with Ctrl-]; `agentrun kill` ends it.
func TestCLIAttachesToAnAgentsDevServer(t *testing.T) {
	e := startEditor(t, "")
	term := e.startDevServer()
	e.waitBuf(term.Bufnr, 10*time.Second, "served 3\n")
	name := fmt.Sprintf("%d:%s", e.backendPid(), term.ID)
	out, err := e.cli(nil, "ls").CombinedOutput()
	if err != nil || !strings.Contains(string(out), name) || !strings.Contains(string(out), "running") || !strings.Contains(string(out), "agent (tool call)") {
		t.Fatalf("agentrun ls: %v\n%s", err, out)
	}
	pr, pw, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer pw.Close()
	var got syncbuf.Buffer
	attach := e.cli(pr, "attach", name)
	attach.Stdout, attach.Stderr = &got, &got
	if err := attach.Start(); err != nil {
		t.Fatal(err)
	}
	pr.Close() // the child has its own copy
	eventually(t, "the scrollback and then live lines", 10*time.Second, func() (bool, string) {
		s := got.String()
		return strings.Contains(s, "served 1\r\n") && strings.Contains(s, "[agentrun: attached to "+name) && strings.Contains(s[strings.Index(s, "[agentrun: attached"):], "served"), s
	})
	pw.Write([]byte("typed\r")) // read-only: refused, not typed
	pw.Write([]byte{0x03})      // Ctrl-C: said to reach nothing, not ignored silently
	eventually(t, "attach to say Ctrl-C does not reach a terminal it only watches", 5*time.Second, func() (bool, string) {
		s := got.String()
		return strings.Contains(s, "read-only: what you type does not reach "+name+" (Ctrl-C neither)"), s
	})
	pw.Write([]byte{0x1d}) // Ctrl-] detaches
	if err := attach.Wait(); err != nil {
		t.Fatalf("attach: %v\n%s", err, got.String())
	}
	if s := got.String(); !strings.Contains(s, "detached from "+name+"; it keeps running") {
		t.Errorf("attach output ends:\n%s", s[max(0, len(s)-300):])
	}
	if out, err := e.cli(nil, "kill", name).CombinedOutput(); err != nil || !strings.Contains(string(out), "killed "+name) {
		t.Fatalf("agentrun kill: %v %s", err, out)
	}
	e.waitBuf(term.Bufnr, 10*time.Second, signalMarker("SIGTERM"))
	// one that had ended (a shell of yours, kept listed) is removed, not
	// said to be killed
	e.cmd("AgentShell echo done-here")
	done := e.waitTerminal("echo done-here", 10*time.Second)
	e.waitBuf(done.Bufnr, 10*time.Second, exitMarker(0))
	dname := fmt.Sprintf("%d:%s", e.backendPid(), done.ID)
	if out, err := e.cli(nil, "kill", dname).CombinedOutput(); err != nil || !strings.Contains(string(out), "removed "+dname+" (echo done-here), which had ended (exit 0)") {
		t.Errorf("agentrun kill of an ended terminal: %v %s", err, out)
	}
	if out, err := e.cli(nil, "attach", "term-99").CombinedOutput(); err == nil || !strings.Contains(string(out), `no terminal "term-99" on any host (agentrun ls lists them)`) {
		t.Errorf("attach to an unknown id: %v %s", err, out)
	}
}

// TestCLIHelpAndANarrowList: agentrun --help and -h (also after ls,
// attach, kill) print the usage; ls
// fits a 120-column terminal whatever the command's length.
func TestCLIHelpAndANarrowList(t *testing.T) {
	for _, args := range [][]string{{"--help"}, {"-h"}, {"help"}, {"ls", "--help"}, {"attach", "-h"}, {"kill", "--help"}} {
		arg := strings.Join(args, " ")
		out, err := exec.Command(binary, args...).CombinedOutput()
		if err != nil || !strings.Contains(string(out), "Usage:") || !strings.Contains(string(out), "agentrun attach [--take] ID") {
			t.Errorf("agentrun %s: %v\n%s", arg, err, out)
		}
	}
	e := startEditor(t, "")
	e.startSession()
	long := `for i in $(seq 1 600); do echo "a rather long line of output number $i, as servers print them"; sleep 0.1; done # ` + strings.Repeat("x", 80)
	e.cmd("AgentPrompt " + long)
	term := e.waitTerminal(long, 10*time.Second)
	e.waitBuf(term.Bufnr, 10*time.Second, "number 3,")
	out, err := e.cli(nil, "ls").CombinedOutput()
	if err != nil || !strings.Contains(string(out), "running") {
		t.Fatalf("agentrun ls: %v\n%s", err, out)
	}
	for _, l := range strings.Split(strings.TrimRight(string(out), "\n"), "\n") {
		if n := len([]rune(l)); n > 120 {
			t.Errorf("agentrun ls prints a line of %d columns (wraps at 120):\n%s", n, out)
		}
	}
}

// TestCLISaysWhenNoHostRuns: with no backend running, the CLI says so
// (one that runs without terminals: TestJourneyDetachedTerminalInAFreshNeovim).
func TestCLISaysWhenNoHostRuns(t *testing.T) {
	cmd := exec.Command(binary, "ls")
	cmd.Env = append(os.Environ(), "XDG_RUNTIME_DIR="+runtimeDir(t))
	out, err := cmd.CombinedOutput()
	if err == nil || !strings.Contains(string(out), "no agentrun host is running") {
		t.Fatalf("agentrun ls: %v %s", err, out)
	}
}

// TestNothingOutlivesNeovimByDefault: without detaching, quitting Neovim
// ends the agent's terminal and the user's shell, and the backend and its
// socket are gone.
func TestNothingOutlivesNeovimByDefault(t *testing.T) {
	e := startEditor(t, "")
	term := e.startDevServer()
	e.waitBuf(term.Bufnr, 10*time.Second, "served 2\n")
	backend := e.backendPid()
	socket := filepath.Join(e.rt, "agentrun", fmt.Sprintf("%d.sock", backend))
	if _, err := os.Stat(socket); err != nil {
		t.Fatalf("no socket while the backend runs: %v", err)
	}
	_ = e.v.Command("qa!")
	eventually(t, "the backend to exit", 10*time.Second, func() (bool, string) { return !alive(backend), "alive" })
	if n := len(findProcesses(lineCmdline(devServer))); n != 0 {
		t.Errorf("%d dev servers still run", n)
	}
	if _, err := os.Stat(socket); err == nil {
		t.Error("the socket is still there")
	}
}

// TestKilledHostLeavesNothing: a backend that stayed for a detached
// terminal and is then killed with SIGKILL leaves nothing running: its
// guard kills what it served.
func TestKilledHostLeavesNothing(t *testing.T) {
	e := startEditor(t, "")
	term := e.startDevServer()
	e.waitBuf(term.Bufnr, 10*time.Second, "served 2\n")
	backend := e.backendPid()
	var ok bool
	var logFile string
	e.lua(`return require("agentrun.binary").log_path()`, &logFile)
	e.lua(`return require("agentrun").detach(...)`, &ok, term.ID)
	if !ok {
		t.Fatalf("detach failed: %s", e.noteText())
	}
	if err := syscall.Kill(e.nvimPid(), syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the backend to stay for the detached terminal", 10*time.Second, func() (bool, string) {
		b, _ := os.ReadFile(logFile)
		return bytes.Contains(b, []byte("editor gone; serving detached terminals")), string(b)
	})
	if err := syscall.Kill(backend, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the guard to end the dev server", 10*time.Second, func() (bool, string) {
		pids := findProcesses(lineCmdline(devServer))
		return len(pids) == 0, fmt.Sprintf("still running: %v", pids)
	})
}

// TestTakenOverRemoteTerminalTakesOurSize: once the second Neovim holds
// the first one's terminal, the pty is the size of the second's split,
// and follows it when that window changes; before, it stays as its
// holder sized it.
func TestTakenOverRemoteTerminalTakesOurSize(t *testing.T) {
	rt := runtimeDir(t)
	a := startEditorIn(t, rt, "")
	b := startEditorIn(t, rt, "")
	a.startSession()
	sizer := `for i in $(seq 1 600); do echo "size $(stty size)"; sleep 0.1; done`
	a.cmd("AgentPrompt " + sizer)
	term := a.waitTerminal(sizer, 10*time.Second)
	b.cmd("AgentShell") // b's backend runs too
	name := fmt.Sprintf("%d:%s", a.backendPid(), term.ID)
	buf := b.remoteBuf(name)
	size := func(e *editor, buf int) string {
		var s string
		e.lua(`local w = vim.fn.bufwinid(...); local c, r = require("agentrun.ui.window").size(w); return r .. " " .. c`, &s, buf)
		return s
	}
	aSize := size(a, term.Bufnr)
	b.lua(`vim.cmd("resize 5")`, nil) // a's split below is 7 of 24 rows
	bSize := size(b, buf)
	if aSize == bSize {
		t.Fatalf("both splits are %s: the test cannot tell them apart", aSize)
	}
	b.waitBuf(buf, 10*time.Second, "size "+aSize+"\n")
	var ok bool
	b.lua(`return require("agentrun").takeover(...)`, &ok, name)
	if !ok {
		t.Fatal("b could not take the terminal over")
	}
	a.waitBuf(term.Bufnr, 10*time.Second, "size "+bSize+"\n")
	// Headless 0.7.2 (no UI, so no redraw) fires no WinScrolled for a
	// resize; entering the window again reports it there.
	b.lua(`vim.cmd("resize 5 | wincmd p | wincmd p")`, nil)
	a.waitBuf(term.Bufnr, 10*time.Second, "size "+size(b, buf)+"\n")
}

// TestHeldTerminalLetsGo: a second Neovim takes the first one's agent
// terminal over; the first one's T is refused in a sentence that names
// the holder as the user knows it and the step that frees it, and that
// step (q in the holder's split) really lets go: the first Neovim takes
// it then. Its own shell, which the second one cannot take, is refused
// in the same words with its own way out.
func TestHeldTerminalLetsGo(t *testing.T) {
	rt := runtimeDir(t)
	a := startEditorIn(t, rt, "")
	b := startEditorIn(t, rt, "")
	term := a.startDevServer()
	b.cmd("AgentShell")
	name := fmt.Sprintf("%d:%s", a.backendPid(), term.ID)
	buf := b.remoteBuf(name)
	b.waitBuf(buf, 10*time.Second, "served 2\n")
	var ok bool
	b.lua(`return require("agentrun").takeover(...)`, &ok, name)
	if !ok {
		t.Fatalf("b's takeover failed: %s", b.noteText())
	}
	a.lua(`return require("agentrun").takeover(...)`, &ok, term.ID)
	want := fmt.Sprintf("(agentrun) %s is held by another Neovim (host %d); q in its split there lets go of it", term.ID, b.backendPid())
	if ok || !strings.Contains(a.noteText(), want) {
		t.Fatalf("a's takeover while b holds it: %v, notes:\n%s\nwant %q", ok, a.noteText(), want)
	}
	// q in b's split (its only view there) lets go.
	b.lua(`vim.api.nvim_set_current_win(vim.fn.bufwinid(...))`, nil, buf)
	b.normalKeys("q")
	b.waitNote("you let go of "+name, 5*time.Second)
	b.waitFor("b's list to show the new holder", 5*time.Second, func() (bool, string) {
		var h string
		b.lua(`for _, r in ipairs(require("agentrun.rpc").request("remote_terminals")) do if r.id == ... then return vim.inspect(r.claim) .. tostring(r.mine) end end return ""`, &h, name)
		return strings.HasSuffix(h, "false") && !strings.Contains(h, fmt.Sprint(b.backendPid())), h
	})
	// given back after its tool call ended: the agent's, in the background
	a.waitFor("a's list to show the session holds it, no tool call", 5*time.Second, func() (bool, string) {
		var list string
		a.lua(`vim.o.columns = 200; require("agentrun").terminals(); return table.concat(vim.api.nvim_buf_get_lines(vim.fn.bufnr("agentrun terminals"), 0, -1, false), "\n")`, &list)
		for _, l := range strings.Split(list, "\n") {
			if strings.HasPrefix(l, term.ID+" ") {
				return strings.Contains(l, "background"), list
			}
		}
		return false, list
	})
	a.lua(`return require("agentrun").takeover(...)`, &ok, term.ID)
	if !ok {
		t.Fatalf("a's takeover after b let go: %s", a.noteText())
	}
	// a's own shell: b cannot take it; the sentence says how it frees.
	a.cmd("AgentShell sleep 500")
	shell := a.waitTerminal("sleep 500", 10*time.Second)
	sname := fmt.Sprintf("%d:%s", a.backendPid(), shell.ID)
	b.waitFor("b to list a's shell", 5*time.Second, func() (bool, string) {
		var n int
		b.lua(`local n = 0 for _, r in ipairs(require("agentrun.rpc").request("remote_terminals")) do if r.id == ... then n = n + 1 end end return n`, &n, sname)
		return n == 1, "not listed"
	})
	b.lua(`return require("agentrun").takeover(...)`, &ok, sname)
	want = fmt.Sprintf("(agentrun) %s is held by its own Neovim; :AgentDetach, then :qa there, frees it", sname)
	if ok || !strings.Contains(b.noteText(), want) {
		t.Fatalf("b's takeover of a's shell: %v, notes:\n%s\nwant %q", ok, b.noteText(), want)
	}
	for _, n := range b.notes() {
		if len(n.Msg) > 99 {
			t.Errorf("a note does not fit 100 columns: %q", n.Msg)
		}
	}
}

// TestCLIAttachSaysItsNeovimQuit: `agentrun attach` watching a terminal
// whose Neovim then quits (:qa) says the terminal was closed by its host,
// and why it may have been, not only "was killed" (or, when the exit
// reaches it first, how it ended).
func TestCLIAttachSaysItsNeovimQuit(t *testing.T) {
	e := startEditor(t, "")
	term := e.startDevServer()
	e.waitBuf(term.Bufnr, 10*time.Second, "served 2\n")
	name := fmt.Sprintf("%d:%s", e.backendPid(), term.ID)
	pr, pw, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer pw.Close()
	var got syncbuf.Buffer
	attach := e.cli(pr, "attach", name)
	attach.Stdout, attach.Stderr = &got, &got
	if err := attach.Start(); err != nil {
		t.Fatal(err)
	}
	pr.Close()
	eventually(t, "attach to follow", 10*time.Second, func() (bool, string) {
		return strings.Contains(got.String(), "[agentrun: attached to "+name), got.String()
	})
	_ = e.v.Command("qa!")
	done := make(chan error, 1)
	go func() { done <- attach.Wait() }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		_ = attach.Process.Kill()
		t.Fatalf("attach did not end when the terminal's Neovim quit:\n%s", got.String())
	}
	// The host sends two things as it closes the terminal: its removal
	// from the list and, once the signal took, the exit. Whichever comes
	// first is what attach says; neither is "was killed" alone.
	s := got.String()
	if !strings.Contains(s, name+" was closed by its host (killed there, or the Neovim running it quit)") && !strings.Contains(s, name+" ended (SIGTERM)") {
		t.Errorf("attach output ends:\n%s", s[max(0, len(s)-300):])
	}
}

// TestKilledAttachedTerminalIsNotPicked: a terminal of another Neovim,
// attached here and killed (here, by its own Neovim, or with `agentrun
// kill`), is not what a bare :AgentKill, :AgentTakeover or :AgentDetach
// picks afterwards (from another window): with nothing else running they
// say no terminal runs, as before the attach.
func TestKilledAttachedTerminalIsNotPicked(t *testing.T) {
	for _, by := range []string{"here", "its own Neovim", "agentrun kill", "its own Neovim, its split here closed"} {
		t.Run(by, func(t *testing.T) {
			rt := runtimeDir(t)
			a := startEditorIn(t, rt, "")
			b := startEditorIn(t, rt, "")
			term := a.startDevServer()
			b.lua(`assert(require("agentrun.rpc").ensure())`, nil) // b's backend runs, no terminal of its own
			name := fmt.Sprintf("%d:%s", a.backendPid(), term.ID)
			buf := b.remoteBuf(name)
			b.waitBuf(buf, 10*time.Second, "served 2\n")
			switch by {
			case "here":
				b.cmd("AgentKill " + name)
			case "its own Neovim":
				a.cmd("AgentKill " + term.ID)
			case "its own Neovim, its split here closed":
				b.lua(`vim.api.nvim_win_close(vim.fn.bufwinid(...), true)`, nil, buf)
				a.cmd("AgentKill " + term.ID)
				a.waitBuf(term.Bufnr, 10*time.Second, signalMarker("SIGTERM"))
				// this Neovim hears of the end after its own: until then its
				// :AgentKill picks the terminal as the newest running one
				// (and is told it ended), as a user typing that fast would be
				b.waitFor("this Neovim to know "+name+" ended", 10*time.Second, func() (bool, string) {
					var st string
					b.lua(`local t = require("agentrun.state").terminals[...] return t and t.state or "not known"`, &st, name)
					return st != "running", st
				})
			default:
				if out, err := a.cli(nil, "kill", name).CombinedOutput(); err != nil {
					t.Fatalf("agentrun kill %s: %v\n%s", name, err, out)
				}
			}
			if by != "its own Neovim, its split here closed" {
				b.waitBuf(buf, 10*time.Second, signalMarker("SIGTERM"))
				b.cmd("wincmd p") // back to the window we came from: no terminal's
			}
			for _, c := range []struct{ cmd, want string }{
				{"AgentKill", "no running terminal to kill"},
				{"AgentTakeover", "no running terminal to take over"},
				{"AgentDetach", "no running terminal to detach"},
			} {
				b.lua(`_G.notes = {}`, nil)
				b.cmd(c.cmd)
				if n := b.noteText(); !strings.Contains(n, c.want) {
					t.Errorf(":%s after the attached terminal was killed said %q; want %q", c.cmd, n, c.want)
				}
			}
		})
	}
}

// TestCLIAndListAgreeOnAReleasedTerminal: an agent's command that ended
// and was released stays in :AgentTerminals (to read), but has left its
// host: `agentrun ls` says the host runs with no terminals and why this
// one is not there, and `agentrun kill` of it says the same instead of a
// bare "no terminal".
func TestCLIAndListAgreeOnAReleasedTerminal(t *testing.T) {
	e := startEditor(t, "")
	e.startSession()
	e.cmd("AgentPrompt echo done-here")
	term := e.waitTerminal("echo done-here", 10*time.Second)
	e.waitFor("the terminal released", 10*time.Second, func() (bool, string) {
		var st string
		e.lua(`for _, t in ipairs(require("agentrun").status().terminals) do if t.id == ... then return t.state end end return ""`, &st, term.ID)
		return st == "released", st
	})
	e.cmd("AgentTerminals")
	var list []string
	e.lua(`return vim.api.nvim_buf_get_lines(0, 0, -1, false)`, &list)
	if l := strings.Join(list, "\n"); !regexp.MustCompile(`(?m)^` + term.ID + `\s+exit 0\s+—`).MatchString(l) {
		t.Fatalf(":AgentTerminals does not list the released %s:\n%s", term.ID, l)
	}
	out, err := e.cli(nil, "ls").CombinedOutput()
	if err != nil || !regexp.MustCompile(`^an agentrun host runs \(pid \d+\) but has no terminals now; .*until it is released \(an agent's command that ended and was released has left its host; its Neovim's :AgentTerminals still shows it`).Match(out) {
		t.Errorf("agentrun ls: %v\n%s", err, out)
	}
	out, err = e.cli(nil, "kill", term.ID).CombinedOutput()
	if err == nil || !strings.Contains(string(out), fmt.Sprintf("no terminal %q on any host (agentrun ls lists them); an agent's command that ended and was released has left its host", term.ID)) {
		t.Errorf("agentrun kill %s: %v\n%s", term.ID, err, out)
	}
}
