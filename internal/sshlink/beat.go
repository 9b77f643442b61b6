package sshlink

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	ahpserver "github.com/agentrun/agentrun.nvim/ahp/server"
	"github.com/agentrun/agentrun.nvim/internal/rundir"
)

// After serve-backend's hello, ssh-backend and serve-backend speak in
// frames: a kind byte, a 4-byte big-endian length, the bytes. A data
// frame carries the backend's RPC stream; a beat frame carries nothing
// and goes every beatEvery either way. A side that reads no frame for
// beatSilence while it waits for one takes the link as dead, as a link
// whose network went away without a word (a half-open TCP connection,
// which neither ssh nor sshd notices for long): here ssh is killed and
// Neovim told; on the machine the backend's input ends, so it lingers as
// for a dropped link, ready for the next one. Time spent handing a frame
// on (Neovim or the backend busy) is not silence.

const (
	frameData = 'D'
	frameBeat = 'B'
)

// beatEvery is how often each side sends a beat; beatSilence how long a
// side waits for any frame before it takes the link as dead. Variables
// for the unit test.
var (
	beatEvery   = 5 * time.Second
	beatSilence = 20 * time.Second
)

// maxFrame bounds a frame's length (a write is cut into frames of at
// most this).
const maxFrame = 1 << 20

// ErrSilent says that the other side sent nothing for beatSilence.
var ErrSilent = errors.New("the link went silent")

// beatConn is one end of the framed stream over a link: Read returns the
// other side's data, Write sends data frames. It ends (Read returns
// io.EOF, Write an error) when r ends, when the other side is silent too
// long, or when drop is called.
type beatConn struct {
	r *bufio.Reader
	w io.Writer

	every, silence time.Duration // beatEvery and beatSilence when it started

	pr *io.PipeReader // the data read, for Read
	pw *io.PipeWriter

	q     chan []byte // frames to write, in order
	qmu   sync.RWMutex
	qDone bool          // q is closed (under qmu)
	wrote chan struct{} // closed when the writer has ended

	// idleSince is when the reader began waiting for a frame (unix
	// nanoseconds); 0 while it hands one on.
	idleSince atomic.Int64

	dead     chan struct{}
	deadOnce sync.Once
	why      error
}

// newBeatConn starts the framed stream over r and w (w is closed by
// CloseWrite, when it is a Closer).
func newBeatConn(r *bufio.Reader, w io.Writer) *beatConn {
	pr, pw := io.Pipe()
	c := &beatConn{r: r, w: w, every: beatEvery, silence: beatSilence, pr: pr, pw: pw, q: make(chan []byte, 64), wrote: make(chan struct{}), dead: make(chan struct{})}
	c.idleSince.Store(time.Now().UnixNano())
	go c.read()
	go c.write()
	go c.watch()
	return c
}

func frame(kind byte, p []byte) []byte {
	b := make([]byte, 5+len(p))
	b[0] = kind
	binary.BigEndian.PutUint32(b[1:5], uint32(len(p)))
	copy(b[5:], p)
	return b
}

func (c *beatConn) read() {
	var hdr [5]byte
	for {
		c.idleSince.Store(time.Now().UnixNano())
		if _, err := io.ReadFull(c.r, hdr[:]); err != nil {
			c.end(nil)
			return
		}
		c.idleSince.Store(0)
		n := binary.BigEndian.Uint32(hdr[1:])
		if n > maxFrame {
			c.end(fmt.Errorf("a frame of %d bytes (at most %d)", n, maxFrame))
			return
		}
		p := make([]byte, n)
		if _, err := io.ReadFull(c.r, p); err != nil {
			c.end(nil)
			return
		}
		if hdr[0] != frameData || n == 0 {
			continue
		}
		if _, err := c.pw.Write(p); err != nil {
			c.end(nil) // our reader is gone
			return
		}
	}
}

func (c *beatConn) write() {
	defer close(c.wrote)
	for b := range c.q {
		if _, err := c.w.Write(b); err != nil {
			c.end(nil)
			break
		}
	}
	if wc, ok := c.w.(io.Closer); ok {
		wc.Close()
	}
}

