package tests

// Why this file is long: the display fuzzer is one harness (generate,
// feed a real Neovim of each version, detect a crash or hang, minimise,
// replay) whose parts only make sense together.

import (
	"bytes"
	"crypto/sha256"
	"fmt"
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/neovim/go-client/nvim"

	"github.com/agentrun/agentrun.nvim/internal/vtsafe"
)

// The display fuzzer: random and mutated escape sequences, cut into random
// reads, go through vtsafe.Filter (as the display pump sends them) into a
// terminal buffer of a real headless Neovim, which must stay alive.
// make test runs a bounded number of cases per Neovim version
// (TestDisplayFuzz); make fuzz runs longer (AGENTRUN_DISPLAY_FUZZ_TIME)
// and Go's own mutator on FuzzDisplay.

// displayCrashSeeds are inputs that killed or hung Neovim unfiltered (the
// first one 0.7.2 and 0.10, which TestDisplayFuzzSeesACrash relies on).
var displayCrashSeeds = [][]byte{
	[]byte("\x1b[4h\xc2\x85x"),
	[]byte("\x1b[b"),
	[]byte("x\xe6\x97\xa5\x1b[99b"),
	[]byte("x\r\n\xcc\x81\x1b[3b"),
	[]byte("x\xe2\x80\x8b"), // in 2 to 5 columns (0.12)
	[]byte("\x1b[4h\xc2\x9bx"),
	[]byte("\x1b[4h\xc2\x1b[m\x85x"),
	[]byte("\xc2\x85\xc2\x80ab\xc2\x9f\r\n"),
}

// vtNvim is one headless Neovim that terminal buffers are fed into.
type vtNvim struct {
	cmd  *exec.Cmd
	v    *nvim.Nvim
	done chan struct{} // closed when the process has exited
	err  error         // its exit, once done
}

func startVTNvim(t testing.TB) *vtNvim {
	t.Helper()
	cmd := exec.Command(nvimBin, "--embed", "--headless", "--clean", "-n")
	cmd.Dir = os.TempDir()
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatalf("start %s: %v", nvimBin, err)
	}
	v, err := nvim.New(stdout, stdin, stdin, func(string, ...any) {})
	if err != nil {
		t.Fatal(err)
	}
	n := &vtNvim{cmd: cmd, v: v, done: make(chan struct{})}
	go func() { _ = v.Serve() }()
	go func() {
		n.err = cmd.Wait()
		close(n.done)
	}()
	return n
}

func (n *vtNvim) dead() bool {
	select {
	case <-n.done:
		return true
	default:
		return false
	}
}

func (n *vtNvim) close() {
	_ = n.v.Close()
	select {
	case <-n.done:
	case <-time.After(5 * time.Second):
		_ = n.cmd.Process.Kill()
		<-n.done
	}
}

// feedCode opens a terminal buffer in a cols×rows window (a split), sends each chunk
// with nvim_chan_send, lets the terminal refresh its buffer, and wipes it.
const feedCode = `
local chunks, cols, rows = ...
if vim.o.columns ~= 160 then vim.o.columns, vim.o.lines = 160, 50 end
vim.cmd("silent! only")
vim.cmd("vsplit")
vim.cmd("split")
vim.api.nvim_win_set_width(0, cols)
vim.api.nvim_win_set_height(0, rows)
local buf = vim.api.nvim_create_buf(false, true)
vim.api.nvim_win_set_buf(0, buf)
local chan = vim.api.nvim_open_term(buf, {})
for _, c in ipairs(chunks) do vim.api.nvim_chan_send(chan, c) end
vim.wait(12)
vim.cmd("redraw")
vim.api.nvim_buf_delete(buf, { force = true })
return #chunks
`

// feed runs one case; it reports false when Neovim died on it (or did not
// answer within 10 s).
func (n *vtNvim) feed(chunks [][]byte, cols, rows int) (alive bool, why string) {
	strs := make([]string, len(chunks))
	for i, c := range chunks {
		strs[i] = string(c)
	}
	res := make(chan error, 1)
	go func() {
		var got int
		res <- n.v.ExecLua(feedCode, &got, strs, cols, rows)
	}()
	select {
	case err := <-res:
		if err == nil {
			return true, ""
		}
		select {
		case <-n.done:
			return false, fmt.Sprintf("Neovim exited: %v", n.err)
		case <-time.After(2 * time.Second):
			return false, fmt.Sprintf("the feed failed: %v", err)
		}
	case <-n.done:
		return false, fmt.Sprintf("Neovim exited: %v", n.err)
	case <-time.After(10 * time.Second):
		return false, "Neovim did not answer within 10 s"
	}
}

