package sshlink

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/agentrun/agentrun.nvim/internal/shquote"
	"golang.org/x/sys/unix"
)

// Why this file is long: one Link is one ssh process and the framed stream
// over it: dialling (with the handshake that checks the version there),
// reading and writing frames, and the plain sentences for each way ssh
// fails; they share the Link's state and lock.

// ConfigEnv names the environment variable with an ssh_config file for
// the links (passed as ssh -F); unset, ssh reads the user's own.
const ConfigEnv = "AGENTRUN_SSH_CONFIG"

// Target is a remote machine as agentrun names it:
// ssh://[user@]host[:port].
type Target struct {
	User string
	Host string
	Port int // 0: ssh's default (or the config's)
}

// String is the target's URL.
func (t Target) String() string {
	s := "ssh://"
	if t.User != "" {
		s += t.User + "@"
	}
	s += t.Host
	if t.Port != 0 {
		s += ":" + strconv.Itoa(t.Port)
	}
	return s
}

// sshName is the target as ssh's command line names it: [user@]host,
// with -p PORT.
func (t Target) sshName() string {
	s := t.Host
	if t.User != "" {
		s = t.User + "@" + s
	}
	if t.Port != 0 {
		s = "-p " + strconv.Itoa(t.Port) + " " + s
	}
	return s
}

// checkCommand is the ssh command line a person runs to check that t is
// reached as the links reach it: with the ssh_config they use, when
// $AGENTRUN_SSH_CONFIG names one.
func (t Target) checkCommand() string {
	s := "ssh "
	if cfg := os.Getenv(ConfigEnv); cfg != "" {
		s += "-F " + shquote.Quote(cfg) + " "
	}
	return s + t.sshName() + " true"
}

// IsURL reports whether s names a remote (it starts with ssh://).
func IsURL(s string) bool { return strings.HasPrefix(s, "ssh://") }

// Parse splits "ssh://[user@]host[:port][/rest]" into the target and
// rest (what follows the first slash, "" when none).
func Parse(s string) (Target, string, error) {
	body, ok := strings.CutPrefix(s, "ssh://")
	if !ok {
		return Target{}, "", fmt.Errorf("%q is not a remote: write ssh://[user@]host[:port]", s)
	}
	hostPart, rest, _ := strings.Cut(body, "/")
	var t Target
	if u, h, ok := strings.Cut(hostPart, "@"); ok {
		t.User, hostPart = u, h
		if u == "" {
			return Target{}, "", fmt.Errorf("%q has an empty user before @: write ssh://user@host or ssh://host", s)
		}
	}
	if h, p, ok := strings.Cut(hostPart, ":"); ok {
		port, err := strconv.Atoi(p)
		if err != nil || port <= 0 || port > 65535 {
			return Target{}, "", fmt.Errorf("%q: the port %q is not a number from 1 to 65535", s, p)
		}
		t.Port, hostPart = port, h
	}
	t.Host = hostPart
	switch {
	case t.Host == "":
		return Target{}, "", fmt.Errorf("%q names no host: write ssh://[user@]host[:port]", s)
	case strings.HasPrefix(t.Host, "-") || strings.HasPrefix(t.User, "-"):
		return Target{}, "", fmt.Errorf("%q: a host or user cannot start with '-'", s)
	case strings.ContainsAny(t.Host+t.User, " \t\n'\"\\;&|`$"):
		return Target{}, "", fmt.Errorf("%q: the host or user has a character hosts and users do not have", s)
	}
	return t, rest, nil
}

// RemoteCommand is what the link runs on the remote: serve-stdio of the
// agentrun on the remote's PATH, where ~/.local/bin, ~/bin and ~/go/bin
// are added (ssh's PATH for a command is the system's, without what a
// login shell's profile adds).
const RemoteCommand = `sh -c 'PATH="$PATH:$HOME/.local/bin:$HOME/bin:$HOME/go/bin"; exec agentrun "$0" "$@"' `

