package vtsafe

// The differential fuzzer: the filter's output goes into libvterm itself,
// every version a supported Neovim uses, built from Debian's sources with
// AddressSanitizer (testdata/libvterm/harness.c), in-process and fast. A
// crash or a hang in any version is a failure; its exact input is kept in
// testdata/libvterm/crashers for TestLibvtermReplay.
//
// scripts/vterm-src.sh fetches the sources; make test and make fuzz pass
// their directory in AGENTRUN_VTERM_SRC. The Neovim-level fuzzer
// (tests/displayfuzz_test.go) confirms through the real editor.

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// vtVersions are the libvterm versions of the supported Neovims.
var vtVersions = []string{"0.1", "0.3", "0.12"}

// vtCase is a terminal's life: its size, then writes and resizes.
type vtCase struct {
	rows, cols int
	ops        []vtOp
}

// vtOp writes data, or with data nil resizes the terminal.
type vtOp struct {
	data       []byte
	rows, cols int
}

// encode writes c in the harness's input format, each write's data made
// safe by one Filter (as a display pump does) when filter is set.
func (c vtCase) encode(filter bool) []byte {
	var f Filter
	b := sizeOp(nil, 'N', c.rows, c.cols)
	for i, op := range c.ops {
		if op.data == nil {
			b = sizeOp(b, 'R', op.rows, op.cols)
			continue
		}
		data := op.data
		if filter { // as a display pump sends it
			data = f.Append(f.Guard(nil), data)
			if i == len(c.ops)-1 {
				data = f.Flush(data)
			}
		}
		b = append(b, 'W')
		b = binary.LittleEndian.AppendUint32(b, uint32(len(data)))
		b = append(b, data...)
	}
	return append(b, 'E')
}

func sizeOp(b []byte, op byte, rows, cols int) []byte {
	b = append(b, op)
	b = binary.LittleEndian.AppendUint16(b, uint16(rows))
	return binary.LittleEndian.AppendUint16(b, uint16(cols))
}

// decodeCase reads a case in the harness's format (a crasher file).
func decodeCase(b []byte) (vtCase, error) {
	var c vtCase
	for len(b) > 0 {
		op := b[0]
		b = b[1:]
		switch op {
		case 'N', 'R':
			if len(b) < 4 {
				return c, errors.New("a size cut short")
			}
			r, k := int(binary.LittleEndian.Uint16(b)), int(binary.LittleEndian.Uint16(b[2:]))
			b = b[4:]
			if op == 'N' {
				c.rows, c.cols = r, k
			} else {
				c.ops = append(c.ops, vtOp{rows: r, cols: k})
			}
		case 'W':
			if len(b) < 4 || int(binary.LittleEndian.Uint32(b)) > len(b)-4 {
				return c, errors.New("a write cut short")
			}
			n := int(binary.LittleEndian.Uint32(b))
			c.ops = append(c.ops, vtOp{data: append([]byte{}, b[4:4+n]...)})
			b = b[4+n:]
		case 'E':
			return c, nil
		default:
			return c, fmt.Errorf("unknown op %q", op)
		}
	}
	return c, errors.New("no end")
}

// harness is one running harness process of one libvterm version.
type harness struct {
	version, bin string
	cmd          *exec.Cmd
	in           io.WriteCloser
	out          *bufio.Reader
	stderr       *bytes.Buffer
}

var (
	buildOnce sync.Map // version → *builtHarness
)

type builtHarness struct {
	once sync.Once
	bin  string
	err  error
}

// vtermSrc returns the directory scripts/vterm-src.sh filled, or skips.
func vtermSrc(t testing.TB) string {
	t.Helper()
	dir := os.Getenv("AGENTRUN_VTERM_SRC")
	if dir == "" {
		t.Skip("AGENTRUN_VTERM_SRC is not set: make test sets it to what scripts/vterm-src.sh fetched")
	}
	return dir
}

