package termhost

import (
	"strings"
	"testing"
	"time"

	"github.com/agentrun/agentrun.nvim/internal/sandbox"
	"github.com/agentrun/agentrun.nvim/internal/testdeps"
)

// TestLimitsStopCommands: each limit stops a command that goes over it,
// and the end of the output (what the agent reads, what the split shows)
// says which one; the process tree is gone afterwards.
func TestLimitsStopCommands(t *testing.T) {
	eachRlimiter(t, testLimitsStopCommands)
}

// eachRlimiter runs test with prlimit(1) (Linux's) and with the shell's
// ulimit (macOS's), so both are tested here.
func eachRlimiter(t *testing.T, test func(t *testing.T)) {
	t.Helper()
	for _, r := range []struct {
		name string
		fn   rlimiter
	}{{"platform", setRlimits}, {"ulimit", ulimitPrefix}} {
		t.Run(r.name, func(t *testing.T) {
			saved := setRlimits
			setRlimits = r.fn
			t.Cleanup(func() { setRlimits = saved })
			test(t)
		})
	}
}

func testLimitsStopCommands(t *testing.T) {
	h := testHost(t, Options{})
	cases := []struct {
		name   string
		line   string
		limits Limits
		signal string
		says   string
	}{
		{"memory", `head -c 2000000000 /dev/zero | tail > /dev/null`, Limits{Memory: 64 << 20},
			"SIGKILL", "(limit 64 MiB)"},
		{"processes", `for i in $(seq 60); do sleep 30 & done; wait`, Limits{Processes: 20},
			"SIGKILL", "processes at once (limit 20)"},
		{"cpu", `while :; do :; done`, Limits{CPUTime: time.Second},
			"SIGXCPU", "it used up its CPU time (limit 1s)"},
		{"file size", `exec head -c 100000 /dev/zero > big`, Limits{FileSize: 4096},
			"SIGXFSZ", "it wrote a file up to the size limit (4 KiB)"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			spec := shell(t, c.line)
			spec.Limits = c.limits
			term := create(t, h, spec)
			st, out := waitExit(t, term)
			if st.Signal != c.signal {
				t.Errorf("exit %v, want %s", st, c.signal)
			}
			last := out.Text[strings.LastIndex(strings.TrimRight(out.Text, "\n"), "\n")+1:]
			if !strings.Contains(last, "[agentrun: stopped: ") || !strings.Contains(last, c.says) {
				t.Errorf("output ends %q; want it to say %q", last, c.says)
			}
			if got := term.LimitHit(); !strings.Contains(got, c.says) {
				t.Errorf("LimitHit() = %q, want %q", got, c.says)
			}
			term.Release()
			eventually(t, "the tree to be gone", func() bool { return !term.alive() })
		})
	}
}

// TestLimitsLeaveOthersAlone: a command within its limits runs to its end
// unchanged, its output says nothing of limits, and open-file limits
// reach the command (ulimit -n).
func TestLimitsLeaveOthersAlone(t *testing.T) {
	eachRlimiter(t, func(t *testing.T) {
		testLimitsLeaveOthersAlone(t)
	})
}

func testLimitsLeaveOthersAlone(t *testing.T) {
	h := testHost(t, Options{})
	spec := shell(t, `ulimit -n; echo done`)
	spec.Limits = Limits{Memory: 256 << 20, Processes: 50, CPUTime: 10 * time.Second, OpenFiles: 77, FileSize: 1 << 20}
	term := create(t, h, spec)
	st, out := waitExit(t, term)
	if st.String() != exitCode(0) || out.Text != "77\ndone\n" || term.LimitHit() != "" {
		t.Fatalf("exit %v, output %q, LimitHit %q", st, out.Text, term.LimitHit())
	}
}

// TestLimitsRejectNegative: a negative limit is an error naming it, and
// nothing starts.
func TestLimitsRejectNegative(t *testing.T) {
	h := testHost(t, Options{})
	spec := shell(t, "echo never")
	spec.Limits = Limits{Memory: -1}
	if _, err := h.Create(t.Context(), spec); err == nil || !strings.Contains(err.Error(), "memory limit -1 is negative") {
		t.Fatalf("err = %v", err)
	}
}

// TestWrappedCommandDiesWithRelease: a command in the sandbox (bwrap,
// which forks the command as its child) and its background children are
// all gone after Release, as an unwrapped one's are.
func TestWrappedCommandDiesWithRelease(t *testing.T) {
	h := testHost(t, Options{KillGrace: 300 * time.Millisecond})
	dir := t.TempDir()
	p, _ := sandbox.Builtin("project")
	p.Writable = []string{dir}
	testdeps.LinuxOnly(t, "the sandbox (bubblewrap)")
	_, err := sandbox.Available()
	testdeps.Need(t, err == nil, "bubblewrap (bwrap)", "apt-get install bubblewrap")
	wrap, err := p.Prefix(dir)
	if err != nil {
		t.Fatalf("the sandbox cannot run here: %v", err)
	}
	spec := shell(t, "sleep 301 & sleep 302 & echo started; wait")
	spec.Dir, spec.Wrap = dir, wrap
	spec.Limits = Limits{Processes: 50}
	term := create(t, h, spec)
	eventually(t, "the command to start", func() bool { return strings.Contains(term.Output().Text, "started") })
	if n := len(term.tree.Members()); n < 4 { // bwrap, sh, two sleeps
		t.Fatalf("%d processes in the tree, want bwrap, sh and the sleeps", n)
	}
	term.Release()
	eventually(t, "every process of the sandboxed tree to be gone", func() bool { return !term.alive() })
}
