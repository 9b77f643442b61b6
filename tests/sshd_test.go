package tests

import (
	"bufio"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/agentrun/agentrun.nvim/internal/shquote"
	"github.com/neovim/go-client/nvim"
)

// The remote machine of the SSH tests is a second local user account
// (and a third, another user of the same remote) reached through a real
// OpenSSH server (Debian's openssh-server) on 127.0.0.1. The accounts are
// made once (useradd) and kept; everything a test puts in them (a HOME
// for that test, the authorized key, the runtime directory, the agentrun
// binary) is made fresh under the account's home and removed when the
// test ends. The remote Neovim is the system's nvim (0.7.2): the other
// versions are installed under /root, which the remote user cannot
// read.
const (
	remoteUser  = "agentrun-remote"
	remoteAlias = "agentrun-remote-test" // the Host of the client's ssh_config
	otherUser   = "agentrun-other"       // a second user on the remote
	otherAlias  = "agentrun-other-test"
	sshdPath    = "/usr/sbin/sshd" // sshd wants to be run by its absolute path
)

// sshRemote is a running sshd and "the remote": the account, its HOME for
// this test, and the client side's ssh_config.
type sshRemote struct {
	t       *testing.T
	Port    int
	Config  string // the client's ssh_config (ssh -F; AGENTRUN_SSH_CONFIG)
	Home    string // the remote user's HOME for this test
	RT      string // its XDG_RUNTIME_DIR (0700, under Home)
	Bin     string // the remote agentrun: Home/.local/bin/agentrun, this build
	UID     int
	logPath string // sshd's log (-e)
	// Other is a second user on the same remote, with agentrun too, whom
	// the same key logs in as (ssh://agentrun-other-test).
	Other remoteHome

	sshdConfig string
	sshd       *exec.Cmd     // nil while stopped
	exited     chan struct{} // closed when sshd has exited
}

