package wait

import "time"

// T is what a wait needs of a test: testing.T and testing.B have it, and
// so can a program that is no test (the bench's sshd fixture).
type T interface {
	Helper()
	Fatalf(format string, args ...any)
}

// interval is how often Until calls its check.
const interval = 10 * time.Millisecond

// Until calls check every interval until it reports done, and returns
// what it saw then. After timeout it fails the test with what (what was
// awaited) and the check's last report.
func Until(t T, what string, timeout time.Duration, check func() (done bool, seen string)) string {
	t.Helper()
	deadline := time.Now().Add(timeout)
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
		time.Sleep(interval)
	}
}

// For is Until for a check with nothing to report.
func For(t T, what string, timeout time.Duration, cond func() bool) {
	t.Helper()
	Until(t, what, timeout, func() (bool, string) { return cond(), "" })
}
