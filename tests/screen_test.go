package tests

import (
	"fmt"
	"github.com/agentrun/agentrun.nvim/internal/shquote"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// screen is Neovim running in a real terminal (tmux), driven by keys as a
// user types them and read back from what the terminal shows
// (capture-pane): what a person sees, not what a buffer holds.
type screen struct {
	t    *testing.T
	sock string // the tmux server's socket, private to the test
	dir  string
	rt   string // its $XDG_RUNTIME_DIR: screens started in the same one see each other's terminals

	ctlOnce sync.Once
	ctl     *tmuxCtl // reads the screen (tmuxctl_test.go); nil: a tmux process each
}

// startScreen starts Neovim with the plugin in a cols×rows tmux window,
// running setup (Lua) first, in a scratch directory that is also its cwd.
func startScreen(t *testing.T, cols, rows int, setup string) *screen {
	t.Helper()
	return startScreenIn(t, runtimeDir(t), cols, rows, setup)
}

// prompt types text into the prompt (in insert mode) and sends it.
func (s *screen) prompt(text string) {
	s.t.Helper()
	s.typeText(text)
	s.keys("C-s")
}

// startDemoScreen is a 100×30 screen with the demo agent's session ready.
func startDemoScreen(t *testing.T) *screen {
	t.Helper()
	return startDemoScreenSized(t, 100, 30, "")
}

// startDemoScreenSized is startScreen (cols×rows, setup) with the demo
// agent's session ready: :AgentRun demo typed, its prompt in Insert mode.
func startDemoScreenSized(t *testing.T, cols, rows int, setup string) *screen {
	t.Helper()
	s := startScreen(t, cols, rows, setup)
	s.keys(":AgentRun demo", "Enter")
	s.waitShows(10*time.Second, "agentrun · demo · ready")
	return s
}

// startScreenIn is startScreen with $XDG_RUNTIME_DIR set to rt.
func startScreenIn(t *testing.T, rt string, cols, rows int, setup string) *screen {
	t.Helper()
	return startScreenWith(t, rt, cols, rows, setup, false, nil)
}

// startShellScreen is startScreen with Neovim started from an interactive
// shell in the window, as a person starts it: closing the window then
// hangs up the shell, and Neovim sees its terminal go (a read error)
// rather than a SIGHUP of its own.
func startShellScreen(t *testing.T, cols, rows int, setup string) *screen {
	t.Helper()
	return startScreenWith(t, runtimeDir(t), cols, rows, setup, true, nil)
}

// startScreenIgnoring is startScreen with Neovim started with the
// signals sigs ignored ("INT HUP"), as nohup or a script that runs it in
// the background starts it: what it starts inherits them ignored.
func startScreenIgnoring(t *testing.T, cols, rows int, setup, sigs string) *screen {
	t.Helper()
	return startScreenWith(t, runtimeDir(t), cols, rows, setup, false, []string{"sh", "-c", "trap '' " + sigs + `; exec "$@"`, "sh"})
}

// startScreenWith starts the screen: Neovim in the tmux window (or typed
// into an interactive shell there when shell is set), behind the argv
// prefix wrap when given.
func startScreenWith(t *testing.T, rt string, cols, rows int, setup string, shell bool, wrap []string) *screen {
	t.Helper()
	if _, err := exec.LookPath("tmux"); err != nil {
		t.Fatal("tmux not found (make deps installs it)")
	}
	dir := t.TempDir()
	s := &screen{t: t, sock: filepath.Join(dir, "tmux.sock"), dir: dir, rt: rt}
	init := filepath.Join(dir, "init.lua")
	// (Neovim's Python provider off: finding it runs the machine's python3,
	// which behind pyenv's shims can take a minute, freezing the screen
	// the first time a .py file is opened; nothing here tests it)
	code := fmt.Sprintf("vim.opt.rtp:prepend(%q)\nvim.g.agentrun_bin = %q\nvim.g.loaded_python3_provider = 0\nvim.o.shortmess = vim.o.shortmess .. 'I'\n%s\n", root, binary, setup)
	if err := os.WriteFile(init, []byte(code), 0o644); err != nil {
		t.Fatal(err)
	}
	env := []string{
		"XDG_CONFIG_HOME=" + filepath.Join(dir, "config"),
		"XDG_CACHE_HOME=" + filepath.Join(dir, "cache"),
		"XDG_DATA_HOME=" + filepath.Join(dir, "data"),
		"XDG_STATE_HOME=" + filepath.Join(dir, "state"),
		"HOME=" + dir,
		"XDG_RUNTIME_DIR=" + rt,
	}
	// tmux starts the command through its default shell with the server's
	// environment; env(1) sets ours.
	nvimCmd := append(append(append(append([]string{}, wrap...), "env"), env...), nvimBin, "--clean", "-n", "--listen", filepath.Join(dir, "nvim.sock"), "-u", init)
	cmd := append([]string{"-S", s.sock, "-f", "/dev/null", "new-session", "-d", "-x", fmt.Sprint(cols), "-y", fmt.Sprint(rows), "-c", dir}, nvimCmd...)
	if shell {
		cmd = append(cmd[:len(cmd)-len(nvimCmd)], "bash", "--noprofile", "--norc")
	}
	if out, err := exec.Command("tmux", cmd...).CombinedOutput(); err != nil {
		t.Fatalf("tmux new-session: %v\n%s", err, out)
	}
	if shell {
		s.typeText(shquote.Join(nvimCmd) + "\r")
	}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("the screen at the end:\n%s", s.capture())
			t.Logf("Neovim's own account:\n%s", s.inside())
			if log, err := os.ReadFile(filepath.Join(dir, "state", "nvim", "agentrun.log")); err == nil {
				t.Logf("agentrun.log:\n%s", log)
			}
		}
		// Neovim must be gone before t.TempDir's removal: an exiting one
		// still writes under the directory (its cache, its state).
		pid := 0
		if out, err := exec.Command("tmux", "-S", s.sock, "display-message", "-p", "-t", "0", "#{pane_pid}").Output(); err == nil {
			pid, _ = strconv.Atoi(strings.TrimSpace(string(out)))
		}
		_ = exec.Command("tmux", "-S", s.sock, "kill-server").Run()
		if pid > 0 {
			eventually(t, "the screen's Neovim to exit", 10*time.Second, func() (bool, string) { return !alive(pid), "alive" })
		}
	})
	// (or to ask something at startup: vim.pack's "Proceed?")
	s.waitFor("Neovim to draw its screen", 10*time.Second, func(sc string) bool { return strings.Contains(sc, "~") || strings.Contains(sc, "Proceed?") })
	return s
}

