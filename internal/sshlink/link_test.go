package sshlink

import (
	"os/exec"
	"strings"
	"testing"
)

func TestParse(t *testing.T) {
	tests := []struct {
		in     string
		want   Target
		rest   string
		errHas string
	}{
		{in: "ssh://devbox", want: Target{Host: "devbox"}},
		{in: "ssh://me@devbox:2222/4242:term-1", want: Target{User: "me", Host: "devbox", Port: 2222}, rest: "4242:term-1"},
		{in: "ssh://devbox/term-3", want: Target{Host: "devbox"}, rest: "term-3"},
		{in: "devbox", errHas: "is not a remote: write ssh://[user@]host[:port]"},
		{in: "ssh://", errHas: "names no host"},
		{in: "ssh:///4242:term-1", errHas: "names no host"},
		{in: "ssh://@devbox", errHas: "empty user"},
		{in: "ssh://devbox:0", errHas: "not a number from 1 to 65535"},
		{in: "ssh://devbox:ssh", errHas: "not a number from 1 to 65535"},
		{in: "ssh://-oProxyCommand=x", errHas: "cannot start with '-'"},
		{in: "ssh://-l@devbox", errHas: "cannot start with '-'"},
		{in: "ssh://dev;box", errHas: "a character hosts and users do not have"},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, rest, err := Parse(tt.in)
			if tt.errHas != "" {
				if err == nil || !strings.Contains(err.Error(), tt.errHas) {
					t.Fatalf("Parse(%q) = %v, %q, %v; want an error with %q", tt.in, got, rest, err, tt.errHas)
				}
				return
			}
			if err != nil || got != tt.want || rest != tt.rest {
				t.Fatalf("Parse(%q) = %+v, %q, %v; want %+v, %q", tt.in, got, rest, err, tt.want, tt.rest)
			}
			if u := got.String(); !strings.HasPrefix(tt.in, u) {
				t.Errorf("%+v.String() = %q, not the start of %q", got, u, tt.in)
			}
		})
	}
}

func TestSSHArgsEndOptionsBeforeTheHost(t *testing.T) {
	t.Setenv(ConfigEnv, "/tmp/cfg")
	for _, batch := range []bool{false, true} {
		args := sshArgs(Target{User: "me", Host: "devbox", Port: 2222}, batch, "cmd")
		line := strings.Join(args, " ")
		if !strings.HasPrefix(line, "-F /tmp/cfg ") || !strings.HasSuffix(line, "-p 2222 -l me -- devbox cmd") {
			t.Errorf("ssh %s", line)
		}
		if strings.Contains(line, "BatchMode=yes") != batch {
			t.Errorf("batch %v: ssh %s", batch, line)
		}
	}
}

func TestNewer(t *testing.T) {
	for _, tt := range []struct {
		a, b string
		want bool
	}{
		{"0.2.0", "0.1.0", true},
		{"0.1.0", "0.2.0", false},
		{"0.10.0", "0.9.1", true},
		{"1.0", "0.9.9", true},
		{"0.1.0", "0.1.0", false},
		{"0.1.1", "0.1", true},
		{"dev", "0.1.0", false},
	} {
		if got := newer(tt.a, tt.b); got != tt.want {
			t.Errorf("newer(%q, %q) = %v, want %v", tt.a, tt.b, got, tt.want)
		}
	}
}

// TestExitOfSaysWhatSSHMeant: how ssh ended reads as a person would say
// it: its own failure with nothing on stderr (status 255, a timeout) as
// a connection that failed or timed out, not as a number.
func TestExitOfSaysWhatSSHMeant(t *testing.T) {
	for _, tc := range []struct {
		script, want string
	}{
		{"exit 255", "the connection failed or timed out: the network, or the machine stopped answering (ssh gave up without a word)"},
		{"exit 3", "ssh exited with status 3"},
		{"kill -TERM $$", "ssh was killed by SIGTERM"},
	} {
		err := exec.Command("sh", "-c", tc.script).Run()
		if got := exitOf(err); got != tc.want {
			t.Errorf("%s: %q, want %q", tc.script, got, tc.want)
		}
	}
}
