package termhost

// Why this file is long: every AHP behaviour of a live terminal (the
// stream, subscriptions, resync, claims, dispatch, the listing) tested on
// real ptys; the pure reducer's tests live in package ahp.

import (
	"context"
	"errors"
	"io"
	"math/rand"
	"os/exec"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/agentrun/agentrun.nvim/ahp"
	"github.com/agentrun/agentrun.nvim/internal/procstat"
)

// collect reads sub until the state it follows records the exit, and
// returns the actions read and that state.
func collect(t *testing.T, st ahp.TerminalState, sub *Subscription) ([]ahp.Action, ahp.TerminalState) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	var acts []ahp.Action
	var last uint64
	for !st.Exited() {
		batch, resync, err := sub.Next(ctx)
		if err != nil {
			t.Fatalf("Next after %d actions: %v (state %+v)", len(acts), err, st)
		}
		if resync != nil {
			t.Fatalf("unexpected resync after %d actions", len(acts))
		}
		for _, sa := range batch {
			if last != 0 && sa.Seq != last+1 {
				t.Fatalf("sequence %d follows %d", sa.Seq, last)
			}
			last = sa.Seq
			acts = append(acts, sa.Action)
			st.Apply(sa.Action)
		}
	}
	return acts, st
}

func types(acts []ahp.Action) []string {
	var out []string
	for _, a := range acts {
		typ := strings.TrimPrefix(a.ActionType(), "terminal/")
		if typ == "data" && len(out) > 0 && out[len(out)-1] == "data" {
			continue // reads split data arbitrarily
		}
		out = append(out, typ)
	}
	return out
}

// TestActionStream: a subscriber sees every action in order: output as
// data (markers cut out), shell integration as command actions at the
// exact place in the stream, the exit last; applying them to the snapshot
// gives the terminal's own state. The display and the agent's text carry
// no markers either.
func TestActionStream(t *testing.T) {
	h := testHost(t, Options{})
	spec := shell(t, `read go; printf 'a\033]633;C\007b\n\033]633;D;3\007\033]0;ti\007\033]7;file://localhost/tmp\007c'`)
	term := create(t, h, spec)
	st, sub := term.Subscribe()
	defer sub.Close()
	if st.Title != spec.Command || st.Cwd != ahp.FileURI(spec.Dir) || st.Cols != 80 || st.Rows != 24 ||
		st.Claim != (ahp.Claim{Kind: "client", ClientID: "local"}) || st.Exited() {
		t.Fatalf("initial state %+v", st)
	}
	if _, err := term.Write([]byte("go\n")); err != nil {
		t.Fatal(err)
	}
	acts, got := collect(t, st, sub)
	// Title and cwd OSCs are kept in the data (a terminal shows them).
	want := []string{"data", "commandDetectionAvailable", "commandExecuted", "data", "commandFinished",
		"data", "titleChanged", "data", "cwdChanged", "data", "exited"}
	if tt := types(acts); !reflect.DeepEqual(tt, want) {
		t.Fatalf("action types %q, want %q", tt, want)
	}
	if final := term.State(); !reflect.DeepEqual(stripBufs(got), final) {
		t.Fatalf("subscriber's state\n%+v\nterminal's\n%+v", got, final)
	}
	if got.Content[0].Value != "go\r\na" || got.Content[1].Output != "b\r\n" ||
		got.Content[2].Value != "\x1b]0;ti\a\x1b]7;file://localhost/tmp\ac" {
		t.Fatalf("content %+v", got.Content)
	}
	if p := got.Content[1]; p.Type != ahp.PartCommand || !p.IsComplete || p.ExitCode == nil || *p.ExitCode != 3 {
		t.Fatalf("command part %+v", p)
	}
	if got.Title != "ti" || got.Cwd != "file:///tmp" || got.ExitCode == nil || *got.ExitCode != 0 {
		t.Fatalf("state %+v", got)
	}
	raw := string(term.Display().Read(0, 1<<20, 0).Data)
	if strings.Contains(raw, "633") || !strings.Contains(raw, "a") || !strings.Contains(raw, "\x1b]0;ti\a") {
		t.Fatalf("display got %q: want the title OSC kept, the 633 markers cut", raw)
	}
	if out := term.Output().Text; out != "go\nab\nc" {
		t.Fatalf("rendered text %q", out)
	}
}

func stripBufs(s ahp.TerminalState) ahp.TerminalState {
	for i := range s.Content {
		s.Content[i] = s.Content[i].Detached()
	}
	return s
}

