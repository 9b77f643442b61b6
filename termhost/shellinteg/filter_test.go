package shellinteg

import (
	"encoding/json"
	"fmt"
	"math/rand"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/agentrun/agentrun.nvim/ahp"
	"github.com/agentrun/agentrun.nvim/internal/jsontest"
	"github.com/agentrun/agentrun.nvim/internal/render"
)

// filterRun is what an Filter made of a stream: the bytes passed on,
// and each payload with how many bytes had been passed on when it came.
type filterRun struct {
	out  []byte
	oscs []string
	at   []int
}

func runFilter(chunks [][]byte) filterRun {
	var f Filter
	var r filterRun
	for _, c := range chunks {
		f.Feed(c, func(d []byte) { r.out = append(r.out, d...) }, func(p []byte) {
			r.oscs = append(r.oscs, string(p))
			r.at = append(r.at, len(r.out))
		})
	}
	f.Flush(func(d []byte) { r.out = append(r.out, d...) })
	return r
}

// traceHandler records what a Scanner sees, with adjacent text merged so
// that chunking does not show.
type traceHandler struct{ ev []string }

func (h *traceHandler) add(kind, s string) {
	if kind == "T" && len(h.ev) > 0 && strings.HasPrefix(h.ev[len(h.ev)-1], "T:") {
		h.ev[len(h.ev)-1] += s
		return
	}
	h.ev = append(h.ev, kind+":"+s)
}
func (h *traceHandler) Text(p []byte)  { h.add("T", string(p)) }
func (h *traceHandler) Control(c byte) { h.add("C", string(c)) }
func (h *traceHandler) Escape(inter []byte, final byte) {
	h.add("E", string(inter)+string(final))
}
func (h *traceHandler) CSI(params, inter []byte, final byte) {
	h.add("S", string(params)+"|"+string(inter)+string(final))
}
func (h *traceHandler) OSC(payload []byte) { h.add("O", string(payload)) }

func scanTrace(p []byte) []string {
	h := &traceHandler{}
	render.NewScanner(h).Feed(p)
	return h.ev
}

// withoutShellIntegration drops the OSC 633/133 events of a trace and
// merges the text runs that met where they were.
func withoutShellIntegration(ev []string) []string {
	var out []string
	for _, e := range ev {
		if p, ok := strings.CutPrefix(e, "O:"); ok && isMarker([]byte(p)) {
			continue
		}
		if n := len(out); n > 0 && strings.HasPrefix(e, "T:") && strings.HasPrefix(out[n-1], "T:") {
			out[n-1] += e[2:]
			continue
		}
		out = append(out, e)
	}
	return out
}

// checkFilter feeds stream in the given chunks and checks the filter
// against the Scanner: the same OSC payloads in the same order, and the
// output scans exactly like the input minus the shell integration OSCs.
func checkFilter(t *testing.T, stream []byte, chunks [][]byte) filterRun {
	t.Helper()
	r := runFilter(chunks)
	if whole := runFilter([][]byte{stream}); !reflect.DeepEqual(r, whole) {
		t.Fatalf("stream %.300q: chunks %.300q give %.300q %q, the whole stream %.300q %q", stream, chunks, r.out, r.oscs, whole.out, whole.oscs)
	}
	if escThenControl(stream) {
		return r // the one documented difference from Scanner
	}
	var wantOSC []string
	for _, e := range scanTrace(stream) {
		if p, ok := strings.CutPrefix(e, "O:"); ok {
			wantOSC = append(wantOSC, p)
		}
	}
	if !reflect.DeepEqual(r.oscs, wantOSC) && !(len(r.oscs) == 0 && len(wantOSC) == 0) {
		t.Fatalf("stream %.300q in %d chunks:\nfilter OSCs %.300q\nscanner OSCs %.300q", stream, len(chunks), r.oscs, wantOSC)
	}
	got, want := scanTrace(r.out), withoutShellIntegration(scanTrace(stream))
	if !reflect.DeepEqual(got, want) && !(len(got) == 0 && len(want) == 0) {
		t.Fatalf("stream %.300q in chunks %.300q:\noutput %.300q scans as %.300q\nwant %.300q", stream, chunks, r.out, got, want)
	}
	return r
}

// escThenControl reports an ESC followed by a byte that Scanner executes
// or ignores inside the escape (C0 controls but ESC, CAN and SUB; DEL).
func escThenControl(stream []byte) bool {
	for i := 0; i+1 < len(stream); i++ {
		if c := stream[i+1]; stream[i] == 0x1b && (c < 0x20 || c == 0x7f) && c != 0x1b && c != 0x18 && c != 0x1a {
			return true
		}
	}
	return false
}

