package tests

import (
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/agentrun/agentrun.nvim/internal/syncbuf"
)

// TestRefusedAttachChangesNothing: an :AgentAttach its host refuses (no
// such host) leaves the terminal split as it was: it still shows the
// terminal it showed, and the cursor stays where it was.
func TestRefusedAttachChangesNothing(t *testing.T) {
	e := startEditor(t, "")
	term := e.startDevServer()
	e.waitBuf(term.Bufnr, 10*time.Second, "served 2\n")
	var before, after string
	show := `return tostring(vim.fn.bufwinid(...)) .. " " .. tostring(vim.api.nvim_get_current_win()) .. " " .. tostring(#vim.api.nvim_list_wins())`
	e.lua(show, &before, term.Bufnr)
	if strings.HasPrefix(before, "-1 ") {
		t.Fatalf("the terminal has no split to begin with: %s", before)
	}
	for _, name := range []string{"424242:term-1", "1:term-1"} {
		var ok bool
		e.lua(`return require("agentrun").attach(...)`, &ok, name)
		e.lua(show, &after, term.Bufnr)
		if ok || after != before {
			t.Errorf(":AgentAttach %s: %v; split window, current window, windows: %s, before %s (notes:\n%s)", name, ok, after, before, e.noteText())
		}
	}
	e.waitNote("no agentrun host 424242 is running", 5*time.Second)
}

// TestAttachOwnUnknownTerminal: :AgentAttach with this Neovim's own
// backend pid and a terminal it does not have says so as :AgentKill does.
func TestAttachOwnUnknownTerminal(t *testing.T) {
	e := startEditor(t, "")
	e.startSession()
	name := fmt.Sprintf("%d:term-77", e.backendPid())
	var ok bool
	e.lua(`return require("agentrun").attach(...)`, &ok, name)
	want := fmt.Sprintf("unknown terminal %q", name)
	if ok || !strings.Contains(e.noteText(), want) {
		t.Fatalf(":AgentAttach %s: %v, notes:\n%s\nwant %q", name, ok, e.noteText(), want)
	}
	if strings.Contains(e.noteText(), "is not PID:term-N") {
		t.Errorf("it says the id is not PID:term-N:\n%s", e.noteText())
	}
}