// TestDataKeepsCharactersWhole: a character split across reads reaches
// terminal/data whole, in one action.
func TestDataKeepsCharactersWhole(t *testing.T) {
	h := testHost(t, Options{})
	term := create(t, h, shell(t, `read go; printf 'x\303'; sleep 0.2; printf '\251y\342\202'; sleep 0.2; printf '\254'`))
	st, sub := term.Subscribe()
	defer sub.Close()
	if _, err := term.Write([]byte("\n")); err != nil {
		t.Fatal(err)
	}
	acts, got := collect(t, st, sub)
	var data []string
	for _, a := range acts {
		if d, ok := a.(ahp.DataAction); ok {
			if !utf8.ValidString(d.Data) {
				t.Errorf("terminal/data %q is not whole characters", d.Data)
			}
			data = append(data, d.Data)
		}
	}
	if j := got.Text(); j != "\r\nxéy€" {
		t.Fatalf("content %q (data actions %q)", j, data)
	}
}

// TestSlowSubscriberResyncs: a subscriber that does not read while the
// terminal prints more than the action log keeps gets a fresh state, and
// the reader was never held up.
func TestSlowSubscriberResyncs(t *testing.T) {
	h := testHost(t, Options{})
	term := create(t, h, shell(t, `read go; head -c 1500000 /dev/zero | tr '\0' x`))
	_, sub := term.Subscribe()
	defer sub.Close()
	if _, err := term.Write([]byte("\n")); err != nil {
		t.Fatal(err)
	}
	waitExit(t, term)
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	acts, resync, err := sub.Next(ctx)
	if err != nil || resync == nil || acts != nil {
		t.Fatalf("Next = %d actions, resync %v, err %v; want a resync", len(acts), resync != nil, err)
	}
	if !reflect.DeepEqual(*resync, term.State()) {
		t.Fatal("resync state differs from State()")
	}
	if n := len(resync.Text()); n > ahp.DefaultContentBytes {
		t.Fatalf("content holds %d bytes, more than the %d bound", n, ahp.DefaultContentBytes)
	}
	if j := resync.Text(); !strings.HasSuffix(j, strings.Repeat("x", 1000)) {
		t.Fatalf("content does not end with the newest output: …%q", j[max(0, len(j)-40):])
	}
	term.Release()
	if _, _, err := sub.Next(ctx); !errors.Is(err, io.EOF) {
		t.Fatalf("Next after release = %v, want io.EOF", err)
	}
}

// TestListingAndClaims: the root listing is replaced on create, claim,
// title and exit changes and on release; claims validate, notify
// watchers, and end with the terminal.
func TestListingAndClaims(t *testing.T) {
	h := testHost(t, Options{})
	list, changed := h.WatchListing()
	if len(list) != 0 {
		t.Fatalf("empty host lists %+v", list)
	}
	session := ahp.Claim{Kind: "session", Session: "s1", ToolCallID: "call-1"}
	spec := shell(t, `read go; printf '\033]2;renamed\007'; read more`)
	spec.Claim = session
	term := create(t, h, spec)
	next := func(what string) []ahp.TerminalInfo {
		t.Helper()
		select {
		case <-changed:
		case <-time.After(testTimeout):
			t.Fatalf("listing did not change on %s", what)
		}
		list, changed = h.WatchListing()
		return list
	}
	if l := next("create"); len(l) != 1 || l[0].Resource != "agenthost:/terminal/term-1" || l[0].Claim != session || l[0].Title != spec.Command {
		t.Fatalf("after create: %+v", l)
	}

	claim, claimChanged := term.Claims().Watch()
	if claim != session {
		t.Fatalf("claim %+v", claim)
	}
	if err := term.Claims().Set(ahp.Claim{Kind: "session"}); err == nil || !strings.Contains(err.Error(), "no session") {
		t.Fatalf("Claims().Set of a claim without session: %v", err)
	}
	background := ahp.Claim{Kind: "session", Session: "s1"}
	if err := term.Claims().Set(background); err != nil {
		t.Fatal(err)
	}
	select {
	case <-claimChanged:
	default:
		t.Fatal("Claims().Watch's channel still open after the claim changed")
	}
	if l := next("claim"); l[0].Claim != background {
		t.Fatalf("after claim: %+v", l)
	}
	if _, err := term.Write([]byte("\n")); err != nil {
		t.Fatal(err)
	}
	if l := next("title"); l[0].Title != "renamed" {
		t.Fatalf("after title: %+v", l)
	}
	if _, err := term.Write([]byte("\n")); err != nil {
		t.Fatal(err)
	}
	waitExit(t, term)
	// The exit is in the state (and the listing) before Done closes.
	if l := h.Listing(); l[0].ExitCode == nil || *l[0].ExitCode != 0 {
		t.Fatalf("after exit: %+v", l)
	}
	term.Release()
	if l := next("release"); len(l) != 0 {
		t.Fatalf("after release: %+v", l)
	}
	if err := term.Claims().Set(ahp.Claim{Kind: "client", ClientID: "me"}); !errors.Is(err, ErrReleased) {
		t.Fatalf("Claims().Set after release: %v", err)
	}
	if _, err := h.Create(context.Background(), Spec{Command: "true", Claim: ahp.Claim{Kind: "owner"}}); err == nil || !strings.Contains(err.Error(), `"owner"`) {
		t.Fatalf("Create with a bad claim: %v", err)
	}
}