// sshArgs returns ssh's arguments to run command on t; batch: ssh never
// asks (a password, a new host key), it fails instead.
func sshArgs(t Target, batch bool, command string) []string {
	var args []string
	if cfg := os.Getenv(ConfigEnv); cfg != "" {
		args = append(args, "-F", cfg)
	}
	if batch {
		args = append(args, "-o", "BatchMode=yes")
	}
	// No tty, no forwarding of anything; a host that does not answer is
	// given up on after 15 s, a dead link noticed within half a minute
	// (by ssh's keepalives, unless the user's ssh config sets its own,
	// and by the beats of the framed stream: beat.go).
	args = append(args, "-T", "-x", "-a", "-o", "ConnectTimeout=15")
	if !ownKeepalive(t) {
		args = append(args, "-o", "ServerAliveInterval=5", "-o", "ServerAliveCountMax=4")
	}
	if t.Port != 0 {
		args = append(args, "-p", strconv.Itoa(t.Port))
	}
	if t.User != "" {
		args = append(args, "-l", t.User)
	}
	return append(args, "--", t.Host, command)
}

// keepalives caches ownKeepalive's answer per target.
var keepalives sync.Map

// ownKeepalive reports whether the user's ssh config sets
// ServerAliveInterval for t (`ssh -G` says what ssh would use): then the
// links keep it rather than agentrun's.
func ownKeepalive(t Target) bool {
	if v, ok := keepalives.Load(t); ok {
		return v.(bool)
	}
	var args []string
	if cfg := os.Getenv(ConfigEnv); cfg != "" {
		args = append(args, "-F", cfg)
	}
	args = append(args, "-G")
	if t.Port != 0 {
		args = append(args, "-p", strconv.Itoa(t.Port))
	}
	if t.User != "" {
		args = append(args, "-l", t.User)
	}
	out, err := exec.Command("ssh", append(args, "--", t.Host)...).Output()
	own := false
	if err == nil {
		for _, line := range strings.Split(string(out), "\n") {
			if v, ok := strings.CutPrefix(line, "serveraliveinterval "); ok {
				own = strings.TrimSpace(v) != "0"
			}
		}
	}
	keepalives.Store(t, own)
	return own
}

// Link is one running `ssh host agentrun serve-stdio`.
type Link struct {
	target  Target
	cmd     *exec.Cmd
	stdin   io.WriteCloser
	stderr  *tailBuffer
	batch   bool   // ssh may not ask anything (NewBatchRemote, DialBackend)
	serve   string // the remote subcommand: serve-stdio or serve-backend
	version string // the remote agentrun's
	// lingering is the hello's Lingering: the backend a resume joined.
	lingering int
	backend   int // the hello's PID: the backend's process id there
	done      chan struct{}

	wmu sync.Mutex // one line at a time to ssh

	mu      sync.Mutex
	nextCh  int
	chans   map[int]net.Conn // our end of each channel's pipe
	waiting map[int]chan Control
	err     error // why the link ended
}

// dial starts the link to t and checks that the remote agentrun is
// version (the local one); with batch for a program with no terminal for
// ssh to ask on (NewBatchRemote). Its errors are sentences for the user:
// a remote without agentrun, or another version of it, says the fix.
func dial(ctx context.Context, t Target, version string, batch bool) (*Link, error) {
	l, r, err := handshake(ctx, t, version, batch, "serve-stdio")
	if err != nil {
		return nil, err
	}
	go l.read(r)
	return l, nil
}

