package tests

// Why this file is long: the display fuzzer is one harness (generate,
// feed a real Neovim of each version, detect a crash or hang, minimise,
// replay) whose parts only make sense together.

import (
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
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

// feedCode opens one terminal buffer per entry of sizes, each in a split
// of its size (in a 160×50 editor: many splits at once squeeze each other,
// as when many commands run), then runs the steps: {t, data} sends data to
// terminal t with nvim_chan_send, {t, cols, rows} resizes its window and
// redraws (Neovim resizes a terminal as it draws), and at the end wipes
// them.
const feedCode = `
local sizes, steps = ...
if vim.o.columns ~= 160 then vim.o.columns, vim.o.lines = 160, 50 end
vim.cmd("silent! only")
for _, b in ipairs(vim.api.nvim_list_bufs()) do -- the last case's scratch buffers
  if b ~= vim.api.nvim_get_current_buf() then pcall(vim.api.nvim_buf_delete, b, { force = true }) end
end
local wins, bufs, chans, scratch = {}, {}, {}, {}
for i, size in ipairs(sizes) do
  -- A new window with an empty buffer, as the plugin's splits open
  -- (botright sbuffer): a split of a terminal's window would show that
  -- terminal squeezed for a moment and resize it to that.
  vim.cmd(i % 2 == 0 and "vnew" or "new")
  pcall(vim.api.nvim_win_set_width, 0, size[1])
  pcall(vim.api.nvim_win_set_height, 0, size[2])
  wins[i] = vim.api.nvim_get_current_win()
  scratch[i] = vim.api.nvim_get_current_buf()
end
-- As the plugin does (ui/window.lua): no terminal narrower than two
-- columns. It widens a squeezed window; where the layout has no room for
-- that (README: a known open crash), the fuzzer takes the resize back.
local function narrowest()
  local n = math.huge
  for _, w in ipairs(wins) do n = math.min(n, vim.api.nvim_win_get_width(w)) end
  return n
end
local function keep_two()
  for _, w in ipairs(wins) do
    if vim.api.nvim_win_get_width(w) < 2 then pcall(vim.api.nvim_win_set_width, w, 2) end
  end
  return narrowest() >= 2
end
if not keep_two() then
  vim.cmd("wincmd =")
end
-- The terminals open once the layout holds.
for i, w in ipairs(wins) do
  bufs[i] = vim.api.nvim_create_buf(false, true)
  vim.api.nvim_win_set_buf(w, bufs[i])
  vim.api.nvim_set_current_win(w)
  chans[i] = vim.api.nvim_open_term(bufs[i], {})
end
for _, s in ipairs(steps) do
  if s.data then
    vim.api.nvim_chan_send(chans[s.t], s.data)
  else
    local w = wins[s.t]
    local cols, rows = vim.api.nvim_win_get_width(w), vim.api.nvim_win_get_height(w)
    pcall(vim.api.nvim_win_set_width, w, s.cols)
    pcall(vim.api.nvim_win_set_height, w, s.rows)
    if not keep_two() then
      pcall(vim.api.nvim_win_set_width, w, cols)
      pcall(vim.api.nvim_win_set_height, w, rows)
      keep_two()
    end
    vim.cmd("redraw")
  end
end
vim.wait(12)
vim.cmd("redraw")
-- Away without resizing a terminal: Neovim 0.7 resizes the others'
-- terminals at once when a window closes (win_equal), which would meet
-- its known open crash; the windows show their scratch buffers again
-- first, and the next case's "only" closes them.
for i, w in ipairs(wins) do vim.api.nvim_win_set_buf(w, scratch[i]) end
for _, b in ipairs(bufs) do vim.api.nvim_buf_delete(b, { force = true }) end
return #steps
`

// displayCase is what the display fuzzer feeds: terminals of some sizes
// and the steps (writes and resizes) among them; its JSON is what a crash
// keeps for TestDisplayReplay.
type displayCase struct {
	Sizes [][2]int      `json:"sizes"` // cols, rows of each terminal's split
	Steps []displayStep `json:"steps"`
}

// displayStep writes Data (what the command printed, before the filter)
// to terminal T, or without data resizes its split to Cols×Rows.
type displayStep struct {
	T    int    `json:"t" msgpack:"t"`
	Data []byte `json:"data,omitempty" msgpack:"data,omitempty"`
	Cols int    `json:"cols,omitempty" msgpack:"cols,omitempty"`
	Rows int    `json:"rows,omitempty" msgpack:"rows,omitempty"`
}

// oneTerminal is a case of one terminal fed chunks.
func oneTerminal(chunks [][]byte, cols, rows int) displayCase {
	c := displayCase{Sizes: [][2]int{{cols, rows}}}
	for _, ch := range chunks {
		c.Steps = append(c.Steps, displayStep{T: 1, Data: ch})
	}
	return c
}

// feed runs one case, each terminal's writes through a vtsafe.Filter of
// its own as a display pump sends them (raw: as they are); it reports
// false when Neovim died on it (or did not answer within 10 s).
func (n *vtNvim) feed(c displayCase, raw bool) (alive bool, why string) {
	type step struct {
		T    int    `msgpack:"t"`
		Data string `msgpack:"data,omitempty"`
		Cols int    `msgpack:"cols,omitempty"`
		Rows int    `msgpack:"rows,omitempty"`
	}
	filters := make([]vtsafe.Filter, len(c.Sizes)+1)
	steps := make([]step, 0, len(c.Steps)+len(c.Sizes))
	for _, s := range c.Steps {
		data := s.Data
		if !raw && s.Data != nil {
			f := &filters[s.T]
			data = f.Append(f.Guard(nil), s.Data)
		}
		steps = append(steps, step{s.T, string(data), s.Cols, s.Rows})
	}
	for t := 1; t <= len(c.Sizes) && !raw; t++ {
		if end := filters[t].Flush(nil); len(end) > 0 {
			steps = append(steps, step{T: t, Data: string(end)})
		}
	}
	res := make(chan error, 1)
	go func() {
		var got int
		res <- n.v.ExecLua(feedCode, &got, c.Sizes, steps)
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

// displaySize is a split's size: down to the 2-column minimum (in a
// one-column terminal any wide character crashes every Neovim version,
// whatever the bytes around it; the split keeps two columns instead,
// ui/term.lua) and often 1 or 2 rows.
func displaySize(r *rand.Rand) (cols, rows int) {
	cols, rows = 2+r.Intn(120), 1+r.Intn(40)
	if r.Intn(3) == 0 {
		rows = 1 + r.Intn(2)
	}
	return cols, rows
}

// knownOpen07 reports that the Neovim under test is 0.7, whose known open
// crash (README: a scrollback line given back to libvterm 0.1 cut to a
// narrower terminal, a wide glyph in its last column) the fuzzer steps
// around: it does not resize there (resizing one split changes the others'
// widths too); the libvterm fuzzer resizes 0.1 instead. The crash is kept
// as testdata/displayfuzz/known-open-0.7-*.json.
func knownOpen07() bool { return strings.HasPrefix(nvimVersion(), "NVIM v0.7.") }

// displayCaseOf makes a case of one to four terminals: each gets an input
// cut into chunks as pty reads cut it, the writes interleaved, with
// resizes of their splits between them.
func displayCaseOf(r *rand.Rand, inputs [][]byte) displayCase {
	var c displayCase
	var streams [][][]byte
	for _, in := range inputs {
		streams = append(streams, splitAt(r, in))
		cols, rows := displaySize(r)
		c.Sizes = append(c.Sizes, [2]int{cols, rows})
	}
	for left := true; left; {
		left = false
		for t := range streams {
			if len(streams[t]) == 0 {
				continue
			}
			left = true
			if r.Intn(4) == 0 && !knownOpen07() {
				cols, rows := displaySize(r)
				c.Steps = append(c.Steps, displayStep{T: t + 1, Cols: cols, Rows: rows})
			}
			c.Steps = append(c.Steps, displayStep{T: t + 1, Data: streams[t][0]})
			streams[t] = streams[t][1:]
		}
	}
	return c
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
		var c displayCase
		if tried < len(displayCrashSeeds) {
			c = displayCaseOf(r, [][]byte{displayCrashSeeds[tried]})
		} else {
			inputs := make([][]byte, 1+r.Intn(4))
			for i := range inputs {
				inputs[i] = g.input(seeds)
			}
			c = displayCaseOf(r, inputs)
		}
		if alive, why := nv.feed(c, raw); !alive {
			path := saveCrash(t, c)
			t.Fatalf("case %d (seed %d, %d terminals, %d steps) killed %s: %s\nkept as %s (TestDisplayReplay runs it)",
				tried, seed, len(c.Sizes), len(c.Steps), nvimBin, why, path)
		}
	}
	return tried
}

// displayCrashDir keeps the cases that killed a Neovim, as JSON.
var displayCrashDir = filepath.Join("testdata", "displayfuzz")

// saveCrash keeps a case that killed Neovim for TestDisplayReplay: what
// each command printed and how its reads were cut, the sizes and resizes.
func saveCrash(t *testing.T, c displayCase) string {
	b, err := json.MarshalIndent(c, "", " ")
	if err != nil {
		t.Fatal(err)
	}
	_ = os.MkdirAll(displayCrashDir, 0o755)
	path := filepath.Join(displayCrashDir, fmt.Sprintf("%x", sha256.Sum256(b))[:16]+".json")
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Logf("keeping the crash: %v", err)
	}
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
	alive, why := nv.feed(oneTerminal([][]byte{displayCrashSeeds[0]}, 80, 24), true)
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
		r := rand.New(rand.NewSource(int64(cut)))
		c := displayCaseOf(r, [][]byte{in})
		if alive, why := fuzzNvim.feed(c, false); !alive {
			t.Fatalf("%s died: %s (input %q; kept as %s)", nvimVersion(), why, in, saveCrash(t, c))
		}
	})
}

// TestDisplayReplay runs every case a display fuzzer kept, through the
// filter, on the Neovim under test.
func TestDisplayReplay(t *testing.T) {
	files, _ := filepath.Glob(filepath.Join(displayCrashDir, "*.json"))
	if knownOpen07() {
		files = slices.DeleteFunc(files, func(f string) bool { return strings.HasPrefix(filepath.Base(f), "known-open-0.7-") })
	}
	if len(files) == 0 {
		t.Skip("no kept display crashes")
	}
	nv := startVTNvim(t)
	defer func() { nv.close() }()
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var c displayCase
		if err := json.Unmarshal(b, &c); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		if alive, why := nv.feed(c, false); !alive {
			t.Errorf("%s: %s on %s", f, why, nvimVersion())
			nv = startVTNvim(t)
		}
	}
}
