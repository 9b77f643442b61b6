package procstat

import (
	"bytes"
	"encoding/binary"
)

// procargs2Env returns the environment part of macOS's kern.procargs2
// for a process, NUL-led and NUL-separated (as envHas wants it): the
// buffer is argc (int32, little-endian), the executable's path, NUL
// padding, argc arguments, then the environment, each NUL-ended (and
// after it the "apple" strings, which no marker matches). ok is false
// for a buffer not so made. Portable, so Linux tests it too.
func procargs2Env(b []byte) ([]byte, bool) {
	if len(b) < 4 {
		return nil, false
	}
	argc := int(binary.LittleEndian.Uint32(b))
	b = b[4:]
	i := bytes.IndexByte(b, 0) // the end of the executable's path
	if i < 0 {
		return nil, false
	}
	b = b[i:]
	for len(b) > 0 && b[0] == 0 {
		b = b[1:]
	}
	for ; argc > 0; argc-- {
		i := bytes.IndexByte(b, 0)
		if i < 0 {
			return nil, false
		}
		b = b[i+1:]
	}
	return append([]byte{0}, b...), true
}
