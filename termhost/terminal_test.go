package termhost

// Why this file is long: these are the lifecycle tests of one type
// (Terminal: create, output, drain rule, kill, release, Close), each a
// real process in a real pty; the AHP state's tests are ahp_test.go.

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/agentrun/agentrun.nvim/internal/procstat"
	"github.com/agentrun/agentrun.nvim/internal/wait"
)

// testTimeout bounds every wait in these tests (generous: -race on two
// busy cores).
const testTimeout = 30 * time.Second

func testHost(t *testing.T, opts Options) *Host {
	t.Helper()
	if opts.Logf == nil {
		opts.Logf = t.Logf
	}
	h := NewHost(opts)
	t.Cleanup(h.Close)
	return h
}

// shell is a spec running line with /bin/sh in a fresh directory.
func shell(t *testing.T, line string) Spec {
	t.Helper()
	return Spec{Command: line, Shell: true, Dir: t.TempDir()}
}

func create(t *testing.T, h *Host, spec Spec) *Terminal {
	t.Helper()
	term, err := h.Create(context.Background(), spec)
	if err != nil {
		t.Fatalf("create %q: %v", spec.Command, err)
	}
	return term
}

// waitExit waits for the terminal's exit and returns its output.
func waitExit(t *testing.T, term *Terminal) (ExitStatus, Output) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	st, err := term.Wait(ctx)
	if err != nil {
		t.Fatalf("wait %s (%s): %v; output so far %q", term.ID(), term.CommandLine(), err, term.Output().Text)
	}
	out := term.Output()
	if out.Exit == nil || out.Exit.String() != st.String() {
		t.Fatalf("Output().Exit = %v after Wait returned %v", out.Exit, st)
	}
	return st, out
}

// run runs a shell line to its end.
func run(t *testing.T, h *Host, line string) (ExitStatus, Output) {
	t.Helper()
	return waitExit(t, create(t, h, shell(t, line)))
}

func exitCode(n int) string { return ExitStatus{Code: &n}.String() }

// eventually waits (wait.For) for cond up to the test timeout.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	wait.For(t, what, testTimeout, cond)
}

// waitOutput waits until the rendered output matches re and returns the
// first submatch (or the match).
func waitOutput(t *testing.T, term *Terminal, re string) string {
	t.Helper()
	rx := regexp.MustCompile(re)
	var m []string
	eventually(t, fmt.Sprintf("output of %s to match %q", term.ID(), re), func() bool {
		m = rx.FindStringSubmatch(term.Output().Text)
		return m != nil
	})
	return m[len(m)-1]
}

// processGone reports whether pid no longer runs (gone, or a zombie
// nobody has reaped yet).
func processGone(pid int) bool {
	state, _, ok := procState(strconv.Itoa(pid))
	return !ok || state == 'Z' || state == 'X'
}

func TestCreateErrors(t *testing.T) {
	h := testHost(t, Options{})
	dir := t.TempDir()
	file := filepath.Join(dir, "file")
	if err := os.WriteFile(file, []byte("#!/bin/sh\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name    string
		spec    Spec
		is      error
		message string
	}{
		{"relative dir", Spec{Command: "true", Dir: "rel/dir"}, ErrInvalidDir, `"rel/dir" is not an absolute path`},
		{"missing dir", Spec{Command: "true", Dir: "/no/such/dir"}, ErrInvalidDir, `"/no/such/dir" does not exist`},
		{"file as dir", Spec{Command: "true", Dir: file}, ErrInvalidDir, `is not a directory`},
		{"command not found", Spec{Command: "no-such-command-xyz", Dir: dir}, ErrCommandNotFound, `command "no-such-command-xyz" not found`},
		{"not on the spec's PATH", Spec{Command: "ls", Dir: dir, Env: []string{"PATH=" + dir}}, ErrCommandNotFound, `command "ls" not found`},
		{"path not executable", Spec{Command: file, Dir: dir}, ErrCommandNotFound, `not executable`},
		{"relative path missing", Spec{Command: "./nope", Dir: dir}, ErrCommandNotFound, `command "./nope" not found`},
		{"empty command", Spec{Command: "", Dir: dir}, nil, "empty command"},
		{"empty shell line", Spec{Command: "  ", Shell: true, Dir: dir}, nil, "empty command line"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			term, err := h.Create(context.Background(), tc.spec)
			if err == nil {
				term.Release()
				t.Fatalf("created %+v", tc.spec)
			}
			if tc.is != nil && !errors.Is(err, tc.is) {
				t.Errorf("error %q is not %v", err, tc.is)
			}
			if !strings.Contains(err.Error(), tc.message) {
				t.Errorf("error %q does not say %q", err, tc.message)
			}
		})
	}
	if n := len(h.Terminals()); n != 0 {
		t.Fatalf("%d terminals after failed creates", n)
	}
}

