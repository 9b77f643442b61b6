package tests

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agentrun/agentrun.nvim/internal/render"
)

// TestHostileOutputKeepsNeovimAlive runs commands whose output killed
// Neovim 0.7.2 and 0.10 (libvterm's insert mode plus a C1 control written
// as UTF-8): the editor stays alive, the split goes on showing what
// follows, and the agent reads the same text as without the display filter
// (what termhost renders from the bytes the command printed).
func TestHostileOutputKeepsNeovimAlive(t *testing.T) {
	var everyC1 strings.Builder // printf's form
	var c1 []byte               // the bytes it prints
	for c := 0x80; c <= 0x9f; c++ {
		fmt.Fprintf(&everyC1, `\033[4h\302\%03ox`, c)
		c1 = append(c1, "\x1b[4h\xc2"...)
		c1 = append(c1, byte(c), 'x')
	}
	cases := []struct {
		name    string
		command string
		printed string // what the command writes, before the pty's \n -> \r\n
		after   string // a line the split must show after the hostile bytes
	}{
		{"insert mode then U+0085", `printf '\033[4h\302\205x'; echo; echo after-the-crash`,
			"\x1b[4h\xc2\x85x\nafter-the-crash\n", "after-the-crash"},
		{"every C1 character", `printf '` + everyC1.String() + `'; echo; echo after-every-c1`,
			string(c1) + "\nafter-every-c1\n", "after-every-c1"},
		{"split across two reads", `printf '\033[4h\302'; sleep 0.3; printf '\205x'; echo; echo after-the-split`,
			"\x1b[4h\xc2\x85x\nafter-the-split\n", "after-the-split"},
		{"lead byte cut by an escape", `printf '\033[4h\302\033[m\205x'; echo; echo after-the-escape`,
			"\x1b[4h\xc2\x1b[m\x85x\nafter-the-escape\n", "after-the-escape"},
		// REP (repeat the previous character) with none printed yet hangs
		// every version; after a combining mark, 0.7 and 0.10; after a
		// wide character it crashes every version.
		{"REP as the first output", `printf '\033[3b'; echo after-rep`,
			"\x1b[3bafter-rep\n", "after-rep"},
		{"REP after a combining mark", `printf 'x\r\n\314\201\033[b'; echo; echo after-mark-rep`,
			"x\r\n\xcc\x81\x1b[b\nafter-mark-rep\n", "after-mark-rep"},
		{"REP after a wide character", `printf 'x\346\227\245\033[99b'; echo; echo after-wide-rep`,
			"x\xe6\x97\xa5\x1b[99b\nafter-wide-rep\n", "after-wide-rep"},
		{"REP split across two reads", `printf '\033['; sleep 0.3; printf 'b'; echo after-split-rep`,
			"\x1b[bafter-split-rep\n", "after-split-rep"},
		// Round 2 (libvterm 0.1 reads ESC, intermediates, [ as a CSI;
		// U+06DE is combining to libvterm 0.1 and 0.3): SIGSEGV on 0.7.2
		// and 0.10, hangs as first output.
		{"ESC SP [ REP after a wide character", `printf 'x\346\227\245\033 [99b'; echo; echo after-esc-sp`,
			"x\xe6\x97\xa5\x1b [99b\nafter-esc-sp\n", "after-esc-sp"},
		{"ESC SP [ REP at the last column", `printf '\346\227\245\033[999G\033 [b'; echo; echo after-esc-sp-999`,
			"\xe6\x97\xa5\x1b[999G\x1b [b\nafter-esc-sp-999\n", "after-esc-sp-999"},
		{"U+06DE joins a wide character, REP", `printf 'x\346\227\245\333\236\033[99b'; echo; echo after-06de`,
			"x\xe6\x97\xa5\xdb\x9e\x1b[99b\nafter-06de\n", "after-06de"},
		{"U+06DE at the last column, REP", `printf '\346\227\245\333\236\033[999G\033[b'; echo; echo after-06de-999`,
			"\xe6\x97\xa5\xdb\x9e\x1b[999G\x1b[b\nafter-06de-999\n", "after-06de-999"},
		{"ESC SP [ REP as the first output", `printf '\033 [b'; echo; echo after-esc-sp-first`,
			"\x1b [b\nafter-esc-sp-first\n", "after-esc-sp-first"},
		{"U+06DE REP as the first output", `printf '\333\236\033[b'; echo; echo after-06de-first`,
			"\xdb\x9e\x1b[b\nafter-06de-first\n", "after-06de-first"},
		{"a combining kana mark 2 columns wide", `printf 'x\343\202\231\033[999G\343\201\213\343\202\231'; echo; echo after-kana`,
			"x\xe3\x82\x99\x1b[999G\xe3\x81\x8b\xe3\x82\x99\nafter-kana\n", "after-kana"},
	}
	e := startEditor(t, "")
	e.startSession()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			e.t = t
			e.cmd("AgentPrompt " + tc.command)
			term := e.waitTerminal(tc.command, 10*time.Second)
			e.waitBuf(term.Bufnr, 10*time.Second, tc.after, exitMarker(0))
			var alive int
			e.lua(`return 1 + 1`, &alive)
			if alive != 2 {
				t.Fatalf("Neovim answered %d to 1 + 1", alive)
			}
			// What the agent read back arrives with the tool call's last
			// update (Lua may see the turn end first).
			var raw struct {
				Output *string `msgpack:"output"`
			}
			e.waitFor("the tool call's rawOutput", 10*time.Second, func() (bool, string) {
				e.lua(`for _, s in pairs(require("agentrun.state").sessions) do
					for _, tc in pairs(s.tool_calls) do
						if tc.title == ... and type(tc.rawOutput) == "table" then return tc.rawOutput end
					end
				end
				return vim.empty_dict()`, &raw, tc.command)
				return raw.Output != nil, e.chat()
			})
			store := render.NewStore(1 << 20)
			store.Append([]byte(strings.ReplaceAll(tc.printed, "\n", "\r\n")))
			store.Flush()
			want, _ := store.Snapshot()
			if !strings.Contains(want, tc.after) || *raw.Output != want {
				t.Errorf("the agent read %q, want %q (termhost's rendering of what the command printed)", *raw.Output, want)
			}
		})
	}
}