// filterChunks passes chunks through one vtsafe.Filter as the pump does.
func filterChunks(chunks [][]byte) [][]byte {
	var f vtsafe.Filter
	out := make([][]byte, 0, len(chunks)+1)
	for _, c := range chunks {
		out = append(out, f.Append(nil, c))
	}
	return append(out, f.Flush(nil))
}

// splitAt cuts p into chunks at random points, as pty reads do.
func splitAt(r *rand.Rand, p []byte) [][]byte {
	var chunks [][]byte
	for len(p) > 0 {
		n := 1 + r.Intn(min(len(p), 1+r.Intn(4096)))
		if r.Intn(4) == 0 {
			n = min(len(p), 1+r.Intn(4))
		}
		chunks = append(chunks, p[:n])
		p = p[n:]
	}
	return chunks
}

// vtGen makes terminal output: text of every kind, controls, escape
// sequences with odd parameters, strings, invalid UTF-8 and C1 controls.
type vtGen struct{ r *rand.Rand }

func (g vtGen) pick(xs ...string) string { return xs[g.r.Intn(len(xs))] }

func (g vtGen) num() string {
	switch g.r.Intn(8) {
	case 0:
		return ""
	case 1:
		return g.pick("0", "65535", "65536", "99999", "2147483648", "18446744073709551617")
	case 2:
		return strconv.Itoa(g.r.Intn(300))
	}
	return strconv.Itoa(g.r.Intn(30))
}

func (g vtGen) params() string {
	var b strings.Builder
	if g.r.Intn(4) == 0 {
		b.WriteString(g.pick("?", ">", "<", "=", "!"))
	}
	for i, n := 0, g.r.Intn(6); i < n; i++ {
		if i > 0 {
			b.WriteString(g.pick(";", ";", ";", ":"))
		}
		b.WriteString(g.num())
	}
	return b.String()
}

func (g vtGen) text() string {
	var b strings.Builder
	for i, n := 0, 1+g.r.Intn(12); i < n; i++ {
		switch g.r.Intn(12) {
		case 0:
			b.WriteString(g.pick("日本語", "한", "🎉", "👍🏽", "e\u0301", "\u0301", "\u200d", "\ufeff", "\u200b", "\u2060", "\u202e", "\u00ad", "\u2028", "\U0010fffd", "\ufffd", "\u00a0"))
		case 1:
			fmt.Fprintf(&b, "\xc2%c", 0x80+g.r.Intn(32)) // a C1 control as UTF-8
		case 2:
			b.WriteByte(byte(0x80 + g.r.Intn(128))) // a stray high byte
		case 3:
			b.WriteString(g.pick("\xe2\x82", "\xf0\x9f\x8e", "\xc0\xaf", "\xed\xa0\x80", "\xf4\x90\x80\x80", "\xff"))
		case 4:
			b.WriteString(strings.Repeat(g.pick("x", "=", "日"), g.r.Intn(200)))
		default:
			b.WriteString(g.pick("hello", " ", "ok", "a", "PASS", "-", "%", "|"))
		}
	}
	return b.String()
}

func (g vtGen) token() string {
	switch g.r.Intn(16) {
	case 0, 1, 2, 3:
		return g.text()
	case 4:
		return g.pick("\r", "\n", "\r\n", "\b", "\t", "\a", "\x0b", "\x0c", "\x0e", "\x0f", "\x00", "\x7f", "\x18", "\x1a", "\x05")
	case 5, 6, 7, 8:
		final := g.pick("h", "l", "r", "s", "@", "P", "L", "M", "S", "T", "X", "b", "H", "f", "J", "K", "m", "g", "t", "n", "c", "q", "A", "B", "C", "D", "E", "F", "G", "d", "e", "a", "`", "I", "Z", "x", "u", "p", "W")
		if g.r.Intn(8) == 0 {
			final = string(rune(0x40 + g.r.Intn(0x3f)))
		}
		inter := ""
		if g.r.Intn(8) == 0 {
			inter = g.pick(" ", "!", "\"", "$", "'", "*")
		}
		return "\x1b[" + g.params() + inter + final
	case 9:
		mode := g.pick("4", "?6", "?7", "?25", "?47", "?1047", "?1049", "?69", "?2004", "?1000", "?1006", "?5", "?3", "20", "?1", "?12")
		return "\x1b[" + mode + g.pick("h", "l")
	case 10:
		return "\x1b" + g.pick("7", "8", "D", "E", "M", "c", "#8", "=", ">", "(0", "(B", ")0", "*B", "+A", "N", "O", "n", "o", "H", "Z", "\\", " F", "%G", "%@", "6", "9")
	case 11:
		st := g.pick("\a", "\x1b\\", "\xc2\x9c", "")
		return "\x1b]" + g.pick("0", "2", "4", "7", "8", "10", "52", "133", "633", "1337", "") + ";" + g.text() + st
	case 12:
		return "\x1b" + g.pick("P", "_", "^", "X") + g.pick("$qm", "$q\"p", "+q544e", "1$r", "") + g.text() + g.pick("\x1b\\", "\a", "")
	case 13:
		return "\x1b[" + g.pick("38;2;", "48;5;", "38:2::", "58:2:") + g.params() + "m"
	case 14:
		return g.pick("\x1b[4h", "\x1b[?69h\x1b[5;20s", "\x1b[3;10r", "\x1b[10;3r", "\x1b[?6h", "\x1b[999;999H", "\x1b[?1049h", "\x1b[?1049l")
	}
	return string(rune(0x80 + g.r.Intn(32))) // a C1 control as UTF-8 again
}