func TestCommandResolution(t *testing.T) {
	h := testHost(t, Options{})
	bin := t.TempDir()
	script := filepath.Join(bin, "hello-tool")
	if err := os.WriteFile(script, []byte("#!/bin/sh\necho \"hello from $0 with $# args: $*\"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		spec Spec
		want string
	}{
		{"found on the spec's PATH", Spec{Command: "hello-tool", Args: []string{"a", "b"}, Dir: t.TempDir(), Env: []string{"PATH=/nowhere:" + bin}},
			"hello from " + script + " with 2 args: a b\n"},
		{"relative to Dir", Spec{Command: "./hello-tool", Dir: bin, Env: []string{"PATH=/nowhere"}},
			"hello from " + script + " with 0 args: \n"},
		{"args are not shell words", Spec{Command: "printf", Args: []string{"%s|", "a b", "$HOME", "*"}, Dir: bin},
			"a b|$HOME|*|"},
		{"shell line", Spec{Command: "echo $((1+2)) | tr 3 x; echo 'two words'", Shell: true, Dir: bin},
			"x\ntwo words\n"},
		{"env as given", Spec{Command: "echo \"[$FOO][$HOME]\"", Shell: true, Dir: bin, Env: []string{"FOO=bar baz"}},
			"[bar baz][]\n"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			st, out := waitExit(t, create(t, h, tc.spec))
			if st.String() != exitCode(0) || out.Text != tc.want {
				t.Fatalf("exit %v output %q, want exit 0 output %q", st, out.Text, tc.want)
			}
		})
	}
}

func TestDirAndDefaults(t *testing.T) {
	h := testHost(t, Options{})
	dir := t.TempDir()
	term := create(t, h, Spec{Command: "pwd -P; stty size", Shell: true, Dir: dir, Cols: 91, Rows: 33})
	_, out := waitExit(t, term)
	real, _ := filepath.EvalSymlinks(dir)
	if want := real + "\n33 91\n"; out.Text != want {
		t.Fatalf("output %q, want %q", out.Text, want)
	}
	sp := term.Spec()
	if sp.Title != "pwd -P; stty size" || sp.Cols != 91 || sp.Rows != 33 || sp.Dir != dir {
		t.Fatalf("Spec() = %+v", sp)
	}
	_, out = run(t, h, "stty size")
	if out.Text != "24 80\n" {
		t.Fatalf("default size %q, want 24 80", out.Text)
	}
}

func TestExitStatus(t *testing.T) {
	h := testHost(t, Options{})
	tests := []struct{ line, want string }{
		{"true", exitCode(0)},
		{"exit 3", exitCode(3)},
		{"exit 255", exitCode(255)},
		{"kill -TERM $$", "signal SIGTERM"},
		{"kill -HUP $$", "signal SIGHUP"},
		{"kill -INT $$", "signal SIGINT"},
		{"kill -KILL $$", "signal SIGKILL"},
		{"kill -SEGV $$", "signal SIGSEGV"},
	}
	for _, tc := range tests {
		t.Run(tc.line, func(t *testing.T) {
			if st, _ := run(t, h, tc.line); st.String() != tc.want {
				t.Fatalf("exit %v, want %s", st, tc.want)
			}
		})
	}
}

