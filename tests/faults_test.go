package tests

import (
	"fmt"
	"strings"
	"syscall"
	"testing"
	"time"
)

// Faults: what the user sees when the agent misbehaves or Neovim goes
// away, and that no process is left behind.

// note is one vim.notify call.
type note struct {
	Msg   string `msgpack:"msg"`
	Level int    `msgpack:"level"`
}

// notes returns the notifications so far.
func (e *editor) notes() []note {
	e.t.Helper()
	var ns []note
	e.lua(`return _G.notes`, &ns)
	return ns
}

// waitNote waits for a notification containing want and returns it.
func (e *editor) waitNote(want string, timeout time.Duration) note {
	e.t.Helper()
	var found note
	e.waitFor(fmt.Sprintf("a notification %q", want), timeout, func() (bool, string) {
		ns := e.notes()
		for _, n := range ns {
			if strings.Contains(n.Msg, want) {
				found = n
				return true, ""
			}
		}
		return false, fmt.Sprintf("%+v", ns)
	})
	return found
}

// logPath is the backend's log file.
func (e *editor) logPath() string {
	e.t.Helper()
	var p string
	e.lua(`return require("agentrun.binary").log_path()`, &p)
	return p
}

// agentProcs returns the demo agent processes in procs.
func agentProcs(procs []proc) []proc {
	var out []proc
	for _, p := range procs {
		if strings.HasSuffix(p.Cmdline, " demo-agent") {
			out = append(out, p)
		}
	}
	return out
}

// onlyBackendLeft waits until Neovim's only descendants are the backend
// and its guard: no agent, no terminal command, nothing they forked.
func (e *editor) onlyBackendLeft(what string) {
	e.t.Helper()
	nvimPid, backend, guard := e.nvimPid(), e.backendPid(), e.guardProc()
	e.waitFor(what+": nothing but the backend and its guard under Neovim", 10*time.Second, func() (bool, string) {
		d := descendants(nvimPid)
		ok := len(d) == 2
		for _, p := range d {
			ok = ok && (p.PID == backend || p.PID == guard.PID && p.PPID == backend)
		}
		return ok, fmt.Sprint(d)
	})
}

// newSessionWorks shows that :AgentRun after the fault starts a working
// session: a command runs in it to its end.
func (e *editor) newSessionWorks(marker string) {
	e.t.Helper()
	e.startSession()
	e.cmd("AgentPrompt echo " + marker)
	term := e.waitTerminal("echo "+marker, 10*time.Second)
	e.waitBuf(term.Bufnr, 10*time.Second, marker, exitMarker(0))
	e.waitChat("`echo "+marker+"` exited with code 0.", 10*time.Second)
}

const (
	levelWarn  = 3 // vim.log.levels.WARN
	levelError = 4 // vim.log.levels.ERROR
)

