package sshlink

import (
	"bufio"
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// shortBeats makes the beats fast for a test.
func shortBeats(t *testing.T) {
	t.Helper()
	every, silence := beatEvery, beatSilence
	beatEvery, beatSilence = 100*time.Millisecond, 1500*time.Millisecond
	t.Cleanup(func() { beatEvery, beatSilence = every, silence })
}

// TestBeatConn: data crosses whole in order; two sides that beat stay
// up while nothing else is said; a side that hears nothing ends with
// ErrSilent; a side whose reader is slow to take the data is not silent.
func TestBeatConn(t *testing.T) {
	shortBeats(t)
	ar, bw := io.Pipe()
	br, aw := io.Pipe()
	a := newBeatConn(bufio.NewReader(ar), aw)
	b := newBeatConn(bufio.NewReader(br), bw)

	msg := []byte("hello over the link")
	go func() { _, _ = a.Write(msg) }()
	got := make([]byte, len(msg))
	if _, err := io.ReadFull(b, got); err != nil || string(got) != string(msg) {
		t.Fatalf("read %q, %v; want %q", got, err, msg)
	}
	// Quiet, but beating: neither ends (the silence is 1.5 s).
	time.Sleep(2 * time.Second)
	if a.Err() != nil || b.Err() != nil {
		t.Fatalf("two beating sides ended: %v, %v", a.Err(), b.Err())
	}
	// b's reader is slow to take data (Neovim busy): not silence.
	go func() { _, _ = a.Write([]byte("x")) }()
	time.Sleep(2 * time.Second)
	if b.Err() != nil {
		t.Fatalf("a side busy handing data on was taken as silent: %v", b.Err())
	}
	one := make([]byte, 1)
	if _, err := io.ReadFull(b, one); err != nil || one[0] != 'x' {
		t.Fatalf("read %q, %v after the wait", one, err)
	}

	// A side that hears nothing (the other frozen) ends, and says why.
	fr, fw := io.Pipe()
	defer fw.Close()
	c := newBeatConn(bufio.NewReader(fr), io.Discard)
	select {
	case <-c.Dead():
	case <-time.After(5 * time.Second):
		t.Fatal("a side that heard nothing for the silence did not end")
	}
	if !errors.Is(c.Err(), ErrSilent) {
		t.Errorf("its error is %v, want ErrSilent", c.Err())
	}
	if _, err := c.Read(one); err != io.EOF {
		t.Errorf("its Read returned %v, want io.EOF (the backend lingers)", err)
	}
	if _, err := c.Write([]byte("late")); err == nil {
		t.Errorf("a write after the end did not fail")
	}
}

// TestOwnKeepalive: the links add their keepalives unless the user's ssh
// config sets ServerAliveInterval for that host.
func TestOwnKeepalive(t *testing.T) {
	cfg := filepath.Join(t.TempDir(), "config")
	if err := os.WriteFile(cfg, []byte("Host keeps\n  ServerAliveInterval 30\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv(ConfigEnv, cfg)
	tests := []struct {
		host string
		own  bool
	}{{"keeps", true}, {"other", false}}
	for _, tt := range tests {
		t.Run(tt.host, func(t *testing.T) {
			args := sshArgs(Target{Host: tt.host}, true, "true")
			has := false
			for _, a := range args {
				has = has || a == "ServerAliveInterval=5"
			}
			if ownKeepalive(Target{Host: tt.host}) != tt.own || has == tt.own {
				t.Errorf("host %s: own keepalive %v, args %q", tt.host, tt.own, args)
			}
		})
	}
}