// StartSSHD starts sshd (-D: in the foreground, a child of the test,
// killed if the test process dies) and waits until it listens.
func (r *sshRemote) StartSSHD() {
	t := r.t
	t.Helper()
	r.sshd = exec.Command(sshdPath, "-D", "-e", "-f", r.sshdConfig)
	// A file, not a pipe: the sessions sshd forks keep what it writes to
	// open, and Wait would wait for them too.
	logFile, err := os.OpenFile(r.logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	defer logFile.Close()
	r.sshd.Stdout, r.sshd.Stderr = logFile, logFile
	r.sshd.SysProcAttr = dieWithUs()
	mark := len(r.logText())
	if err := r.sshd.Start(); err != nil {
		t.Fatalf("start sshd: %v", err)
	}
	exited, cmd := make(chan struct{}), r.sshd
	r.exited = exited
	go func() { cmd.Wait(); close(exited) }()
	eventually(t, "sshd to listen", 10*time.Second, func() (bool, string) {
		select {
		case <-exited:
			t.Fatalf("sshd exited: %s", r.logText())
		default:
		}
		return strings.Contains(r.logText()[mark:], fmt.Sprintf("Server listening on 127.0.0.1 port %d", r.Port)), r.logText()
	})
}

// logText is sshd's log so far.
func (r *sshRemote) logText() string {
	b, _ := os.ReadFile(r.logPath)
	return string(b)
}

// StopSSHD stops sshd's listener; sessions already open go on (each is a
// process of its own), as when a machine's sshd restarts.
func (r *sshRemote) StopSSHD() {
	if r.sshd == nil {
		return
	}
	r.sshd.Process.Signal(syscall.SIGTERM)
	<-r.exited
	r.sshd = nil
	if r.t.Failed() {
		r.t.Logf("sshd's log:\n%s", r.logText())
	}
}

// URL is the remote as agentrun names it.
func (r *sshRemote) URL() string { return "ssh://" + remoteAlias }

// OtherURL is the same remote as its other user.
func (r *sshRemote) OtherURL() string { return "ssh://" + otherAlias }

// startSSHRemote starts sshd on 127.0.0.1 on a free port for this test,
// with a throwaway host key and user key, and makes the remote user's
// HOME with this build of agentrun in ~/.local/bin. sshd stops when the
// test ends (and dies with the test process).
func startSSHRemote(t *testing.T) *sshRemote {
	t.Helper()
	if os.Getuid() != 0 {
		t.Skip("the SSH tests run sshd and add a local user: they need root")
	}
	if _, err := os.Stat(sshdPath); err != nil {
		t.Fatalf("%s is missing: make deps installs Debian's openssh-server", sshdPath)
	}
	// The client's side: keys and config in a temp dir of ours (0700).
	dir := t.TempDir()
	r := &sshRemote{t: t, logPath: filepath.Join(dir, "sshd.log")}
	keygen := func(path, comment string) string {
		t.Helper()
		if out, err := exec.Command("ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", comment, "-f", path).CombinedOutput(); err != nil {
			t.Fatalf("ssh-keygen %s: %v\n%s", path, err, out)
		}
		pub, err := os.ReadFile(path + ".pub")
		if err != nil {
			t.Fatal(err)
		}
		return strings.TrimSpace(string(pub))
	}
	hostKey := filepath.Join(dir, "host_ed25519")
	hostPub := keygen(hostKey, "agentrun test host")
	userKey := filepath.Join(dir, "id_ed25519")
	userPub := keygen(userKey, "agentrun test user")

	home := newRemoteHome(t, remoteUser, userPub)
	r.Home, r.RT, r.Bin, r.UID = home.Home, home.RT, home.Bin, home.UID
	r.Other = newRemoteHome(t, otherUser, userPub)

	// sshd: its own config, 127.0.0.1 only, only the remote user, keys
	// only; the session's HOME and XDG_RUNTIME_DIR are this test's.
	r.Port = freePort(t)
	sshdConfig := filepath.Join(dir, "sshd_config")
	// Match blocks: each user's own keys file, HOME and runtime dir.
	match := ""
	for _, h := range []remoteHome{home, r.Other} {
		match += fmt.Sprintf("Match User %s\n  AuthorizedKeysFile %s\n  SetEnv HOME=%s XDG_RUNTIME_DIR=%s\n", h.User, filepath.Join(h.Home, ".ssh", "authorized_keys"), h.Home, h.RT)
	}
	writeFile(t, sshdConfig, fmt.Sprintf(`Port %d
ListenAddress 127.0.0.1
HostKey %s
PidFile none
UsePAM no
StrictModes no
PubkeyAuthentication yes
PasswordAuthentication no
KbdInteractiveAuthentication no
PermitRootLogin no
AllowUsers %s %s
AuthorizedKeysFile none
AllowTcpForwarding no
AllowStreamLocalForwarding no
AllowAgentForwarding no
X11Forwarding no
PermitTunnel no
PermitUserEnvironment no
LogLevel VERBOSE
%s`, r.Port, hostKey, remoteUser, otherUser, match))
	if err := os.MkdirAll("/run/sshd", 0o755); err != nil { // its privilege separation directory
		t.Fatal(err)
	}
	r.sshdConfig = sshdConfig
	r.StartSSHD()
	t.Cleanup(r.StopSSHD)

	// The client's ssh_config: this host only, its key only, its host key
	// only, never a prompt. ~/.ssh is not read (ssh -F).
	r.Config = filepath.Join(dir, "ssh_config")
	writeFile(t, filepath.Join(dir, "known_hosts"), remoteAlias+" "+hostPub+"\n")
	writeFile(t, r.Config, fmt.Sprintf(`Host %s
  User %s
Host %s
  User %s
Host %s %s
  HostName 127.0.0.1
  Port %d
  HostKeyAlias %s
  IdentityFile %s
  IdentitiesOnly yes
  UserKnownHostsFile %s
  GlobalKnownHostsFile /dev/null
  StrictHostKeyChecking yes
  BatchMode yes
  ClearAllForwardings yes
  ForwardAgent no
  ControlMaster no
  ControlPath none
  LogLevel ERROR
`, remoteAlias, remoteUser, otherAlias, otherUser, remoteAlias, otherAlias, r.Port, remoteAlias, userKey, filepath.Join(dir, "known_hosts")))
	return r
}

// remoteAccount returns the remote user, adding it when missing (a
// normal account with its own home, no password, reachable by key only).
func remoteAccount(t *testing.T, name string) *user.User {
	t.Helper()
	if u, err := user.Lookup(name); err == nil {
		return u
	}
	// -p '*': no password, but not a locked account (sshd without PAM
	// refuses locked ones).
	if out, err := exec.Command("useradd", "--create-home", "--shell", "/bin/bash", "-p", "*", name).CombinedOutput(); err != nil {
		if u, err2 := user.Lookup(name); err2 == nil { // another test made it meanwhile
			return u
		}
		t.Fatalf("useradd %s: %v\n%s", name, err, out)
	}
	u, err := user.Lookup(name)
	if err != nil {
		t.Fatal(err)
	}
	return u
}

// InstallBinary copies the agentrun at src to the remote's
// ~/.local/bin/agentrun (owned by the remote user).
func (r *sshRemote) InstallBinary(src string) {
	r.t.Helper()
	installBinary(r.t, src, r.Bin, r.UID)
}

func installBinary(t *testing.T, src, dst string, uid int) {
	t.Helper()
	data, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	_ = os.Remove(dst)
	if err := os.WriteFile(dst, data, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Chown(dst, uid, -1); err != nil {
		t.Fatal(err)
	}
}

// remoteHome is one remote user's HOME for a test.
type remoteHome struct {
	User string
	UID  int
	Home string // made for this test under the account's home, 0700
	RT   string // its XDG_RUNTIME_DIR (0700, under Home)
	Bin  string // Home/.local/bin/agentrun, this build
}

// newRemoteHome makes user's HOME for this test (the account is added
// when missing), with authorizedKey and this build of agentrun; it is
// removed, and what ran with it killed, when the test ends.
func newRemoteHome(t *testing.T, name, authorizedKey string) remoteHome {
	t.Helper()
	u := remoteAccount(t, name)
	uid, _ := strconv.Atoi(u.Uid)
	gid, _ := strconv.Atoi(u.Gid)
	home, err := os.MkdirTemp(u.HomeDir, "t")
	if err != nil {
		t.Fatal(err)
	}
	h := remoteHome{User: name, UID: uid, Home: home, RT: filepath.Join(home, "run"), Bin: filepath.Join(home, ".local", "bin", "agentrun")}
	t.Cleanup(func() {
		h.killProcesses()
		os.RemoveAll(home)
	})
	for _, d := range []string{h.RT, filepath.Dir(h.Bin), filepath.Join(home, ".ssh")} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(home, ".ssh", "authorized_keys"), []byte(authorizedKey+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	installBinary(t, binary, h.Bin, uid)
	chownTree(t, home, uid, gid)
	return h
}

// SSH returns `ssh -F config alias command…`: the command runs as the
// remote user, in the remote's HOME.
func (r *sshRemote) SSH(command ...string) *exec.Cmd {
	return exec.Command("ssh", append([]string{"-F", r.Config, remoteAlias, "--"}, command...)...)
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
		t.Fatalf("nvim over ssh: %v\nsshd:\n%s", err, r.logText())
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

// killProcesses ends what this test started as the user (the
// processes whose HOME is this test's), by pid.
func (h remoteHome) killProcesses() {
	for _, p := range h.procs() {
		syscall.Kill(p.PID, syscall.SIGKILL)
	}
}

// procs returns the processes this test runs as the user.
func (h remoteHome) procs() []proc {
	var out []proc
	for _, p := range allProcs() {
		fi, err := os.Stat(fmt.Sprintf("/proc/%d", p.PID))
		if err != nil || int(fi.Sys().(*syscall.Stat_t).Uid) != h.UID {
			continue
		}
		env, err := os.ReadFile(fmt.Sprintf("/proc/%d/environ", p.PID))
		if err == nil && strings.Contains("\x00"+string(env), "\x00HOME="+h.Home+"\x00") {
			out = append(out, p)
		}
	}
	return out
}

// freePort returns a TCP port free on 127.0.0.1 (asked of the kernel).
func freePort(t *testing.T) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
}

// chownTree gives dir and everything in it to uid:gid.
func chownTree(t *testing.T, dir string, uid, gid int) {
	t.Helper()
	err := filepath.Walk(dir, func(p string, _ os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		return os.Lchown(p, uid, gid)
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestSSHFixture: the fixture's sshd lets the test's key in as the remote
// user (its own uid, HOME and 0700 runtime directory, this build of
// agentrun on its PATH after ~/.local/bin is added) and listens on
// 127.0.0.1 only.
func TestSSHFixture(t *testing.T) {
	onceAcrossNeovims(t)
	r := startSSHRemote(t)
	out, err := r.SSH(`id -un; echo "$HOME"; echo "$XDG_RUNTIME_DIR"; stat -c %a "$XDG_RUNTIME_DIR"; "$HOME/.local/bin/agentrun" version`).CombinedOutput()
	if err != nil {
		t.Fatalf("ssh: %v\n%s\nsshd:\n%s", err, out, r.logText())
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
	sshd, _ := readProc(r.sshd.Process.Pid)
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
	return remoteHome{UID: r.UID, Home: r.Home}.procs()
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
