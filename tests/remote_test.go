package tests

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/agentrun/agentrun.nvim/ahp/client"
	"github.com/agentrun/agentrun.nvim/internal/syncbuf"
	"github.com/agentrun/agentrun.nvim/internal/vtsafe"
	"github.com/creack/pty"
)

// The remote-over-SSH journeys: a Neovim runs as the remote user on the
// far side of a real sshd (sshd_test.go), its agent starts commands
// there, and this machine's agentrun reaches them with ssh://.

// remoteCLI is an `agentrun attach …` running against the remote, its
// output collected and its input a pipe.
type remoteCLI struct {
	cmd *exec.Cmd
	in  *os.File
	out *syncbuf.Buffer
}

func (r *sshRemote) startCLI(args ...string) *remoteCLI {
	r.t.Helper()
	pr, pw, err := os.Pipe()
	if err != nil {
		r.t.Fatal(err)
	}
	c := &remoteCLI{cmd: r.CLI(args...), in: pw, out: &syncbuf.Buffer{}}
	c.cmd.Stdin, c.cmd.Stdout, c.cmd.Stderr = pr, c.out, c.out
	if err := c.cmd.Start(); err != nil {
		r.t.Fatal(err)
	}
	pr.Close()
	r.t.Cleanup(func() {
		pw.Close()
		c.cmd.Process.Kill()
		c.cmd.Wait()
	})
	return c
}

// waitOut waits until the output has every one of want.
func (c *remoteCLI) waitOut(t *testing.T, timeout time.Duration, want ...string) string {
	t.Helper()
	return eventually(t, fmt.Sprintf("agentrun %s to print %q", strings.Join(c.cmd.Args[1:], " "), want), timeout, func() (bool, string) {
		s := c.out.String()
		for _, w := range want {
			if !strings.Contains(s, w) {
				return false, s
			}
		}
		return true, s
	})
}

// sshChild returns the pid of the ssh the CLI process runs.
func (c *remoteCLI) sshChild(t *testing.T) int {
	t.Helper()
	var pid int
	eventually(t, "the CLI's ssh", 5*time.Second, func() (bool, string) {
		ds := descendants(c.cmd.Process.Pid)
		for _, p := range ds {
			if strings.HasPrefix(p.Cmdline, "ssh ") {
				pid = p.PID
				return true, ""
			}
		}
		return false, fmt.Sprint(ds)
	})
	return pid
}

