package termhost

import (
	"syscall"
	"testing"
)

// TestSignalName: names come from the platform's table; Linux's
// real-time signals are counted from SIGRTMIN.
func TestSignalName(t *testing.T) {
	tests := []struct {
		sig  syscall.Signal
		want string
	}{
		{syscall.SIGTERM, "SIGTERM"},
		{syscall.SIGKILL, "SIGKILL"},
		{syscall.SIGXCPU, "SIGXCPU"},
		{syscall.SIGXFSZ, "SIGXFSZ"},
		{syscall.Signal(34), "SIGRTMIN+0"},
		{syscall.Signal(40), "SIGRTMIN+6"},
		{syscall.Signal(99), "SIG99"},
	}
	for _, tc := range tests {
		if got := SignalName(tc.sig); got != tc.want {
			t.Errorf("SignalName(%d) = %q, want %q", int(tc.sig), got, tc.want)
		}
	}
}