// harnessBin builds (once, cached by the hash of every source) the
// harness for version and returns its path.
func harnessBin(t testing.TB, version string) string {
	t.Helper()
	src := filepath.Join(vtermSrc(t), version, "src")
	v, _ := buildOnce.LoadOrStore(version, &builtHarness{})
	bh := v.(*builtHarness)
	bh.once.Do(func() { bh.bin, bh.err = buildHarness(src, version) })
	if bh.err != nil {
		t.Fatalf("building the libvterm %s harness: %v", version, bh.err)
	}
	return bh.bin
}

// ccFlags build the harness with AddressSanitizer and UBSan; a signed
// overflow (a huge CSI parameter) wraps in practice and is not looked for.
var ccFlags = []string{"-std=gnu99", "-D_GNU_SOURCE", "-O1", "-g", "-w",
	"-fsanitize=address,undefined", "-fno-sanitize=signed-integer-overflow", "-fno-sanitize-recover=undefined", "-fno-omit-frame-pointer"}

func buildHarness(src, version string) (string, error) {
	var files, flags []string
	var err error
	if version == "0.12" {
		// Neovim's port: its sources, the stand-ins for the Neovim headers
		// and functions it uses, the declarations Neovim's build generates.
		vdir := filepath.Join(src, "src", "nvim", "vterm")
		files, err = filepath.Glob(filepath.Join(vdir, "*.c"))
		files = slices.DeleteFunc(files, func(f string) bool { // the keyboard and mouse are not fed
			return strings.HasSuffix(f, "keyboard.c") || strings.HasSuffix(f, "mouse.c")
		})
		shim, _ := filepath.Abs(filepath.Join("testdata", "libvterm", "nvim0.12"))
		files = append(files, filepath.Join(shim, "shim.c"))
		flags = []string{"-DHARNESS_REFLOW", "-DHARNESS_NVIM", "-I" + shim, "-I" + filepath.Join(src, "src"), "-I" + vdir}
	} else {
		files, err = filepath.Glob(filepath.Join(src, "src", "*.c"))
		flags = []string{"-I" + filepath.Join(src, "include"), "-I" + filepath.Join(src, "src")}
	}
	if err != nil || len(files) < 3 {
		return "", fmt.Errorf("no C sources in %s (run scripts/vterm-src.sh): %v", src, err)
	}
	files = append(files, filepath.Join("testdata", "libvterm", "harness.c"))
	h := sha256.New()
	h.Write([]byte(strings.Join(ccFlags, " ")))
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			return "", err
		}
		h.Write(b)
	}
	cache, err := os.UserCacheDir()
	if err != nil {
		return "", err
	}
	dir := filepath.Join(cache, "agentrun", "vterm", "build")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	bin := filepath.Join(dir, "harness-"+version+"-"+hex.EncodeToString(h.Sum(nil))[:16])
	if _, err := os.Stat(bin); err == nil {
		return bin, nil
	}
	tmp := bin + ".tmp" + strconv.Itoa(os.Getpid())
	if version == "0.12" {
		gen := tmp + ".gen"
		defer os.RemoveAll(gen)
		if err := declare(files[:len(files)-2], filepath.Join(gen, "vterm")); err != nil {
			return "", err
		}
		flags = append(flags, "-I"+gen, "-lutf8proc")
	}
	args := append(slices.Clone(ccFlags), "-o", tmp)
	out, err := exec.Command("cc", append(append(args, files...), flags...)...).CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("cc: %v\n%s", err, out)
	}
	return bin, os.Rename(tmp, bin)
}

// funcDef finds a C function definition in Neovim's style: the return
// type and name at the start of a line, the parameters, maybe attributes,
// then "{" on a line of its own.
var funcDef = regexp.MustCompile(`(?m)^(static\s+)?((?:const\s+)?[A-Za-z_]\w*(?:\s*\*)*\s+\**)(\w+)\(([^;{}()]*(?:\([^()]*\)[^;{}()]*)*)\)\s*(?:FUNC_ATTR_\w+(?:\([^)]*\))?\s*)*\n\{`)