// TestAgentCrashMidTurn: the agent exits (or is killed) during a turn.
// The chat and a notification say what happened and what to do, the
// session ends, its terminals and the agent are gone, and :AgentRun
// starts a new session that works.
func TestAgentCrashMidTurn(t *testing.T) {
	t.Run("exit 3", func(t *testing.T) {
		e := startEditor(t, "")
		e.startSession()
		agent := agentProcs(e.underBackend("demo-agent"))
		e.cmd("AgentPrompt !exit 3 boom")
		want := fmt.Sprintf(`(agentrun) the agent stopped: agent "demo" exited with code 3; last stderr: boom. Its terminals were killed. :AgentRun starts a new session (details in %s)`, e.logPath())
		chat := e.waitChat(want, 10*time.Second)
		if n := e.waitNote(want, 5*time.Second); n.Msg != want || n.Level != levelError {
			t.Errorf("notification %+v, want the error %q", n, want)
		}
		if strings.Contains(chat, "the turn failed") {
			t.Errorf("the chat says it twice:\n%s", chat)
		}
		if h := e.statusLine(); h != "agentrun · demo · ended" {
			t.Errorf("status line %q", h)
		}
		waitNoLeftovers(t, "the crashed agent", agent, 10*time.Second)
		e.onlyBackendLeft("after the crash")
		e.newSessionWorks("after-crash")
	})
	t.Run("killed with a terminal running", func(t *testing.T) {
		e := startEditor(t, "")
		e.startSession()
		e.cmd("AgentPrompt sleep 3119 & sleep 3120")
		term := e.waitTerminal("sleep 3119 & sleep 3120", 10*time.Second)
		procs := e.underBackend("demo-agent", "sleep 3119", "sleep 3120")
		for _, a := range agentProcs(procs) {
			if err := syscall.Kill(a.PID, syscall.SIGKILL); err != nil {
				t.Fatal(err)
			}
		}
		want := `(agentrun) the agent stopped: agent "demo" was killed by SIGKILL. Its terminals were killed. :AgentRun starts a new session`
		e.waitChat(want, 10*time.Second)
		e.waitNote(want, 5*time.Second)
		e.waitBuf(term.Bufnr, 10*time.Second, "[released]")
		waitNoLeftovers(t, "the killed agent and its terminal", procs, 10*time.Second)
		e.onlyBackendLeft("after the kill")
		e.newSessionWorks("after-kill")
	})
}

// TestAgentHangs: an agent that never answers the prompt and ignores
// session/cancel. :AgentCancel returns at once and, when nothing happens,
// the chat says the agent may be hung and how to stop it; :AgentStop
// stops it.
func TestAgentHangs(t *testing.T) {
	e := startEditor(t, "")
	e.startSession()
	agent := agentProcs(e.underBackend("demo-agent"))
	// The patience is 3 s; a shorter one makes the test quick and the
	// message must name it.
	e.lua(`require("agentrun.conversation")._cancel_patience_ms = 500`, nil)
	e.cmd("AgentPrompt !hang")
	e.waitHeader("agentrun · demo · working…")
	began := time.Now()
	e.cmd("AgentCancel")
	if took := time.Since(began); took > time.Second {
		t.Errorf(":AgentCancel took %v", took)
	}
	want := "(agentrun) the agent has not ended the turn 0.5s after :AgentCancel; it may be hung. :AgentStop stops it and kills its terminals"
	e.waitChat(want, 10*time.Second)
	if n := e.waitNote(want, time.Second); n.Level != levelWarn {
		t.Errorf("notification level %d, want WARN", n.Level)
	}
	e.cmd("AgentStop")
	e.waitChat("(agentrun) you stopped this session (:AgentStop); its terminals were killed. :AgentRun starts a new one", 10*time.Second)
	if h := e.statusLine(); h != "agentrun · demo · ended" {
		t.Errorf("status line %q", h)
	}
	waitNoLeftovers(t, "the hung agent", agent, 10*time.Second)
	e.onlyBackendLeft("after :AgentStop")
	e.newSessionWorks("after-hang")
}

// TestAgentFloodsNotifications: 20000 updates as fast as the agent can
// send them all reach the chat, in order, and the session goes on.
func TestAgentFloodsNotifications(t *testing.T) {
	e := startEditor(t, "")
	e.startSession()
	e.cmd("AgentPrompt !flood 20000")
	chat := e.waitChat("Sent 20000 messages.", 30*time.Second)
	for _, want := range []string{"\nflood 1\n", "\nflood 10000\n", "\nflood 19999\nflood 20000\n"} {
		if !strings.Contains(chat, want) {
			t.Errorf("chat lacks %q", want)
		}
	}
	e.cmd("AgentPrompt echo after-flood")
	e.waitChat("`echo after-flood` exited with code 0.", 10*time.Second)
	if ns := e.notes(); len(ns) != 0 {
		t.Errorf("notifications %+v, want none", ns)
	}
	if h := e.statusLine(); h != "agentrun · demo · ready" {
		t.Errorf("status line %q", h)
	}
}