// TestRemoteLsAttachTakeKill: on the remote, an agent's dev server runs;
// from here `agentrun ls ssh://host` lists it, `attach` shows its
// scrollback and then its new lines live (read-only: typing is refused),
// `attach --take` takes it from the agent and what is typed reaches the
// remote pty (its echo comes back and the remote Neovim shows it too),
// and `kill` ends it.
func TestRemoteLsAttachTakeKill(t *testing.T) {
	onceAcrossNeovims(t)
	r := startSSHRemote(t)
	e := r.StartEditor()
	term := e.startDevServer()
	e.waitBuf(term.Bufnr, 10*time.Second, "served 3\n")
	name := fmt.Sprintf("%s/%d:%s", r.URL(), e.backendPid(), term.ID)

	// A greeting from the remote shell's startup files does not get in
	// the way.
	writeFile(t, filepath.Join(r.Home, ".bashrc"), "echo 'Welcome to the dev box'\n")
	os.Chown(filepath.Join(r.Home, ".bashrc"), r.UID, -1)
	if out, err := r.SSH("true").CombinedOutput(); err != nil || !strings.Contains(string(out), "Welcome to the dev box") {
		t.Fatalf("the remote's ~/.bashrc is not read for a command (%v): %s", err, out)
	}
	out, err := r.CLI("ls", r.URL()).CombinedOutput()
	if err != nil || !strings.Contains(string(out), name) || !strings.Contains(string(out), "running") || !strings.Contains(string(out), "agent (tool call)") {
		t.Fatalf("agentrun ls %s: %v\n%s", r.URL(), err, out)
	}
	t.Logf("agentrun ls %s:\n%s", r.URL(), out)
	for _, l := range strings.Split(strings.TrimRight(string(out), "\n"), "\n") {
		if n := len([]rune(l)); n > 120 {
			t.Errorf("agentrun ls %s prints a line of %d columns (wraps at 120):\n%s", r.URL(), n, out)
		}
	}

	watch := r.startCLI("attach", name)
	s := watch.waitOut(t, 15*time.Second, "served 1\r\n", "[agentrun: attached to "+name)
	mark := len(s)
	watch.waitOut(t, 10*time.Second, "served")
	eventually(t, "live lines after the scrollback", 10*time.Second, func() (bool, string) {
		s := watch.out.String()
		return strings.Contains(s[mark:], "served "), s[mark:]
	})
	watch.in.Write([]byte("not typed\r"))
	watch.waitOut(t, 5*time.Second, "read-only: what you type does not reach "+name)
	watch.in.Write([]byte{0x1d})
	if err := watch.cmd.Wait(); err != nil {
		t.Fatalf("attach: %v\n%s", err, watch.out.String())
	}
	watch.waitOut(t, time.Second, "detached from "+name+"; it keeps running")

	take := r.startCLI("attach", "--take", name)
	take.waitOut(t, 15*time.Second, "[agentrun: attached to "+name+" ("+devServer+"), taking it over", name+" is yours: you type into it")
	var id string
	e.waitFor("the CLI to hold the remote terminal", 10*time.Second, func() (bool, string) {
		var claim map[string]any
		e.lua(`for _, t in ipairs(require("agentrun").status().terminals) do if t.id == ... then return t.claim end end`, &claim, term.ID)
		id, _ = claim["client_id"].(string)
		return strings.HasPrefix(id, "cli-"), fmt.Sprint(claim)
	})
	take.in.Write([]byte("typed-over-ssh\r"))
	take.waitOut(t, 10*time.Second, "typed-over-ssh") // the remote tty's echo
	e.waitBuf(term.Bufnr, 10*time.Second, "typed-over-ssh")
	take.in.Write([]byte{0x1d})
	if err := take.cmd.Wait(); err != nil {
		t.Fatalf("attach --take: %v\n%s", err, take.out.String())
	}

	out, err = r.CLI("kill", name).CombinedOutput()
	if err != nil || !strings.Contains(string(out), "killed "+name) {
		t.Fatalf("agentrun kill %s: %v\n%s", name, err, out)
	}
	e.waitBuf(term.Bufnr, 10*time.Second, signalMarker("SIGTERM"))
	out, err = r.CLI("attach", r.URL()+"/term-99").CombinedOutput()
	if err == nil || !strings.Contains(string(out), `no terminal "term-99" on any host on `+r.URL()) {
		t.Errorf("attach to an unknown remote terminal: %v\n%s", err, out)
	}
}

// sayLine matches what attach says between the terminal's bytes.
var sayLine = regexp.MustCompile(regexp.QuoteMeta(vtsafe.Reset) + `\r\n\[agentrun: .*?\]\r\n`)