// TestLetGoGivesBack: a terminal another Neovim took from the agent and
// let go of is as before it took it: T takes it again. The agent's chat
// says where it was taken; a refusal to type names the holder as a
// refused take over does.
func TestLetGoGivesBack(t *testing.T) {
	rt := runtimeDir(t)
	a := startEditorIn(t, rt, "")
	b := startEditorIn(t, rt, "")
	term := a.startDevServer()
	name := fmt.Sprintf("%d:%s", a.backendPid(), term.ID)
	buf := b.remoteBuf(name)
	b.waitBuf(buf, 10*time.Second, "served 2\n")
	var ok bool
	for round := 1; round <= 2; round++ {
		b.lua(`return require("agentrun").takeover(...)`, &ok, name)
		if !ok {
			t.Fatalf("b's takeover %d failed: %s", round, b.noteText())
		}
		if round == 1 {
			a.waitChat(fmt.Sprintf("over in another Neovim (host %d)", b.backendPid()), 10*time.Second)
		}
		// q lets go of what b holds, in the split that shows it: both
		// must be so before the key (the take is granted by a's host).
		// The take's answer says the claim is b's; an older event (round
		// 1's let go) handled after it does not undo that
		// (TestOlderClaimEventKeepsTake).
		b.waitFor("b to hold it, in a split", 5*time.Second, func() (bool, string) {
			var win int
			b.lua(`return vim.fn.bufwinid(...)`, &win, buf)
			var claim string
			b.lua(`local t = require("agentrun.state").terminals[...]; return t and t.user and vim.inspect(t.claim) or ""`, &claim, name)
			n := strings.Count(b.noteText(), name+" is yours now")
			return n == round && win > 0 && strings.Contains(claim, fmt.Sprintf("nvim-%d", b.backendPid())), fmt.Sprintf("window %d, claim %s, notes:\n%s", win, claim, b.noteText())
		})
		b.lua(`vim.api.nvim_set_current_win(vim.fn.bufwinid(...))`, nil, buf)
		b.normalKeys("q")
		b.waitFor("b to let go", 5*time.Second, func() (bool, string) {
			n := strings.Count(b.noteText(), "you let go of "+name)
			return n == round, b.noteText()
		})
		buf = b.remoteBuf(name)
	}
	if strings.Contains(b.noteText(), "held by its own Neovim") {
		t.Errorf("a take over was refused:\n%s", b.noteText())
	}
	// a's own shell: typing into it from b names its holder as T does
	a.cmd("AgentShell sleep 500")
	shell := a.waitTerminal("sleep 500", 10*time.Second)
	sname := fmt.Sprintf("%d:%s", a.backendPid(), shell.ID)
	b.remoteBuf(sname)
	b.lua(`require("agentrun.rpc").notify("remote_input", ..., "x")`, nil, sname)
	want := fmt.Sprintf("%s is held by its own Neovim; :AgentDetach, then :qa there, frees it", sname)
	b.waitNote(want, 5*time.Second)
	b.lua(`return require("agentrun").takeover(...)`, &ok, sname)
	if ok || strings.Count(b.noteText(), want) != 2 {
		t.Fatalf("b's takeover of a's shell: %v, notes:\n%s\nwant %q twice", ok, b.noteText(), want)
	}
	if strings.Contains(b.noteText(), "client nvim-") {
		t.Errorf("a holder is named by its client id:\n%s", b.noteText())
	}
}

// TestOlderClaimEventKeepsTake: a take granted after a let go stays the
// user's when the let go's remote_claimed event is handled after the
// grant (events are handled on the main loop, the grant in the call
// that took): the older event does not mark it not theirs, and q then
// lets go. The let go and the take run in one Lua call, so both events
// are handled after it, in that racy order, every time.
func TestOlderClaimEventKeepsTake(t *testing.T) {
	rt := runtimeDir(t)
	a := startEditorIn(t, rt, "")
	b := startEditorIn(t, rt, "")
	term := a.startDevServer()
	name := fmt.Sprintf("%d:%s", a.backendPid(), term.ID)
	buf := b.remoteBuf(name)
	b.waitBuf(buf, 10*time.Second, "served 2\n")
	// every remote_claimed event handled, with whether the terminal is
	// the user's after it
	b.lua(`local userterm = require("agentrun.ui.userterm")
_G.claims = {}
require("agentrun.events").on("remote_claimed", function(p)
  userterm.remote_claimed(p)
  local t = require("agentrun.state").terminals[p.id]
  table.insert(_G.claims, { mine = p.mine, user = t and t.user or false })
end)`, nil)
	claims := func(n int) []map[string]any {
		var got []map[string]any
		b.waitFor(fmt.Sprintf("%d remote_claimed events", n), 10*time.Second, func() (bool, string) {
			b.lua(`return _G.claims`, &got)
			return len(got) >= n, fmt.Sprint(got)
		})
		return got
	}
	var ok bool
	b.lua(`return require("agentrun").takeover(...)`, &ok, name)
	if !ok {
		t.Fatalf("b's takeover failed: %s", b.noteText())
	}
	claims(1)
	// q in its split (its last), then T again, before any event is handled
	b.lua(`local name, buf = ...
vim.api.nvim_set_current_win(vim.fn.bufwinid(buf))
require("agentrun.ui.actions").perform("close", name)
return require("agentrun").takeover(name)`, &ok, name, buf)
	if !ok || !strings.Contains(b.noteText(), "you let go of "+name) {
		t.Fatalf("let go, then take: %v, notes:\n%s", ok, b.noteText())
	}
	got := claims(3)
	if got[1]["mine"] != false || got[2]["mine"] != true {
		t.Fatalf("the events: %v, want the let go's, then the take's", got)
	}
	if got[1]["user"] != true {
		t.Errorf("the let go's event, handled after the take was granted, made the terminal not b's: %v", got)
	}
	var claim string
	b.lua(`local t = require("agentrun.state").terminals[...]; return t.user and vim.inspect(t.claim) or ""`, &claim, name)
	if !strings.Contains(claim, fmt.Sprintf("nvim-%d", b.backendPid())) {
		t.Errorf("after the events b's terminal: claim %q, want b's", claim)
	}
	// q lets go again
	buf = b.remoteBuf(name)
	b.lua(`vim.api.nvim_set_current_win(vim.fn.bufwinid(...))`, nil, buf)
	b.normalKeys("q")
	b.waitFor("b to let go", 5*time.Second, func() (bool, string) {
		return strings.Count(b.noteText(), "you let go of "+name) == 2, b.noteText()
	})
}