// handshake starts `ssh t agentrun <serve>` and reads its hello: the
// link to a remote agentrun of this version whose output follows in r,
// or a sentence saying why not.
func handshake(ctx context.Context, t Target, version string, batch bool, serve string, args ...string) (*Link, *bufio.Reader, error) {
	cmd := exec.Command("ssh", sshArgs(t, batch, RemoteCommand+strings.Join(append([]string{serve}, args...), " "))...)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, nil, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, nil, err
	}
	l := &Link{target: t, cmd: cmd, stdin: stdin, stderr: &tailBuffer{}, batch: batch, serve: serve, done: make(chan struct{}),
		chans: make(map[int]net.Conn), waiting: make(map[int]chan Control), nextCh: 1}
	cmd.Stderr = l.stderr
	cmd.SysProcAttr = sshAttr(batch)
	if err := cmd.Start(); err != nil {
		if errors.Is(err, exec.ErrNotFound) {
			return nil, nil, fmt.Errorf("ssh is not installed here, and agentrun reaches %s with it: install OpenSSH's client (ssh)", t)
		}
		return nil, nil, fmt.Errorf("cannot run ssh to reach %s: %w", t, err)
	}
	r := bufio.NewReaderSize(stdout, 64<<10)
	type helloResult struct {
		h   Hello
		err error
	}
	got := make(chan helloResult, 1)
	go func() {
		// A remote shell's startup files may print before agentrun
		// does (a greeting in ~/.bashrc): lines before the hello are
		// skipped.
		for skipped := 0; ; skipped++ {
			line, err := readLine(r)
			if err != nil {
				got <- helloResult{err: err}
				return
			}
			var h Hello
			if json.Unmarshal(line, &h) == nil && h.Agentrun == serve {
				got <- helloResult{h: h}
				return
			}
			if skipped == 1000 {
				got <- helloResult{err: fmt.Errorf("no hello from %s in its first 1000 lines", serve)}
				return
			}
		}
	}()
	var res helloResult
	select {
	case res = <-got:
	case <-ctx.Done():
		l.kill()
		return nil, nil, ctx.Err()
	}
	if res.err != nil || res.h.Agentrun != serve {
		waitErr := l.wait(5 * time.Second)
		return nil, nil, l.why(ctx, waitErr, version)
	}
	l.version = res.h.Version
	l.lingering = res.h.Lingering
	l.backend = res.h.PID
	if res.h.Version != version || res.h.Protocol != Protocol {
		l.Close()
		if newer(res.h.Version, version) {
			return nil, nil, fmt.Errorf("the agentrun on %s is version %s and this one is %s: upgrade this one to %s (or install %s there; both sides must be the same version)", t, res.h.Version, version, res.h.Version, version)
		}
		return nil, nil, fmt.Errorf("the agentrun on %s is version %s and this one is %s: install agentrun %s there (the same version on both sides)", t, res.h.Version, version, version)
	}
	return l, r, nil
}

// newer reports whether version a is later than b (dotted numbers; what
// is not a number compares as 0).
func newer(a, b string) bool {
	as, bs := strings.Split(a, "."), strings.Split(b, ".")
	for i := 0; i < max(len(as), len(bs)); i++ {
		var x, y int
		if i < len(as) {
			x, _ = strconv.Atoi(as[i])
		}
		if i < len(bs) {
			y, _ = strconv.Atoi(bs[i])
		}
		if x != y {
			return x > y
		}
	}
	return false
}

// why says why the link did not start: no agentrun on the remote, one
// too old to serve, or ssh's own reason.
func (l *Link) why(ctx context.Context, waitErr error, version string) error {
	stderr := strings.TrimSpace(l.stderr.String())
	var exit *exec.ExitError
	code := -1
	if errors.As(waitErr, &exit) {
		code = exit.ExitCode()
	}
	switch {
	case code == 127 || strings.Contains(stderr, "agentrun: not found") || strings.Contains(stderr, "agentrun: No such file"):
		return fmt.Errorf("%s has no agentrun: install agentrun %s there (on its PATH or in ~/.local/bin), then try again", l.target, version)
	case strings.Contains(stderr, `unknown subcommand "`+l.serve+`"`):
		remote := "an older version"
		vctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		defer cancel()
		if out, err := exec.CommandContext(vctx, "ssh", sshArgs(l.target, l.batch, RemoteCommand+"version")...).Output(); err == nil {
			remote = "version " + strings.TrimSpace(string(out))
		}
		what := "cannot serve over SSH"
		if l.serve == BackendServe {
			what = "cannot run agents for a Neovim on another machine"
		}
		return fmt.Errorf("the agentrun on %s is %s, which %s, and this one is %s: upgrade it there to agentrun %s", l.target, remote, what, version, version)
	case code == 255:
		if stderr == "" {
			stderr = silent255
		}
		check := l.target.checkCommand()
		switch {
		case strings.Contains(stderr, "Permission denied") || strings.Contains(stderr, "Too many authentication failures"):
			// Not the network's: trying again will not log in either.
			how := "check that `" + check + "` logs in"
			if l.batch {
				how += " without asking for a password (a key in ssh-agent, or IdentityFile in ~/.ssh/config)"
			}
			return fmt.Errorf("cannot log in to %s over SSH (%s): %s", l.target, lastLine(stderr), how)
		case strings.Contains(stderr, "Host key verification failed") || strings.Contains(stderr, "REMOTE HOST IDENTIFICATION HAS CHANGED"):
			return fmt.Errorf("cannot reach %s over SSH: its host key is not known here, or has changed (%s): run `%s` once to check and accept it", l.target, lastLine(stderr), check)
		}
		// One line that fits 160 columns where ssh's words allow: the
		// URL says it is SSH, and ssh's "ssh: " adds nothing.
		return &unreachable{fmt.Errorf("cannot reach %s: %s; try `%s`", l.target, strings.TrimPrefix(lastLine(stderr), "ssh: "), check)}
	}
	if stderr == "" {
		stderr = "it ended without a word (" + exitOf(waitErr) + ")"
	}
	return fmt.Errorf("agentrun %s on %s did not start: %s", l.serve, l.target, lastLine(stderr))
}