// TestRemoteAttachResumesAfterTheLinkDrops: the ssh of an attach is
// killed while the remote command prints numbered lines; attach says it
// reconnects, starts ssh again and shows what it missed: every number
// once, in order, to the end.
func TestRemoteAttachResumesAfterTheLinkDrops(t *testing.T) {
	onceAcrossNeovims(t)
	const n = 600
	r := startSSHRemote(t)
	e := r.StartEditor()
	e.startSession()
	cmd := fmt.Sprintf(`for i in $(seq 1 %d); do echo "n $i"; sleep 0.01; done`, n)
	e.cmd("AgentPrompt " + cmd)
	term := e.waitTerminal(cmd, 10*time.Second)
	e.waitBuf(term.Bufnr, 10*time.Second, "n 2\n")
	name := fmt.Sprintf("%s/%d:%s", r.URL(), e.backendPid(), term.ID)

	a := r.startCLI("attach", name)
	a.waitOut(t, 15*time.Second, "[agentrun: attached to "+name)
	first := a.sshChild(t)
	eventually(t, "live numbered lines", 10*time.Second, func() (bool, string) {
		s := a.out.String()
		i := strings.Index(s, "[agentrun: attached")
		return strings.Count(s[i:], "n ") > 50, s[i:]
	})
	if err := syscall.Kill(first, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	a.waitOut(t, 10*time.Second, "reconnecting", "reconnected to "+r.URL())
	if s := a.out.String(); strings.Contains(s[strings.Index(s, "reconnecting"):], fmt.Sprintf("n %d\r\n", n)) && !strings.Contains(s, "what was missed follows") {
		t.Fatalf("the command ended before the link came back; nothing was resumed mid-run:\n%s", s)
	}
	if second := a.sshChild(t); second == first {
		t.Fatal("no new ssh after the first was killed")
	}
	// The first link's serve-stdio saw its input end and is gone: one
	// serve-stdio, the new link's; and nothing on either side listens on
	// TCP.
	eventually(t, "one serve-stdio on the remote", 10*time.Second, func() (bool, string) {
		var serving []proc
		for _, p := range r.remoteProcs() {
			if strings.Contains(p.Cmdline, "agentrun serve-stdio") {
				serving = append(serving, p)
			}
		}
		return len(serving) == 1, fmt.Sprint(serving)
	})
	mine, _ := readProc(a.cmd.Process.Pid)
	if l := tcpListeners(append(append(r.remoteProcs(), mine), descendants(a.cmd.Process.Pid)...)); len(l) > 0 {
		t.Errorf("a TCP listener: %v", l)
	}
	a.waitOut(t, 60*time.Second, fmt.Sprintf("n %d\r\n", n), "ended (exit 0)")
	if err := a.cmd.Wait(); err != nil {
		t.Fatalf("attach: %v\n%s", err, a.out.String())
	}
	s := a.out.String()
	if m := regexp.MustCompile(`what was missed follows \((\d+) actions\)`).FindStringSubmatch(s); m == nil || m[1] == "0" {
		t.Errorf("attach resumed without replaying anything (the link came back before anything was missed?):\n%s", s)
	}
	for _, m := range sayLine.FindAllString(s, -1) {
		t.Logf("attach said: %s", strings.TrimSpace(strings.TrimPrefix(m, vtsafe.Reset)))
	}
	got := numbers(t, s)
	for i, v := range got {
		if v != i+1 {
			t.Fatalf("line %d reads n %d (lost or doubled output around it); the output:\n%s", i+1, v, s)
		}
	}
	if len(got) != n {
		t.Fatalf("%d numbered lines, want %d:\n%s", len(got), n, s)
	}
}

// TestRemoteWithoutAMatchingAgentrun: a remote without agentrun, with
// another version of it, or with one too old to serve over SSH, is said
// in a sentence with the fix; a remote with no host running says so.
func TestRemoteWithoutAMatchingAgentrun(t *testing.T) {
	onceAcrossNeovims(t)
	r := startSSHRemote(t)
	version, _ := os.ReadFile(filepath.Join(root, "VERSION"))
	v := strings.TrimSpace(string(version))
	ls := func() string {
		t.Helper()
		out, err := r.CLI("ls", r.URL()).CombinedOutput()
		if err == nil {
			t.Fatalf("agentrun ls %s succeeded:\n%s", r.URL(), out)
		}
		return string(out)
	}
	if out := ls(); !strings.Contains(out, "no agentrun host is running on "+r.URL()) {
		t.Errorf("no host on the remote:\n%s", out)
	}
	if out, err := r.CLI("attach", r.URL()).CombinedOutput(); err == nil || !strings.Contains(string(out), "name a terminal after the host: "+r.URL()+"/PID:term-N (agentrun ls "+r.URL()+" lists them)") {
		t.Errorf("attach to a remote without a terminal: %v\n%s", err, out)
	}
	os.Remove(r.Bin)
	if out := ls(); !strings.Contains(out, r.URL()+" has no agentrun: install agentrun "+v+" there") {
		t.Errorf("no agentrun on the remote:\n%s", out)
	}
	other := filepath.Join(t.TempDir(), "agentrun")
	build := exec.Command("go", "build", "-ldflags", "-X main.version=0.0.9", "-o", other, ".")
	build.Dir = root
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("build: %v\n%s", err, out)
	}
	r.InstallBinary(other)
	if out := ls(); !strings.Contains(out, "the agentrun on "+r.URL()+" is version 0.0.9 and this one is "+v+": install agentrun "+v+" there") {
		t.Errorf("another version on the remote:\n%s", out)
	}
	newer := filepath.Join(t.TempDir(), "agentrun")
	build = exec.Command("go", "build", "-ldflags", "-X main.version=99.0.0", "-o", newer, ".")
	build.Dir = root
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("build: %v\n%s", err, out)
	}
	r.InstallBinary(newer)
	if out := ls(); !strings.Contains(out, "the agentrun on "+r.URL()+" is version 99.0.0 and this one is "+v+": upgrade this one to 99.0.0 (or install "+v+" there; both sides must be the same version)") {
		t.Errorf("a newer version on the remote:\n%s", out)
	}
	// An agentrun from before serve-stdio, which make deps built
	// (scripts/old-agentrun.sh: its modules are not the current ones, and
	// this test runs offline).
	old := exec.Command("bash", filepath.Join(root, "scripts", "old-agentrun.sh"))
	var oldErr strings.Builder
	old.Stderr = &oldErr
	path, err := old.Output()
	if old.ProcessState != nil && old.ProcessState.ExitCode() == 3 {
		t.Skipf("no agentrun from before serve-stdio: %s", oldErr.String())
	} else if err != nil {
		t.Fatalf("the agentrun from before serve-stdio is not built (make deps builds it: scripts/old-agentrun.sh): %v\n%s", err, oldErr.String())
	}
	other = strings.TrimSpace(string(path))
	r.InstallBinary(other)
	if out := ls(); !strings.Contains(out, "the agentrun on "+r.URL()+" is version 0.0.8, which cannot serve over SSH, and this one is "+v+": upgrade it there to agentrun "+v) {
		t.Errorf("an agentrun too old to serve:\n%s", out)
	}
}

