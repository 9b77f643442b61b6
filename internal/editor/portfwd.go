package editor

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Why this file is long: a forwarded port is a connection with two loops
// (read and write), flow control and an end that must be said once; those
// belong together.

// A port one of this backend's terminals listens on (a dev server's),
// reached from the Neovim at the other end of the link: Lua listens on
// 127.0.0.1 on its own machine (lua/agentrun/portforward.lua) and relays
// each connection made there over this backend's own RPC channel — no
// second ssh connection, no ssh forwarding. Lua numbers the connections:
//
//	port_open(id, port, conn)  dial 127.0.0.1:port here, if terminal id listens on port now
//	port_write(conn, data)     the browser's bytes, for the server
//	port_ack(conn, n)          Lua has written n bytes of port_data to the browser
//	port_close(conn)           the browser's side ended: write what is left, then close
//
// and is told with events (never kept for a replay: a lingering backend
// closes them all):
//
//	port_data {conn, data}     the server's bytes
//	port_written {conn, n}     n bytes of port_write reached the server
//	port_closed {conn, error?} the server's side ended (error: why, when it
//	                           was not the server's own end: a refusal, a
//	                           failure, the command's end)
//
// Both directions are windowed, so no side buffers without bound: the
// server is read only while less than portWindow of its bytes wait for
// Lua's port_ack, and Lua reads the browser only while less than its
// window waits for port_written (a Lua sending more than portQueue ahead
// loses the connection). None of it touches a pty: the read loop never
// waits on a forwarded port.

const (
	// portChunk is the most one port_data carries.
	portChunk = 32 << 10
	// portWindow is how much of the server's bytes may wait for Lua's
	// port_ack before the server is no longer read.
	portWindow = 256 << 10
	// portQueue is how much of the browser's bytes may wait to be written
	// to the server (Lua keeps to its window of 256 KiB plus a read).
	portQueue = 1 << 20
	// maxPortConns is how many forwarded connections a backend holds at
	// once (a browser opens six per server, at most).
	maxPortConns = 64
	// portDialTimeout bounds the dial of 127.0.0.1:port.
	portDialTimeout = 5 * time.Second
)

// portTarget is what ends a forwarded connection of a terminal: its
// command's end (exited) or its release (released).
type portTarget struct {
	exited, released <-chan struct{}
}

// portForwards are the forwarded connections of this backend's
// terminals' ports, by Lua's number for them.
type portForwards struct {
	ctx    context.Context
	log    *slog.Logger
	events *eventQueue
	// target checks that terminal id runs and listens on port now.
	target func(id string, port int) (portTarget, error)

	mu    sync.Mutex
	conns map[int]*portConn
}

// portConn is one forwarded connection: the TCP connection to the
// server and what waits in each direction.
type portConn struct {
	fw   *portForwards
	n    int
	id   string
	port int

	mu   sync.Mutex
	cond *sync.Cond
	c    net.Conn // nil until dialed
	// pending is the browser's bytes not yet written to the server.
	pending      [][]byte
	pendingBytes int
	// unacked counts the server's bytes sent to Lua not yet acknowledged.
	unacked int
	// ending: Lua's side ended (port_close): what is pending is written,
	// then the connection closes; nothing more goes to Lua.
	ending bool
	closed bool
	done   chan struct{}
}

func newPortForwards(ctx context.Context, log *slog.Logger, events *eventQueue, target func(id string, port int) (portTarget, error)) *portForwards {
	return &portForwards{ctx: ctx, log: log, events: events, target: target, conns: map[int]*portConn{}}
}

// open ("port_open", a notification) starts connection conn to
// 127.0.0.1:port for terminal id: checked and dialed off the RPC
// goroutine, while port_write queues behind it. A refusal is said with
// port_closed {conn, error}.
func (pf *portForwards) open(id string, port, conn int) {
	refuse := func(err error) {
		pf.events.pushTransient(portClosedEvent{Conn: conn, Error: err.Error()})
	}
	if port <= 0 || port > 65535 {
		refuse(fmt.Errorf("port %d of %s: not a TCP port", port, id))
		return
	}
	pc := &portConn{fw: pf, n: conn, id: id, port: port, done: make(chan struct{})}
	pc.cond = sync.NewCond(&pc.mu)
	pf.mu.Lock()
	_, dup := pf.conns[conn]
	full := len(pf.conns) >= maxPortConns
	if !dup && !full {
		pf.conns[conn] = pc
	}
	pf.mu.Unlock()
	switch {
	case dup:
		refuse(fmt.Errorf("port %d of %s: connection %d is open already", port, id, conn))
		return
	case full:
		refuse(fmt.Errorf("port %d of %s: %d connections are forwarded already; close some (a browser tab) and reload", port, id, maxPortConns))
		return
	}
	go pc.run()
}

