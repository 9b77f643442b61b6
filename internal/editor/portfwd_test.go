package editor

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentrun/agentrun.nvim/internal/wait"
)

// portRig is a portForwards whose events are collected (as Lua would get
// them) and whose terminal check the test decides.
type portRig struct {
	t  *testing.T
	q  *eventQueue
	pf *portForwards

	mu  sync.Mutex
	got []event

	// exited, released, refuse and hold: under mu.
	exited, released chan struct{}
	// refuse, when set, is what the terminal check answers.
	refuse error
	// hold, when set, keeps the terminal check waiting until closed.
	hold chan struct{}
}

func newPortRig(t *testing.T) *portRig {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	r := &portRig{t: t, q: newEventQueue(), exited: make(chan struct{}), released: make(chan struct{})}
	r.q.keepAll() // as on another machine: nothing of a port may be kept
	r.pf = newPortForwards(ctx, slog.New(slog.DiscardHandler), r.q, func(id string, port int) (portTarget, error) {
		r.mu.Lock()
		hold := r.hold
		r.mu.Unlock()
		if hold != nil {
			<-hold
		}
		r.mu.Lock()
		defer r.mu.Unlock()
		if r.refuse != nil {
			return portTarget{}, r.refuse
		}
		return portTarget{exited: r.exited, released: r.released}, nil
	})
	done := make(chan struct{})
	go func() {
		r.q.run(func(batch []event) {
			r.mu.Lock()
			r.got = append(r.got, batch...)
			r.mu.Unlock()
		})
		close(done)
	}()
	t.Cleanup(func() {
		r.pf.closeAll()
		cancel()
		r.q.close()
		<-done
	})
	return r
}

// set changes what the terminal check answers (fn runs under r.mu).
func (r *portRig) set(fn func()) {
	r.mu.Lock()
	defer r.mu.Unlock()
	fn()
}

// events returns the events of conn so far.
func (r *portRig) events(conn int) []event {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []event
	for _, e := range r.got {
		if c, _ := asLuaGetsIt(e.payload)["conn"].(int64); int(c) == conn {
			out = append(out, e)
		}
	}
	return out
}

// received is what port_data brought for conn, and whether port_closed
// came (with its error, if any).
func (r *portRig) received(conn int) (data []byte, closed bool, errText string) {
	for _, e := range r.events(conn) {
		switch e.name {
		case evPortData:
			data = append(data, e.payload.(portDataEvent).Data...)
		case evPortClosed:
			closed = true
			errText = e.payload.(portClosedEvent).Error
		}
	}
	return data, closed, errText
}

// waitClosed waits for conn's port_closed and returns its error text.
func (r *portRig) waitClosed(conn int) string {
	r.t.Helper()
	var errText string
	wait.Until(r.t, fmt.Sprintf("port_closed of connection %d", conn), 10*time.Second, func() (bool, string) {
		var closed bool
		_, closed, errText = r.received(conn)
		return closed, fmt.Sprintf("%d events", len(r.events(conn)))
	})
	return errText
}

// tcpServer listens on 127.0.0.1 and runs serve on each connection.
func tcpServer(t *testing.T, serve func(net.Conn)) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				serve(c)
			}()
		}
	}()
	return l.Addr().(*net.TCPAddr).Port
}

// TestPortForwardRelaysBothWays: what Lua writes reaches the server
// (port_written says so), the server's answer comes back as port_data
// within the window, acknowledged as Lua writes it out, and its end is a
// port_closed without error; none of it is kept for a replay.
func TestPortForwardRelaysBothWays(t *testing.T) {
	r := newPortRig(t)
	answer := bytes.Repeat([]byte("0123456789abcdef"), 3<<16) // 3 MiB: many windows
	port := tcpServer(t, func(c net.Conn) {
		line := make([]byte, 6)
		if _, err := io.ReadFull(c, line); err != nil {
			return
		}
		c.Write([]byte("got " + string(line)))
		c.Write(answer)
	})
	r.pf.open("term-1", port, 7)
	r.pf.write(7, []byte("hello\n"))
	acked := 0
	wait.Until(t, "the whole answer, acknowledged as it comes", 20*time.Second, func() (bool, string) {
		data, closed, errText := r.received(7)
		if errText != "" {
			t.Fatalf("port_closed with %q", errText)
		}
		if unacked := len(data) - acked; unacked > portWindow+portChunk {
			t.Fatalf("%d bytes sent and not acknowledged: beyond the window", unacked)
		}
		if len(data) > acked {
			r.pf.ack(7, len(data)-acked)
			acked = len(data)
		}
		return closed, fmt.Sprintf("%d bytes", len(data))
	})
	data, _, _ := r.received(7)
	if want := append([]byte("got hello\n"), answer...); !bytes.Equal(data, want) {
		t.Errorf("got %d bytes, want %d (the server's answer, in order)", len(data), len(want))
	}
	var written int
	for _, e := range r.events(7) {
		if e.name == evPortWritten {
			written += e.payload.(portWrittenEvent).N
		}
	}
	if written != 6 {
		t.Errorf("port_written said %d bytes, want 6", written)
	}
	if n := r.pf.count(); n != 0 {
		t.Errorf("%d connections left after the server's end", n)
	}
	r.q.mu.Lock()
	kept := len(r.q.log)
	r.q.mu.Unlock()
	if kept != 0 {
		t.Errorf("%d port events kept for a replay", kept)
	}
}