// TestRemoteTakeoverTakesOurSize: `attach --take` from a terminal of 111
// columns and 33 rows makes the remote pty that size, and follows when
// the local terminal is resized.
func TestRemoteTakeoverTakesOurSize(t *testing.T) {
	onceAcrossNeovims(t)
	r := startSSHRemote(t)
	e := r.StartEditor()
	e.startSession()
	sizer := `for i in $(seq 1 600); do echo "size $(stty size)"; sleep 0.1; done`
	e.cmd("AgentPrompt " + sizer)
	term := e.waitTerminal(sizer, 10*time.Second)
	e.waitBuf(term.Bufnr, 10*time.Second, "size ")
	name := fmt.Sprintf("%s/%d:%s", r.URL(), e.backendPid(), term.ID)
	cmd := r.CLI("attach", "--take", name)
	tty, err := pty.StartWithSize(cmd, &pty.Winsize{Rows: 33, Cols: 111})
	if err != nil {
		t.Fatal(err)
	}
	var out syncbuf.Buffer
	go io.Copy(&out, tty)
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
		tty.Close()
	})
	e.waitBuf(term.Bufnr, 15*time.Second, "size 33 111\n")
	if err := pty.Setsize(tty, &pty.Winsize{Rows: 29, Cols: 97}); err != nil {
		t.Fatal(err)
	}
	e.waitBuf(term.Bufnr, 10*time.Second, "size 29 97\n")
	eventually(t, "attach to show the new size too", 10*time.Second, func() (bool, string) {
		return strings.Contains(out.String(), "size 29 97"), out.String()
	})
	tty.Write([]byte{0x1d})
	if err := cmd.Wait(); err != nil {
		t.Fatalf("attach --take: %v\n%s", err, out.String())
	}
}