// TestShellIntegrationThroughHost: a real bash or zsh started with
// Spec.ShellIntegration reports each command line with its exit code and
// its cwd; the display shows none of the markers; killing it ends its
// background jobs too.
func TestShellIntegrationThroughHost(t *testing.T) {
	for _, name := range []string{"bash", "zsh"} {
		t.Run(name, func(t *testing.T) {
			path, err := exec.LookPath(name)
			if err != nil {
				t.Skip("no " + name)
			}
			testIntegratedShell(t, path)
		})
	}
}

func testIntegratedShell(t *testing.T, shellPath string) {
	// A long grace: the shell must end by SIGHUP, not by the SIGKILL after it.
	h := testHost(t, Options{KillGrace: 10 * time.Second})
	home := t.TempDir()
	term := create(t, h, Spec{
		Command: shellPath, ShellIntegration: true, Dir: home,
		Env: []string{"HOME=" + home, "PATH=/usr/bin:/bin", "TERM=xterm-256color", "PS1=$ "},
	})
	if term.scripts == "" {
		t.Fatal("no script directory for an integrated shell")
	}
	commands := func() []ahp.ContentPart {
		var out []ahp.ContentPart
		for _, p := range term.State().Content {
			if p.Type == ahp.PartCommand {
				out = append(out, p)
			}
		}
		return out
	}
	for _, line := range []string{"echo one", "false", "cd /tmp"} {
		n := len(commands())
		if _, err := term.Write([]byte(line + "\n")); err != nil {
			t.Fatal(err)
		}
		eventually(t, line+" to finish", func() bool {
			c := commands()
			return len(c) == n+1 && c[n].IsComplete
		})
	}
	c := commands()
	got := []string{}
	for _, p := range c {
		code := "?"
		if p.ExitCode != nil {
			code = string(rune('0' + *p.ExitCode))
		}
		got = append(got, p.CommandLine+"="+code)
	}
	if want := []string{"echo one=0", "false=1", "cd /tmp=0"}; !reflect.DeepEqual(got, want) {
		t.Fatalf("commands %q, want %q", got, want)
	}
	// zsh's PROMPT_SP mark comes before precmd, so after "one" (shellinteg).
	if !strings.HasPrefix(c[0].Output, "one\r\n") || c[0].DurationMs == nil {
		t.Fatalf("echo one part %+v", c[0])
	}
	eventually(t, "cwd /tmp", func() bool { return term.State().Cwd == "file:///tmp" })
	st := term.State()
	if !st.SupportsCommandDetection {
		t.Fatal("supportsCommandDetection not set")
	}
	if raw := string(term.Display().Read(0, 1<<20, 0).Data); strings.Contains(raw, "]633;") {
		t.Fatalf("display shows shell integration markers: %q", raw)
	}
	// A job the shell runs in the background (its own process group)
	// ends with the shell when the terminal is released.
	if _, err := term.Write([]byte("sleep 3303 & echo job=$!\n")); err != nil {
		t.Fatal(err)
	}
	job, _ := strconv.Atoi(waitOutput(t, term, `job=(\d+)\n`))
	scripts := term.scripts
	term.Release()
	eventually(t, "the shell and its job to end", func() bool { return processGone(term.Pid()) && processGone(job) })
	<-term.Done()
	// bash dies of the SIGHUP, zsh exits 1 on it; neither needed SIGKILL.
	if st, _ := term.Exited(); st.Signal == "SIGKILL" {
		t.Errorf("the shell ended with %v, not by SIGHUP", st)
	}
	eventually(t, "the script directory to go", func() bool { _, err := exec.Command("test", "-e", scripts).Output(); return err != nil })
}

