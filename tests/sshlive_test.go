package tests

import (
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
	if chat := e.chat(); strings.Count(chat, "> "+cmd) != 1 {
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
	if h := strings.SplitN(chat, "\n", 2)[0]; !strings.HasSuffix(h, "· ended") {
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