// inside asks the screen's Neovim, over its --listen socket, what mode it
// is in, what it said and its quickfix list's title: what a failed test
// cannot see on the screen. A Neovim that does not answer in 3 s is
// blocked, and says so.
func (s *screen) inside() string {
	expr := `string(mode(1)) .. " | qf: " .. getqflist({'title': 1}).title .. " | buf: " .. bufname() .. "\n" .. execute("messages")`
	cmd := exec.Command("timeout", "3", nvimBin, "--headless", "--clean", "--server", filepath.Join(s.dir, "nvim.sock"), "--remote-expr", expr)
	out, err := cmd.CombinedOutput()
	if err != nil {
		return fmt.Sprintf("(no answer: %v: %s; blocked?)", err, out)
	}
	return "mode: " + string(out)
}

func (s *screen) tmux(args ...string) string {
	s.t.Helper()
	out, err := exec.Command("tmux", append([]string{"-S", s.sock}, args...)...).CombinedOutput()
	if err != nil {
		s.t.Fatalf("tmux %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

// keys sends keys in tmux's notation ("Escape", "Enter", "C-c"), one
// argument each.
func (s *screen) keys(keys ...string) {
	s.t.Helper()
	s.tmux(append([]string{"send-keys", "-t", "0"}, keys...)...)
}

// typeText types text literally.
func (s *screen) typeText(text string) {
	s.t.Helper()
	s.tmux("send-keys", "-t", "0", "-l", text)
}

// capture returns what the terminal shows now, one line per row.
func (s *screen) capture() string {
	s.ctlOnce.Do(func() {
		if c, err := startTmuxCtl(s.sock); err == nil {
			s.ctl = c
			s.t.Cleanup(c.close)
		}
	})
	if s.ctl != nil {
		if out, err := s.ctl.capture(); err == nil {
			return strings.TrimRight(out, "\n")
		}
	}
	out, err := exec.Command("tmux", "-S", s.sock, "capture-pane", "-p", "-t", "0").CombinedOutput()
	if err != nil {
		return fmt.Sprintf("(capture-pane failed: %v: %s)", err, out)
	}
	return strings.TrimRight(string(out), "\n")
}

// waitFor polls the screen until ok accepts it, and returns it.
func (s *screen) waitFor(what string, timeout time.Duration, ok func(screen string) bool) string {
	s.t.Helper()
	return eventually(s.t, what, timeout, func() (bool, string) {
		sc := s.capture()
		return ok(sc), "the screen:\n" + sc
	})
}

// waitShows waits until the screen shows every one of want.
func (s *screen) waitShows(timeout time.Duration, want ...string) string {
	s.t.Helper()
	return s.waitFor(fmt.Sprintf("the screen to show %q", want), timeout, func(sc string) bool {
		for _, w := range want {
			if !shows(sc, w) {
				return false
			}
		}
		return true
	})
}

// splitMark starts what splitOf returns: shows reads the rest as a
// terminal's name.
const splitMark = "\x00split:"

// splitOf stands, in waitShows and shows, for terminal name's split: its
// status line, which starts with the name (term-2, a rerun's first run's
// id) and " · ", at a row's start, after a vertical separator or after
// the status line of a window on its left (its ruler's All, Top, Bot or
// N%; the chat's line of it reads "▸ terminal term-2 · …"), then
// what follows there, when given ("run 2 · exit 1").
func splitOf(name string, then ...string) string {
	return splitMark + name + " · " + strings.Join(then, "")
}

// shows reports whether screen text sc shows w: w itself, or for
// splitOf(name) that terminal's split.
func shows(sc, w string) bool {
	if name, ok := strings.CutPrefix(w, splitMark); ok {
		return regexp.MustCompile(`(?m)(^|│|(All|Top|Bot|\d%) +)` + regexp.QuoteMeta(name)).MatchString(sc)
	}
	return strings.Contains(sc, w)
}

// exited reports whether Neovim has exited (its pane is dead; the test
// set remain-on-exit to read what it left). A failed query counts as not
// exited: the caller keeps waiting.
func (s *screen) exited() bool {
	out, err := exec.Command("tmux", "-S", s.sock, "display-message", "-p", "-t", "0", "#{pane_dead}").CombinedOutput()
	return err == nil && strings.TrimSpace(string(out)) == "1"
}