// input returns one case: generated tokens, or a mutated seed.
func (g vtGen) input(seeds [][]byte) []byte {
	if g.r.Intn(3) == 0 {
		return g.mutate(seeds[g.r.Intn(len(seeds))])
	}
	var b []byte
	for i, n := 0, 1+g.r.Intn(60); i < n; i++ {
		b = append(b, g.token()...)
	}
	return b
}

// mutate flips, inserts, deletes, duplicates and splices.
func (g vtGen) mutate(seed []byte) []byte {
	b := append([]byte(nil), seed...)
	for i, n := 0, 1+g.r.Intn(8); i < n; i++ {
		pos := 0
		if len(b) > 0 {
			pos = g.r.Intn(len(b) + 1)
		}
		switch g.r.Intn(5) {
		case 0:
			if pos < len(b) {
				b[pos] ^= byte(1 << g.r.Intn(8))
			}
		case 1:
			b = append(b[:pos], append([]byte(g.token()), b[pos:]...)...)
		case 2:
			if pos < len(b) {
				b = append(b[:pos], b[min(len(b), pos+1+g.r.Intn(4)):]...)
			}
		case 3:
			b = append(b[:pos], append(append([]byte(nil), b[:pos]...), b[pos:]...)...)
		case 4:
			b = append(b, byte(g.r.Intn(256)))
		}
	}
	return b
}

// fuzzDisplay runs cases until n were tried or the deadline passed, and
// returns how many ran; raw skips the filter (to show the harness sees a
// crash).
func fuzzDisplay(t *testing.T, seed int64, n int, deadline time.Time, raw bool) int {
	r := rand.New(rand.NewSource(seed))
	g := vtGen{r}
	seeds := append([][]byte{}, displayCrashSeeds...)
	nv := startVTNvim(t)
	defer func() { nv.close() }()
	tried := 0
	for ; tried < n && time.Now().Before(deadline); tried++ {
		in := g.input(seeds)
		if tried < len(displayCrashSeeds) {
			in = displayCrashSeeds[tried]
		}
		chunks := splitAt(r, in)
		if !raw {
			chunks = filterChunks(chunks)
		}
		// Two columns at least: in a one-column terminal any wide
		// character crashes every Neovim version, whatever the bytes
		// around it; no byte filter can know the width (the split keeps
		// two columns instead, ui/term.lua).
		cols, rows := 2+r.Intn(120), 1+r.Intn(40)
		if alive, why := nv.feed(chunks, cols, rows); !alive {
			path := saveCrash(t, in, chunks)
			t.Fatalf("case %d (seed %d, %dx%d, %d chunks) killed %s: %s\ninput saved as %s (what Neovim was sent: %[8]s.sent)\nits start: %q",
				tried, seed, cols, rows, len(chunks), nvimBin, why, path, in[:min(len(in), 400)])
		}
	}
	return tried
}

// saveCrash keeps a crashing input and what Neovim was sent of it.
func saveCrash(t *testing.T, in []byte, sent [][]byte) string {
	dir := filepath.Join(os.TempDir(), "agentrun-display-crashes")
	_ = os.MkdirAll(dir, 0o755)
	path := filepath.Join(dir, fmt.Sprintf("%x", sha256.Sum256(in))[:16])
	if err := os.WriteFile(path, in, 0o644); err != nil {
		t.Logf("saving the crash: %v", err)
	}
	_ = os.WriteFile(path+".sent", bytes.Join(sent, nil), 0o644)
	return path
}