// unreachable is a dial error of the network's (ssh's own, exit status
// 255): trying again later may work.
type unreachable struct{ error }

func (u *unreachable) Unwrap() error { return u.error }

// Transient reports whether err, from dialling, is the network's: trying
// again may work (not so a remote without agentrun, or of another
// version).
func Transient(err error) bool {
	var u *unreachable
	return errors.As(err, &u)
}

// exitOf says how ssh ended, for a person.
func exitOf(err error) string {
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		if ws, ok := exit.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			return "ssh was killed by " + unix.SignalName(ws.Signal())
		}
		if exit.ExitCode() == 255 {
			return silent255
		}
		return fmt.Sprintf("ssh exited with status %d", exit.ExitCode())
	}
	return "ssh ended"
}

// silent255 is what ssh's exit status 255 (its own failure, not the
// command's) means when it said nothing on stderr: a connection that
// failed or timed out.
const silent255 = "the connection failed or timed out: the network, or the machine stopped answering (ssh gave up without a word)"

func lastLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.LastIndexByte(s, '\n'); i >= 0 {
		return strings.TrimSpace(s[i+1:])
	}
	return s
}

// Target is the remote the link reaches.
func (l *Link) Target() Target { return l.target }

// PID is the process id of the local ssh.
func (l *Link) PID() int { return l.cmd.Process.Pid }

// Done is closed when the link has ended.
func (l *Link) Done() <-chan struct{} { return l.done }

// Err says why the link ended (after Done).
func (l *Link) Err() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.err
}

// Close ends the link: the remote serve-stdio sees its input end and
// closes its host connections.
func (l *Link) Close() error {
	l.stdin.Close()
	go l.wait(5 * time.Second)
	return nil
}

// wait waits for ssh to exit, killing it after grace.
func (l *Link) wait(grace time.Duration) error {
	t := time.AfterFunc(grace, func() { l.cmd.Process.Kill() })
	defer t.Stop()
	return l.cmd.Wait()
}

func (l *Link) kill() {
	l.cmd.Process.Kill()
	l.cmd.Wait()
}

// read dispatches the lines from the remote until the link ends.
func (l *Link) read(r *bufio.Reader) {
	for {
		line, err := readLine(r)
		if err != nil {
			break
		}
		ch, payload, ok := split(line)
		if !ok {
			continue
		}
		if ch == 0 {
			var c Control
			if json.Unmarshal(payload, &c) == nil {
				l.control(c)
			}
			continue
		}
		l.mu.Lock()
		conn := l.chans[ch]
		l.mu.Unlock()
		if conn != nil {
			if _, werr := conn.Write(append(payload, '\n')); werr != nil {
				l.drop(ch)
			}
		}
	}
	l.stdin.Close()
	waitErr := l.wait(2 * time.Second)
	l.mu.Lock()
	l.err = fmt.Errorf("the link to %s dropped", l.target)
	if s := lastLine(l.stderr.String()); s != "" {
		l.err = fmt.Errorf("the link to %s dropped: %s", l.target, s)
	} else if waitErr != nil {
		l.err = fmt.Errorf("the link to %s dropped (%s)", l.target, exitOf(waitErr))
	}
	chans := l.chans
	l.chans = map[int]net.Conn{}
	waiting := l.waiting
	l.waiting = map[int]chan Control{}
	// Done first: whoever sees a connection end learns it was the link.
	close(l.done)
	l.mu.Unlock()
	for _, c := range chans {
		c.Close()
	}
	for _, w := range waiting {
		close(w)
	}
}