// BenchmarkReadPath measures what the read loop does per read: filter,
// raw log, store and state, with no subscriber.
func BenchmarkReadPath(b *testing.B) {
	h := NewHost(Options{})
	term := newTerminal(h, "term-1", Spec{Dir: "/", Cols: 80, Rows: 24, Claim: ahp.Claim{Kind: "client", ClientID: "b"}}, "bench", 1<<20)
	term.initState("")
	chunk := []byte(strings.Repeat("some output of a build, line after line\r\n", 100))
	b.SetBytes(int64(len(chunk)))
	b.ReportAllocs()
	for b.Loop() {
		term.feed(chunk)
	}
}

// TestClientClaimSurvivesSessionRelease: a session cannot take back a
// terminal a client took over, nor release it; the client can.
func TestClientClaimSurvivesSessionRelease(t *testing.T) {
	h := testHost(t, Options{KillGrace: 200 * time.Millisecond})
	call := ahp.Claim{Kind: "session", Session: "s1", ToolCallID: "c1"}
	spec := shell(t, "sleep 300")
	spec.Claim = call
	term := create(t, h, spec)
	user := ahp.Claim{Kind: "client", ClientID: "nvim"}
	if ok, err := term.Claims().CompareAndSwap(call, user); !ok || err != nil {
		t.Fatalf("CAS from the current claim: %v %v", ok, err)
	}
	if ok, err := term.Claims().CompareAndSwap(call, ahp.Claim{Kind: "session", Session: "s1"}); ok || err != nil {
		t.Fatalf("CAS from a stale claim: %v %v", ok, err)
	}
	if term.Claims().ReleaseUnlessClientHeld() || term.Released() {
		t.Fatal("a session released a terminal the user holds")
	}
	if processGone(term.Pid()) {
		t.Fatal("the process died")
	}
	if l := h.Listing(); len(l) != 1 || l[0].Claim != user {
		t.Fatalf("listing %+v", l)
	}
	if err := term.Claims().Set(ahp.Claim{Kind: "session", Session: "s1"}); err != nil {
		t.Fatal(err)
	}
	if !term.Claims().ReleaseUnlessClientHeld() || !term.Released() {
		t.Fatal("a session could not release its own terminal")
	}
	eventually(t, "the process to go", func() bool { return processGone(term.Pid()) })
	if _, err := term.Claims().CompareAndSwap(ahp.Claim{Kind: "session", Session: "s1"}, user); !errors.Is(err, ErrReleased) {
		t.Fatalf("CAS after release: %v", err)
	}
}

// TestContentRing: the ring returns exactly the kept tail of what was
// written, for any chunking, cut forward to a character start.
func TestContentRing(t *testing.T) {
	rng := rand.New(rand.NewSource(2))
	for _, size := range []int{1, 7, 64} {
		r := contentRing{size: size}
		var all []byte
		for i := 0; i < 300; i++ {
			src := []byte(strings.Repeat("aé€", 3))
			at := rng.Intn(len(src)) // chunks start and end anywhere, even inside characters
			chunk := src[at:min(len(src), at+1+rng.Intn(5))]
			if rng.Intn(20) == 0 {
				chunk = []byte(strings.Repeat("x", size+rng.Intn(3)))
			}
			r.write(chunk)
			all = append(all, chunk...)
			if r.total != int64(len(all)) {
				t.Fatalf("size %d: total %d, wrote %d", size, r.total, len(all))
			}
			from := rng.Int63n(r.total + 1)
			to := from + rng.Int63n(r.total-from+1)
			want := ""
			if o := max(0, r.total-int64(size)); from < o {
				from = o
				for from < to && !utf8.RuneStart(all[from]) {
					from++
				}
			}
			if from < to {
				want = string(all[from:to])
			}
			if got := r.text(from, to); got != want {
				t.Fatalf("size %d after %d writes: text(%d, %d) = %q, want %q", size, i, from, to, got, want)
			}
		}
	}
}

