package procstat

import (
	"encoding/binary"
	"testing"
)

// TestProcargs2Env: macOS's kern.procargs2 layout is read past the path,
// its padding and the arguments (one of which looks like the marker);
// a short or cut buffer is not read.
func TestProcargs2Env(t *testing.T) {
	buf := func(argc uint32, rest string) []byte {
		b := make([]byte, 4, 4+len(rest))
		binary.LittleEndian.PutUint32(b, argc)
		return append(b, rest...)
	}
	const marker = "AGENTRUN_TERMINAL=1-term-1-ab"
	tests := []struct {
		name string
		b    []byte
		ok   bool
		has  bool
	}{
		{"marker in the environment", buf(2, "/bin/sleep\x00\x00\x00\x00sleep\x0030\x00HOME=/Users/me\x00"+marker+"\x00\x00ptr_munge=\x00"), true, true},
		{"marker first in the environment", buf(1, "/bin/sh\x00\x00sh\x00"+marker+"\x00"), true, true},
		{"marker only as an argument", buf(2, "/usr/bin/env\x00\x00env\x00"+marker+"\x00HOME=/\x00"), true, false},
		{"another terminal's marker", buf(1, "/bin/sh\x00sh\x00"+marker+"x\x00"), true, false},
		{"short", []byte{1, 0}, false, false},
		{"arguments cut off", buf(3, "/bin/sh\x00sh\x00-c"), false, false},
	}
	for _, tc := range tests {
		env, ok := procargs2Env(tc.b)
		if ok != tc.ok || (ok && envHas(env, marker) != tc.has) {
			t.Errorf("%s: ok %v has %v, want ok %v has %v (env %q)", tc.name, ok, ok && envHas(env, marker), tc.ok, tc.has, env)
		}
	}
}