// TestHostileAgentShownOutputKeepsNeovimAlive: the same bytes shown by an
// agent that runs commands itself (_meta.terminal_output, fed to a terminal
// buffer from Lua) cannot kill or hang Neovim either.
func TestHostileAgentShownOutputKeepsNeovimAlive(t *testing.T) {
	e := startEditor(t, "")
	e.startSession()
	e.cmd(`AgentPrompt !meta printf '\033[b\033[4h\302\205x'; sleep 0.3; printf '\033['; sleep 0.3; printf 'b'; echo; echo shown-after`)
	buf := e.waitAgentShownTerminal()
	e.waitBuf(buf, 10*time.Second, "shown-after", exitMarker(0))
}

// TestNarrowSplitKeepsTwoColumns: a terminal one column wide crashes
// Neovim on any wide character, so a split squeezed to one column is
// widened back to two, and a wide character printed then is harmless.
func TestNarrowSplitKeepsTwoColumns(t *testing.T) {
	e := startEditor(t, "")
	e.startSession()
	e.cmd(`AgentPrompt sleep 2; printf '\346\227\245\346\227\245\n'; echo after-narrow`)
	term := e.waitTerminal(`sleep 2; printf '\346\227\245\346\227\245\n'; echo after-narrow`, 10*time.Second)
	var win int
	e.lua(`vim.api.nvim_set_current_win(vim.fn.bufwinid(...))
		vim.cmd("vsplit")
		vim.cmd("vertical resize 1")
		return vim.api.nvim_get_current_win()`, &win, term.Bufnr)
	e.waitFor("the squeezed split to be widened", 5*time.Second, func() (bool, string) {
		var width int
		e.lua(`return vim.api.nvim_win_get_width(...)`, &width, win)
		return width >= 2, fmt.Sprintf("width %d", width)
	})
	e.waitBuf(term.Bufnr, 10*time.Second, "after-narrow", exitMarker(0))
}

