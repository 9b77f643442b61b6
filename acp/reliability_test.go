package acp

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/agentrun/agentrun.nvim/internal/wait"
	"github.com/agentrun/agentrun.nvim/termhost"
)

// A line on stdout that is not JSON-RPC is skipped, logged, and the user
// hears of the first one; the session goes on.
func TestNonJSONStdoutNotice(t *testing.T) {
	r := newRecorder()
	notices := make(chan string, 10)
	a, logs := start(t, selfAgent(t, "demo"), r, Options{Notice: func(msg string) { notices <- msg }})
	s := newSession(t, a)
	prompt(t, s, "!garbage")
	prompt(t, s, "!garbage")
	if stop := prompt(t, s, "echo still here"); stop != "end_turn" {
		t.Errorf("stop reason %q", stop)
	}
	want := `agent "demo" wrote a line to stdout that is not JSON-RPC; it was ignored and the session goes on (further ones only in the log): "this line is not JSON-RPC"`
	if got := next(t, notices, "notice"); got != want {
		t.Errorf("notice %q\nwant   %q", got, want)
	}
	select {
	case extra := <-notices:
		t.Errorf("a second notice: %q", extra)
	default:
	}
	if n := strings.Count(logs.String(), "not JSON-RPC; ignored"); n != 2 {
		t.Errorf("%d log lines about non-JSON output, want 2:\n%s", n, logs.String())
	}
}

// The audit line of a command killed by its release still has the exit.
func TestAuditExitAfterRelease(t *testing.T) {
	r := newRecorder()
	records := make(chan AuditRecord, 10)
	a, logs := start(t, selfAgent(t, "probe"), r, Options{Audit: func(rec AuditRecord) { records <- rec }})
	s := newSession(t, a)
	probe(t, s, r,
		rawReq("terminal/create", `{"sessionId":"$SESSION","command":"sleep 30"}`),
		rawReq("terminal/release", `{"sessionId":"$SESSION","terminalId":"$T0"}`),
	)
	if rec := next(t, records, "start record"); rec.Event != "start" {
		t.Fatalf("first record %+v", rec)
	}
	rec := next(t, records, "exit record")
	if rec.Event != "exit" || rec.Exit == nil || rec.Exit.Signal != "SIGTERM" {
		t.Fatalf("exit record %+v (exit %v), want SIGTERM", rec, rec.Exit)
	}
	if !strings.Contains(logs.String(), "event=exit") || !strings.Contains(logs.String(), "signal=SIGTERM") {
		t.Errorf("the audit exit line lacks the signal:\n%s", logs.String())
	}
}

// Every terminal method on a released id answers "unknown terminal",
// whether the agent or its session's end released it.
func TestCallsAfterRelease(t *testing.T) {
	r := newRecorder()
	a, _ := start(t, selfAgent(t, "probe"), r, Options{})
	s := newSession(t, a)
	methods := []string{"terminal/output", "terminal/wait_for_exit", "terminal/kill", "terminal/release"}
	steps := []probeStep{
		rawReq("terminal/create", `{"sessionId":"$SESSION","command":"echo done"}`),
		rawReq("terminal/wait_for_exit", `{"sessionId":"$SESSION","terminalId":"$T0"}`),
		rawReq("terminal/release", `{"sessionId":"$SESSION","terminalId":"$T0"}`),
	}
	for _, m := range methods {
		steps = append(steps, rawReq(m, `{"sessionId":"$SESSION","terminalId":"$T0"}`))
	}
	results := probe(t, s, r, steps...)
	id := terminalID(t, results[0])
	for i, m := range methods {
		res := results[3+i]
		want := fmt.Sprintf("unknown terminal %q", id)
		if res.Error == nil || res.Error.Code != -32002 || res.Error.Message != want {
			t.Errorf("%s after release: %+v %s, want -32002 %q", m, res.Error, res.Result, want)
		}
	}
	// A new terminal in the same session still works.
	res := probe(t, s, r,
		rawReq("terminal/create", `{"sessionId":"$SESSION","command":"echo again"}`),
		rawReq("terminal/wait_for_exit", `{"sessionId":"$SESSION","terminalId":"$T0"}`))
	if got := string(res[1].Result); got != `{"exitCode":0,"signal":null}` {
		t.Errorf("a new terminal after the release: %s %+v", got, res[1].Error)
	}
}

// A command that ignores SIGTERM gets SIGKILL after the grace period when
// the agent kills it, releases it, or its session ends.
func TestStubbornCommandKilledAfterGrace(t *testing.T) {
	const grace = 400 * time.Millisecond
	const line = `trap '' TERM; echo "pid=$$"; exec sleep 60`
	create := rawReq("terminal/create", fmt.Sprintf(`{"sessionId":"$SESSION","command":%q}`, line))
	// pidOf waits for the command to print its pid.
	pidOf := func(t *testing.T, s *Session, id string) int {
		t.Helper()
		term, ok := s.Terminal(id)
		if !ok {
			t.Fatalf("terminal %s not in the session", id)
		}
		out := wait.Until(t, "the command to print its pid", waitTimeout, func() (bool, string) {
			out := term.Output().Text
			return strings.HasPrefix(out, "pid=") && strings.HasSuffix(out, "\n"), out
		})
		pid, err := strconv.Atoi(strings.TrimSpace(strings.TrimPrefix(out, "pid=")))
		if err != nil {
			t.Fatal(err)
		}
		return pid
	}
	for _, how := range []string{"kill", "release", "session end"} {
		t.Run(how, func(t *testing.T) {
			r := newRecorder()
			host := termhostWithGrace(t, grace)
			a, _ := start(t, selfAgent(t, "probe"), r, Options{Host: host})
			s := newSession(t, a)
			id := terminalID(t, probe(t, s, r, create)[0])
			pid := pidOf(t, s, id)
			began := time.Now()
			switch how {
			case "kill", "release":
				res := probe(t, s, r, rawReq("terminal/"+how, fmt.Sprintf(`{"sessionId":"$SESSION","terminalId":%q}`, id)))[0]
				if res.Error != nil {
					t.Fatalf("%s: %s", how, res.Error.Message)
				}
			case "session end":
				go func() { _ = a.Close() }()
			}
			waitGone(t, pid, "the command ignoring SIGTERM")
			if took := time.Since(began); took < grace {
				t.Errorf("gone after %v, before the %v grace: it was not SIGTERM that was ignored", took, grace)
			}
			if how == "kill" {
				res := probe(t, s, r, rawReq("terminal/wait_for_exit", fmt.Sprintf(`{"sessionId":"$SESSION","terminalId":%q}`, id)))[0]
				if got := string(res.Result); got != `{"exitCode":null,"signal":"SIGKILL"}` {
					t.Errorf("wait_for_exit after the kill: %s %+v", got, res.Error)
				}
			}
		})
	}
}