// splits returns stream cut at every single point, and byte by byte.
func splits(stream []byte) [][][]byte {
	var all [][][]byte
	for i := 0; i <= len(stream); i++ {
		all = append(all, [][]byte{stream[:i], stream[i:]})
	}
	var bytewise [][]byte
	for i := range stream {
		bytewise = append(bytewise, stream[i:i+1])
	}
	return append(all, bytewise)
}

func TestOSCFilter(t *testing.T) {
	for _, c := range []struct {
		name, in, out string
		oscs          []string
		at            []int // output length when each OSC was reported
	}{
		{"plain text passes", "hello\r\n\x1b[1mbold\x1b[0m", "hello\r\n\x1b[1mbold\x1b[0m", nil, nil},
		{"a bash prompt and command",
			"\x1b]633;A\x07$ \x1b]633;B\x07echo one\r\n\x1b]633;E;echo one;N\x07\x1b]633;C\x07one\r\n\x1b]633;D;0\x07",
			"$ echo one\r\none\r\n",
			[]string{"633;A", "633;B", "633;E;echo one;N", "633;C", "633;D;0"},
			[]int{0, 2, 12, 12, 17}},
		{"titles and cwd pass and are reported", "a\x1b]0;t\x07b\x1b]7;file:///tmp\x1b\\c",
			"a\x1b]0;t\x07b\x1b]7;file:///tmp\x1b\\c", []string{"0;t", "7;file:///tmp"}, []int{7, 25}},
		{"ST-terminated 133", "x\x1b]133;D;1\x1b\\y", "xy", []string{"133;D;1"}, []int{1}},
		{"bare 633", "\x1b]633\x07z", "z", []string{"633"}, []int{0}},
		{"6333 is not ours", "\x1b]6333;A\x07", "\x1b]6333;A\x07", []string{"6333;A"}, []int{9}},
		{"ESC other ends an OSC and starts a sequence", "\x1b]633;A\x1b[1mB", "\x1b[1mB", []string{"633;A"}, []int{0}},
		{"ESC ] ends an OSC and starts another", "\x1b]633;A\x1b]0;t\x07", "\x1b]0;t\x07", []string{"633;A", "0;t"}, []int{0, 6}},
		{"CAN cancels", "\x1b]633;E;x\x18after\x1b]0;ab\x1axy", "after\x1b]0;ab\x1axy", nil, nil},
		{"controls inside are ignored", "\x1b]63\r3;C\x07.", ".", []string{"633;C"}, []int{0}},
		{"a lone ESC at the end", "abc\x1b", "abc\x1b", nil, nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			for _, chunks := range splits([]byte(c.in)) {
				r := checkFilter(t, []byte(c.in), chunks)
				if string(r.out) != c.out || !reflect.DeepEqual(r.oscs, c.oscs) || !reflect.DeepEqual(r.at, c.at) {
					t.Fatalf("chunks %q:\nout %q oscs %q at %v\nwant %q %q %v", chunks, r.out, r.oscs, r.at, c.out, c.oscs, c.at)
				}
			}
		})
	}
}

func TestOSCFilterLongOSC(t *testing.T) {
	long := "52;c;" + strings.Repeat("A", render.MaxOSC+10)
	in := "a\x1b]" + long + "\x07b\x1b]633;" + strings.Repeat("x", render.MaxOSC+10) + "\x07c\x1b]0;ok\x07"
	r := checkFilter(t, []byte(in), [][]byte{[]byte(in[:1000]), []byte(in[1000:])})
	if want := "a\x1b]" + long + "\x07bc\x1b]0;ok\x07"; string(r.out) != want {
		t.Errorf("overlong OSCs: kept one must pass whole, stripped one must go; got %d bytes, want %d", len(r.out), len(want))
	}
	if !reflect.DeepEqual(r.oscs, []string{"0;ok"}) {
		t.Errorf("overlong payloads must not be reported; got %d payloads", len(r.oscs))
	}
}

