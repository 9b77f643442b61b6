package acp

import (
	"context"
	"fmt"
	"os"
	"runtime"
	"testing"
	"time"

	"github.com/agentrun/agentrun.nvim/internal/proctest"
)

// soakCycles is how many create/wait/output/release cycles the soak test
// runs, soakBatch how many go into one probe prompt.
const (
	soakCycles = 1000
	soakBatch  = 25
)

// resources is what a leak would grow.
type resources struct {
	goroutines, fds, children int
}

func (r resources) String() string {
	return fmt.Sprintf("goroutines=%d fds=%d processes_in_session_cwd=%d", r.goroutines, r.fds, r.children)
}

// measure counts our goroutines, our open file descriptors and the
// living processes whose working directory is dir (the session's: every
// terminal command and whatever it forked, even when orphaned).
func measure(dir string) resources {
	r := resources{goroutines: runtime.NumGoroutine(), fds: proctest.OpenFiles()}
	for _, p := range proctest.All() {
		if cwd, err := proctest.Cwd(p.PID); err == nil && cwd == dir && !p.Zombie() {
			r.children++
		}
	}
	return r
}

// TestTerminalSoak runs 1,000 create/wait/output/release cycles through
// the real ACP path (probe agent over stdio, real ptys; one in five
// commands is still running, with a background child, when released) and
// checks that
// goroutines, file descriptors and child processes come back to where they
// were. It runs only under `make soak` (AGENTRUN_SOAK=1).
func TestTerminalSoak(t *testing.T) {
	if os.Getenv("AGENTRUN_SOAK") == "" {
		t.Skip("soak test: set AGENTRUN_SOAK=1 (make soak)")
	}
	r := newRecorder()
	// The recorder's event channels are bounded; nothing here reads them.
	r.fakeEditor.terminalCreated = func(context.Context, string, string) {}
	r.fakeEditor.terminalReleased = func(context.Context, string, string) {}
	host := termhostWithGrace(t, 500*time.Millisecond)
	a, _ := start(t, selfAgent(t, "probe"), r, Options{Host: host})
	s := newSession(t, a)
	dir := s.Cwd()

	cycle := func(first, n int) {
		t.Helper()
		var steps []probeStep
		// Every fifth command still runs (with a background child) when it
		// is released: the release must kill its whole process group.
		running := func(c int) bool { return c%5 == 4 }
		for i := 0; i < n; i++ {
			base := 4 * i
			tid := fmt.Sprintf(`{"sessionId":"$SESSION","terminalId":"$T%d"}`, base)
			create, wait := fmt.Sprintf(`{"sessionId":"$SESSION","command":"printf","args":["cycle %d\n"]}`, first+i), "terminal/wait_for_exit"
			if running(first + i) {
				create, wait = `{"sessionId":"$SESSION","command":"sleep 30 & sleep 30"}`, "terminal/output"
			}
			steps = append(steps,
				rawReq("terminal/create", create),
				rawReq(wait, tid),
				rawReq("terminal/output", tid),
				rawReq("terminal/release", tid),
			)
		}
		results := probe(t, s, r, steps...)
		for i := 0; i < n; i++ {
			want := fmt.Sprintf(`{"output":"cycle %d\n","truncated":false,"exitStatus":{"exitCode":0,"signal":null}}`, first+i)
			if running(first + i) {
				want = `{"output":"","truncated":false}`
			}
			if got := results[4*i+2]; got.Error != nil || string(got.Result) != want {
				t.Fatalf("cycle %d: output %s %+v, want %s", first+i, got.Result, got.Error, want)
			}
			if got := results[4*i+3]; got.Error != nil || string(got.Result) != `{}` {
				t.Fatalf("cycle %d: release %s %+v", first+i, got.Result, got.Error)
			}
		}
	}
	// settle waits until the numbers are at most limit, or 15s.
	settle := func(limit resources) resources {
		deadline := time.Now().Add(15 * time.Second)
		for {
			now := measure(dir)
			if now.goroutines <= limit.goroutines && now.fds <= limit.fds && now.children <= limit.children {
				return now
			}
			if time.Now().After(deadline) {
				return now
			}
			time.Sleep(50 * time.Millisecond)
		}
	}

	// Warm up so that what is created once (pools, the first pty) is
	// counted in the baseline.
	cycle(0, soakBatch)
	// The baseline is the quiet state: the least seen over a second (the
	// last released terminals may still be cleaning up).
	before := measure(dir)
	for i := 0; i < 20; i++ {
		time.Sleep(50 * time.Millisecond)
		now := measure(dir)
		before.goroutines = min(before.goroutines, now.goroutines)
		before.fds = min(before.fds, now.fds)
		before.children = min(before.children, now.children)
	}
	t.Logf("before: %v", before)

	began := time.Now()
	for done := 0; done < soakCycles; done += soakBatch {
		cycle(soakBatch+done, soakBatch)
		if done%250 == 0 {
			t.Logf("after %d cycles: %v", done+soakBatch, measure(dir))
		}
	}
	took := time.Since(began)

	after := settle(before)
	t.Logf("after %d cycles in %v (%.1f ms/cycle): %v", soakCycles, took.Round(time.Millisecond), float64(took.Milliseconds())/soakCycles, after)
	if after.goroutines > before.goroutines || after.fds > before.fds || after.children > before.children {
		t.Errorf("resources grew: before %v, after %v", before, after)
	}
	if live := host.Terminals(); len(live) != 0 {
		t.Errorf("%d terminals still live", len(live))
	}
	if live := s.Terminals(); len(live) != 0 {
		t.Errorf("%d terminals still in the session", len(live))
	}
}