// TestOutputThroughPty: the rendering rules, on what a real program
// prints through a real pty, split across reads where it matters.
func TestOutputThroughPty(t *testing.T) {
	h := testHost(t, Options{})
	tests := []struct {
		name  string
		limit *int
		line  string
		want  string
		trunc bool
	}{
		{"lines", nil, "echo one; echo two", "one\ntwo\n", false},
		{"no trailing newline kept", nil, "printf 'last words'", "last words", false},
		{"progress bar", nil, `for p in 10 50 100; do printf '\r[%3d%%]' $p; sleep 0.05; done; printf '\n'`, "[100%]\n", false},
		{"colours", nil, `printf '\033[1;31merror\033[0m: \033[32mok\033[m\n'`, "error: ok\n", false},
		{"euro split across reads", nil, `printf 'a\342\202'; sleep 0.2; printf '\254b\n'`, "a€b\n", false},
		{"emoji split across reads", nil, `printf '\360'; sleep 0.2; printf '\237\230\200\n'`, "😀\n", false},
		{"invalid utf-8", nil, `printf 'a\377b\342\202\n'`, "a\uFFFDb\uFFFD\uFFFD\n", false},
		{"split character then exit", nil, `printf 'x\342\202'`, "x\uFFFD\uFFFD", false},
		{"limit of one byte", new(1), "echo hello", "\n", true},
		{"limit of zero", new(0), "echo hello", "", true},
		{"limit zero without output", new(0), "true", "", false},
		{"limit cuts before a split character", new(4), `printf 'ab\342\202'; sleep 0.2; printf '\254\342\202\254'`, "€", true},
		{"limit keeps the tail", new(8), "printf '1234567890'; printf 'abc\\n'", "7890abc\n", true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			spec := shell(t, tc.line)
			spec.ByteLimit = tc.limit
			_, out := waitExit(t, create(t, h, spec))
			if out.Text != tc.want || out.Truncated != tc.trunc {
				t.Fatalf("output %q truncated=%v, want %q truncated=%v", out.Text, out.Truncated, tc.want, tc.trunc)
			}
		})
	}
}

// TestNoLostTail: a million lines, and the exit is reported only with the
// last of them in Output.
func TestNoLostTail(t *testing.T) {
	h := testHost(t, Options{})
	var want strings.Builder
	for i := 1; i <= 1000000; i++ {
		want.WriteString(strconv.Itoa(i))
		want.WriteByte('\n')
	}
	term := create(t, h, Spec{Command: "seq", Args: []string{"1", "1000000"}, Dir: t.TempDir()})
	st, out := waitExit(t, term)
	if st.String() != exitCode(0) || out.Truncated || out.Text != want.String() {
		tail := out.Text[max(0, len(out.Text)-40):]
		t.Fatalf("exit %v truncated %v, %d bytes ending %q; want %d bytes ending \"999999\\n1000000\\n\"",
			st, out.Truncated, len(out.Text), tail, want.Len())
	}
	if n := term.BytesSeen(); n != int64(want.Len()+1000000) { // the pty sends \r\n
		t.Fatalf("BytesSeen %d, want %d", n, want.Len()+1000000)
	}

	spec := Spec{Command: "seq", Args: []string{"1", "1000000"}, Dir: t.TempDir(), ByteLimit: new(100)}
	_, out = waitExit(t, create(t, h, spec))
	wantTail := want.String()[want.Len()-100:] // ASCII: any cut is a boundary
	if out.Text != wantTail || !out.Truncated {
		t.Fatalf("with a 100 byte limit: %q truncated=%v, want %q", out.Text, out.Truncated, wantTail)
	}
}

// TestConcurrentTerminals: 8 terminals at once, each with its own exact
// output.
func TestConcurrentTerminals(t *testing.T) {
	h := testHost(t, Options{})
	const n = 8
	terms := make([]*Terminal, n)
	for i := range terms {
		terms[i] = create(t, h, shell(t, fmt.Sprintf(`i=0; while [ $i -lt %d ]; do i=$((i+1)); echo "t%d line $i"; done; exit %d`, 2000+i*100, i, i)))
	}
	var wg sync.WaitGroup
	for i, term := range terms {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var want strings.Builder
			for j := 1; j <= 2000+i*100; j++ {
				fmt.Fprintf(&want, "t%d line %d\n", i, j)
			}
			ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
			defer cancel()
			st, err := term.Wait(ctx)
			if out := term.Output(); err != nil || st.String() != exitCode(i) || out.Text != want.String() {
				t.Errorf("terminal %d: exit %v (%v), %d bytes of output, want exit %d and %d bytes", i, st, err, len(out.Text), i, want.Len())
			}
		}()
	}
	wg.Wait()
	ids := map[string]bool{}
	for _, term := range h.Terminals() {
		ids[term.ID()] = true
	}
	if len(ids) != n {
		t.Fatalf("%d distinct live terminals, want %d", len(ids), n)
	}
}