// TestOSCFilterRandomStreams builds streams from fragments that stress
// the state machine and compares the filter with the Scanner under
// random chunkings.
func TestOSCFilterRandomStreams(t *testing.T) {
	frags := []string{"\x1b", "]", "633", "133", ";", "A", "D;0", "E;ls;n", "0;t", "7;file:///x",
		"\x07", "\\", "\x18", "\x1a", "\r\n", "text", "\x1b[1m", "\x1bP", "6", "3", "\x01", "é"}
	rng := rand.New(rand.NewSource(7))
	for n := 0; n < 3000; n++ {
		var b strings.Builder
		for k := rng.Intn(24); k >= 0; k-- {
			b.WriteString(frags[rng.Intn(len(frags))])
		}
		stream := []byte(b.String())
		var chunks [][]byte
		for rest := stream; len(rest) > 0; {
			k := 1 + rng.Intn(len(rest))
			chunks, rest = append(chunks, rest[:k]), rest[k:]
		}
		checkFilter(t, stream, chunks)
	}
}

func FuzzOSCFilter(f *testing.F) {
	f.Add([]byte("\x1b]633;A\x07$ \x1b]633;B\x07ls\r\n\x1b]633;C\x07"), 3)
	f.Add([]byte("\x1b]0;title\x1b\\x\x1b]133;D;1\x1b]7;file:///\x07"), 1)
	f.Fuzz(func(t *testing.T, stream []byte, cut int) {
		if cut < 0 || cut > len(stream) {
			cut = len(stream) / 2
		}
		checkFilter(t, stream, [][]byte{stream[:cut], stream[cut:]})
	})
}

// ExampleFilter shows the filter in front of Parser: the
// data actions carry the output without markers, and each marker's
// actions come between the data before and after it.
func ExampleFilter() {
	si := NewParser("agenthost:/terminal/term-1", "N")
	var f Filter
	stream := "$ echo hi\r\n\x1b]633;E;echo hi;N\x07\x1b]633;C\x07hi\r\n\x1b]633;D;0\x07$ "
	for _, chunk := range []string{stream[:20], stream[20:]} {
		f.Feed([]byte(chunk),
			func(d []byte) { fmt.Printf("data %q\n", d) },
			func(p []byte) {
				for _, a := range si.HandleOSC(p, timeZero) {
					fmt.Println(a.ActionType())
				}
			})
	}
	// Output:
	// data "$ echo hi\r\n"
	// terminal/commandDetectionAvailable
	// terminal/commandExecuted
	// data "hi\r\n"
	// terminal/commandFinished
	// data "$ "
}

var timeZero = time.UnixMilli(0)

// BenchmarkOSCFilter measures the filter on coloured output (a CSI every
// few bytes) with a prompt's markers now and then.
func BenchmarkOSCFilter(b *testing.B) {
	var chunk []byte
	for len(chunk) < 32<<10 {
		chunk = append(chunk, "\x1b[32mok\x1b[0m  src/pkg/file.go:42: some output text here\r\n"...)
		if len(chunk)%4096 < 64 {
			chunk = append(chunk, "\x1b]633;D;0\x07\x1b]633;A\x07$ \x1b]633;B\x07"...)
		}
	}
	var f Filter
	n := 0
	b.SetBytes(int64(len(chunk)))
	for i := 0; i < b.N; i++ {
		f.Feed(chunk, func(d []byte) { n += len(d) }, func([]byte) {})
	}
}

// bashSession is what bash with our integration printed for "echo one",
// "false" and "cd /tmp" (recorded from a real pty).
const bashSession = "\x1b]633;P;Cwd=/home/u\x07\x1b]7;file://localhost/home/u\x07\x1b[?2004h\x1b]633;A\x07u$ \x1b]633;B\x07" +
	"echo one\r\n\x1b[?2004l\r\x1b]633;E;echo one;N\x07\x1b]633;C\x07one\r\n\x1b]633;D;0\x07" +
	"\x1b]633;P;Cwd=/home/u\x07\x1b]7;file://localhost/home/u\x07\x1b[?2004h\x1b]633;A\x07u$ \x1b]633;B\x07" +
	"false\r\n\x1b[?2004l\r\x1b]633;E;false;N\x07\x1b]633;C\x07\x1b]633;D;1\x07" +
	"\x1b]633;P;Cwd=/home/u\x07\x1b]7;file://localhost/home/u\x07\x1b[?2004h\x1b]633;A\x07u$ \x1b]633;B\x07" +
	"cd /tmp\r\n\x1b[?2004l\r\x1b]633;E;cd /tmp;N\x07\x1b]633;C\x07\x1b]633;D;0\x07" +
	"\x1b]633;P;Cwd=/tmp\x07\x1b]7;file://localhost/tmp\x07\x1b[?2004h\x1b]633;A\x07u$ \x1b]633;B\x07"

