// Package sshtest is "another machine" for the SSH tests and the bench:
// a second local user account (and a third, another user of the same
// machine) reached through a real OpenSSH server (Debian's
// openssh-server) on 127.0.0.1, with throwaway host and user keys. The
// accounts are made once (useradd) and kept; everything a run puts in
// them (a HOME for that run, the authorized key, the runtime directory,
// the agentrun binary) is made fresh under the account's home and
// removed when the run ends. It needs root (useradd, and sshd switching
// to those users).
package sshtest

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/agentrun/agentrun.nvim/internal/wait"
)

// The accounts and the Host names of the client's ssh_config.
const (
	RemoteUser  = "agentrun-remote"
	RemoteAlias = "agentrun-remote-test"
	OtherUser   = "agentrun-other" // a second user on the remote
	OtherAlias  = "agentrun-other-test"
	// SSHD is sshd's path (it wants to be run by its absolute path).
	SSHD = "/usr/sbin/sshd"
)

// TB is what the fixture needs of its caller: testing.T has it, and the
// bench makes one.
type TB interface {
	wait.T
	Fatal(args ...any)
	Logf(format string, args ...any)
	Cleanup(func())
	TempDir() string
	Failed() bool
}

// Remote is a running sshd and "the remote": the account, its HOME for
// this run, and the client side's ssh_config.
type Remote struct {
	t      TB
	Port   int
	Config string // the client's ssh_config (ssh -F; AGENTRUN_SSH_CONFIG)
	// Main is the remote user's HOME for this run; Home, RT, Bin and UID
	// are its.
	Main Home
	Home string
	RT   string
	Bin  string
	UID  int
	// Other is a second user on the same remote, with agentrun too, whom
	// the same key logs in as (ssh://agentrun-other-test).
	Other Home

	logPath    string // sshd's log (-e)
	sshdConfig string
	sshd       *exec.Cmd     // nil while stopped
	exited     chan struct{} // closed when sshd has exited
}

// Home is one remote user's HOME for a run.
type Home struct {
	User string
	UID  int
	Home string // made for this run under the account's home, 0700
	RT   string // its XDG_RUNTIME_DIR (0700, under Home)
	Bin  string // Home/.local/bin/agentrun: the binary Start was given
}

// Start starts sshd on 127.0.0.1 on a free port for this run, with a
// throwaway host key and user key, and makes the remote users' HOMEs with
// the agentrun at binary in ~/.local/bin. sshd stops when the run ends
// (its Cleanup), and dies with the process that started it (Linux).
func Start(t TB, binary string) *Remote {
	t.Helper()
	if _, err := os.Stat(SSHD); err != nil {
		t.Fatalf("%s is missing: make deps installs Debian's openssh-server", SSHD)
	}
	// The client's side: keys and config in a temp dir of ours (0700).
	dir := t.TempDir()
	r := &Remote{t: t, logPath: filepath.Join(dir, "sshd.log")}
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

	r.Main = NewHome(t, RemoteUser, userPub, binary)
	r.Home, r.RT, r.Bin, r.UID = r.Main.Home, r.Main.RT, r.Main.Bin, r.Main.UID
	r.Other = NewHome(t, OtherUser, userPub, binary)

	// sshd: its own config, 127.0.0.1 only, only the remote users, keys
	// only; the session's HOME and XDG_RUNTIME_DIR are this run's.
	r.Port = FreePort(t)
	r.sshdConfig = filepath.Join(dir, "sshd_config")
	// Match blocks: each user's own keys file, HOME and runtime dir.
	match := ""
	for _, h := range []Home{r.Main, r.Other} {
		match += fmt.Sprintf("Match User %s\n  AuthorizedKeysFile %s\n  SetEnv HOME=%s XDG_RUNTIME_DIR=%s\n", h.User, filepath.Join(h.Home, ".ssh", "authorized_keys"), h.Home, h.RT)
	}
	WriteFile(t, r.sshdConfig, fmt.Sprintf(`Port %d
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
%s`, r.Port, hostKey, RemoteUser, OtherUser, match))
	if err := os.MkdirAll("/run/sshd", 0o755); err != nil { // its privilege separation directory
		t.Fatal(err)
	}
	r.StartSSHD()
	t.Cleanup(r.StopSSHD)

	// The client's ssh_config: this host only, its key only, its host key
	// only, never a prompt. ~/.ssh is not read (ssh -F).
	r.Config = filepath.Join(dir, "ssh_config")
	WriteFile(t, filepath.Join(dir, "known_hosts"), RemoteAlias+" "+hostPub+"\n")
	WriteFile(t, r.Config, fmt.Sprintf(`Host %s
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
`, RemoteAlias, RemoteUser, OtherAlias, OtherUser, RemoteAlias, OtherAlias, r.Port, RemoteAlias, userKey, filepath.Join(dir, "known_hosts")))
	return r
}