// TestDisplayFuzz feeds generated and mutated terminal output through the
// display filter into the Neovim under test. make test runs a bounded
// number of cases; AGENTRUN_DISPLAY_FUZZ_TIME (a Go duration, make fuzz)
// runs that long on a random seed instead.
func TestDisplayFuzz(t *testing.T) {
	seed, n, deadline := int64(19), 400, time.Now().Add(time.Minute)
	if d, err := time.ParseDuration(os.Getenv("AGENTRUN_DISPLAY_FUZZ_TIME")); err == nil {
		seed, n, deadline = time.Now().UnixNano(), 1<<62, time.Now().Add(d)
	}
	start := time.Now()
	tried := fuzzDisplay(t, seed, n, deadline, false)
	fmt.Printf("display fuzz: %d inputs through the filter into %s, 0 crashes (seed %d, %v)\n",
		tried, nvimVersion(), seed, time.Since(start).Round(time.Second))
}

// TestDisplayFuzzSeesACrash runs the crash seeds without the filter: on the
// Neovim versions with the old libvterm (before 0.12) the harness must see
// Neovim die, or TestDisplayFuzz's zero crashes would mean nothing.
func TestDisplayFuzzSeesACrash(t *testing.T) {
	nv := startVTNvim(t)
	defer nv.close()
	alive, why := nv.feed([][]byte{displayCrashSeeds[0]}, 80, 24)
	old := strings.HasPrefix(nvimVersion(), "NVIM v0.7.") || strings.HasPrefix(nvimVersion(), "NVIM v0.10.")
	switch {
	case old && alive:
		t.Fatalf("%s survived %q unfiltered: the harness does not see crashes", nvimVersion(), displayCrashSeeds[0])
	case !old && !alive:
		t.Logf("%s died on the unfiltered seed too (%s)", nvimVersion(), why)
	default:
		t.Logf("%s unfiltered: alive=%v %s", nvimVersion(), alive, why)
	}
}

var nvimVersionOnce = sync.OnceValue(func() string {
	out, err := exec.Command(nvimBin, "--version").Output()
	if err != nil {
		return nvimBin
	}
	return strings.SplitN(string(out), "\n", 2)[0]
})

func nvimVersion() string { return nvimVersionOnce() }

// fuzzNvim is the Neovim a FuzzDisplay worker feeds, restarted after a crash.
var fuzzNvim *vtNvim

// FuzzDisplay is Go's mutator on the same harness: each input, cut where
// its first byte says, goes through the filter into Neovim.
func FuzzDisplay(f *testing.F) {
	for _, s := range displayCrashSeeds {
		f.Add(s, uint8(3))
	}
	f.Add([]byte("\x1b[31mred\x1b[0m \x1b[?1049h\x1b[3;10r\x1b[4h日本\xe2\x82"), uint8(7))
	f.Fuzz(func(t *testing.T, in []byte, cut uint8) {
		if fuzzNvim == nil || fuzzNvim.dead() {
			fuzzNvim = startVTNvim(t)
		}
		chunks := filterChunks(splitAt(rand.New(rand.NewSource(int64(cut))), in))
		if alive, why := fuzzNvim.feed(chunks, 2+int(cut)%100, 1+int(cut)%30); !alive {
			t.Fatalf("%s died: %s (input %q)", nvimVersion(), why, in)
		}
	})
}

// TestDisplayReplay replays a saved input through the filter:
// AGENTRUN_DISPLAY_REPLAY=FILE:COLSxROWS (skipped without it). What it
// sends is left in FILE.sent, to try on any Neovim by hand.
func TestDisplayReplay(t *testing.T) {
	spec := os.Getenv("AGENTRUN_DISPLAY_REPLAY")
	if spec == "" {
		t.Skip("set AGENTRUN_DISPLAY_REPLAY=FILE:COLSxROWS to replay a saved input")
	}
	var cols, rows int
	i := strings.LastIndexByte(spec, ':')
	if _, err := fmt.Sscanf(spec[i+1:], "%dx%d", &cols, &rows); i < 0 || err != nil {
		t.Fatalf("AGENTRUN_DISPLAY_REPLAY=%q: want FILE:COLSxROWS", spec)
	}
	in, err := os.ReadFile(spec[:i])
	if err != nil {
		t.Fatal(err)
	}
	sent := filterChunks([][]byte{in})
	if err := os.WriteFile(spec[:i]+".sent", bytes.Join(sent, nil), 0o644); err != nil {
		t.Fatal(err)
	}
	nv := startVTNvim(t)
	defer nv.close()
	if alive, why := nv.feed(sent, cols, rows); !alive {
		t.Fatalf("%s: %s", nvimVersion(), why)
	}
}