// TestAgentWritesNonJSON: a line on the agent's stdout that is not JSON-RPC
// is ignored and the user is told once; the session goes on.
func TestAgentWritesNonJSON(t *testing.T) {
	e := startEditor(t, "")
	e.startSession()
	e.cmd("AgentPrompt !garbage")
	want := `(agentrun) agent "demo" wrote a line to stdout that is not JSON-RPC; it was ignored and the session goes on (further ones only in the log): "this line is not JSON-RPC"`
	e.waitChat(want, 10*time.Second)
	if n := e.waitNote(want, time.Second); n.Msg != want || n.Level != levelWarn {
		t.Errorf("notification %+v", n)
	}
	e.waitChat("I wrote a line that is not JSON to stdout.", 5*time.Second)
	e.idle(5 * time.Second)
	e.cmd("AgentPrompt !garbage")
	e.waitFor("the second !garbage to be answered", 10*time.Second, func() (bool, string) {
		c := e.chat()
		return strings.Count(c, "I wrote a line that is not JSON to stdout.") == 2, c
	})
	e.idle(5 * time.Second)
	e.cmd("AgentPrompt echo after-garbage")
	e.waitChat("`echo after-garbage` exited with code 0.", 10*time.Second)
	if ns := e.notes(); len(ns) != 1 {
		t.Errorf("notifications %+v, want only the first one", ns)
	}
}

// stubborn is a command line that ignores SIGTERM (its sleep inherits the
// ignored signal) and leaves a double-forked child in its process group,
// whose parent is gone.
const stubborn = "trap '' TERM; (sleep 3121 &); echo ready; sleep 3122"

// TestNeovimGoesAway: whether Neovim quits (VimLeavePre) or is killed
// (the backend sees its stdin close), the backend, its guard, the agent,
// every terminal's process group, and a command ignoring SIGTERM are gone.
func TestNeovimGoesAway(t *testing.T) {
	for _, how := range []string{":qa!", "SIGKILL"} {
		t.Run(how, func(t *testing.T) {
			e := startEditor(t, `require("agentrun").setup({ terminal = { kill_grace_ms = 300 } })`)
			e.startSession()
			e.cmd("AgentPrompt " + stubborn)
			term := e.waitTerminal(stubborn, 10*time.Second)
			e.waitBuf(term.Bufnr, 10*time.Second, "ready")
			// "ready" is printed before the shell's background children
			// have all exec'd their sleeps
			eventually(t, "the double-forked child and the job to run", 10*time.Second, func() (bool, string) {
				return len(findProcesses("sleep 3121")) > 0 && len(e.underBackend("sleep 3122")) > 0, "not yet"
			})
			backend, _ := readProc(e.backendPid())
			procs := append(e.underBackend("demo-agent", "sleep 3122"), backend, e.guardProc())
			nvimPid := e.nvimPid()
			switch how {
			case ":qa!":
				_ = e.v.Command("qa!") // Neovim exits; the reply may never come
			case "SIGKILL":
				if err := syscall.Kill(nvimPid, syscall.SIGKILL); err != nil {
					t.Fatal(err)
				}
			}
			waitNoLeftovers(t, "after "+how, procs, 10*time.Second)
			if left := findProcesses("sleep 3121"); len(left) > 0 {
				t.Errorf("the double-forked child is still running: %v", left)
			}
		})
	}
}