// StartSSHD starts sshd (-D: in the foreground, a child of ours, killed
// if we die) and waits until it listens.
func (r *Remote) StartSSHD() {
	t := r.t
	t.Helper()
	r.sshd = exec.Command(SSHD, "-D", "-e", "-f", r.sshdConfig)
	// A file, not a pipe: the sessions sshd forks keep what it writes to
	// open, and Wait would wait for them too.
	logFile, err := os.OpenFile(r.logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	defer logFile.Close()
	r.sshd.Stdout, r.sshd.Stderr = logFile, logFile
	r.sshd.SysProcAttr = dieWithUs()
	mark := len(r.LogText())
	if err := r.sshd.Start(); err != nil {
		t.Fatalf("start sshd: %v", err)
	}
	exited, cmd := make(chan struct{}), r.sshd
	r.exited = exited
	go func() { cmd.Wait(); close(exited) }()
	wait.Until(t, "sshd to listen", 10*time.Second, func() (bool, string) {
		select {
		case <-exited:
			t.Fatalf("sshd exited: %s", r.LogText())
		default:
		}
		return strings.Contains(r.LogText()[mark:], fmt.Sprintf("Server listening on 127.0.0.1 port %d", r.Port)), r.LogText()
	})
}

// LogText is sshd's log so far.
func (r *Remote) LogText() string {
	b, _ := os.ReadFile(r.logPath)
	return string(b)
}

// StopSSHD stops sshd's listener; sessions already open go on (each is a
// process of its own), as when a machine's sshd restarts.
func (r *Remote) StopSSHD() {
	if r.sshd == nil {
		return
	}
	r.sshd.Process.Signal(syscall.SIGTERM)
	<-r.exited
	r.sshd = nil
	if r.t.Failed() {
		r.t.Logf("sshd's log:\n%s", r.LogText())
	}
}

// SSHDPid is the running sshd's process id (0 while stopped).
func (r *Remote) SSHDPid() int {
	if r.sshd == nil {
		return 0
	}
	return r.sshd.Process.Pid
}

// URL is the remote as agentrun names it.
func (r *Remote) URL() string { return "ssh://" + RemoteAlias }

// OtherURL is the same remote as its other user.
func (r *Remote) OtherURL() string { return "ssh://" + OtherAlias }

// SSH returns `ssh -F config alias command…`: the command runs as the
// remote user, in the remote's HOME.
func (r *Remote) SSH(command ...string) *exec.Cmd {
	return exec.Command("ssh", append([]string{"-F", r.Config, RemoteAlias, "--"}, command...)...)
}

// Account returns the local account name, adding it when missing (a
// normal account with its own home, no password, reachable by key only).
func Account(t TB, name string) *user.User {
	t.Helper()
	if u, err := user.Lookup(name); err == nil {
		return u
	}
	// -p '*': no password, but not a locked account (sshd without PAM
	// refuses locked ones).
	if out, err := exec.Command("useradd", "--create-home", "--shell", "/bin/bash", "-p", "*", name).CombinedOutput(); err != nil {
		if u, err2 := user.Lookup(name); err2 == nil { // another run made it meanwhile
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

// NewHome makes user's HOME for this run (the account is added when
// missing), with authorizedKey and the agentrun at binary; it is removed,
// and what ran with it killed, when the run ends.
func NewHome(t TB, name, authorizedKey, binary string) Home {
	t.Helper()
	u := Account(t, name)
	uid, _ := strconv.Atoi(u.Uid)
	gid, _ := strconv.Atoi(u.Gid)
	home, err := os.MkdirTemp(u.HomeDir, "t")
	if err != nil {
		t.Fatal(err)
	}
	h := Home{User: name, UID: uid, Home: home, RT: filepath.Join(home, "run"), Bin: filepath.Join(home, ".local", "bin", "agentrun")}
	t.Cleanup(func() {
		h.KillProcesses()
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
	InstallBinary(t, binary, h.Bin, uid)
	chownTree(t, home, uid, gid)
	return h
}

// InstallBinary copies the agentrun at src to dst, owned by uid.
func InstallBinary(t TB, src, dst string, uid int) {
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

// KillProcesses ends what this run started as the user (the processes
// whose HOME is this run's), by pid.
func (h Home) KillProcesses() {
	for _, pid := range h.PIDs() {
		syscall.Kill(pid, syscall.SIGKILL)
	}
}

// PIDs returns the processes this run runs as the user.
func (h Home) PIDs() []int {
	entries, _ := os.ReadDir("/proc")
	var out []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		fi, err := os.Stat(fmt.Sprintf("/proc/%d", pid))
		if err != nil || int(fi.Sys().(*syscall.Stat_t).Uid) != h.UID {
			continue
		}
		env, err := os.ReadFile(fmt.Sprintf("/proc/%d/environ", pid))
		if err == nil && strings.Contains("\x00"+string(env), "\x00HOME="+h.Home+"\x00") {
			out = append(out, pid)
		}
	}
	return out
}

// FreePort returns a TCP port free on 127.0.0.1 (asked of the kernel).
func FreePort(t TB) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

// WriteFile writes a file of mode 0600, or fails the run.
func WriteFile(t TB, path, content string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
}

// chownTree gives dir and everything in it to uid:gid.
func chownTree(t TB, dir string, uid, gid int) {
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