func (l *Link) control(c Control) {
	switch c.Op {
	case "hosts":
		l.mu.Lock()
		w := l.waiting[c.ID]
		delete(l.waiting, c.ID)
		l.mu.Unlock()
		if w != nil {
			w <- c
		}
	case "closed":
		l.drop(c.Ch)
	}
}

// drop forgets channel ch and closes its pipe: its AHP client sees the
// connection end.
func (l *Link) drop(ch int) {
	l.mu.Lock()
	conn := l.chans[ch]
	delete(l.chans, ch)
	l.mu.Unlock()
	if conn != nil {
		conn.Close()
	}
}

// send writes "ch line\n" to the remote.
func (l *Link) send(ch int, line []byte) error {
	b := strconv.AppendInt(make([]byte, 0, len(line)+16), int64(ch), 10)
	b = append(append(append(b, ' '), line...), '\n')
	l.wmu.Lock()
	defer l.wmu.Unlock()
	_, err := l.stdin.Write(b)
	return err
}

func (l *Link) sendControl(c Control) error {
	b, _ := json.Marshal(c)
	return l.send(0, b)
}

// Hosts lists the process ids of the remote user's hosts that answer.
func (l *Link) Hosts(ctx context.Context) ([]int, error) {
	w := make(chan Control, 1)
	l.mu.Lock()
	id := l.nextCh
	l.nextCh++
	l.waiting[id] = w
	l.mu.Unlock()
	if err := l.sendControl(Control{Op: "hosts", ID: id}); err != nil {
		return nil, l.dropped()
	}
	select {
	case c, ok := <-w:
		if !ok {
			return nil, l.dropped()
		}
		if c.Error != "" {
			return nil, fmt.Errorf("on %s: %s", l.target, c.Error)
		}
		return c.Hosts, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

func (l *Link) dropped() error {
	select {
	case <-l.done:
		return l.Err()
	case <-time.After(2 * time.Second):
		return fmt.Errorf("the link to %s does not answer", l.target)
	}
}

// Open connects to the remote host with process id pid: the returned
// connection carries one AHP connection (give it to client.New). It
// ends when the host's ends, the link drops, or it is closed.
func (l *Link) Open(pid int) (net.Conn, error) {
	ours, theirs := net.Pipe()
	l.mu.Lock()
	select {
	case <-l.done:
		l.mu.Unlock()
		return nil, l.Err()
	default:
	}
	ch := l.nextCh
	l.nextCh++
	l.chans[ch] = ours
	l.mu.Unlock()
	if err := l.sendControl(Control{Op: "open", Ch: ch, PID: pid}); err != nil {
		l.drop(ch)
		return nil, l.dropped()
	}
	// What the AHP client writes goes to the remote, a line at a time.
	go func() {
		r := bufio.NewReaderSize(ours, 64<<10)
		for {
			line, err := readLine(r)
			if err != nil {
				break
			}
			if l.send(ch, line) != nil {
				break
			}
		}
		l.mu.Lock()
		open := l.chans[ch] != nil
		l.mu.Unlock()
		if open {
			_ = l.sendControl(Control{Op: "close", Ch: ch})
			l.drop(ch)
		}
	}()
	return theirs, nil
}

// tailBuffer keeps the last 4 KiB written to it (ssh's stderr).
type tailBuffer struct {
	mu sync.Mutex
	b  []byte
}

func (t *tailBuffer) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.b = append(t.b, p...)
	if len(t.b) > 4096 {
		t.b = t.b[len(t.b)-4096:]
	}
	return len(p), nil
}

func (t *tailBuffer) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return string(bytes.TrimSpace(t.b))
}