// TestCommandIgnoringSIGTERM: X/:AgentKill and :AgentStop end a command
// that ignores SIGTERM with SIGKILL after terminal.kill_grace_ms.
func TestCommandIgnoringSIGTERM(t *testing.T) {
	const grace = 300 * time.Millisecond
	for _, how := range []string{"AgentKill", "AgentStop"} {
		t.Run(how, func(t *testing.T) {
			e := startEditor(t, fmt.Sprintf(`require("agentrun").setup({ terminal = { kill_grace_ms = %d } })`, grace.Milliseconds()))
			e.startSession()
			e.cmd("AgentPrompt " + stubborn)
			term := e.waitTerminal(stubborn, 10*time.Second)
			e.waitBuf(term.Bufnr, 10*time.Second, "ready")
			procs := e.underBackend("sleep 3122")
			var cmds []proc
			for _, p := range procs {
				if !strings.HasSuffix(p.Cmdline, " demo-agent") {
					cmds = append(cmds, p)
				}
			}
			began := time.Now()
			switch how {
			case "AgentKill":
				e.cmd("AgentKill " + term.ID)
				e.waitBuf(term.Bufnr, 10*time.Second, signalMarker("SIGKILL"), "[released]")
			case "AgentStop":
				e.cmd("AgentStop")
				e.waitBuf(term.Bufnr, 10*time.Second, "[released]")
			}
			waitNoLeftovers(t, "the command ignoring SIGTERM", cmds, 10*time.Second)
			if took := time.Since(began); took < grace {
				t.Errorf("gone after %v, before the %v grace", took, grace)
			}
		})
	}
}

// TestBackendKilled: the backend itself dies (SIGKILL: no cleanup of its
// own runs). Neovim says so and how to go on; the agents see their stdin
// close and exit; the terminals' ptys hang up, which ends their commands,
// and the guard kills what ignores SIGHUP, then exits; :AgentRun starts a
// new backend that works.
func TestBackendKilled(t *testing.T) {
	e := startEditor(t, fmt.Sprintf(`require("agentrun").setup({ agents = { other = { cmd = { %q, "demo-agent" } } } })`, binary))
	e.startSession()
	e.cmd("AgentPrompt sleep 3151 & sleep 3152")
	e.waitTerminal("sleep 3151 & sleep 3152", 10*time.Second)
	e.cmd("AgentRun other")
	e.waitFor("the second session", 10*time.Second, func() (bool, string) {
		var ready bool
		e.lua(`local s = require("agentrun.state").session(); return s.agent == "other" and s.id ~= nil`, &ready)
		return ready, e.chat()
	})
	// (a command after the sleep: bash would exec a last one in its place)
	stubborn := "trap '' HUP; sleep 3153; true"
	e.cmd("AgentPrompt " + stubborn)
	e.waitTerminal(stubborn, 10*time.Second)
	var normal, stubborns []proc
	// the split shows before the shell has started its sleep
	e.waitFor("the stubborn shell and its sleep", 10*time.Second, func() (bool, string) {
		normal, stubborns = nil, nil
		for _, p := range e.underBackend("demo-agent", "sleep 3151", "sleep 3152", "sleep 3153") {
			if p.Cmdline == "sleep 3153" || strings.HasSuffix(p.Cmdline, stubborn) {
				stubborns = append(stubborns, p)
			} else {
				normal = append(normal, p)
			}
		}
		return len(stubborns) == 2, fmt.Sprint(stubborns)
	})
	guard := e.guardProc()
	t.Cleanup(func() {
		for _, p := range append(stubborns, guard) {
			if p.Running() {
				_ = syscall.Kill(p.PID, syscall.SIGKILL)
			}
		}
	})
	if err := syscall.Kill(e.backendPid(), syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	want := "(agentrun) the backend exited (code 137): its sessions ended and its terminals were closed. :AgentRun starts it again (details in " + e.logPath() + ")"
	if n := e.waitNote(want, 10*time.Second); n.Level != levelError {
		t.Errorf("notification %+v", n)
	}
	e.waitChat("(agentrun) the backend stopped; this session ended", 5*time.Second)
	waitNoLeftovers(t, "the agents and the commands that take SIGHUP", normal, 10*time.Second)
	waitNoLeftovers(t, "the commands that ignore SIGHUP (the guard kills them)", stubborns, 10*time.Second)
	waitNoLeftovers(t, "the guard", []proc{guard}, 10*time.Second)
	e.newSessionWorks("after-backend-crash")
}
