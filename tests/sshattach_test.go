package tests

import (
	"fmt"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// :AgentAttach ssh://… in a Neovim on this machine: a remote machine's
// terminals (a Neovim there, as the remote user, runs the agent and its
// command), reached over the real sshd of sshd_test.go.

// sshScreen starts a Neovim on the screen whose backend reaches r with
// r's ssh_config.
func sshScreen(t *testing.T, r *sshRemote, cols, rows int) *screen {
	t.Helper()
	return startScreen(t, cols, rows, fmt.Sprintf("vim.env.AGENTRUN_SSH_CONFIG = %q", r.Config))
}

// sshOf returns the pid of the ssh that the screen's backend runs to
// reach a remote (its serve-stdio link); 0 when there is none.
func (s *screen) sshOf() int {
	s.t.Helper()
	pane, err := strconv.Atoi(strings.TrimSpace(s.tmux("display", "-p", "-t", "0", "#{pane_pid}")))
	if err != nil {
		s.t.Fatal(err)
	}
	for _, p := range descendants(pane) {
		if strings.HasPrefix(p.Cmdline, "ssh ") && strings.Contains(p.Cmdline, "serve-stdio") {
			return p.PID
		}
	}
	return 0
}

// numberedLine is a line "n N" of a counting command; its number ends it
// (what is typed is echoed between the command's writes, maybe before a
// number on its line).
var numberedLine = regexp.MustCompile(`(?m)n (\d+)\s*$`)

// lastNumber is the number of the last numbered line on screen sc (0: none).
func lastNumber(sc string) int {
	n := numberedLine.FindAllStringSubmatch(sc, -1)
	if len(n) == 0 {
		return 0
	}
	v, _ := strconv.Atoi(n[len(n)-1][1])
	return v
}

// writeBuffer writes the current buffer (a terminal split: all of its
// scrollback) to a file, as typed, and returns what it holds.
func (s *screen) writeBuffer() string {
	s.t.Helper()
	path := filepath.Join(s.dir, fmt.Sprintf("buffer-%d.txt", time.Now().UnixNano()))
	s.keys(`C-\`, "C-n", ":w! "+path, "Enter")
	var data []byte
	s.waitFor("the buffer written to "+path, 5*time.Second, func(string) bool {
		var err error
		data, err = os.ReadFile(path)
		return err == nil && len(data) > 0
	})
	return string(data)
}

// waitSplit waits until the split of terminal name holds want, read from
// its buffer: the numbers flowing by may scroll it out of the split's
// rows before a look at the screen under load, as a user scrolls back.
func (s *screen) waitSplit(name, want string) {
	s.t.Helper()
	eventually(s.t, fmt.Sprintf("%q in the split of %s", want, name), 10*time.Second, func() (bool, string) {
		text := s.expr(`luaeval('(function() for _, b in ipairs(vim.api.nvim_list_bufs()) do if vim.b[b].agentrun_terminal == _A then return table.concat(vim.api.nvim_buf_get_lines(b, 0, -1, false), "\n") end end return "" end)()', '` + name + `')`)
		got := regexp.MustCompile(`(?m)^.*got: .*$`).FindAllString(text, -1)
		return strings.Contains(text, want), fmt.Sprintf("the split's lines with \"got: \": %q\nthe screen:\n%s", got, s.capture())
	})
}

// TestRemoteAttachInNeovimJourney: on the remote, the agent runs a
// command that prints numbered lines and echoes what is typed into it.
// Here, :AgentAttach ssh://host/<Tab> completes its name and attaches at
// once; q closes the split and :AgentAttach ssh://host lists it to pick.
// The split shows what came before (from n 1) and follows; T takes it
// over and what is typed reaches the remote command; the ssh is killed
// mid-output: the split says it reconnects, then that it is back, and
// goes on with no line lost or doubled; X kills it through its host and
// the split shows how it ended. Nothing binds TCP.
func TestRemoteAttachInNeovimJourney(t *testing.T) {
	onceAcrossNeovims(t)
	r := startSSHRemote(t)
	e := r.StartEditor()
	e.startSession()
	// The numbers come from a loop of their own: a `read -t` between them
	// lost what was typed when its timeout fired as the line came in (bash
	// 5.2 read "hello\n" in one go, took the timeout after the "h" and
	// the next read got "ello": "got: ello over ssh" under load, though
	// every byte reached the pty).
	cmd := `bash -c '(i=0; while :; do i=$((i+1)); echo "n $i"; sleep 0.03; done) & while read line; do echo "got: $line"; done'`
	e.cmd("AgentPrompt " + cmd)
	term := e.waitTerminal(cmd, 10*time.Second)
	e.waitBuf(term.Bufnr, 10*time.Second, "n 2\n")
	name := fmt.Sprintf("%s/%d:%s", r.URL(), e.backendPid(), term.ID)

	s := sshScreen(t, r, 160, 40)
	// <Tab> after ssh://host/ lists the remote's terminals.
	s.keys(":AgentAttach "+r.URL()+"/", "Tab")
	s.waitShows(15*time.Second, ":AgentAttach "+name)
	s.keys("Enter")
	num := numberedLine
	lastOn := lastNumber
	follows := func(what string) int {
		t.Helper()
		sc := s.waitFor("numbered lines in the split "+what, 15*time.Second, num.MatchString)
		last := lastOn(sc)
		s.waitFor(fmt.Sprintf("n %d in the split %s (it follows)", last+20, what), 15*time.Second, func(sc string) bool { return lastOn(sc) >= last+20 })
		return last
	}
	s.waitShows(10*time.Second, splitOf(name))
	follows("attached at once")
	s.keys(`C-\`, "C-n", "q")
	s.waitFor("the split closed", 5*time.Second, func(sc string) bool { return !shows(sc, splitOf(name)) })

	// :AgentAttach ssh://host asks which of its terminals.
	s.keys(":AgentAttach "+r.URL(), "Enter")
	s.waitShows(15*time.Second, "attach to", name)
	s.keys("1", "Enter")
	s.waitShows(10*time.Second, splitOf(name))
	follows("picked from the list")

	// T takes it over; what is typed reaches the remote command.
	s.keys(`C-\`, "C-n", "T")
	s.waitShows(10*time.Second, name+" is yours now")
	s.keys("i")
	s.typeText("hello over ssh\r")
	s.waitSplit(name, "got: hello over ssh")
	// :AgentTerminals lists it as running and ours; q there comes back.
	s.keys(`C-\`, "C-n", ":AgentTerminals", "Enter")
	s.waitFor(name+" in the list, running and ours", 10*time.Second, regexp.MustCompile(`(?m)^`+regexp.QuoteMeta(name)+`\s+running\s+you\s`).MatchString)
	s.keys("q")
	s.waitFor("the list closed", 5*time.Second, func(sc string) bool { return !strings.Contains(sc, "agentrun terminals —") })
	// Neovim before 0.12 may scramble a line of a terminal's scrollback
	// when its window's height changes just after output (neovim#37823,
	// fixed in 0.12), as the list's rows came from the split while the
	// numbers flowed: there the count of every line starts after it.
	from := 1
	if v := nvimVersion(); strings.HasPrefix(v, "NVIM v0.7.") || strings.HasPrefix(v, "NVIM v0.10.") {
		from = follows("after the list closed")
	}
	s.keys("i")

	// The link drops mid-output: it reconnects and goes on.
	first := s.sshOf()
	if first == 0 {
		t.Fatal("no ssh of the backend's")
	}
	before := follows("before the link drops")
	if err := syscall.Kill(first, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	s.waitFor("numbered lines after the link came back", 30*time.Second, func(sc string) bool { return lastOn(sc) > before+100 })
	if second := s.sshOf(); second == 0 || second == first {
		t.Errorf("no new ssh after the first (%d) was killed: %d", first, second)
	}
	pane, _ := strconv.Atoi(strings.TrimSpace(s.tmux("display", "-p", "-t", "0", "#{pane_pid}")))
	if l := tcpListeners(append(r.remoteProcs(), descendants(pane)...)); len(l) > 0 {
		t.Errorf("a TCP listener: %v", l)
	}
	// Still ours after the link came back: typing reaches it (its echo
	// read from the split's buffer: the numbers flowing by may scroll it
	// out of the 11 rows before a look at the screen)
	s.typeText("again\r")
	s.waitSplit(name, "got: again")

	// X kills it through its host; the split shows the end.
	s.keys(`C-\`, "C-n", "X")
	s.waitShows(15*time.Second, signalMarker("SIGTERM"))
	out := s.writeBuffer()
	for _, want := range []string{"got: hello over ssh", "got: again", "; reconnecting]", "[agentrun: reconnected to " + r.URL() + "; what was missed follows]", signalMarker("SIGTERM")} {
		if !strings.Contains(out, want) {
			t.Errorf("the split does not show %q:\n%s", want, out)
		}
	}
	for _, m := range regexp.MustCompile(`\[agentrun: [^\]]*\]`).FindAllString(out, -1) {
		t.Logf("the split said: %s", m)
	}
	// Every line once, in order, from the first (shown on attach).
	got := num.FindAllStringSubmatch(out, -1)
	start := -1
	for i, m := range got {
		if v, _ := strconv.Atoi(m[1]); v == from {
			start = i
			break
		}
	}
	if start < 0 {
		t.Fatalf("the split has no n %d:\n%s", from, out)
	}
	for i, m := range got[start:] {
		if v, _ := strconv.Atoi(m[1]); v != from+i {
			t.Fatalf("line %d of the numbers reads n %d (lost or doubled output around it):\n%s", from+i, v, out)
		}
	}
	if len(got) < before+100 {
		t.Errorf("%d numbered lines, fewer than the %d seen on the screen", len(got), before+100)
	}
	// q closes the split; ended, the terminal is said to have ended.
	s.keys("q")
	s.waitFor("the split closed", 5*time.Second, func(sc string) bool { return !shows(sc, splitOf(name)) })
	s.keys(":AgentKill "+name, "Enter")
	s.waitShows(10*time.Second, "(agentrun) "+name+" ended (signal SIGTERM)")
}

// TestRemoteAttachInNeovimSaysWhatIsWrong: every way :AgentAttach ssh://…
// can fail is said in a sentence with what to do.
func TestRemoteAttachInNeovimSaysWhatIsWrong(t *testing.T) {
	onceAcrossNeovims(t)
	r := startSSHRemote(t)
	s := sshScreen(t, r, 250, 30)
	version, _ := os.ReadFile(filepath.Join(root, "VERSION"))
	v := strings.TrimSpace(string(version))
	port := freePort(t)
	try := func(arg string, want ...string) {
		t.Helper()
		s.keys(":AgentAttach "+arg, "Enter")
		sc := s.waitShows(30*time.Second, want...)
		for _, l := range strings.Split(sc, "\n") {
			if strings.Contains(l, "(agentrun)") {
				t.Logf(":AgentAttach %s → %s", arg, strings.TrimSpace(l))
			}
		}
		for _, bad := range []string{"stack traceback", "E5108", "rpc error", "jsonrpc", ".go:"} {
			if strings.Contains(sc, bad) {
				t.Errorf(":AgentAttach %s shows %q:\n%s", arg, bad, sc)
			}
		}
		s.keys("Enter") // a hit-enter prompt, if any
		s.keys(":echo ''", "Enter")
	}
	try("ssh://dev;box", `(agentrun) "ssh://dev;box": the host or user has a character hosts and users do not have`)
	try("ssh://", `(agentrun) "ssh://" names no host: write ssh://[user@]host[:port]`)
	try("ssh://devbox:99999/1:term-1", `the port "99999" is not a number from 1 to 65535`)
	try(r.URL()+"/term-4", "names no terminal: after the machine comes PID:term-N, as :AgentAttach "+r.URL()+" lists them")
	try(fmt.Sprintf("%s:%d", r.URL(), port), fmt.Sprintf("(agentrun) cannot reach %s:%d: connect to host 127.0.0.1 port %d: Connection refused; try `ssh ", r.URL(), port, port))
	// A machine that takes long to answer: Neovim goes on meanwhile, and
	// hears why once ssh gives up.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	accepted := make(chan net.Conn, 1)
	go func() {
		if c, err := ln.Accept(); err == nil {
			accepted <- c // and say nothing
		}
	}()
	slow := fmt.Sprintf("%s:%d", r.URL(), ln.Addr().(*net.TCPAddr).Port)
	s.keys(":AgentAttach "+slow, "Enter")
	s.waitShows(10*time.Second, "(agentrun) connecting to "+slow)
	var conn net.Conn
	select {
	case conn = <-accepted:
	case <-time.After(10 * time.Second):
		t.Fatal("ssh did not connect to the silent port")
	}
	s.keys(":echo 'neovim goes on'", "Enter")
	s.waitShows(5*time.Second, "neovim goes on")
	conn.Close()
	s.waitShows(10*time.Second, "(agentrun) cannot reach "+slow+": ")
	s.keys("Enter", ":echo ''", "Enter")
	bad := "ssh://nobody-here@" + remoteAlias
	try(bad, "(agentrun) cannot log in to "+bad+" over SSH (", "Permission denied", "without asking for a password")
	try(r.URL(), "(agentrun) no agentrun host is running on "+r.URL()+": terminals are served by the backend of a Neovim that runs the plugin there")
	try(r.URL()+"/99999:term-1", "(agentrun) no agentrun host 99999 is running on "+r.URL())

	e := r.StartEditor()
	term := e.startDevServer()
	e.waitBuf(term.Bufnr, 10*time.Second, "served 1\n")
	pid := e.backendPid()
	try(fmt.Sprintf("%s/%d:term-99", r.URL(), pid), fmt.Sprintf("(agentrun) no terminal term-99 on host %d on %s", pid, r.URL()), ":AgentAttach "+r.URL()+" lists them")
	// <Tab> where nothing answers completes nothing, and says nothing.
	s.keys(fmt.Sprintf(":AgentAttach %s:%d/", r.URL(), port), "Tab")
	time.Sleep(time.Second)
	if sc := s.capture(); strings.Contains(sc, "agentrun") && !strings.Contains(sc, fmt.Sprintf(":AgentAttach %s:%d/", r.URL(), port)) {
		t.Errorf("<Tab> with an unreachable remote:\n%s", sc)
	}
	s.keys("Escape")
	// A remote without agentrun (another name for it: a link of its own).
	os.Remove(r.Bin)
	other := "ssh://" + remoteUser + "@" + remoteAlias
	try(other, "(agentrun) "+other+" has no agentrun: install agentrun "+v+" there")
}

// TestRemoteAttachInNeovimWhileTheRemoteIsDown: the ssh of an attached
// split is killed while the remote's sshd is down: the split says each
// attempt and why it failed, typing is refused with a sentence, and once
// sshd is back it says it reconnected and goes on with every line once.
// Then the remote host is killed: the split says it went away, and the
// terminal is said to have ended.
func TestRemoteAttachInNeovimWhileTheRemoteIsDown(t *testing.T) {
	onceAcrossNeovims(t)
	r := startSSHRemote(t)
	e := r.StartEditor()
	term := e.startDevServer()
	e.waitBuf(term.Bufnr, 10*time.Second, "served 2\n")
	backend := e.backendPid()
	name := fmt.Sprintf("%s/%d:%s", r.URL(), backend, term.ID)

	s := sshScreen(t, r, 200, 40)
	s.keys(":AgentAttach "+name, "Enter")
	served := regexp.MustCompile(`(?m)^served (\d+)\s*$`)
	lastServed := func(sc string) int {
		n := served.FindAllStringSubmatch(sc, -1)
		if len(n) == 0 {
			return 0
		}
		v, _ := strconv.Atoi(n[len(n)-1][1])
		return v
	}
	s.waitFor("served lines in the split", 15*time.Second, served.MatchString)
	s.keys(`C-\`, "C-n", "T")
	s.waitShows(10*time.Second, name+" is yours now")

	r.StopSSHD()
	first := s.sshOf()
	if err := syscall.Kill(first, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	down := lastServed(s.waitShows(15*time.Second, "; reconnecting]", "reconnecting to "+r.URL()+", attempt 1: cannot reach "+r.URL()+": "))
	s.keys("i")
	s.typeText("x")
	s.waitShows(10*time.Second, "(agentrun) not typed into "+name+": the link to "+r.URL()+" is down")
	s.keys(`C-\`, "C-n")
	r.StartSSHD()
	// Back, the split goes on past the lines it showed while the link was
	// down. The line saying it reconnected comes with what was missed at
	// once, which with the new lines can scroll it out of the split's
	// rows before the screen is read: it is looked for where a user finds
	// it, scrolling back (the buffer).
	s.waitFor(fmt.Sprintf("served lines after the link came back (past served %d)", down), 30*time.Second, func(sc string) bool { return lastServed(sc) > down })
	out := s.writeBuffer()
	back := "[agentrun: reconnected to " + r.URL() + "; what was missed follows]"
	i := strings.Index(out, back)
	if i < 0 || i < strings.Index(out, "; reconnecting]") || !served.MatchString(out[i:]) {
		t.Fatalf("the split does not say %q after it said it was reconnecting, followed by the lines:\n%s", back, out)
	}
	got := served.FindAllStringSubmatch(out, -1)
	for i, m := range got {
		if v, _ := strconv.Atoi(m[1]); v != i+1 {
			t.Fatalf("line %d of the numbers reads served %d (lost or doubled output around it):\n%s", i+1, v, out)
		}
	}

	// Its host killed (its Neovim's backend): the split says it went away.
	if err := syscall.Kill(backend, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	s.waitShows(20*time.Second, "went away")
	s.keys("G")
	out = s.writeBuffer()
	if !strings.Contains(out, "[agentrun: the host of "+name+" went away") {
		t.Errorf("the split does not say the host went away:\n%s", out)
	}
	for _, m := range regexp.MustCompile(`\[agentrun: [^\]]*\]`).FindAllString(out, -1) {
		t.Logf("the split said: %s", m)
	}
	s.keys(":AgentKill "+name, "Enter")
	s.waitShows(10*time.Second, "(agentrun) "+name+" ended (")
}
