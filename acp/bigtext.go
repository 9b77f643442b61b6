package acp

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"io"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// Big strings in responses (terminal/output's text, up to the byte limit)
// bypass encoding/json. Through the SDK a 1 MiB string is escaped once
// by json.Marshal and then scanned twice more (the SDK marshals our
// result to a json.RawMessage, which encoding/json validates and compacts,
// and again inside the envelope): some 15 ms of CPU and several MiB of
// garbage per call. Instead the text arrives already encoded as a JSON
// string (termhost's Store keeps an escaped copy of its retained text, so
// an agent polling a MiB of output costs a copy, not an encoding), the
// result carries a placeholder — a short JSON string holding a random
// per-agent nonce and a sequence number — and spliceWriter, the writer
// under the SDK's connection, writes the encoded text in its place,
// straight to the agent's stdin. The SDK writes each message with one
// Write under its own lock, so a message is spliced and written whole
// before the next.

// bigTextMin is the length from which a string is spliced instead of
// marshalled.
const bigTextMin = 32 << 10

// spliceWriter writes the SDK's messages to w, replacing placeholders by
// the JSON strings they stand for.
type spliceWriter struct {
	w      io.Writer
	marker []byte // `"` + nonce + `:`; a placeholder is marker + seq + `"`
	// observe, when set, learns how long each spliced message took from
	// its request's arrival (encodedText's since) to its last byte
	// written, and how much of that was spent in write(2) on the agent's
	// pipe (where a pipe that is full waits for the agent to read).
	observe func(n int, took, writing time.Duration)

	mu      sync.Mutex
	seq     uint64
	texts   map[uint64]splicedText
	pending atomic.Int64  // len(texts), read without the lock
	writing time.Duration // time in s.w.Write during the current Write
}

type splicedText struct {
	encoded []byte // a whole JSON string, quotes included
	since   time.Time
	release func() // called once the text is written (or dropped)
}

func newSpliceWriter(w io.Writer) *spliceWriter {
	growPipe(w)
	var nonce [12]byte
	_, _ = rand.Read(nonce[:])
	return &spliceWriter{
		w:      w,
		marker: []byte(`"agentrun-splice-` + hex.EncodeToString(nonce[:]) + `:`),
		texts:  map[uint64]splicedText{},
	}
}

// jsonText is a string in a response; big ones are spliced.
type jsonText struct {
	s       *spliceWriter
	seq     uint64
	encoded json.RawMessage // small strings, copied into the message as usual
}

// encodedText returns a JSON string (encoded: quotes and escapes
// included, as termhost's AppendOutputJSON makes it) as a value to put in
// a response; since is when the request arrived (for observe). encoded
// must stay unchanged until release is called: after it was written, or
// at once when it is small enough to be copied.
func (s *spliceWriter) encodedText(encoded []byte, since time.Time, release func()) jsonText {
	if s == nil || len(encoded) < bigTextMin {
		t := jsonText{encoded: append(json.RawMessage(nil), encoded...)}
		release()
		return t
	}
	s.mu.Lock()
	s.seq++
	seq := s.seq
	s.texts[seq] = splicedText{encoded: encoded, since: since, release: release}
	s.pending.Store(int64(len(s.texts)))
	s.mu.Unlock()
	return jsonText{s: s, seq: seq}
}

// MarshalJSON implements json.Marshaler: the placeholder of a big text.
func (t jsonText) MarshalJSON() ([]byte, error) {
	if t.s == nil {
		return t.encoded, nil
	}
	b := append([]byte(nil), t.s.marker...)
	b = strconv.AppendUint(b, t.seq, 10)
	return append(b, '"'), nil
}

// take removes and returns the text of placeholder seq.
func (s *spliceWriter) take(seq uint64) (splicedText, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	t, ok := s.texts[seq]
	if ok {
		delete(s.texts, seq)
		s.pending.Store(int64(len(s.texts)))
	}
	return t, ok
}

// Write implements io.Writer for one whole message.
func (s *spliceWriter) Write(msg []byte) (int, error) {
	if s.pending.Load() == 0 {
		return s.w.Write(msg)
	}
	rest := msg
	var spliced []splicedText
	s.writing = 0
	for {
		i := bytes.Index(rest, s.marker)
		if i < 0 {
			break
		}
		j := i + len(s.marker)
		k := j
		for k < len(rest) && rest[k] >= '0' && rest[k] <= '9' {
			k++
		}
		seq, err := strconv.ParseUint(string(rest[j:k]), 10, 64)
		if k == len(rest) || rest[k] != '"' || err != nil {
			break // not one of ours after all; leave it as it is
		}
		t, ok := s.take(seq)
		if !ok {
			break
		}
		if _, err := s.write(rest[:i]); err != nil {
			t.release()
			return 0, err
		}
		_, err = s.write(t.encoded)
		t.release()
		if err != nil {
			return 0, err
		}
		rest = rest[k+1:]
		spliced = append(spliced, t)
	}
	if _, err := s.write(rest); err != nil {
		return 0, err
	}
	if s.observe != nil {
		for _, t := range spliced {
			s.observe(len(t.encoded), time.Since(t.since), s.writing)
		}
	}
	return len(msg), nil
}

// write writes p to the agent, timing it.
func (s *spliceWriter) write(p []byte) (int, error) {
	began := time.Now()
	n, err := s.w.Write(p)
	s.writing += time.Since(began)
	return n, err
}

// pipeSize is the room we ask for in the agent's stdin pipe: most of a
// big answer fits, so writing it rarely waits for the agent to read
// (1 MiB is Linux's default maximum for unprivileged processes; a 1 MiB
// text is a little more than that as JSON).
const pipeSize = 1 << 20

// growPipe enlarges w's pipe buffer when w is a pipe; failure is harmless
// (writes then wait for the reader, as with any pipe).
func growPipe(w io.Writer) {
	sc, ok := w.(interface {
		SyscallConn() (syscall.RawConn, error)
	})
	if !ok {
		return
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		return
	}
	_ = rc.Control(func(fd uintptr) { setPipeSize(fd, pipeSize) })
}