// watch sends the beats and ends the stream when the other side is
// silent for beatSilence.
func (c *beatConn) watch() {
	tick := time.NewTicker(c.every)
	defer tick.Stop()
	check := time.NewTicker(time.Second)
	defer check.Stop()
	for {
		select {
		case <-c.dead:
			return
		case <-tick.C:
			c.qmu.RLock()
			if !c.qDone {
				select {
				case c.q <- frame(frameBeat, nil):
				default: // frames wait to go: the link carries them or is stuck
				}
			}
			c.qmu.RUnlock()
		case <-check.C:
			if since := c.idleSince.Load(); since != 0 && time.Since(time.Unix(0, since)) > c.silence {
				c.end(fmt.Errorf("%w: nothing came for %d s", ErrSilent, int(c.silence/time.Second)))
				return
			}
		}
	}
}

// end ends the stream once: why is nil when it ended normally.
func (c *beatConn) end(why error) {
	c.deadOnce.Do(func() {
		c.why = why
		close(c.dead)
		c.pw.CloseWithError(io.EOF)
	})
}

// drop ends the stream as a silent link does: the other side is taken
// as gone (a new link took the backend over).
func (c *beatConn) drop(why error) { c.end(why) }

// Err says why the stream ended early (nil: the other side ended it, or
// it has not ended).
func (c *beatConn) Err() error {
	select {
	case <-c.dead:
		return c.why
	default:
		return nil
	}
}

// Dead is closed when the stream has ended.
func (c *beatConn) Dead() <-chan struct{} { return c.dead }

// Read reads the other side's data.
func (c *beatConn) Read(p []byte) (int, error) { return c.pr.Read(p) }

// Write sends p as data frames; it does not wait for the link, but fails
// once the stream has ended.
func (c *beatConn) Write(p []byte) (int, error) {
	c.qmu.RLock()
	defer c.qmu.RUnlock()
	n := 0
	for len(p) > 0 {
		k := min(len(p), maxFrame)
		select {
		case <-c.dead:
			return n, fmt.Errorf("the link has ended: %w", io.ErrClosedPipe)
		default:
		}
		if c.qDone {
			return n, fmt.Errorf("the link is closed for writing: %w", io.ErrClosedPipe)
		}
		select {
		case c.q <- frame(frameData, p[:k]):
		case <-c.dead:
			return n, fmt.Errorf("the link has ended: %w", io.ErrClosedPipe)
		}
		n += k
		p = p[k:]
	}
	return n, nil
}

// CloseWrite sends what waits, then closes w: the other side reads its
// end.
func (c *beatConn) CloseWrite() error {
	c.qmu.Lock()
	defer c.qmu.Unlock()
	if !c.qDone {
		c.qDone = true
		close(c.q)
	}
	return nil
}

// Close is CloseWrite (the RPC client's closer).
func (c *beatConn) Close() error { return c.CloseWrite() }

// BoxEnd is serve-backend's end of the framed stream on in and out (its
// stdio), for the backend of process pid (this process, or the lingering
// one a resume relays to): it listens on PID.link in the user's socket
// directory, where a new link for the same backend (TakeOver) tells it
// that this one is stale. Its Read ends (io.EOF) when the link ends,
// goes silent or is taken over: the backend lingers then.
func BoxEnd(in io.Reader, out io.Writer, pid int) io.ReadWriteCloser {
	c := newBeatConn(bufio.NewReaderSize(in, 64<<10), out)
	dir, err := rundir.Dir()
	if err != nil {
		return c
	}
	path := linkSocket(dir, pid)
	ln, err := ahpserver.Listen(path)
	if err != nil {
		return c
	}
	go func() {
		<-c.dead
		ln.Close()
		_ = os.Remove(path)
	}()
	go func() {
		for {
			conn, err := ln.Accept()
			if err != nil {
				return
			}
			if ahpserver.CheckPeer(conn, os.Getuid()) != nil {
				conn.Close()
				continue
			}
			c.drop(errors.New("a new link takes the backend over"))
			conn.Close()
			return
		}
	}()
	return c
}

func linkSocket(dir string, pid int) string {
	return filepath.Join(dir, strconv.Itoa(pid)+".link")
}

// TakeOver tells the link that serves backend pid, when one still does
// (its Neovim took it as lost, but the machine has not noticed yet), to
// end as a silent one does, so that the backend lingers for the new
// link. It reports whether such a link was there.
func TakeOver(pid int) bool {
	if pid <= 0 {
		return false
	}
	dir, err := rundir.Dir()
	if err != nil {
		return false
	}
	c, err := net.Dial("unix", linkSocket(dir, pid))
	if err != nil {
		return false
	}
	c.Close()
	return true
}