// TestCLITakeRefused: `agentrun attach --take` of a terminal its Neovim
// holds does not say "you type into it" before the host grants it, and
// after the refusal says who holds it when typed into, not --take again.
// Granted, it says the terminal is yours.
func TestCLITakeRefused(t *testing.T) {
	e := startEditor(t, "")
	e.startSession()
	e.cmd("AgentShell sleep 500")
	shell := e.waitTerminal("sleep 500", 10*time.Second)
	name := fmt.Sprintf("%d:%s", e.backendPid(), shell.ID)
	pr, pw, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer pw.Close()
	var got syncbuf.Buffer
	attach := e.cli(pr, "attach", "--take", name)
	attach.Stdout, attach.Stderr = &got, &got
	if err := attach.Start(); err != nil {
		t.Fatal(err)
	}
	defer attach.Process.Kill()
	pr.Close()
	refusal := "refused: held by its own Neovim; :AgentDetach, then :qa there, frees it"
	eventually(t, "the refusal", 10*time.Second, func() (bool, string) {
		return strings.Contains(got.String(), refusal), got.String()
	})
	if strings.Contains(got.String(), "you type into it") {
		t.Errorf("attach --take said you type into it before it was refused:\n%s", got.String())
	}
	pw.Write([]byte("x"))
	eventually(t, "the read-only line", 10*time.Second, func() (bool, string) {
		return strings.Contains(got.String(), "read-only: what you type does not reach "+name), got.String()
	})
	_, ro, _ := strings.Cut(got.String(), "read-only:")
	if strings.Contains(ro, "--take") || !strings.Contains(ro, "held by its own Neovim; :AgentDetach, then :qa there, frees it") {
		t.Errorf("after a refused --take the read-only line says:%s", ro)
	}
	pw.Write([]byte{0x1d})
	_ = attach.Wait()

	// granted: said once it is
	e.cmd("AgentPrompt " + devServer)
	dev := e.waitTerminal(devServer, 10*time.Second)
	dname := fmt.Sprintf("%d:%s", e.backendPid(), dev.ID)
	pr2, pw2, _ := os.Pipe()
	defer pw2.Close()
	var got2 syncbuf.Buffer
	take := e.cli(pr2, "attach", "--take", dname)
	take.Stdout, take.Stderr = &got2, &got2
	if err := take.Start(); err != nil {
		t.Fatal(err)
	}
	defer take.Process.Kill()
	pr2.Close()
	eventually(t, "the take granted", 10*time.Second, func() (bool, string) {
		return strings.Contains(got2.String(), dname+" is yours: you type into it"), got2.String()
	})
	first, _, _ := strings.Cut(got2.String(), dname+" is yours")
	if strings.Contains(first, "you type into it") {
		t.Errorf("attach --take said you type into it before the take was granted:\n%s", got2.String())
	}
	pw2.Write([]byte{0x1d})
	_ = take.Wait()
}
