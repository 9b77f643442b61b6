package tests

import (
	"bufio"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agentrun/agentrun.nvim/internal/shquote"
	"github.com/agentrun/agentrun.nvim/internal/sshtest"
	"github.com/neovim/go-client/nvim"
)

// The remote machine of the SSH tests is package sshtest's: a second
// local user account (and a third, another user of the same remote)
// reached through a real OpenSSH server on 127.0.0.1. The remote Neovim is
// the system's nvim (0.7.2): the other versions are installed under
// /root, which the remote user cannot read.
const (
	remoteUser  = sshtest.RemoteUser
	remoteAlias = sshtest.RemoteAlias // the Host of the client's ssh_config
	otherUser   = sshtest.OtherUser   // a second user on the remote
	otherAlias  = sshtest.OtherAlias
)

// sshRemote is a running sshd and "the remote" (sshtest.Remote) with what
// the tests do with it.
type sshRemote struct {
	*sshtest.Remote
	t *testing.T
}

// startSSHRemote starts sshd on 127.0.0.1 on a free port for this test,
// with a throwaway host key and user key, and makes the remote user's
// HOME with this build of agentrun in ~/.local/bin. sshd stops when the
// test ends (and dies with the test process).
func startSSHRemote(t *testing.T) *sshRemote {
	t.Helper()
	if !strings.HasPrefix(t.Name(), "TestRemote") && !strings.HasPrefix(t.Name(), "TestSSH") {
		// make test-remote runs them by these names (scripts/integration.sh)
		t.Fatalf("%s runs over SSH: name it TestRemote… (make test-remote runs those, make test leaves them out)", t.Name())
	}
	if os.Getuid() != 0 {
		t.Skip("the SSH tests run sshd and add a local user: they need root")
	}
	return &sshRemote{Remote: sshtest.Start(t, binary), t: t}
}

// InstallBinary copies the agentrun at src to the remote's
// ~/.local/bin/agentrun (owned by the remote user).
func (r *sshRemote) InstallBinary(src string) {
	r.t.Helper()
	sshtest.InstallBinary(r.t, src, r.Bin, r.UID)
}

// CLI runs this build of agentrun locally with the remote's ssh_config.
func (r *sshRemote) CLI(args ...string) *exec.Cmd {
	cmd := exec.Command(binary, args...)
	cmd.Env = append(os.Environ(), "AGENTRUN_SSH_CONFIG="+r.Config, "XDG_RUNTIME_DIR="+runtimeDir(r.t))
	return cmd
}

// StartEditor starts a Neovim with the plugin as the remote user, over
// SSH (nvim --embed on the channel's stdio): its backend is an agentrun
// host on the remote, with its socket in the remote's runtime directory.
func (r *sshRemote) StartEditor() *editor {
	t := r.t
	t.Helper()
	remote := shquote.Join([]string{"nvim", "--embed", "--headless", "--clean", "-n",
		"--cmd", "set rtp^=" + root,
		"--cmd", "let g:agentrun_bin = '" + r.Bin + "'"})
	v, err := nvim.NewChildProcess(
		nvim.ChildProcessCommand("ssh"),
		nvim.ChildProcessArgs("-F", r.Config, remoteAlias, "--", remote),
		nvim.ChildProcessLogf(t.Logf),
	)
	if err != nil {
		t.Fatalf("start nvim over ssh: %v", err)
	}
	e := &editor{t: t, v: v, dir: r.Home, rt: r.RT, events: userEvents{arrived: make(chan struct{})}}
	if err := v.ExecLua(`return vim.fn.getpid()`, &e.pid); err != nil {
		t.Fatalf("nvim over ssh: %v\nsshd:\n%s", err, r.LogText())
	}
	t.Cleanup(func() {
		if t.Failed() {
			for _, d := range []string{filepath.Join(r.Home, ".local", "state", "nvim"), filepath.Join(r.Home, ".cache", "nvim")} {
				if data, err := os.ReadFile(filepath.Join(d, "agentrun.log")); err == nil {
					t.Logf("the remote's agentrun.log:\n%s", data)
				}
			}
		}
		_ = v.Close()
	})
	e.lua(`_G.notes = {}; vim.notify = function(msg, level) table.insert(_G.notes, { msg = msg, level = level }) end`, nil)
	if err := v.RegisterHandler("agentrun_event", func(pattern string) { e.events.add(pattern) }); err != nil {
		t.Fatal(err)
	}
	e.lua(`local chan = ...
vim.api.nvim_create_autocmd("User", { pattern = "AgentRun*", callback = function(a) vim.rpcnotify(chan, "agentrun_event", a.match) end })`, nil, v.ChannelID())
	return e
}