// TestShellIntegrationStreamSplitAnywhere runs a recorded bash session
// through Filter, Parser and the reducer, cut into two reads
// at every byte, and expects the same state every time.
func TestShellIntegrationStreamSplitAnywhere(t *testing.T) {
	prompt := "\x1b]7;file://localhost/home/u\x07\x1b[?2004hu$ "
	want := `{"title":"bash","cwd":"file:///tmp","content":[
		{"type":"unclassified","value":"` + jsonEsc("\x1b]7;file://localhost/home/u\x07\x1b[?2004hu$ echo one\r\n\x1b[?2004l\r") + `"},
		{"type":"command","commandId":"cmd-1","commandLine":"echo one","output":"one\r\n","timestamp":6,"isComplete":true,"exitCode":0,"durationMs":1},
		{"type":"unclassified","value":"` + jsonEsc(prompt+"false\r\n\x1b[?2004l\r") + `"},
		{"type":"command","commandId":"cmd-2","commandLine":"false","output":"","timestamp":13,"isComplete":true,"exitCode":1,"durationMs":1},
		{"type":"unclassified","value":"` + jsonEsc(prompt+"cd /tmp\r\n\x1b[?2004l\r") + `"},
		{"type":"command","commandId":"cmd-3","commandLine":"cd /tmp","output":"","timestamp":20,"isComplete":true,"exitCode":0,"durationMs":1},
		{"type":"unclassified","value":"` + jsonEsc("\x1b]7;file://localhost/tmp\x07\x1b[?2004hu$ ") + `"}],
		"claim":{"kind":"client","clientId":"nvim"},"supportsCommandDetection":true}`
	for cut := 0; cut <= len(bashSession); cut++ {
		si := NewParser(testTerm, "N")
		st := ahp.TerminalState{Title: "bash", Claim: ahp.Claim{Kind: "client", ClientID: "nvim"}}
		var f Filter
		clock := int64(0) // one millisecond per OSC
		for _, chunk := range []string{bashSession[:cut], bashSession[cut:]} {
			f.Feed([]byte(chunk),
				func(d []byte) { st.Apply(ahp.DataAction{Terminal: testTerm, Data: string(d)}) },
				func(p []byte) {
					clock++
					for _, a := range si.HandleOSC(p, time.UnixMilli(clock)) {
						st.Apply(a)
					}
				})
		}
		jsontest.Equal(t, fmt.Sprintf("state with a read boundary at byte %d", cut), jsontest.Marshal(t, st), []byte(want))
		if t.Failed() {
			return
		}
	}
}

// jsonEsc returns s as the inside of a JSON string.
func jsonEsc(s string) string {
	b, _ := json.Marshal(s)
	return string(b[1 : len(b)-1])
}

// TestStoreOSCHandlerFeedsShellIntegration checks the other route OSC
// payloads can take, the rendered-text Store's scanner: split anywhere,
// the recorded session gives the same actions as through Filter, and
// the rendered text carries none of the sequences.
func TestStoreOSCHandlerFeedsShellIntegration(t *testing.T) {
	actionsVia := func(feed func(chunks []string, osc func([]byte))) []string {
		si := NewParser(testTerm, "N")
		var got []string
		feed([]string{bashSession}, func(p []byte) {
			for _, a := range si.HandleOSC(p, timeZero) {
				got = append(got, string(jsontest.Marshal(t, a)))
			}
		})
		return got
	}
	want := actionsVia(func(chunks []string, osc func([]byte)) {
		var f Filter
		for _, c := range chunks {
			f.Feed([]byte(c), func([]byte) {}, osc)
		}
	})
	var types []string
	for _, a := range want {
		var head struct{ Type string }
		_ = json.Unmarshal([]byte(a), &head)
		types = append(types, strings.TrimPrefix(head.Type, "terminal/"))
	}
	wantTypes := []string{"commandDetectionAvailable", "cwdChanged", "commandExecuted", "commandFinished",
		"commandExecuted", "commandFinished", "commandExecuted", "commandFinished", "cwdChanged"}
	if !reflect.DeepEqual(types, wantTypes) {
		t.Fatalf("filter route actions %q, want types %q", want, wantTypes)
	}
	for cut := 0; cut <= len(bashSession); cut += 7 {
		store := render.NewStore(1 << 20)
		store.Append([]byte(bashSession[:cut]))
		store.Append([]byte(bashSession[cut:]))
		store.Flush()
		if text, _ := store.Snapshot(); strings.Contains(text, "633") || text != "u$ echo one\none\nu$ false\nu$ cd /tmp\nu$ " {
			t.Fatalf("cut at %d: rendered text %q", cut, text)
		}
	}
}