// TestRemoteServesOnlyItsUsersTerminals: the remote's socket directory
// is 0700 and its sockets 0600; another local user (here root, whom
// file modes do not stop) is refused by the directory check of agentrun
// ls and by the host's peer-uid check when it dials the socket itself,
// and its own serve-stdio lists only its own hosts.
func TestRemoteServesOnlyItsUsersTerminals(t *testing.T) {
	onceAcrossNeovims(t)
	r := startSSHRemote(t)
	e := r.StartEditor()
	e.startDevServer()
	pid := e.backendPid()
	dir := filepath.Join(r.RT, "agentrun")
	sock := filepath.Join(dir, fmt.Sprintf("%d.sock", pid))
	for path, want := range map[string]os.FileMode{dir: 0o700, sock: 0o600} {
		fi, err := os.Stat(path)
		if err != nil {
			t.Fatal(err)
		}
		if fi.Mode().Perm() != want || int(fi.Sys().(*syscall.Stat_t).Uid) != r.UID {
			t.Errorf("%s: mode %v uid %d, want %v owned by %s", path, fi.Mode().Perm(), fi.Sys().(*syscall.Stat_t).Uid, want, remoteUser)
		}
	}
	ls := exec.Command(binary, "ls")
	ls.Env = append(os.Environ(), "XDG_RUNTIME_DIR="+r.RT)
	out, err := ls.CombinedOutput()
	if err == nil || !strings.Contains(string(out), fmt.Sprintf("belongs to uid %d, not to you", r.UID)) {
		t.Errorf("another user's agentrun ls in the remote's runtime dir: %v\n%s", err, out)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, err := client.Dial(ctx, sock, "intruder")
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := c.Initialize(ctx, "agenthost:/root"); err == nil || !strings.Contains(err.Error(), fmt.Sprintf("is not the host's user (uid %d)", r.UID)) {
		t.Errorf("another user dialing the host's socket: %v", err)
	}
	serve := exec.Command(binary, "serve-stdio")
	serve.Env = append(os.Environ(), "XDG_RUNTIME_DIR="+runtimeDir(t))
	serve.Stdin = strings.NewReader(fmt.Sprintf("0 {\"op\":\"hosts\",\"id\":1}\n0 {\"op\":\"open\",\"ch\":2,\"pid\":%d}\n", pid))
	out, err = serve.Output()
	if err != nil || !strings.Contains(string(out), "0 {\"op\":\"hosts\",\"id\":1}\n") || !strings.Contains(string(out), fmt.Sprintf("no agentrun host with process id %d runs here", pid)) {
		t.Errorf("another user's serve-stdio: %v\n%s", err, out)
	}
}

// numbers returns the numbered lines ("n 17") of an attach's output, what
// attach said between them taken out.
func numbers(t *testing.T, out string) []int {
	t.Helper()
	text := sayLine.ReplaceAllString(out, "")
	var got []int
	for _, l := range strings.Split(strings.ReplaceAll(text, "\r\n", "\n"), "\n") {
		if v, ok := strings.CutPrefix(l, "n "); ok {
			i, err := strconv.Atoi(v)
			if err != nil {
				t.Fatalf("a broken line %q in:\n%s", l, text)
			}
			got = append(got, i)
		}
	}
	return got
}

// TestRemoteAttachWaitsForTheRemoteToComeBack: the link drops while the
// remote's sshd does not answer (restarting, say): attach says each
// attempt that failed and why, and once sshd is back it resumes with
// nothing lost or doubled. Another attach, told Ctrl-] while it
// reconnects, detaches at once.
func TestRemoteAttachWaitsForTheRemoteToComeBack(t *testing.T) {
	onceAcrossNeovims(t)
	const n = 600
	r := startSSHRemote(t)
	e := r.StartEditor()
	e.startSession()
	cmd := fmt.Sprintf(`for i in $(seq 1 %d); do echo "n $i"; sleep 0.01; done`, n)
	e.cmd("AgentPrompt " + cmd)
	term := e.waitTerminal(cmd, 10*time.Second)
	name := fmt.Sprintf("%s/%d:%s", r.URL(), e.backendPid(), term.ID)
	a := r.startCLI("attach", name)
	b := r.startCLI("attach", name)
	a.waitOut(t, 15*time.Second, "[agentrun: attached to "+name, "n 20\r\n")
	b.waitOut(t, 15*time.Second, "[agentrun: attached to "+name)

	r.StopSSHD()
	syscall.Kill(a.sshChild(t), syscall.SIGKILL)
	syscall.Kill(b.sshChild(t), syscall.SIGKILL)
	refused := fmt.Sprintf("cannot reach %s: connect to host 127.0.0.1 port %d: Connection refused; try `ssh ", r.URL(), r.Port)
	a.waitOut(t, 10*time.Second, "reconnecting to "+r.URL()+", attempt 1: "+refused)
	b.waitOut(t, 10*time.Second, "reconnecting to "+r.URL()+", attempt 1: ")
	b.in.Write([]byte("x"))
	b.waitOut(t, 5*time.Second, "not typed: reconnecting to "+r.URL())
	b.in.Write([]byte{0x1d})
	if err := b.cmd.Wait(); err != nil {
		t.Fatalf("attach detached while reconnecting: %v\n%s", err, b.out.String())
	}
	b.waitOut(t, time.Second, "detached from "+name+"; it keeps running")

	r.StartSSHD()
	a.waitOut(t, 15*time.Second, "reconnected to "+r.URL())
	a.waitOut(t, 60*time.Second, fmt.Sprintf("n %d\r\n", n), "ended (exit 0)")
	if err := a.cmd.Wait(); err != nil {
		t.Fatalf("attach: %v\n%s", err, a.out.String())
	}
	got := numbers(t, a.out.String())
	for i, v := range got {
		if v != i+1 {
			t.Fatalf("line %d reads n %d (lost or doubled output around it); the output:\n%s", i+1, v, a.out.String())
		}
	}
	if len(got) != n {
		t.Fatalf("%d numbered lines, want %d", len(got), n)
	}
}

// TestRemoteBadArguments: a remote named wrong is said in a sentence,
// before any ssh runs.
func TestRemoteBadArguments(t *testing.T) {
	onceAcrossNeovims(t)
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"ls", "devbox"}, `agentrun ls lists this machine's terminals, or a remote's: ssh://[user@]host[:port], not "devbox"`},
		{[]string{"ls", "ssh://"}, `"ssh://" names no host: write ssh://[user@]host[:port]`},
		{[]string{"ls", "ssh://devbox:99999"}, `the port "99999" is not a number from 1 to 65535`},
		{[]string{"attach", "ssh://-oProxyCommand=touch/1:term-1"}, "a host or user cannot start with '-'"},
		{[]string{"kill", "ssh://@devbox/1:term-1"}, "has an empty user before @"},
		{[]string{"ls", "ssh://a", "b"}, "usage: agentrun ls [--json] [ssh://[user@]host[:port]]"},
		{[]string{"ls", "ssh://devbox"}, "ssh is not installed here, and agentrun reaches ssh://devbox with it: install OpenSSH's client (ssh)"},
	} {
		cmd := exec.Command(binary, tt.args...)
		cmd.Env = append(os.Environ(), "PATH=/nonexistent") // no ssh runs
		out, err := cmd.CombinedOutput()
		if err == nil || !strings.Contains(string(out), tt.want) {
			t.Errorf("agentrun %s: %v\n%s\nwant %q", strings.Join(tt.args, " "), err, out, tt.want)
		}
	}
}

