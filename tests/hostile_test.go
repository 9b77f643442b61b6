package tests

import (
	"fmt"
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
	}
	e := startEditor(t, "")
	e.startSession()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			e.t = t
			e.cmd("AgentPrompt " + tc.command)
			term := e.waitTerminal(tc.command, 10*time.Second)
			e.waitBuf(term.Bufnr, 10*time.Second, tc.after, "[exit 0]")
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
	e.waitBuf(buf, 10*time.Second, "shown-after", "[exit 0]")
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
	e.waitBuf(term.Bufnr, 10*time.Second, "after-narrow", "[exit 0]")
}