// termhostWithGrace returns a terminal host with that kill grace, closed
// when the test ends.
func termhostWithGrace(t *testing.T, grace time.Duration) *termhost.Host {
	t.Helper()
	h := termhost.NewHost(termhost.Options{KillGrace: grace})
	t.Cleanup(h.Close)
	return h
}

// TestSetsidChildDiesWithRelease: a child that left the terminal's session
// (setsid), and one that also left its parent (a double fork: reparented
// to init), are out of reach of the process group, yet release kills
// them: they carry the terminal's marker (termhost.MarkerEnv).
func TestSetsidChildDiesWithRelease(t *testing.T) {
	for _, tc := range []struct{ name, line string }{
		{"setsid", `setsid sh -c 'echo "escaped=$$"; exec sleep 3133' & sleep 30`},
		{"double-forked daemon", `setsid sh -c '(echo "escaped=$$" >/dev/null; sh -c "echo escaped=\$\$; exec sleep 3134" &) ; exit 0' & sleep 30`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := newRecorder()
			a, _ := start(t, selfAgent(t, "probe"), r, Options{Host: termhostWithGrace(t, 300*time.Millisecond)})
			s := newSession(t, a)
			id := terminalID(t, probe(t, s, r, rawReq("terminal/create", fmt.Sprintf(`{"sessionId":"$SESSION","command":%q}`, tc.line)))[0])
			term, _ := s.Terminal(id)
			var escaped int
			wait.Until(t, "the escaped child's pid", waitTimeout, func() (bool, string) {
				out := term.Output().Text
				if i := strings.Index(out, "escaped="); i >= 0 {
					if f := strings.Fields(out[i+len("escaped="):]); len(f) > 0 {
						escaped, _ = strconv.Atoi(f[0])
					}
				}
				return escaped != 0, out
			})
			if !alive(escaped) {
				t.Fatalf("no escaped child running; output %q", term.Output().Text)
			}
			t.Cleanup(func() { _ = syscall.Kill(escaped, syscall.SIGKILL) })
			probe(t, s, r, rawReq("terminal/release", fmt.Sprintf(`{"sessionId":"$SESSION","terminalId":%q}`, id)))
			waitGone(t, term.Pid(), "the terminal's command")
			waitGone(t, escaped, "the child that left the terminal's session")
		})
	}
}

// Cancelling the turn refuses a pending command approval at once, and any
// command asked for later in that turn without asking; the next turn asks
// again.
func TestCancelRefusesPendingApproval(t *testing.T) {
	r := newRecorder()
	asked := make(chan Command, 10)
	opts := Options{Approve: func(ctx context.Context, c Command) (bool, error) {
		asked <- c
		if c.Line == "echo next turn" {
			return true, nil
		}
		<-ctx.Done() // the user never answers
		return false, ctx.Err()
	}}
	a, _ := start(t, selfAgent(t, "probe"), r, opts)
	s := newSession(t, a)
	script := `[{"method":"terminal/create","params":{"sessionId":"$SESSION","command":"echo first"}},` +
		`{"method":"terminal/create","params":{"sessionId":"$SESSION","command":"echo second"}}]`
	done := promptAsync(s, script)
	if c := next(t, asked, "the approval"); c.Line != "echo first" {
		t.Fatalf("asked about %q", c.Line)
	}
	if err := s.Cancel(context.Background()); err != nil {
		t.Fatal(err)
	}
	if res := next(t, done, "the prompt"); res.err != nil {
		t.Fatalf("prompt: %v", res.err)
	}
	msgs := r.messages(s.ID())
	var results []probeResult
	if err := json.Unmarshal([]byte(msgs[len(msgs)-1]), &results); err != nil || len(results) != 2 {
		t.Fatalf("probe results %q: %v", msgs[len(msgs)-1], err)
	}
	for i, line := range []string{"echo first", "echo second"} {
		want := "the user cancelled the turn; the command was not run"
		if e := results[i].Error; e == nil || e.Message != want {
			t.Errorf("create %q: %+v %s, want error %q", line, e, results[i].Result, want)
		}
	}
	select {
	case c := <-asked:
		t.Errorf("asked about %q after the cancel", c.Line)
	default:
	}
	res := probe(t, s, r, rawReq("terminal/create", `{"sessionId":"$SESSION","command":"echo next turn"}`))
	terminalID(t, res[0])
	if c := next(t, asked, "the next turn's approval"); c.Line != "echo next turn" {
		t.Errorf("asked about %q", c.Line)
	}
}