// freePort returns a TCP port free on 127.0.0.1 (asked of the kernel).
func freePort(t *testing.T) int { return sshtest.FreePort(t) }

func writeFile(t *testing.T, path, content string) { sshtest.WriteFile(t, path, content) }

// TestSSHFixture: the fixture's sshd lets the test's key in as the remote
// user (its own uid, HOME and 0700 runtime directory, this build of
// agentrun on its PATH after ~/.local/bin is added) and listens on
// 127.0.0.1 only.
func TestSSHFixture(t *testing.T) {
	onceAcrossNeovims(t)
	r := startSSHRemote(t)
	out, err := r.SSH(`id -un; echo "$HOME"; echo "$XDG_RUNTIME_DIR"; stat -c %a "$XDG_RUNTIME_DIR"; "$HOME/.local/bin/agentrun" version`).CombinedOutput()
	if err != nil {
		t.Fatalf("ssh: %v\n%s\nsshd:\n%s", err, out, r.LogText())
	}
	version, _ := os.ReadFile(filepath.Join(root, "VERSION"))
	want := fmt.Sprintf("%s\n%s\n%s\n700\n%s\n", remoteUser, r.Home, r.RT, strings.TrimSpace(string(version)))
	if string(out) != want {
		t.Errorf("over ssh:\n%s\nwant:\n%s", out, want)
	}
	other := exec.Command("ssh", "-F", r.Config, otherAlias, "--", `id -un; echo "$HOME"; echo "$XDG_RUNTIME_DIR"`)
	if out, err := other.CombinedOutput(); err != nil || string(out) != fmt.Sprintf("%s\n%s\n%s\n", otherUser, r.Other.Home, r.Other.RT) {
		t.Errorf("over ssh as the other user: %v\n%s", err, out)
	}
	// sshd listens on 127.0.0.1 and nowhere else.
	f, err := os.Open("/proc/net/tcp6")
	if err == nil {
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			if strings.Contains(strings.ToUpper(sc.Text()), fmt.Sprintf(":%04X ", r.Port)) {
				t.Errorf("sshd listens on IPv6: %s", sc.Text())
			}
		}
		f.Close()
	}
	// sshd's one listening socket is 127.0.0.1's (0100007F in
	// /proc/net/tcp), which also shows that tcpListeners sees listeners.
	sshd, _ := readProc(r.SSHDPid())
	if l := tcpListeners([]proc{sshd}); len(l) != 1 || !strings.Contains(l[0], fmt.Sprintf("listens on 0100007F:%04X", r.Port)) {
		t.Errorf("sshd's listening sockets: %v", l)
	}
	if c, err := net.DialTimeout("tcp", fmt.Sprintf("127.0.0.2:%d", r.Port), time.Second); err == nil {
		c.Close()
		t.Error("sshd answers on 127.0.0.2: it listens beyond 127.0.0.1")
	}
}

// remoteProcs returns the processes this test runs as the remote user.
func (r *sshRemote) remoteProcs() []proc {
	var out []proc
	for _, pid := range r.Main.PIDs() {
		if p, ok := readProc(pid); ok {
			out = append(out, p)
		}
	}
	return out
}

// tcpListeners returns the processes among procs that hold a listening
// TCP socket (IPv4 or IPv6), with the address.
func tcpListeners(procs []proc) []string {
	listening := map[string]string{} // socket inode → local address
	for _, f := range []string{"/proc/net/tcp", "/proc/net/tcp6"} {
		data, _ := os.ReadFile(f)
		for _, l := range strings.Split(string(data), "\n")[1:] {
			fs := strings.Fields(l)
			if len(fs) > 9 && fs[3] == "0A" { // LISTEN
				listening[fs[9]] = fs[1]
			}
		}
	}
	var out []string
	for _, p := range procs {
		fds, _ := os.ReadDir(fmt.Sprintf("/proc/%d/fd", p.PID))
		for _, fd := range fds {
			link, err := os.Readlink(fmt.Sprintf("/proc/%d/fd/%s", p.PID, fd.Name()))
			if err != nil {
				continue
			}
			if inode, ok := strings.CutPrefix(link, "socket:["); ok {
				if addr, ok := listening[strings.TrimSuffix(inode, "]")]; ok {
					out = append(out, fmt.Sprintf("%v listens on %s", p, addr))
				}
			}
		}
	}
	return out
}