// declare writes the declarations Neovim's build generates for each C
// file (vterm/NAME.c.generated.h: its static functions, NAME.h.generated.h:
// the others) into dir.
func declare(files []string, dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	for _, f := range files {
		src, err := os.ReadFile(f)
		if err != nil {
			return err
		}
		var statics, exported strings.Builder
		for _, m := range funcDef.FindAllSubmatch(src, -1) {
			decl := fmt.Sprintf("%s%s(%s);\n", m[2], m[3], m[4])
			if len(m[1]) > 0 {
				statics.WriteString("static " + decl)
			} else {
				exported.WriteString(decl)
			}
		}
		name := strings.TrimSuffix(filepath.Base(f), ".c")
		if err := os.WriteFile(filepath.Join(dir, name+".c.generated.h"), []byte(statics.String()), 0o644); err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(dir, name+".h.generated.h"), []byte(exported.String()), 0o644); err != nil {
			return err
		}
	}
	return nil
}

func startHarness(t testing.TB, version string) *harness {
	t.Helper()
	h := &harness{version: version, bin: harnessBin(t, version)}
	h.start(t)
	t.Cleanup(h.stop)
	return h
}

func (h *harness) start(t testing.TB) {
	t.Helper()
	h.cmd = exec.Command(h.bin)
	// Leaks are not what we look for; a crash ends the process at once.
	h.cmd.Env = append(os.Environ(), "ASAN_OPTIONS=detect_leaks=0:abort_on_error=0", "UBSAN_OPTIONS=print_stacktrace=1")
	h.stderr = &bytes.Buffer{}
	h.cmd.Stderr = h.stderr
	var err error
	if h.in, err = h.cmd.StdinPipe(); err != nil {
		t.Fatal(err)
	}
	out, err := h.cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	h.out = bufio.NewReader(out)
	if err := h.cmd.Start(); err != nil {
		t.Fatalf("starting the libvterm %s harness: %v", h.version, err)
	}
}

func (h *harness) stop() {
	if h.cmd != nil {
		h.in.Close()
		h.cmd.Wait()
		h.cmd = nil
	}
}

// run feeds one encoded case and returns "" when libvterm survived it, or
// what happened (the sanitizer's report, or "hang").
func (h *harness) run(t testing.TB, enc []byte) string {
	t.Helper()
	if h.cmd == nil {
		h.start(t)
	}
	h.in.Write(enc)
	line, err := h.out.ReadString('\n')
	if err == nil && line == "ok\n" {
		return ""
	}
	h.in.Close()
	h.cmd.Wait()
	h.cmd = nil
	report := strings.TrimSpace(h.stderr.String())
	if report == "" {
		report = fmt.Sprintf("the harness answered %q (%v)", line, err)
	}
	return report
}

// summary is the first lines of a report that say where it broke.
func summary(report string) string {
	var keep []string
	for _, l := range strings.Split(report, "\n") {
		if strings.Contains(l, "runtime error") || strings.Contains(l, "ERROR:") || strings.HasPrefix(strings.TrimSpace(l), "#") || l == "hang" {
			keep = append(keep, strings.TrimSpace(l))
		}
		if len(keep) >= 6 {
			break
		}
	}
	return strings.Join(keep, "\n")
}