func TestTwoWaiters(t *testing.T) {
	h := testHost(t, Options{})
	term := create(t, h, shell(t, "read x; exit 7"))
	results := make(chan string, 2)
	var wg sync.WaitGroup
	for range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
			defer cancel()
			st, err := term.Wait(ctx)
			if err != nil {
				results <- err.Error()
				return
			}
			results <- st.String()
		}()
	}
	eventually(t, "both waiters to block", func() bool { return term.waiting.Load() == 2 })
	select {
	case <-term.Done():
		t.Fatal("done before the input arrived")
	default:
	}
	if _, err := term.Write([]byte("go\n")); err != nil {
		t.Fatal(err)
	}
	wg.Wait()
	close(results)
	for r := range results {
		if r != exitCode(7) {
			t.Errorf("a waiter got %s, want exit 7", r)
		}
	}
	// A waiter whose context ends gets the context's error.
	term2 := create(t, h, shell(t, "sleep 60"))
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := term2.Wait(ctx); !errors.Is(err, context.Canceled) {
		t.Fatalf("Wait with a cancelled context: %v", err)
	}
}

func TestKillThenOutput(t *testing.T) {
	h := testHost(t, Options{})
	term := create(t, h, shell(t, "echo started; sleep 60; echo never"))
	waitOutput(t, term, "started\n")
	if err := term.Kill(); err != nil {
		t.Fatal(err)
	}
	st, out := waitExit(t, term)
	if st.String() != "signal SIGTERM" || out.Text != "started\n" {
		t.Fatalf("after kill: exit %v output %q", st, out.Text)
	}
	// Still valid: found by id, output and wait answer, kill again is fine.
	if got, err := h.Get(term.ID()); err != nil || got != term {
		t.Fatalf("Get after kill: %v", err)
	}
	if st2, _ := waitExit(t, term); st2.String() != "signal SIGTERM" {
		t.Fatalf("second wait %v", st2)
	}
	if err := term.Kill(); err != nil {
		t.Fatalf("kill after exit: %v", err)
	}
}

// TestKillEscalates: a command ignoring SIGTERM is SIGKILLed after the
// grace period.
func TestKillEscalates(t *testing.T) {
	h := testHost(t, Options{KillGrace: time.Second})
	term := create(t, h, shell(t, "trap '' TERM; echo ready; sleep 60"))
	waitOutput(t, term, "ready\n")
	start := time.Now()
	if err := term.Kill(); err != nil {
		t.Fatal(err)
	}
	if took := time.Since(start); took > 500*time.Millisecond {
		t.Fatalf("Kill took %v; it must return at once", took)
	}
	st, _ := waitExit(t, term)
	if st.String() != "signal SIGKILL" || time.Since(start) < time.Second {
		t.Fatalf("exit %v after %v, want SIGKILL after the 1s grace", st, time.Since(start))
	}
}

func TestSignalInterrupts(t *testing.T) {
	h := testHost(t, Options{})
	term := create(t, h, Spec{Command: "sleep", Args: []string{"60"}, Dir: t.TempDir()})
	if err := term.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	if st, _ := waitExit(t, term); st.String() != "signal SIGINT" {
		t.Fatalf("exit %v, want SIGINT", st)
	}
	// The shell's trap sees it too: the signal goes to the whole group.
	term = create(t, h, shell(t, "trap 'echo caught; exit 130' INT; echo ready; sleep 60 & wait"))
	waitOutput(t, term, "ready\n")
	if err := term.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	st, out := waitExit(t, term)
	if st.String() != exitCode(130) || out.Text != "ready\ncaught\n" {
		t.Fatalf("exit %v output %q", st, out.Text)
	}
	if err := term.Signal(syscall.SIGINT); err != nil {
		t.Fatalf("signal after exit: %v", err)
	}
}

func TestWriteAndResize(t *testing.T) {
	h := testHost(t, Options{})
	term := create(t, h, shell(t, `read line; echo "got:$line"; read x; stty size`))
	if _, err := term.Write([]byte("hello\n")); err != nil {
		t.Fatal(err)
	}
	waitOutput(t, term, "got:hello\n")
	if err := term.Resize(132, 50); err != nil {
		t.Fatal(err)
	}
	if c, r := term.Size(); c != 132 || r != 50 {
		t.Fatalf("Size() = %d, %d", c, r)
	}
	if _, err := term.Write([]byte("\n")); err != nil {
		t.Fatal(err)
	}
	_, out := waitExit(t, term)
	// The pty echoes input: "hello\n" and "\n" appear too.
	if want := "hello\ngot:hello\n\n50 132\n"; out.Text != want {
		t.Fatalf("output %q, want %q", out.Text, want)
	}
	if err := term.Resize(0, 10); err == nil {
		t.Fatal("resize to 0 columns accepted")
	}
}