// TestEndMarkersReadRight: whatever modes a command leaves on (the DEC
// line-drawing set, insert mode, origin mode with a scroll region, SGR),
// the split's end marker reads exitMarker(0).
func TestEndMarkersReadRight(t *testing.T) {
	e := startEditor(t, "")
	e.startSession()
	for _, left := range []string{`\033(0`, `\016\033)0`, `\033[4h`, `\033[?6h\033[3;5r`, `\033[2;4r`, `\033[1;7;31m`, `\033]0;title`, `\033[12;`} {
		t.Run(left, func(t *testing.T) {
			e.t = t
			command := `printf 'abc` + left + `'`
			e.cmd("AgentPrompt " + command)
			term := e.waitTerminal(command, 10*time.Second)
			text := e.waitBuf(term.Bufnr, 10*time.Second, "[released]")
			if !strings.Contains(text, "\n"+exitMarker(0)+"\n") && !strings.HasPrefix(text, exitMarker(0)) {
				t.Errorf("after %s the split reads %q, without a line [exit 0]", left, text)
			}
		})
	}
}

// TestAgentShownEndMarkerReadsRight: the end marker Lua writes into the
// split of a command the agent ran itself reads exitMarker(0) after the
// command left the DEC line-drawing set and SGR on.
func TestAgentShownEndMarkerReadsRight(t *testing.T) {
	e := startEditor(t, "")
	e.startSession()
	e.cmd(`AgentPrompt !meta printf 'abc\033(0\033[7m'`)
	buf := e.waitAgentShownTerminal()
	text := e.waitBuf(buf, 10*time.Second, exitMarker(0))
	if !strings.Contains(text, "\n"+exitMarker(0)) {
		t.Errorf("the split reads %q, without a line [exit 0]", text)
	}
}

// TestResizeAfterHostileOutputKeepsNeovimAlive: on the screen (a real UI,
// so Neovim resizes the terminal as it draws), the split shrinks to two
// rows (the lowest the plugin lets it go; the libvterm fuzzer covers one) while a command's output leaves the cursor above text (libvterm 0.1
// then puts it above the screen) or a scroll region whose top is below the
// new last row (every libvterm then scrolls a negative height), and the
// command goes on printing: Neovim lives and shows it.
func TestResizeAfterHostileOutputKeepsNeovimAlive(t *testing.T) {
	for _, tc := range []struct{ name, before, after string }{
		{"cursor above text", `p\033[L`, `1\t2`},
		{"scroll region top below the last row", `\033[20r`, `\n\n\n`},
		{"region and origin mode", `\033[15;24r\033[?6h`, `x\n\n`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := startDemoScreen(t)
			s.tmux("set-option", "-t", "0", "remain-on-exit", "on")
			setHeight := func(h int) {
				s.keys("Escape")
				s.typeText(fmt.Sprintf(`:lua for _, w in ipairs(vim.api.nvim_list_wins()) do if vim.bo[vim.api.nvim_win_get_buf(w)].buftype == "terminal" then vim.api.nvim_win_set_height(w, %d) end end`, h))
				s.keys("Enter")
			}
			// The command waits for the test between its two parts.
			s.prompt(`while [ ! -e go1 ]; do sleep 0.05; done; echo before-ok; printf '` + tc.before + `'; while [ ! -e go2 ]; do sleep 0.05; done; printf '` + tc.after + `'; echo; echo after-shrink`)
			s.waitShows(10*time.Second, splitOf("term-1"))
			setHeight(26)
			time.Sleep(200 * time.Millisecond) // drawn at 26 rows before the output
			touch(t, filepath.Join(s.dir, "go1"))
			s.waitShows(10*time.Second, "before-ok")
			setHeight(2) // the lowest a split goes (at one row Neovim's terminal loses lines)
			s.waitFor("the split to be two rows", 5*time.Second, func(sc string) bool {
				rows := strings.Split(sc, "\n")
				for i := 3; i < len(rows); i++ {
					if strings.HasPrefix(rows[i], "term-1 · ") {
						return strings.HasPrefix(rows[i-3], "[No Name]")
					}
				}
				return false
			})
			touch(t, filepath.Join(s.dir, "go2"))
			time.Sleep(500 * time.Millisecond) // printed while two rows high
			if s.exited() {
				t.Fatalf("Neovim died")
			}
			setHeight(10)
			s.waitShows(10*time.Second, "after-shrink", "[released]")
			s.keys("Escape")
			s.typeText(`:echo "alive-" . (40 + 2)`)
			s.keys("Enter")
			s.waitShows(5*time.Second, "alive-42")
		})
	}
}

func touch(t *testing.T, path string) {
	t.Helper()
	if err := os.WriteFile(path, nil, 0o644); err != nil {
		t.Fatal(err)
	}
}