// keepCrasher writes the case that broke a version (unfiltered: the
// command's output) to testdata/libvterm/crashers, for TestLibvtermReplay.
func keepCrasher(t testing.TB, version string, c vtCase) string {
	t.Helper()
	enc := c.encode(false)
	sum := sha256.Sum256(enc)
	path := filepath.Join("testdata", "libvterm", "crashers", version+"-"+hex.EncodeToString(sum[:8]))
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, enc, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// checkCase runs c, filtered, on every version's harness and fails the
// test, keeping the case, when one crashes or hangs.
func checkCase(t testing.TB, hs []*harness, c vtCase) bool {
	t.Helper()
	enc := c.encode(true)
	for _, h := range hs {
		if report := h.run(t, enc); report != "" {
			if why := knownOpen(h.version, report); why != "" {
				knownOpenSeen++
				t.Logf("libvterm %s: known open crash (%s) on %dx%d, %d ops", h.version, why, c.rows, c.cols, len(c.ops))
				continue
			}
			c = minimize(t, h, c)
			path := keepCrasher(t, h.version, c)
			t.Errorf("libvterm %s broke on the filtered output of %s (%dx%d, %d ops, minimized: %s):\n%s", h.version, path, c.rows, c.cols, len(c.ops), c, summary(report))
			return false
		}
	}
	return true
}

// knownOpenSeen counts the cases that met the known open crash.
var knownOpenSeen int

// knownOpen names a crash that no filter of the output can prevent, found
// and not yet closed: Neovim 0.7 gives a scrollback line back to libvterm
// 0.1 cut to the terminal's new width (term_sb_pop; the harness does the
// same), and when a wide glyph then stands in the last column,
// vterm_screen_set_cell writes its second half past the row. It needs the
// terminal to lose columns and then gain rows while the scrollback holds
// wide glyphs; it is the open item (see its note).
func knownOpen(version, report string) string {
	if version == "0.1" && strings.Contains(report, "in vterm_screen_set_cell") && strings.Contains(report, "in resize ") {
		return "Neovim 0.7's scrollback pop: a wide glyph cut at the last column"
	}
	return ""
}

// minimize makes a case that breaks h as small as it can in a few
// seconds: fewer operations, shorter writes (of the unfiltered output:
// what the filter lets through of it must still break h).
func minimize(t testing.TB, h *harness, c vtCase) vtCase {
	t.Helper()
	until := time.Now().Add(20 * time.Second)
	breaks := func(c vtCase) bool { return time.Now().Before(until) && h.run(t, c.encode(true)) != "" }
	var merged []vtOp // adjacent writes as one
	for _, op := range c.ops {
		if n := len(merged); op.data != nil && n > 0 && merged[n-1].data != nil {
			merged[n-1].data = append(append([]byte{}, merged[n-1].data...), op.data...)
			continue
		}
		merged = append(merged, op)
	}
	if m := (vtCase{c.rows, c.cols, merged}); breaks(m) {
		c = m
	}
	for changed := true; changed; {
		changed = false
		for i := 0; i < len(c.ops); i++ {
			m := vtCase{c.rows, c.cols, append(append([]vtOp{}, c.ops[:i]...), c.ops[i+1:]...)}
			if breaks(m) {
				c, changed, i = m, true, i-1
			}
		}
		for i, op := range c.ops {
			for step := len(op.data) / 2; step >= 1; step /= 2 {
				for j := 0; j+step <= len(c.ops[i].data); {
					d := c.ops[i].data
					m := vtCase{c.rows, c.cols, append([]vtOp{}, c.ops...)}
					m.ops[i] = vtOp{data: append(append([]byte{}, d[:j]...), d[j+step:]...)}
					if len(m.ops[i].data) > 0 && breaks(m) {
						c, changed = m, true
					} else {
						j += step
					}
				}
			}
		}
	}
	return c
}

// String shows a case as Go would write it.
func (c vtCase) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%dx%d", c.rows, c.cols)
	for _, op := range c.ops {
		if op.data == nil {
			fmt.Fprintf(&b, " resize %dx%d", op.rows, op.cols)
		} else {
			fmt.Fprintf(&b, " %q", op.data)
		}
	}
	return b.String()
}

func startAll(t testing.TB) []*harness {
	t.Helper()
	var hs []*harness
	for _, v := range vtVersions {
		hs = append(hs, startHarness(t, v))
	}
	return hs
}

// knownCrashes are outputs that broke a libvterm through the filter of an
// earlier round or unfiltered (issue: display safety, round 2), with the
// width that shows it; the harness must see each break some version
// unfiltered, and the filter must keep every version alive.
var knownCrashes = []struct {
	name string
	hex  string
	cols int
}{
	{"ESC SP [ then REP after a wide glyph", "78e697a51b205b393962", 80},
	{"ESC SP [ then REP at the last column", "e697a51b5b393939471b205b62", 81},
	{"U+06DE joins a wide glyph, REP", "78e697a5db9e1b5b393962", 80},
	{"U+06DE at the last column, REP", "e697a5db9e1b5b393939471b5b62", 81},
	{"ESC SP [ REP first (hang)", "1b205b62", 80},
	{"U+06DE alone, REP (hang)", "db9e1b5b62", 80},
	{"REP after a wide glyph", "78e697a51b5b393962", 80},
	{"REP first (hang)", "1b5b62", 80},
	{"C1 in insert mode", "1b5b3468c28578", 80},
}

