package wait

import "time"

// T is what a wait needs of a test: testing.T and testing.B have it, and
// so can a program that is no test (the bench's sshd fixture).
type T interface {
	Helper()
	Fatalf(format string, args ...any)
}

// interval is how soon Until calls its check again at first; each
// further wait is half as long again, up to maxInterval: what comes at
// once is seen at once, and a long wait (a command's run, an agent's
// start) does not keep a core busy asking (a check is a call into Neovim
// or a read of the screen, and tests run side by side on 2 cores).
const (
	interval    = 10 * time.Millisecond
	maxInterval = 80 * time.Millisecond
)

// Until calls check, at first every interval and then less often, until it reports done, and returns
// what it saw then. After timeout it fails the test with what (what was
// awaited) and the check's last report.
func Until(t T, what string, timeout time.Duration, check func() (done bool, seen string)) string {
	t.Helper()
	deadline := time.Now().Add(timeout)
	pause := interval
	for {
		done, seen := check()
		if done {
			return seen
		}
		if time.Now().After(deadline) {
			if seen != "" {
				seen = "; last seen:\n" + seen
			}
			t.Fatalf("timed out after %v waiting for %s%s", timeout, what, seen)
		}
		time.Sleep(pause)
		pause = min(pause*3/2, maxInterval)
	}
}

// For is Until for a check with nothing to report.
func For(t T, what string, timeout time.Duration, cond func() bool) {
	t.Helper()
	Until(t, what, timeout, func() (bool, string) { return cond(), "" })
}
