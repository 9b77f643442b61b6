package sshlink

import (
	"bufio"
	"bytes"
	"context"
	"io"
	"net"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestServePort: a forward's far end relays both ways to the port on
// this machine's loopback, or says that nothing accepts there.
func TestServePort(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			line, _ := bufio.NewReader(c).ReadString('\n')
			_, _ = io.WriteString(c, "got: "+line)
			c.Close()
		}
	}()
	open := ln.Addr().(*net.TCPAddr).Port
	closed, _ := net.Listen("tcp", "127.0.0.1:0")
	none := closed.Addr().(*net.TCPAddr).Port
	closed.Close()
	for _, tc := range []struct {
		name, out, err string
		port           int
	}{
		{name: "relayed", port: open, out: "got: hello\n"},
		{name: "nothing there", port: none, err: "nothing accepts connections on port " + strconv.Itoa(none)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var out bytes.Buffer
			err := ServePort(context.Background(), strings.NewReader("hello\n"), &out, tc.port)
			if tc.err == "" && err != nil || tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)) {
				t.Fatalf("ServePort: %v, want %q", err, tc.err)
			}
			if out.String() != tc.out {
				t.Errorf("relayed %q, want %q", out.String(), tc.out)
			}
		})
	}
}

// TestRunForwardListens: ssh-forward listens on 127.0.0.1, on the port
// asked when it is free, else on another it says; the end of its input
// ends it and its listening.
func TestRunForwardListens(t *testing.T) {
	taken, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer taken.Close()
	port := taken.Addr().(*net.TCPAddr).Port
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	done := make(chan error, 1)
	go func() { done <- RunForward(context.Background(), inR, outW, "ssh://nowhere.invalid", port) }()
	line, err := bufio.NewReader(outR).ReadString('\n')
	if err != nil {
		t.Fatal(err)
	}
	got, ok := strings.CutPrefix(strings.TrimSpace(line), "listening ")
	n, nerr := strconv.Atoi(got)
	if !ok || nerr != nil || n == port || n == 0 {
		t.Fatalf("first line %q: want listening on a port other than the taken %d", line, port)
	}
	if _, err := net.DialTimeout("tcp", "127.0.0.2:"+got, time.Second); err == nil {
		t.Errorf("it answers on 127.0.0.2:%s: it listens beyond 127.0.0.1", got)
	}
	inW.Close()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("RunForward ended with %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("RunForward goes on after its input ended")
	}
	if c, err := net.DialTimeout("tcp", "127.0.0.1:"+got, time.Second); err == nil {
		c.Close()
		t.Errorf("127.0.0.1:%s still accepts after the forward ended", got)
	}
}