// TestLibvtermSeesTheKnownCrashes checks the harness: unfiltered, each
// known output crashes or hangs at least one version (so a filter that
// let it through would be caught); filtered, none does.
func TestLibvtermSeesTheKnownCrashes(t *testing.T) {
	hs := startAll(t)
	for _, k := range knownCrashes {
		data, _ := hex.DecodeString(k.hex)
		c := vtCase{rows: 24, cols: k.cols, ops: []vtOp{{data: data}}}
		broke := 0
		for _, h := range hs {
			if report := h.run(t, c.encode(false)); report != "" {
				broke++
			}
		}
		if broke == 0 {
			t.Errorf("%s (%s): no libvterm broke on it unfiltered; the harness does not see what Neovim dies of", k.name, k.hex)
		}
		checkCase(t, hs, c)
	}
}

// foundCrashes are the cases the fuzzer found through the filter of this
// round before each was closed (minimized; w writes, r resizes): they run
// filtered on every version in every make test.
var foundCrashes = []vtCase{
	{43, 53, []vtOp{w("p\x1b[L"), r(1, 5), w("1")}},                                       // the cursor above the screen (0.1)
	{2, 80, []vtOp{w("\x1b#8"), r(1, 81), w("1")}},                                        // the same after DECALN
	{1, 2, []vtOp{w("\x90〪")}},                                                            // a combining mark 2 columns wide
	{31, 5, []vtOp{w("\x1b[20r"), r(1, 78), w("\v")}},                                     // a region below the last row
	{11, 81, []vtOp{w("\x1b[5r\x1b[81G\x1b_"), r(1, 22), w("\x1b")}},                      // ... inside an APC string (0.3)
	{28, 70, []vtOp{w("`"), w("\x1bM\x1b["), r(1, 80), w("b")}},                           // a CSI across the resize
	{37, 2, []vtOp{w("\x1b[8r\x1b[?6h\x1bP"), r(5, 66), w("\x1b\v")}},                     // a control ending a DCS
	{40, 65, []vtOp{w("\x1bD\x8f\x1b[r\x1bM\x1b^"), r(2, 24), w("`")}},                    // PM text that 0.1 prints
	{39, 81, []vtOp{w("\x1b[22;34r\x1b\xe7"), r(1, 80), w("\f")}},                         // a character cut after ESC
	{1, 80, []vtOp{r(1, 4), w("\u200d")}},                                                 // a joiner alone (0.12: 6 columns)
	{29, 3, []vtOp{w("\u00ad\u200c")}},                                                    // a joiner after a format character
	{2, 2, []vtOp{w("\x1b[4r"), r(15, 147), w("n\f\x1b]"), r(2, 5), w("\x1b\x1b[<1:0r")}}, // ESC ESC in a string
	{1, 84, []vtOp{w("\x1b[83G"), r(2, 62), w("]X\x1b[s\x1b"), w("X"), w("\xf2"), r(1, 3), w("\xac")}},
	{23, 38, []vtOp{w("\x83\x1b[L\x1b\x1b["), r(1, 80), w("b")}},
	{23, 38, []vtOp{w("\x83\x1b[L\x1bX\x1b["), r(1, 80), w("b")}},
	{31, 81, []vtOp{w("\v\x1b7"), r(1, 2), w("\x1b8\xd2")}}, // DECRC below the screen
	{16, 2, []vtOp{w("6]%\f\x95\x1b[r\x1b]\x1b\x1b["), r(2, 128), w("+5n")}},
	{32, 66, []vtOp{w("\x1b[6r\x1b[65G\xa6\x1b[-4pq"), r(2, 8), w("`LStW?Xe")}}, // CSI - p is no DECSTR
	{32, 66, []vtOp{w("\x1b[6r\x1b[!p"), r(2, 8), w("\n\n\n")}},                 // DECSTR, unknown to 0.1
	{37, 51, []vtOp{w("\x1b\xc2"), w("\x04["), w("\x1b\x1b_a%\x07\xc2\x04[b")}}, // an ESC left open before a dropped APC (a hang; the Neovim fuzzer)
}