// TestRemoteFloodArrivesWhole: a command that prints 100000 lines at
// once on the remote reaches an attach over SSH whole and in order.
func TestRemoteFloodArrivesWhole(t *testing.T) {
	onceAcrossNeovims(t)
	const n = 100000
	r := startSSHRemote(t)
	e := r.StartEditor()
	e.startSession()
	cmd := fmt.Sprintf(`sleep 2; seq -f 'n %%g' 1 %d`, n)
	e.cmd("AgentPrompt " + cmd)
	term := e.waitTerminal(cmd, 10*time.Second)
	name := fmt.Sprintf("%s/%d:%s", r.URL(), e.backendPid(), term.ID)
	a := r.startCLI("attach", name)
	a.waitOut(t, 60*time.Second, fmt.Sprintf("n %d\r\n", n), "ended (exit 0)")
	if err := a.cmd.Wait(); err != nil {
		t.Fatalf("attach: %v", err)
	}
	got := numbers(t, a.out.String())
	for i, v := range got {
		if v != i+1 {
			t.Fatalf("line %d reads n %d", i+1, v)
		}
	}
	if len(got) != n {
		t.Fatalf("%d numbered lines, want %d", len(got), n)
	}
}

// TestRemoteHostGoesAway: the remote's backend is killed while attach
// follows one of its terminals over a good link: attach says the host
// went away and ends, without trying again.
func TestRemoteHostGoesAway(t *testing.T) {
	onceAcrossNeovims(t)
	r := startSSHRemote(t)
	e := r.StartEditor()
	term := e.startDevServer()
	backend := e.backendPid()
	name := fmt.Sprintf("%s/%d:%s", r.URL(), backend, term.ID)
	a := r.startCLI("attach", name)
	a.waitOut(t, 15*time.Second, "[agentrun: attached to "+name, "served 2\r\n")
	if err := syscall.Kill(backend, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	err := a.cmd.Wait()
	if err == nil {
		t.Fatalf("attach ended well after its host was killed:\n%s", a.out.String())
	}
	a.waitOut(t, time.Second, "the connection to the host of "+name+" ended; reconnecting", "the host of "+name+" went away]")
	if s := a.out.String(); strings.Contains(s, "attempt") {
		t.Errorf("attach tried again for a host that is gone:\n%s", s)
	}
	for _, m := range sayLine.FindAllString(a.out.String(), -1) {
		t.Logf("attach said: %s", strings.TrimSpace(strings.TrimPrefix(m, vtsafe.Reset)))
	}
}

// TestRemoteTakeoverSurvivesTheLinkDropping: attach --take holds the
// remote terminal (what was typed before the claim's answer came is
// typed once it is ours); its ssh is killed; after the reconnect it still holds
// it and what is typed reaches the remote pty.
func TestRemoteTakeoverSurvivesTheLinkDropping(t *testing.T) {
	onceAcrossNeovims(t)
	r := startSSHRemote(t)
	e := r.StartEditor()
	term := e.startDevServer()
	name := fmt.Sprintf("%s/%d:%s", r.URL(), e.backendPid(), term.ID)
	a := r.startCLI("attach", "--take", name)
	// Typed at once, before the claim is known to be ours: it waits for
	// the claim, and is typed then (not refused as read-only).
	a.in.Write([]byte("before-drop\r"))
	a.waitOut(t, 15*time.Second, "you type into it", "before-drop")
	if s := a.out.String(); strings.Contains(s, "read-only") {
		t.Fatalf("what was typed before the claim's answer was refused:\n%s", s)
	}
	syscall.Kill(a.sshChild(t), syscall.SIGKILL)
	s := a.waitOut(t, 15*time.Second, "reconnected to "+r.URL())
	if strings.Contains(s, "you only watch now") || strings.Contains(s, "refused") {
		t.Fatalf("the claim was lost over the reconnect:\n%s", s)
	}
	a.in.Write([]byte("after-drop\r"))
	a.waitOut(t, 10*time.Second, "after-drop")
	e.waitBuf(term.Bufnr, 10*time.Second, "before-drop", "after-drop")
	var claim map[string]any
	e.lua(`for _, t in ipairs(require("agentrun").status().terminals) do if t.id == ... then return t.claim end end`, &claim, term.ID)
	if id, _ := claim["client_id"].(string); id != fmt.Sprintf("cli-%d", a.cmd.Process.Pid) {
		t.Errorf("the remote terminal's claim after the reconnect: %v", claim)
	}
	a.in.Write([]byte{0x1d})
	if err := a.cmd.Wait(); err != nil {
		t.Fatalf("attach: %v\n%s", err, a.out.String())
	}
}

// TestRemoteOtherUserSeesNoneOfThem: another user of the same remote,
// logged in with the same key, lists no host and reaches none of the
// first user's terminals: serve-stdio serves the user it runs as.
func TestRemoteOtherUserSeesNoneOfThem(t *testing.T) {
	onceAcrossNeovims(t)
	r := startSSHRemote(t)
	e := r.StartEditor()
	term := e.startDevServer()
	pid := e.backendPid()
	if out, err := r.CLI("ls", r.URL()).CombinedOutput(); err != nil || !strings.Contains(string(out), fmt.Sprintf("%d:%s", pid, term.ID)) {
		t.Fatalf("agentrun ls %s: %v\n%s", r.URL(), err, out)
	}
	out, err := r.CLI("ls", r.OtherURL()).CombinedOutput()
	if err == nil || !strings.Contains(string(out), "no agentrun host is running on "+r.OtherURL()) {
		t.Errorf("agentrun ls %s (the other user): %v\n%s", r.OtherURL(), err, out)
	}
	for _, cmd := range []string{"attach", "kill"} {
		name := fmt.Sprintf("%s/%d:%s", r.OtherURL(), pid, term.ID)
		out, err := r.CLI(cmd, name).CombinedOutput()
		if err == nil || !strings.Contains(string(out), "no agentrun host is running on "+r.OtherURL()) {
			t.Errorf("agentrun %s %s (the other user): %v\n%s", cmd, name, err, out)
		}
	}
	e.waitBuf(term.Bufnr, 10*time.Second, "served 3\n") // untouched
}

// TestRemoteAttachAfterMoreThanTheHostReplays: while the link is down
// the remote command prints more than the host keeps to replay; attach
// says so and shows the terminal again from the host's copy, which has
// the command's last lines; when the command ends and its terminal is
// released while the link is down again, attach says it is gone.
func TestRemoteAttachAfterMoreThanTheHostReplays(t *testing.T) {
	onceAcrossNeovims(t)
	r := startSSHRemote(t)
	e := r.StartEditor()
	e.startSession()
	// Waits for a file, floods ~16 MB (past the host's 8 MiB log), waits
	// for another file.
	goFile, floodedFile, endFile := filepath.Join(r.Home, "go"), filepath.Join(r.Home, "flooded"), filepath.Join(r.Home, "end")
	cmd := `while [ ! -e ` + goFile + ` ]; do sleep 0.1; done; seq -f 'n %.0f' 1 1500000; echo flooded; touch ` + floodedFile + `; while [ ! -e ` + endFile + ` ]; do sleep 0.1; done`
	e.cmd("AgentPrompt " + cmd)
	term := e.waitTerminal(cmd, 10*time.Second)
	name := fmt.Sprintf("%s/%d:%s", r.URL(), e.backendPid(), term.ID)
	a := r.startCLI("attach", name)
	a.waitOut(t, 15*time.Second, "[agentrun: attached to "+name)

	r.StopSSHD()
	syscall.Kill(a.sshChild(t), syscall.SIGKILL)
	a.waitOut(t, 10*time.Second, "attempt 1: ")
	writeFile(t, goFile, "")
	// (The remote Neovim shows the flood at its own pace; the file says
	// the host has had it all.)
	eventually(t, "the flood to be printed", 60*time.Second, func() (bool, string) {
		_, err := os.Stat(floodedFile)
		return err == nil, ""
	})
	r.StartSSHD()
	s := a.waitOut(t, 30*time.Second, "more happened meanwhile than the host keeps to replay: the terminal again from its start")
	i := strings.Index(s, "the terminal again from its start")
	eventually(t, "the host's copy to be shown", 10*time.Second, func() (bool, string) {
		s := a.out.String()[i:]
		return strings.Contains(s, "n 1500000\r\nflooded\r\n"), s[max(0, len(s)-2000):]
	})

	// Down again; the command ends and its terminal is released meanwhile.
	r.StopSSHD()
	mark := len(a.out.String())
	syscall.Kill(a.sshChild(t), syscall.SIGKILL)
	eventually(t, "attach to try again", 10*time.Second, func() (bool, string) {
		s := a.out.String()[mark:]
		return strings.Contains(s, "attempt 1: "), s
	})
	writeFile(t, endFile, "")
	e.waitFor("the terminal to be released", 30*time.Second, func() (bool, string) {
		for _, ti := range e.terminals() {
			if ti.ID == term.ID {
				return ti.State == "released", ti.State
			}
		}
		return true, "gone"
	})
	r.StartSSHD()
	a.waitOut(t, 30*time.Second, name+" is gone from its host: it ended, or was killed, while the link was down")
	if err := a.cmd.Wait(); err != nil {
		t.Fatalf("attach: %v", err)
	}
}