// TestContentBoundedWithCommands: past the byte bound the content keeps
// the newest output; parts keep their metadata, the summary no text.
func TestContentBoundedWithCommands(t *testing.T) {
	h := testHost(t, Options{})
	term := create(t, h, shell(t, `read go; printf '\033]633;C\007'; head -c 300000 /dev/zero | tr '\0' a; printf '\033]633;D;0\007tail'`))
	if _, err := term.Write([]byte("\n")); err != nil {
		t.Fatal(err)
	}
	waitExit(t, term)
	st := term.State()
	j := st.Text()
	if len(j) > ahp.DefaultContentBytes || !strings.HasSuffix(j, strings.Repeat("a", 1000)+"tail") {
		t.Fatalf("content %d bytes, ends …%q", len(j), j[max(0, len(j)-20):])
	}
	sum := term.StateSummary(1)
	if len(sum.Content) != 1 || sum.Content[0].Value != "" || sum.ExitCode == nil {
		t.Fatalf("summary %+v", sum)
	}
	var cmd *ahp.ContentPart
	for i := range st.Content {
		if st.Content[i].Type == ahp.PartCommand {
			cmd = &st.Content[i]
		}
	}
	if cmd == nil || !cmd.IsComplete || *cmd.ExitCode != 0 || !strings.HasPrefix(cmd.Output, "aaa") {
		t.Fatalf("command part %+v", cmd)
	}
	if ll := term.LastLine(); !strings.HasSuffix(ll, "aaaatail") {
		t.Fatalf("last line …%q", ll[max(0, len(ll)-20):])
	}
}

// TestDispatch: the actions a client may send act on the terminal; the
// server's own are refused.
func TestDispatch(t *testing.T) {
	h := testHost(t, Options{})
	term := create(t, h, shell(t, `read line; echo "got $line"; stty size; read more`))
	uri := term.URI()
	cases := []struct {
		act     ahp.Action
		wantErr string
	}{
		{ahp.ResizedAction{Terminal: uri, Cols: 100, Rows: 30}, ""},
		{ahp.InputAction{Terminal: uri, Data: "hello\n"}, ""},
		{ahp.TitleChangedAction{Terminal: uri, Title: "mine"}, ""},
		{ahp.ClaimedAction{Terminal: uri, Claim: ahp.Claim{Kind: "client", ClientID: "c2"}}, ""},
		{ahp.ClaimedAction{Terminal: uri, Claim: ahp.Claim{Kind: "client"}}, "no clientId"},
		{ahp.ResizedAction{Terminal: uri, Cols: 0, Rows: 30}, "invalid size 0x30"},
		{ahp.DataAction{Terminal: uri, Data: "x"}, "terminal/data is not an action a client may dispatch"},
		{ahp.InputAction{Terminal: ahp.TerminalURI("term-9"), Data: "x"}, `sent to terminal "agenthost:/terminal/term-1"`},
	}
	for _, c := range cases {
		_, err := term.Dispatch(c.act, nil)
		if (err == nil) != (c.wantErr == "") || err != nil && !strings.Contains(err.Error(), c.wantErr) {
			t.Errorf("Dispatch(%s) = %v, want error %q", c.act.ActionType(), err, c.wantErr)
		}
	}
	waitOutput(t, term, `got hello\n30 100\n`)
	if _, err := term.Dispatch(ahp.ClearedAction{Terminal: uri}, nil); err != nil {
		t.Fatal(err)
	}
	st := term.State()
	if st.Title != "mine" || st.Claim.ClientID != "c2" || st.Cols != 100 || len(st.Content) != 0 {
		t.Fatalf("state after dispatch %+v", st)
	}
}

// TestReleaseKillsTheWholeSession: a job a shell put in a process group of
// its own (job control) dies with the terminal, even when the shell
// ignores every polite signal.
func TestReleaseKillsTheWholeSession(t *testing.T) {
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Skip("no bash")
	}
	h := testHost(t, Options{KillGrace: 200 * time.Millisecond})
	term := create(t, h, Spec{Command: bash, Args: []string{"--norc", "-ic", `trap '' HUP TERM; sleep 3304 & echo job=$!; wait`}, Dir: t.TempDir()})
	job, _ := strconv.Atoi(waitOutput(t, term, `job=(\d+)\n`))
	if st, ok := procstat.Read(strconv.Itoa(job)); !ok || st.Pgrp == term.Pid() || st.Session != term.Pid() {
		t.Fatalf("the job %d is not in a group of its own in the terminal's session: %+v", job, st)
	}
	term.Release()
	eventually(t, "the shell and its job to end", func() bool { return processGone(term.Pid()) && processGone(job) })
}
