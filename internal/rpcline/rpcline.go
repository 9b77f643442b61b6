package rpcline

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"sync"
)

// MaxLine bounds one message (a terminal snapshot is at most a few MiB).
const MaxLine = 64 << 20

// Stream implements jsonrpc2.ObjectStream over a connection.
type Stream struct {
	conn net.Conn
	r    *bufio.Reader
	// Intercept, when set, sees every line first; when it returns true
	// the line was handled and jsonrpc2 does not see it. It runs on the
	// reading goroutine.
	Intercept func(line []byte) bool

	mu sync.Mutex // one writer at a time: lines never interleave
}

// New returns a stream over conn.
func New(conn net.Conn) *Stream {
	return &Stream{conn: conn, r: bufio.NewReaderSize(conn, 64<<10)}
}

// WriteObject encodes obj on one line.
func (s *Stream) WriteObject(obj any) error {
	b, err := json.Marshal(obj)
	if err != nil {
		return err
	}
	return s.WriteLine(b)
}

// WriteLine writes b, one encoded JSON object, and a newline.
func (s *Stream) WriteLine(b []byte) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	bufs := net.Buffers{b, []byte{'\n'}}
	_, err := bufs.WriteTo(s.conn)
	return err
}

// ReadObject decodes the next line that Intercept does not take into v.
func (s *Stream) ReadObject(v any) error {
	for {
		line, err := ReadLine(s.r)
		if err != nil {
			return err
		}
		if len(line) == 0 || s.Intercept != nil && s.Intercept(line) {
			continue
		}
		return json.Unmarshal(line, v)
	}
}

// ReadLine reads one line of r (without its newline), at most MaxLine
// bytes; the line is valid until the next read of r.
func ReadLine(r *bufio.Reader) ([]byte, error) {
	var line []byte
	for {
		part, err := r.ReadSlice('\n')
		if err == nil {
			if line == nil {
				return part[:len(part)-1], nil // valid until the next read
			}
			return append(line, part[:len(part)-1]...), nil
		}
		if err != bufio.ErrBufferFull {
			if err == io.EOF && len(line)+len(part) > 0 {
				return nil, io.ErrUnexpectedEOF
			}
			return nil, err
		}
		line = append(line, part...)
		if len(line) > MaxLine {
			return nil, fmt.Errorf("a line longer than %d MiB", MaxLine>>20)
		}
	}
}

// Close closes the connection.
func (s *Stream) Close() error { return s.conn.Close() }