// TestReleaseRunning: release kills, answers a pending waiter with the
// kill's status, and then every call on the terminal or its id fails.
func TestReleaseRunning(t *testing.T) {
	h := testHost(t, Options{})
	term := create(t, h, shell(t, "echo ready; sleep 60"))
	waitOutput(t, term, "ready\n")
	waited := make(chan string, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
		defer cancel()
		st, err := term.Wait(ctx)
		if err != nil {
			waited <- err.Error()
			return
		}
		waited <- st.String()
	}()
	eventually(t, "the waiter to block", func() bool { return term.waiting.Load() == 1 })
	term.Release()
	term.Release() // twice is fine
	select {
	case got := <-waited:
		if got != "signal SIGTERM" {
			t.Fatalf("pending waiter got %s, want SIGTERM", got)
		}
	case <-time.After(testTimeout):
		t.Fatal("pending waiter not answered after release")
	}
	eventually(t, "the process to be gone", func() bool { return processGone(term.Pid()) })

	if !term.Released() {
		t.Fatal("Released() is false")
	}
	_, err := h.Get(term.ID())
	if !errors.Is(err, ErrUnknownTerminal) || err.Error() != fmt.Sprintf("unknown terminal %q", term.ID()) {
		t.Fatalf("Get after release: %v", err)
	}
	calls := map[string]error{
		"Kill":   term.Kill(),
		"Signal": term.Signal(syscall.SIGINT),
		"Resize": term.Resize(80, 24),
	}
	_, calls["Write"] = term.Write([]byte("x"))
	_, calls["Wait"] = term.Wait(context.Background())
	for name, err := range calls {
		if !errors.Is(err, ErrReleased) {
			t.Errorf("%s after release: %v, want ErrReleased", name, err)
		}
	}
	for _, live := range h.Terminals() {
		if live == term {
			t.Fatal("released terminal still listed")
		}
	}
	// The display can still show the last output, and learns it ended.
	eventually(t, "the raw log to close", func() bool { return term.Display().Read(0, 0, 0).Closed })
	if c := term.Display().Read(0, 0, 0); string(c.Data) != "ready\r\n" {
		t.Fatalf("raw log after release %q", c.Data)
	}
}

// TestReleaseKillsBackgroundChildren: the whole process group goes, both
// while the command runs and when only a background child is left.
func TestReleaseKillsBackgroundChildren(t *testing.T) {
	h := testHost(t, Options{KillGrace: 500 * time.Millisecond})
	tests := []struct {
		name, line string
		exited     bool
	}{
		{"command running", `sleep 300 & echo "child=$!"; sleep 300`, false},
		// The child ignores SIGHUP and keeps the pty open after the
		// command exits: no EOF, the drain rule reports the exit.
		{"only the child left", `trap '' HUP; sleep 300 & echo "child=$!"; exit 5`, true},
		// This child also ignores SIGTERM: the SIGKILL after the grace.
		{"stubborn child", `trap '' HUP TERM; sleep 300 & echo "child=$!"; exit 6`, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			term := create(t, h, shell(t, tc.line))
			child, _ := strconv.Atoi(waitOutput(t, term, `child=(\d+)\n`))
			if processGone(child) {
				t.Fatalf("child %d not running", child)
			}
			if tc.exited {
				st, out := waitExit(t, term)
				if !strings.HasPrefix(out.Text, "child=") || st.Code == nil {
					t.Fatalf("exit %v output %q", st, out.Text)
				}
				if processGone(child) {
					t.Fatal("the child did not outlive the command")
				}
			}
			term.Release()
			eventually(t, fmt.Sprintf("child %d to be gone", child), func() bool { return processGone(child) })
			eventually(t, "the leader to be gone", func() bool { return processGone(term.Pid()) })
		})
	}
}

func TestUnknownTerminal(t *testing.T) {
	h := testHost(t, Options{})
	_, err := h.Get("term-999")
	if err == nil || err.Error() != `unknown terminal "term-999"` || !errors.Is(err, ErrUnknownTerminal) {
		t.Fatalf("Get(term-999) = %v", err)
	}
	// The host keeps working.
	if st, out := run(t, h, "echo still here"); st.String() != exitCode(0) || out.Text != "still here\n" {
		t.Fatalf("after an unknown id: exit %v output %q", st, out.Text)
	}
}

