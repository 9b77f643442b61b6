package acp

import (
	"bytes"
	"crypto/rand"
	"encoding/binary"
	"encoding/hex"
	"io"
	"math/bits"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
	"unicode/utf8"
)

// Big strings in responses (terminal/output's text, up to the byte limit)
// bypass encoding/json. Through the SDK a 1 MiB string is escaped once
// by json.Marshal and then scanned twice more (the SDK marshals our
// result to a json.RawMessage, which encoding/json validates and compacts,
// and again inside the envelope): some 15 ms of CPU and several MiB of
// garbage per call. Instead the result carries a placeholder — a short
// JSON string holding a random per-agent nonce and a sequence number —
// and spliceWriter, the writer under the SDK's connection, writes the
// text's JSON form in its place, encoded with a scanner that looks at 8
// bytes at a time, in pieces of at most spliceChunk bytes straight to the
// agent's stdin. The SDK writes each message with one Write under its own
// lock, so a message is spliced and written whole before the next.

// bigTextMin is the length from which a string is spliced instead of
// marshalled.
const bigTextMin = 32 << 10

// spliceChunk bounds how much text is encoded per write to the pipe.
const spliceChunk = 64 << 10

// spliceWriter writes the SDK's messages to w, replacing placeholders by
// the JSON strings they stand for.
type spliceWriter struct {
	w      io.Writer
	marker []byte // `"` + nonce + `:`; a placeholder is marker + seq + `"`
	// observe, when set, learns how long each spliced message took from
	// its request's arrival (bigText's since) to its last byte written,
	// and how much of that was spent in write(2) on the agent's pipe
	// (where a pipe that is full waits for the agent to read).
	observe func(n int, took, writing time.Duration)

	mu      sync.Mutex
	seq     uint64
	texts   map[uint64]splicedText
	pending atomic.Int64  // len(texts), read without the lock
	buf     []byte        // encoding scratch, used under the SDK's write lock
	writing time.Duration // time in s.w.Write during the current Write
}

type splicedText struct {
	text    []byte
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
	s   *spliceWriter
	seq uint64
	str string // small strings, marshalled as usual
}

// bigText returns text as a value to put in a response; since is when
// the request arrived (for observe). text must stay unchanged until
// release is called: after it was written, or at once when it is small
// enough to be copied into a string.
func (s *spliceWriter) bigText(text []byte, since time.Time, release func()) jsonText {
	if s == nil || len(text) < bigTextMin {
		t := jsonText{str: string(text)}
		release()
		return t
	}
	s.mu.Lock()
	s.seq++
	seq := s.seq
	s.texts[seq] = splicedText{text: text, since: since, release: release}
	s.pending.Store(int64(len(s.texts)))
	s.mu.Unlock()
	return jsonText{s: s, seq: seq}
}

// MarshalJSON implements json.Marshaler: the placeholder of a big text.
func (t jsonText) MarshalJSON() ([]byte, error) {
	if t.s == nil {
		return appendJSONString(nil, []byte(t.str)), nil
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
			return 0, err
		}
		err = s.writeString(t.text)
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
			s.observe(len(t.text), time.Since(t.since), s.writing)
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

// writeString writes text as a JSON string, encoding at most spliceChunk
// bytes (cut at a character boundary) per write.
func (s *spliceWriter) writeString(text []byte) error {
	b := append(s.buf[:0], '"')
	for len(text) > 0 {
		n := min(len(text), spliceChunk)
		for n < len(text) && n > 0 && !utf8.RuneStart(text[n]) {
			n--
		}
		if n == 0 {
			n = min(len(text), spliceChunk) // no boundary: invalid bytes, encoded as U+FFFD anyway
		}
		b = appendJSONChars(b, text[:n])
		text = text[n:]
		if len(text) == 0 {
			b = append(b, '"')
		}
		if _, err := s.write(b); err != nil {
			return err
		}
		b = b[:0]
	}
	if cap(b) <= 4*spliceChunk {
		s.buf = b // keep a scratch of ordinary size for the next one
	}
	return nil
}

// pipeSize is the room we ask for in the agent's stdin pipe: a whole big
// answer fits, so writing it never waits for the agent to read (1 MiB is
// Linux's default maximum for unprivileged processes).
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
	_ = rc.Control(func(fd uintptr) {
		_, _, _ = syscall.Syscall(syscall.SYS_FCNTL, fd, syscall.F_SETPIPE_SZ, pipeSize)
	})
}

// appendJSONString appends s as a JSON string.
func appendJSONString(dst []byte, s []byte) []byte {
	dst = append(dst, '"')
	dst = appendJSONChars(dst, s)
	return append(dst, '"')
}

// Masks for the 8-bytes-at-a-time scan.
const (
	swarOnes  = 0x0101010101010101
	swarHighs = 0x8080808080808080
)

// appendJSONChars appends the JSON string escapes of s (without quotes):
// '"' and '\\' escaped, control characters as \n \r \t \b \f or \u00XX,
// U+2028 and U+2029 escaped (as encoding/json does), every byte of
// invalid UTF-8 as U+FFFD. Runs of plain ASCII are found 8 bytes at a
// time and copied whole.
func appendJSONChars(dst []byte, s []byte) []byte {
	start := 0 // s[start:i] is plain and not yet copied
	i := 0
	for i < len(s) {
		for i+8 <= len(s) {
			x := binary.LittleEndian.Uint64(s[i:])
			q := x ^ ('"' * swarOnes)
			bs := x ^ ('\\' * swarOnes)
			// A high bit marks a byte < 0x20, a '"', a '\\' or a byte >=
			// 0x80; borrows can add false marks above a real one, so the
			// lowest mark is a real one.
			marks := ((x - 0x20*swarOnes) | (q - swarOnes) | (bs - swarOnes) | x) & swarHighs
			if marks == 0 {
				i += 8
				continue
			}
			i += bits.TrailingZeros64(marks) / 8
			break
		}
		if i >= len(s) {
			break
		}
		c := s[i]
		if c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' {
				i++
				continue
			}
			dst = append(dst, s[start:i]...)
			switch c {
			case '"', '\\':
				dst = append(dst, '\\', c)
			case '\n':
				dst = append(dst, '\\', 'n')
			case '\r':
				dst = append(dst, '\\', 'r')
			case '\t':
				dst = append(dst, '\\', 't')
			case '\b':
				dst = append(dst, '\\', 'b')
			case '\f':
				dst = append(dst, '\\', 'f')
			default:
				dst = append(dst, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRune(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			dst = append(dst, s[start:i]...)
			dst = append(dst, `\ufffd`...)
		case r == '\u2028' || r == '\u2029':
			dst = append(dst, s[start:i]...)
			dst = append(dst, '\\', 'u', '2', '0', '2', hexDigits[r&0xf])
		default:
			i += size
			continue
		}
		i += size
		start = i
	}
	return append(dst, s[start:]...)
}

const hexDigits = "0123456789abcdef"
