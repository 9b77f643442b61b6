package ahp

import "unsafe"

// Why this file exists: terminal/data appends every pty read to the tail
// content part. Go strings are immutable, so p.Value += data would copy
// the whole part on each read: quadratic in the part's size, far too slow
// for a command that prints megabytes (the agent path is to stay within
// 1.3x of a raw pty drain: make bench). appendText instead keeps spare capacity behind
// the text, like strings.Builder, and writes new bytes past the end.
//
// Why that stays pure: bytes a string covers are never written again;
// appends only go beyond every existing string's end. An older state that
// shares the buffer keeps seeing exactly its own text. If such an older
// state is reduced again (a branch, as in write-ahead replay), its text no
// longer ends where the buffer's written bytes end, so appendText copies
// instead of writing over the other branch's bytes.

// textBuf is the growable buffer behind one content part's text. Parts in
// successive states share it by pointer.
type textBuf struct{ b []byte }

// minTextCap is the smallest buffer appendText allocates.
const minTextCap = 256

// appendText returns s+t. When s ends exactly where (*bp)'s written bytes
// end and the spare capacity suffices, t is written there and no existing
// byte is copied; otherwise s+t goes into a new buffer (twice the size,
// for amortized O(len(t)) appends) stored in *bp. Not safe for concurrent
// use on states that share a buffer.
func appendText(s, t string, bp **textBuf) string {
	if t == "" {
		return s
	}
	if b := *bp; b != nil && len(b.b) > 0 && len(s) > 0 && cap(b.b)-len(b.b) >= len(t) {
		base := uintptr(unsafe.Pointer(unsafe.SliceData(b.b)))
		end := base + uintptr(len(b.b))
		start := uintptr(unsafe.Pointer(unsafe.StringData(s)))
		if start+uintptr(len(s)) == end && start >= base {
			off := len(b.b) - len(s)
			b.b = append(b.b, t...)
			return unsafe.String(&b.b[off], len(s)+len(t))
		}
	}
	n := len(s) + len(t)
	nb := make([]byte, 0, max(2*n, minTextCap))
	nb = append(nb, s...)
	nb = append(nb, t...)
	*bp = &textBuf{b: nb}
	return unsafe.String(unsafe.SliceData(nb), n)
}