func w(s string) vtOp       { return vtOp{data: []byte(s)} }
func r(rows, cols int) vtOp { return vtOp{rows: rows, cols: cols} }

// TestLibvtermFoundCrashes runs foundCrashes, filtered, on every version.
func TestLibvtermFoundCrashes(t *testing.T) {
	hs := startAll(t)
	for _, c := range foundCrashes {
		checkCase(t, hs, c)
	}
}

// TestLibvtermReplay runs every kept crasher, filtered, on every version.
func TestLibvtermReplay(t *testing.T) {
	files, _ := filepath.Glob(filepath.Join("testdata", "libvterm", "crashers", "*"))
	if len(files) == 0 {
		t.Skip("no crashers kept")
	}
	hs := startAll(t)
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		c, err := decodeCase(b)
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		checkCase(t, hs, c)
	}
}

// TestLibvtermFuzz runs generated cases (AGENTRUN_VTERM_FUZZ_CASES, 300
// per version by default; make fuzz runs AGENTRUN_VTERM_FUZZ_TIME)
// through the filter into every version, and reports how many ran.
func TestLibvtermFuzz(t *testing.T) {
	hs := startAll(t)
	n, _ := strconv.Atoi(os.Getenv("AGENTRUN_VTERM_FUZZ_CASES"))
	if n <= 0 {
		n = 300
	}
	var until time.Time
	if d, err := time.ParseDuration(os.Getenv("AGENTRUN_VTERM_FUZZ_TIME")); err == nil {
		until = time.Now().Add(d)
	}
	seed := uint64(1)
	if s, err := strconv.ParseUint(os.Getenv("AGENTRUN_VTERM_FUZZ_SEED"), 10, 64); err == nil {
		seed = s
	} else if !until.IsZero() {
		seed = uint64(time.Now().UnixNano())
	}
	rng := rand.New(rand.NewPCG(seed, 0x5eed))
	ran, failed := 0, 0
	for i := 0; until.IsZero() && i < n || !until.IsZero() && time.Now().Before(until); i++ {
		if !checkCase(t, hs, genCase(rng)) {
			failed++
			if failed >= 5 {
				break
			}
		}
		ran++
	}
	t.Logf("libvterm %s: %d generated cases each (seed %d), %d broke a version, %d met the known open crash", strings.Join(vtVersions, ", "), ran, seed, failed, knownOpenSeen)
}

// FuzzLibvterm lets Go's mutator drive the generator: the input chooses
// the sizes, the resizes and where writes split, and is itself the
// output (the known crashes are seeds). A case it finds is kept by go
// test in testdata/fuzz/FuzzLibvterm and replayed by every go test.
func FuzzLibvterm(f *testing.F) {
	for _, k := range knownCrashes {
		data, _ := hex.DecodeString(k.hex)
		f.Add(uint16(k.cols), uint8(24), uint64(0), data)
	}
	f.Add(uint16(2), uint8(1), uint64(7), []byte("日本\x1b[b\u0301\x1b[2J"))
	hs := startAll(f)
	f.Fuzz(func(t *testing.T, cols uint16, rows uint8, shape uint64, data []byte) {
		checkCase(t, hs, shapeCase(int(cols), int(rows), shape, data))
	})
}

// shapeCase cuts data into writes and resizes as shape says.
func shapeCase(cols, rows int, shape uint64, data []byte) vtCase {
	c := vtCase{rows: 1 + rows%60, cols: 2 + cols%200}
	rng := rand.New(rand.NewPCG(shape, uint64(len(data))))
	for len(data) > 0 {
		n := 1 + rng.IntN(len(data))
		if shape&1 == 0 {
			n = len(data)
		}
		c.ops = append(c.ops, vtOp{data: data[:n]})
		data = data[n:]
		if shape&2 != 0 && rng.IntN(3) == 0 {
			c.ops = append(c.ops, vtOp{rows: 1 + rng.IntN(40), cols: 2 + rng.IntN(120)})
		}
	}
	return c
}