func TestIDsAndInfo(t *testing.T) {
	h := testHost(t, Options{})
	a := create(t, h, Spec{Command: "echo", Args: []string{"it's", "a b", "plain"}, Dir: t.TempDir()})
	b := create(t, h, shell(t, "echo two"))
	if a.ID() != "term-1" || b.ID() != "term-2" {
		t.Fatalf("ids %s %s", a.ID(), b.ID())
	}
	if got := h.Terminals(); len(got) != 2 || got[0] != a || got[1] != b {
		t.Fatalf("Terminals() = %v", got)
	}
	if want := `echo 'it'\''s' 'a b' plain`; a.CommandLine() != want || a.Spec().Title != want {
		t.Fatalf("CommandLine %q Title %q, want %q", a.CommandLine(), a.Spec().Title, want)
	}
	waitExit(t, a)
	if a.BytesSeen() != int64(len("it's a b plain\r\n")) || time.Since(a.Started()) > testTimeout || a.Pid() <= 0 {
		t.Fatalf("BytesSeen %d Started %v Pid %d", a.BytesSeen(), a.Started(), a.Pid())
	}
	if a.ByteLimit() != DefaultByteLimit {
		t.Fatalf("ByteLimit %d", a.ByteLimit())
	}
}

// TestSlowDisplayConsumer: the read loop never waits for the display.
// Nobody reads this raw log; the command still runs to its end at full
// speed and the agent's output is complete.
func TestSlowDisplayConsumer(t *testing.T) {
	h := testHost(t, Options{DisplayBytes: 4 << 10})
	term := create(t, h, Spec{Command: "seq", Args: []string{"1", "200000"}, Dir: t.TempDir()})
	// Read one small chunk and then stop reading, as a stuck display would.
	select {
	case <-term.Display().Notify():
	case <-time.After(testTimeout):
		t.Fatal("no output")
	}
	first := term.Display().Read(0, 16, 0)
	_, out := waitExit(t, term)
	if !strings.HasSuffix(out.Text, "\n199999\n200000\n") {
		t.Fatalf("output ends %q", out.Text[max(0, len(out.Text)-30):])
	}
	// A late reader is skipped ahead to a line start near the end.
	c := term.Display().Read(first.Next, 0, 0)
	if !c.Skipped || !strings.HasSuffix(string(c.Data), "200000\r\n") || len(c.Data) > 4<<10 {
		t.Fatalf("late read: skipped=%v %d bytes", c.Skipped, len(c.Data))
	}
	if _, err := strconv.Atoi(strings.TrimSpace(strings.SplitN(string(c.Data), "\n", 2)[0])); err != nil {
		t.Fatalf("late read starts mid-line: %q", c.Data[:20])
	}
	eventually(t, "the raw log to close", func() bool { return term.Display().Read(c.Next, 0, 0).Closed })
}