// lookup returns connection n (nil when it is gone).
func (pf *portForwards) lookup(n int) *portConn {
	pf.mu.Lock()
	defer pf.mu.Unlock()
	return pf.conns[n]
}

// write ("port_write", a notification) queues the browser's bytes for
// the server. It never waits: the connection's writer writes them.
func (pf *portForwards) write(conn int, data []byte) {
	pc := pf.lookup(conn)
	if pc == nil {
		return // ended already; Lua has been or will be told
	}
	pc.mu.Lock()
	if pc.closed || pc.ending {
		pc.mu.Unlock()
		return
	}
	if pc.pendingBytes+len(data) > portQueue {
		pc.mu.Unlock()
		pc.finish(fmt.Errorf("port %d of %s: the browser sent more than %d KiB the server has not read yet; connection dropped", pc.port, pc.id, portQueue>>10), true)
		return
	}
	pc.pending = append(pc.pending, data)
	pc.pendingBytes += len(data)
	pc.cond.Broadcast()
	pc.mu.Unlock()
}

// ack ("port_ack", a notification): Lua wrote n bytes of the server's to
// the browser; the server is read again below the window.
func (pf *portForwards) ack(conn, n int) {
	pc := pf.lookup(conn)
	if pc == nil || n <= 0 {
		return
	}
	pc.mu.Lock()
	pc.unacked = max(pc.unacked-n, 0)
	pc.cond.Broadcast()
	pc.mu.Unlock()
}

// close ("port_close", a notification): the browser's side ended. What
// it sent is still written to the server, then the connection closes.
func (pf *portForwards) close(conn int) {
	pc := pf.lookup(conn)
	if pc == nil {
		return
	}
	pc.mu.Lock()
	pc.ending = true // a connection still dialing writes it all once dialed
	pc.cond.Broadcast()
	pc.mu.Unlock()
}

// closeAll ends every forwarded connection without telling Lua (the link
// dropped, or the backend shuts down).
func (pf *portForwards) closeAll() {
	pf.mu.Lock()
	all := make([]*portConn, 0, len(pf.conns))
	for _, pc := range pf.conns {
		all = append(all, pc)
	}
	pf.mu.Unlock()
	for _, pc := range all {
		pc.finish(nil, false)
	}
}

// count is how many connections are forwarded now.
func (pf *portForwards) count() int {
	pf.mu.Lock()
	defer pf.mu.Unlock()
	return len(pf.conns)
}

// run checks the terminal, dials the server and relays until either side
// ends: it reads the server (within the window) while writeLoop writes
// the browser's bytes and the terminal's end closes it.
func (pc *portConn) run() {
	target, err := pc.fw.target(pc.id, pc.port)
	if err != nil {
		pc.finish(err, true)
		return
	}
	c, err := dialLoopback(pc.fw.ctx, pc.port)
	if err != nil {
		pc.finish(fmt.Errorf("port %d of %s: %w", pc.port, pc.id, err), true)
		return
	}
	pc.mu.Lock()
	if pc.closed {
		pc.mu.Unlock()
		_ = c.Close()
		return
	}
	pc.c = c
	pc.mu.Unlock()
	go pc.writeLoop()
	go func() {
		select {
		case <-target.exited:
			pc.finish(nil, true) // the command ended: so does what reached it
		case <-target.released:
			pc.finish(nil, true)
		case <-pc.fw.ctx.Done():
			pc.finish(nil, false)
		case <-pc.done:
		}
	}()
	pc.readLoop()
}

