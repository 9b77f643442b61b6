package tests

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// An agent on another machine (agents.<name>.host, :AgentRun ssh://host
// name): the backend runs there, started over the real sshd of
// sshd_test.go as the remote user; this Neovim shows its chat and live
// splits.

// remoteAgentEditor starts a Neovim here whose links use r's ssh_config.
func remoteAgentEditor(t *testing.T, r *sshRemote) *editor {
	t.Helper()
	return startEditor(t, fmt.Sprintf("vim.env.AGENTRUN_SSH_CONFIG = %q", r.Config))
}

// remoteBackends returns the remote user's agentrun backends (serve-backend).
func (r *sshRemote) remoteBackends() []proc {
	var out []proc
	for _, p := range r.remoteProcs() {
		if strings.Contains(p.Cmdline, "agentrun serve-backend") {
			out = append(out, p)
		}
	}
	return out
}

// TestRemoteAgentJourney: :AgentRun ssh://host demo starts the demo agent
// on the remote machine; a command it runs runs there (as the remote
// user, in its home) and streams into a split here; <C-c>'s stop ends it
// there; the agent's fs writes go to the remote's disk even when this
// Neovim has a buffer of the same path; :AgentStop ends the agent there,
// and quitting Neovim leaves nothing running on the remote.
func TestRemoteAgentJourney(t *testing.T) {
	onceAcrossNeovims(t)
	r := startSSHRemote(t)
	e := remoteAgentEditor(t, r)

	since := e.mark()
	e.cmd("AgentRun " + r.URL() + " demo")
	e.waitEvent("AgentRunSessionStarted", since, 20*time.Second)
	var key string
	e.lua(`return require("agentrun.state").current`, &key)
	if !strings.HasSuffix(key, "@"+remoteAlias) {
		t.Fatalf("the remote session's key is %q, want it to end in @%s", key, remoteAlias)
	}
	if len(r.remoteBackends()) != 1 {
		t.Fatalf("want one backend on the remote, have %+v", r.remoteBackends())
	}

	// A command runs there, and its output streams here.
	cmd := `bash -c 'echo "user=$(id -un) dir=$PWD"; i=0; while :; do i=$((i+1)); echo "n $i"; sleep 0.05; done'`
	e.cmd("AgentPrompt " + cmd)
	term := e.waitTerminal(cmd, 15*time.Second)
	if !strings.HasSuffix(term.ID, "@"+remoteAlias) {
		t.Errorf("the remote terminal's id is %q, want it to end in @%s", term.ID, remoteAlias)
	}
	e.waitBuf(term.Bufnr, 15*time.Second, "user="+remoteUser+" dir="+r.Home, "n 5\n")
	var onRemote bool
	for _, p := range r.remoteProcs() {
		onRemote = onRemote || strings.Contains(p.Cmdline, "sleep 0.05")
	}
	if !onRemote {
		t.Errorf("the command does not run as the remote user: %+v", r.remoteProcs())
	}

	// The stop of <C-c> in the chat ends it there.
	since = e.mark()
	e.lua(`require("agentrun").stop_command()`, nil)
	e.waitEvent("AgentRunTerminalExited", since, 15*time.Second)
	e.waitFor("the command gone from the remote", 10*time.Second, func() (bool, string) {
		for _, p := range r.remoteProcs() {
			if strings.Contains(p.Cmdline, "sleep 0.05") || strings.Contains(p.Cmdline, "while :") {
				return false, fmt.Sprintf("%+v", p)
			}
		}
		return true, ""
	})
	e.idle(15 * time.Second)

	// fs/write_text_file writes the remote's file, not a buffer here of
	// the same path.
	path := filepath.Join(r.Home, "notes.txt")
	local := filepath.Join(t.TempDir(), "notes.txt")
	writeFile(t, local, "local\n")
	e.cmd("edit " + local)
	e.lua(`vim.api.nvim_buf_set_name(0, ...)`, nil, path) // a local buffer named as the remote's file
	e.cmd("AgentPrompt !write " + path + " from the agent")
	e.idle(15 * time.Second)
	data, err := r.SSH("cat", path).Output()
	if err != nil || !strings.Contains(string(data), "from the agent") {
		t.Errorf("the remote's %s holds %q (%v), want the agent's text", path, data, err)
	}
	var lines []string
	e.lua(`return vim.api.nvim_buf_get_lines(0, 0, -1, false)`, &lines)
	if strings.Join(lines, "\n") != "local" {
		t.Errorf("the local buffer of that path changed to %q", lines)
	}
	var modified bool
	e.lua(`return vim.bo.modified`, &modified)
	if modified {
		t.Errorf("the local buffer named %s was modified", path)
	}

	// Quitting Neovim ends the backend there and what it ran.
	_ = e.v.Command("qa!") // Neovim exits; the reply may never come
	e.waitFor("no backend left on the remote", 15*time.Second, func() (bool, string) {
		b := r.remoteBackends()
		return len(b) == 0, fmt.Sprintf("%+v", b)
	})
}