// TestLeaderClosesPtyEarly: EOF on the pty comes before the exit; the
// exit is still reported only once the command has exited.
func TestLeaderClosesPtyEarly(t *testing.T) {
	h := testHost(t, Options{})
	spec := shell(t, "echo bye; exec >/dev/null 2>&1 </dev/null; while [ ! -e go ]; do sleep 0.02; done; exit 4")
	term := create(t, h, spec)
	eventually(t, "the raw log to close at EOF", func() bool {
		return term.Display().Read(0, 0, 0).Closed
	})
	select {
	case <-term.Done():
		t.Fatal("done while the command still runs")
	default:
	}
	if err := os.WriteFile(filepath.Join(spec.Dir, "go"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	st, out := waitExit(t, term)
	if st.String() != exitCode(4) || out.Text != "bye\n" {
		t.Fatalf("exit %v output %q", st, out.Text)
	}
}

// TestDrainRule: the exit is reported at EOF when the command's pty
// closes with it; when a background child keeps it open, once it has
// been quiet, or at the latest drainMax after the exit when the child
// keeps printing. Nothing the command printed is lost either way.
func TestDrainRule(t *testing.T) {
	tests := []struct {
		name, line string
		quiet, max time.Duration // long ones make the other rule certain
		rule       string
		output     string
	}{
		{"eof", "seq 1 20000", drainQuiet, drainMax, drainedAtEOF, "\n20000\n"},
		{"quiet child", `trap '' HUP; sleep 300 & seq 1 20000`, drainQuiet, time.Hour, drainedByQuiet, "\n20000\n"},
		{"chatty child", `trap '' HUP; (while :; do echo spam; done) & seq 1 20000; echo last`, time.Hour, 300 * time.Millisecond, drainedByLimit, "\n20000\n"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			h := testHost(t, Options{})
			h.drainQuiet, h.drainMax = tc.quiet, tc.max
			term := create(t, h, shell(t, tc.line))
			start := time.Now()
			st, out := waitExit(t, term)
			term.mu.Lock()
			rule := term.drainRule
			term.mu.Unlock()
			if rule != tc.rule || st.String() != exitCode(0) || !strings.Contains(out.Text, tc.output) {
				t.Fatalf("drained by %q (want %q), exit %v, output has %q: %v", rule, tc.rule, st, tc.output, strings.Contains(out.Text, tc.output))
			}
			if c := term.Display().Read(0, 0, 0); !c.Closed {
				t.Fatal("the display's stream is still open after the exit")
			}
			if strings.Contains(tc.line, "echo last") && !strings.Contains(out.Text, "last\n") {
				t.Fatal("the command's last line is missing")
			}
			t.Logf("exit reported after %v", time.Since(start))
			term.Release()
		})
	}
}

// TestHostClose: Close releases every terminal and returns with nothing
// left running; Create fails afterwards.
func TestHostClose(t *testing.T) {
	h := NewHost(Options{KillGrace: 300 * time.Millisecond, Logf: t.Logf})
	var pids []int
	for _, line := range []string{"sleep 300", "trap '' TERM; echo ready; sleep 300", `sleep 300 & echo "child=$!"; wait`} {
		term := create(t, h, shell(t, line))
		pids = append(pids, term.Pid())
		if strings.Contains(line, "child") {
			child, _ := strconv.Atoi(waitOutput(t, term, `child=(\d+)\n`))
			pids = append(pids, child)
		}
		if strings.Contains(line, "ready") {
			waitOutput(t, term, "ready")
		}
	}
	closed := make(chan struct{})
	go func() { h.Close(); close(closed) }()
	select {
	case <-closed:
	case <-time.After(testTimeout):
		t.Fatal("Close did not return")
	}
	for _, pid := range pids {
		if !processGone(pid) {
			t.Errorf("pid %d still running after Close", pid)
		}
	}
	if _, err := h.Create(context.Background(), shell(t, "true")); !errors.Is(err, ErrHostClosed) {
		t.Fatalf("Create after Close: %v", err)
	}
}

// procState reads a process's state letter and process group from
// /proc/<pid>/stat.
func procState(pid string) (state byte, pgrp int, ok bool) {
	st, ok := procstat.Read(pid)
	return st.State, st.Pgrp, ok
}

// TestStopInterruptsThenKills: Stop sends SIGINT (a command that handles
// it ends its own way), and a command that ignores it is killed after the
// grace period (SIGTERM; SIGKILL when that is ignored too).
func TestStopInterruptsThenKills(t *testing.T) {
	h := testHost(t, Options{KillGrace: 500 * time.Millisecond})
	cases := []struct {
		name, line, want string
		atLeast          time.Duration
	}{
		{"ends on SIGINT", "trap 'echo caught; exit 130' INT; echo ready; sleep 60 & wait", exitCode(130), 0},
		{"ignores SIGINT", "trap '' INT; echo ready; sleep 60 & wait", "signal SIGTERM", 500 * time.Millisecond},
		{"ignores SIGINT and SIGTERM", "trap '' INT TERM; echo ready; while :; do sleep 0.1; done", "signal SIGKILL", time.Second},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			term := create(t, h, shell(t, c.line))
			waitOutput(t, term, "ready\n")
			start := time.Now()
			if err := term.Stop(); err != nil {
				t.Fatal(err)
			}
			if err := term.Stop(); err != nil { // a second Stop changes nothing
				t.Fatal(err)
			}
			st, _ := waitExit(t, term)
			if st.String() != c.want || time.Since(start) < c.atLeast {
				t.Fatalf("exit %v after %v, want %s after at least %v", st, time.Since(start), c.want, c.atLeast)
			}
			if err := term.Stop(); err != nil {
				t.Fatalf("Stop after the exit: %v", err)
			}
		})
	}
}