// dialLoopback connects to port on this machine's loopback: 127.0.0.1,
// else ::1 (a server listening on IPv6 only).
func dialLoopback(ctx context.Context, port int) (net.Conn, error) {
	d := net.Dialer{Timeout: portDialTimeout}
	c, err := d.DialContext(ctx, "tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(port)))
	if err == nil {
		return c, nil
	}
	if c6, err6 := d.DialContext(ctx, "tcp", net.JoinHostPort("::1", strconv.Itoa(port))); err6 == nil {
		return c6, nil
	}
	return nil, err
}

// readLoop sends the server's bytes to Lua as port_data, waiting while
// portWindow of them are unacknowledged; the server's end is port_closed.
func (pc *portConn) readLoop() {
	buf := make([]byte, portChunk)
	for {
		pc.mu.Lock()
		for pc.unacked >= portWindow && !pc.closed && !pc.ending {
			pc.cond.Wait()
		}
		stop := pc.closed || pc.ending
		pc.mu.Unlock()
		if stop {
			return
		}
		n, err := pc.c.Read(buf)
		if n > 0 {
			pc.mu.Lock()
			if pc.closed || pc.ending {
				pc.mu.Unlock()
				return
			}
			pc.unacked += n
			// under pc.mu: port_closed (finish) cannot come before it
			pc.fw.events.pushTransient(portDataEvent{Conn: pc.n, Data: slices.Clone(buf[:n])})
			pc.mu.Unlock()
		}
		if err != nil {
			if errors.Is(err, io.EOF) {
				err = nil // the server's own end
			} else {
				err = fmt.Errorf("port %d of %s: %w", pc.port, pc.id, err)
			}
			pc.finish(err, true)
			return
		}
	}
}

// writeLoop writes the browser's bytes to the server in order, and says
// each write with port_written; after port_close, once all is written,
// it closes the connection.
func (pc *portConn) writeLoop() {
	for {
		pc.mu.Lock()
		for len(pc.pending) == 0 && !pc.closed && !pc.ending {
			pc.cond.Wait()
		}
		if pc.closed {
			pc.mu.Unlock()
			return
		}
		if len(pc.pending) == 0 { // ending, all written
			pc.mu.Unlock()
			pc.finish(nil, false)
			return
		}
		data := pc.pending[0]
		pc.pending = pc.pending[1:]
		pc.pendingBytes -= len(data)
		pc.mu.Unlock()
		if _, err := pc.c.Write(data); err != nil {
			pc.finish(fmt.Errorf("port %d of %s: %w", pc.port, pc.id, err), true)
			return
		}
		pc.fw.events.pushTransient(portWrittenEvent{Conn: pc.n, N: len(data)})
	}
}

// finish ends the connection once: closes it, forgets it, and when tell
// is set says so to Lua (port_closed, with err's sentence if any).
func (pc *portConn) finish(err error, tell bool) {
	pc.mu.Lock()
	if pc.closed {
		pc.mu.Unlock()
		return
	}
	pc.closed = true
	c := pc.c
	pc.pending, pc.pendingBytes = nil, 0
	if tell && !pc.ending {
		p := portClosedEvent{Conn: pc.n}
		if err != nil {
			p.Error = err.Error()
		}
		pc.fw.events.pushTransient(p)
	}
	close(pc.done)
	pc.cond.Broadcast()
	pc.mu.Unlock()
	if c != nil {
		_ = c.Close()
	}
	pc.fw.mu.Lock()
	if pc.fw.conns[pc.n] == pc {
		delete(pc.fw.conns, pc.n)
	}
	pc.fw.mu.Unlock()
	if err != nil {
		pc.fw.log.Debug("forwarded port connection ended", "conn", pc.n, "terminal", pc.id, "port", pc.port, "err", err)
	}
}

// portTarget checks that terminal id of this backend runs and listens on
// port now (what watchActivity saw last, else a look at its sockets),
// and returns what ends its forwarded connections.
func (ts *terminals) portTarget(id string, port int) (portTarget, error) {
	t, err := ts.running(id)
	if err != nil {
		return portTarget{}, fmt.Errorf("port %d of %s: %w", port, id, err)
	}
	tm, err := ts.lookup(id)
	if err != nil {
		return portTarget{}, fmt.Errorf("port %d of %s: %w", port, id, err)
	}
	tm.mu.Lock()
	seen := slices.Contains(tm.ports, port)
	tm.mu.Unlock()
	if !seen {
		ports := t.Ports()
		if !slices.Contains(ports, port) {
			return portTarget{}, fmt.Errorf("%s does not listen on port %d now (%s)", id, port, listensOn(ports))
		}
	}
	return portTarget{exited: t.Done(), released: tm.released}, nil
}

// listensOn says which ports a terminal listens on: "it listens on 8000
// and 5173", "it listens on none".
func listensOn(ports []int) string {
	if len(ports) == 0 {
		return "it listens on no port"
	}
	s := make([]string, len(ports))
	for i, p := range ports {
		s[i] = strconv.Itoa(p)
	}
	return "it listens on " + strings.Join(s, " and ")
}