// TestPortForwardWindow: without Lua's port_ack the server is no longer
// read beyond the window; an ack lets the rest come.
func TestPortForwardWindow(t *testing.T) {
	r := newPortRig(t)
	total := 4 * portWindow
	port := tcpServer(t, func(c net.Conn) {
		c.Write(bytes.Repeat([]byte{'x'}, total))
	})
	r.pf.open("term-1", port, 1)
	wait.Until(t, "a window's worth", 10*time.Second, func() (bool, string) {
		data, _, _ := r.received(1)
		return len(data) >= portWindow, fmt.Sprint(len(data))
	})
	time.Sleep(300 * time.Millisecond)
	data, closed, _ := r.received(1)
	if len(data) >= portWindow+portChunk || closed {
		t.Fatalf("%d bytes sent without an ack (closed: %v): the window is %d", len(data), closed, portWindow)
	}
	acked := 0
	wait.Until(t, "the rest once acknowledged", 10*time.Second, func() (bool, string) {
		data, closed, _ := r.received(1)
		r.pf.ack(1, len(data)-acked)
		acked = len(data)
		return closed && len(data) == total, fmt.Sprint(len(data))
	})
}

// TestPortForwardRefusals: a refused terminal check, a duplicate
// connection number, a port out of range and a port nothing listens on
// each end in port_closed with a sentence naming the port and terminal.
func TestPortForwardRefusals(t *testing.T) {
	r := newPortRig(t)
	refusal := errors.New("term-1 does not listen on port 9 now (it listens on 8000)")
	r.set(func() { r.refuse = refusal })
	r.pf.open("term-1", 9, 1)
	if got := r.waitClosed(1); got != refusal.Error() {
		t.Errorf("refused: %q", got)
	}
	r.set(func() { r.refuse = nil })
	r.pf.open("term-1", 0, 2)
	if got := r.waitClosed(2); !strings.Contains(got, "port 0 of term-1") {
		t.Errorf("port 0: %q", got)
	}
	// a port nothing listens on (taken and closed again)
	l, _ := net.Listen("tcp", "127.0.0.1:0")
	free := l.Addr().(*net.TCPAddr).Port
	l.Close()
	r.pf.open("term-1", free, 3)
	if got := r.waitClosed(3); !strings.Contains(got, fmt.Sprintf("port %d of term-1", free)) || !strings.Contains(got, "refused") {
		t.Errorf("nothing listening: %q", got)
	}
	hold := make(chan struct{})
	r.set(func() { r.hold = hold })
	r.pf.open("term-1", free, 4)
	r.pf.open("term-1", free, 4)
	if got := r.waitClosed(4); !strings.Contains(got, "connection 4 is open already") {
		t.Errorf("duplicate: %q", got)
	}
	r.pf.close(4)
	close(hold)
}

// TestPortForwardEnds: the command's end closes its connections (the
// server sees it, Lua gets port_closed); port_close writes what Lua sent
// first; closeAll (a dropped link) closes all without a word; a Lua
// sending more than portQueue the server has not read loses the
// connection.
func TestPortForwardEnds(t *testing.T) {
	r := newPortRig(t)
	reads := make(chan string, 10)
	port := tcpServer(t, func(c net.Conn) {
		b, _ := io.ReadAll(c)
		reads <- string(b)
	})
	r.pf.open("term-1", port, 1)
	r.pf.write(1, []byte("bye"))
	r.pf.close(1)
	if got := <-reads; got != "bye" {
		t.Errorf("the server read %q before the end, want bye", got)
	}
	r.pf.open("term-1", port, 2)
	wait.Until(t, "connection 2 dialed", 5*time.Second, func() (bool, string) {
		pc := r.pf.lookup(2)
		if pc == nil {
			return false, "gone"
		}
		pc.mu.Lock()
		defer pc.mu.Unlock()
		return pc.c != nil, "dialing"
	})
	r.set(func() { close(r.exited) })
	if got := r.waitClosed(2); got != "" {
		t.Errorf("the command's end: port_closed with %q", got)
	}
	<-reads
	r.set(func() { r.exited = make(chan struct{}) })
	r.pf.open("term-1", port, 3)
	r.pf.open("term-1", port, 4)
	wait.Until(t, "two connections", 5*time.Second, func() (bool, string) {
		return r.pf.count() == 2, fmt.Sprint(r.pf.count())
	})
	r.pf.closeAll()
	<-reads
	<-reads
	if _, closed, _ := r.received(3); closed {
		t.Error("closeAll told Lua")
	}
	if n := r.pf.count(); n != 0 {
		t.Errorf("%d connections after closeAll", n)
	}
	hold := make(chan struct{})
	r.set(func() { r.hold = hold })
	r.pf.open("term-1", port, 5)
	chunk := make([]byte, 64<<10)
	for range portQueue/len(chunk) + 1 {
		r.pf.write(5, chunk)
	}
	close(hold)
	if got := r.waitClosed(5); !strings.Contains(got, "connection dropped") {
		t.Errorf("too much ahead: %q", got)
	}
}
