package sshlink

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"strconv"
	"sync"
	"syscall"

	"github.com/agentrun/agentrun.nvim/internal/rpcline"
	"github.com/agentrun/agentrun.nvim/internal/rundir"
)

// Serve is `agentrun serve-stdio`: it relays the link on in and out to
// the hosts of the user it runs as (see the package comment) until in
// ends or ctx is done.
func Serve(ctx context.Context, in io.Reader, out io.Writer, version string) error {
	s := &server{out: out, chans: make(map[int]net.Conn)}
	hello, _ := json.Marshal(Hello{Agentrun: "serve-stdio", Version: version, Protocol: Protocol})
	if err := s.writeLine(0, hello, false); err != nil {
		return err
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	go func() {
		<-ctx.Done()
		s.closeAll()
		if c, ok := in.(io.Closer); ok {
			c.Close()
		}
	}()
	r := bufio.NewReaderSize(in, 64<<10)
	for {
		line, err := readLine(r)
		if err != nil {
			s.closeAll()
			if errors.Is(err, io.EOF) || ctx.Err() != nil {
				return nil
			}
			return err
		}
		ch, payload, ok := split(line)
		if !ok {
			continue
		}
		if ch == 0 {
			s.control(ctx, payload)
			continue
		}
		s.mu.Lock()
		c := s.chans[ch]
		s.mu.Unlock()
		if c != nil {
			// One write of the line and its newline: the host reads
			// whole lines.
			_, _ = c.Write(append(payload, '\n'))
		}
	}
}

type server struct {
	wmu sync.Mutex // one line at a time on out
	out io.Writer

	mu    sync.Mutex
	chans map[int]net.Conn
}

// writeLine writes "ch line\n" to the link in one write.
func (s *server) writeLine(ch int, line []byte, prefix bool) error {
	var b []byte
	if prefix || ch != 0 {
		b = strconv.AppendInt(make([]byte, 0, len(line)+16), int64(ch), 10)
		b = append(b, ' ')
	}
	b = append(append(b, line...), '\n')
	s.wmu.Lock()
	defer s.wmu.Unlock()
	_, err := s.out.Write(b)
	return err
}

func (s *server) say(c Control) {
	b, _ := json.Marshal(c)
	_ = s.writeLine(0, b, true)
}

// control runs one control message.
func (s *server) control(ctx context.Context, payload []byte) {
	var c Control
	if err := json.Unmarshal(payload, &c); err != nil {
		return
	}
	switch c.Op {
	case "hosts":
		pids, err := livePIDs(ctx)
		msg := Control{Op: "hosts", ID: c.ID, Hosts: pids}
		if err != nil {
			msg.Error = err.Error()
		}
		s.say(msg)
	case "open":
		s.open(ctx, c.Ch, c.PID)
	case "close":
		s.mu.Lock()
		conn := s.chans[c.Ch]
		s.mu.Unlock()
		if conn != nil {
			conn.Close() // its reader says closed
		}
	}
}

// open connects channel ch to the host with process id pid and relays
// what it sends until it ends.
func (s *server) open(ctx context.Context, ch, pid int) {
	s.mu.Lock()
	busy := s.chans[ch] != nil
	s.mu.Unlock()
	if ch <= 0 || busy {
		s.say(Control{Op: "closed", Ch: ch, Error: fmt.Sprintf("channel %d cannot be opened (in use, or not a channel)", ch)})
		return
	}
	conn, err := dialHost(ctx, pid)
	if err != nil {
		s.say(Control{Op: "closed", Ch: ch, Error: err.Error()})
		return
	}
	s.mu.Lock()
	s.chans[ch] = conn
	s.mu.Unlock()
	go func() {
		r := bufio.NewReaderSize(conn, 64<<10)
		for {
			line, err := readLine(r)
			if err != nil {
				break
			}
			if s.writeLine(ch, line, true) != nil {
				break
			}
		}
		conn.Close()
		s.mu.Lock()
		delete(s.chans, ch)
		s.mu.Unlock()
		s.say(Control{Op: "closed", Ch: ch})
	}()
}

func (s *server) closeAll() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, c := range s.chans {
		c.Close()
	}
}

// dialHost connects to the socket of the user's host with process id
// pid (only ever in the user's own socket directory).
func dialHost(ctx context.Context, pid int) (net.Conn, error) {
	if pid <= 0 {
		return nil, fmt.Errorf("no host with process id %d", pid)
	}
	dir, err := rundir.Dir()
	if err != nil {
		return nil, err
	}
	var d net.Dialer
	conn, err := d.DialContext(ctx, "unix", rundir.Socket(dir, pid))
	if err != nil {
		return nil, fmt.Errorf("no agentrun host with process id %d runs here", pid)
	}
	return conn, nil
}

// livePIDs lists the user's hosts that answer; the sockets of hosts that
// died without removing them are removed (as `agentrun ls` does).
func livePIDs(ctx context.Context) ([]int, error) {
	hosts, err := rundir.Hosts()
	if err != nil {
		return nil, err
	}
	pids := []int{}
	for _, h := range hosts {
		if h.PID <= 0 {
			continue
		}
		var d net.Dialer
		c, err := d.DialContext(ctx, "unix", h.Socket)
		if err != nil {
			if !alive(h.PID) {
				_ = os.Remove(h.Socket)
			}
			continue
		}
		c.Close()
		pids = append(pids, h.PID)
	}
	return pids, nil
}

func alive(pid int) bool {
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}

// split cuts "ch payload" into its channel and payload.
func split(line []byte) (int, []byte, bool) {
	i := bytes.IndexByte(line, ' ')
	if i <= 0 {
		return 0, nil, false
	}
	ch, err := strconv.Atoi(string(line[:i]))
	if err != nil || ch < 0 {
		return 0, nil, false
	}
	return ch, line[i+1:], true
}

// readLine reads one line without its newline (a copy, which outlives
// the next read), at most rpcline.MaxLine bytes.
func readLine(r *bufio.Reader) ([]byte, error) {
	line, err := rpcline.ReadLine(r)
	return bytes.Clone(line), err
}
