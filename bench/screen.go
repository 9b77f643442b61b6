//go:build linux

package main

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/neovim/go-client/nvim"
)

// screenNvim is a Neovim with a screen: it runs in a tmux pane, the bench
// drives it over its --listen socket, and everything it draws is piped
// (tmux pipe-pane) through this program run as "screenwatch", which
// notes when a first-output line reaches the screen.
type screenNvim struct {
	*nvim.Nvim
	tmux   []string // tmux -S <dir>/tmux.sock
	dir    string
	screen string // screenwatch's output: one latency (ms) a line
}

// startScreenNvim starts Neovim (with the plugin when pluginRoot is set)
// in a 120×40 tmux pane.
func startScreenNvim(name, pluginRoot string) (*screenNvim, error) {
	benchDir, err := filepath.Abs("bench")
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "arscr")
	if err != nil {
		return nil, err
	}
	bin := os.Getenv("AGENTRUN_NVIM")
	if bin == "" {
		bin = "nvim"
	}
	sock := filepath.Join(dir, "nvim.sock")
	args := []string{bin, "--clean", "-n", "-i", "NONE", "--listen", sock,
		"--cmd", "set rtp^=" + benchDir,
		"--cmd", "lua package.path = '" + benchDir + "/?.lua;' .. package.path"}
	if pluginRoot != "" {
		args = append(args, "--cmd", "set rtp^="+pluginRoot, "--cmd", "runtime plugin/agentrun.lua")
	}
	s := &screenNvim{tmux: []string{"tmux", "-S", filepath.Join(dir, "tmux.sock")}, dir: dir, screen: filepath.Join(dir, "screen.txt")}
	quoted := make([]string, len(args))
	for i, a := range args {
		quoted[i] = "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
	}
	if err := s.run("new-session", "-d", "-s", name, "-x", "120", "-y", "40", "TERM=xterm-256color exec "+strings.Join(quoted, " ")); err != nil {
		s.Close()
		return nil, err
	}
	self, err := os.Executable()
	if err != nil {
		s.Close()
		return nil, err
	}
	if err := s.run("pipe-pane", "-O", "-t", name, "exec '"+self+"' screenwatch > '"+s.screen+"'"); err != nil {
		s.Close()
		return nil, err
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		if s.Nvim, err = nvim.Dial(sock, nvim.DialLogf(func(string, ...any) {})); err == nil {
			return s, nil
		}
		if time.Now().After(deadline) {
			s.Close()
			return nil, fmt.Errorf("neovim in tmux: %w", err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func (s *screenNvim) run(args ...string) error {
	out, err := exec.Command(s.tmux[0], append(s.tmux[1:], args...)...).CombinedOutput()
	if err != nil {
		return fmt.Errorf("tmux %s: %w: %s", strings.Join(args, " "), err, out)
	}
	return nil
}

// Close ends Neovim, its tmux server and the screenwatch.
func (s *screenNvim) Close() {
	if s.Nvim != nil {
		s.Nvim.Close()
	}
	_ = s.run("kill-server")
	os.RemoveAll(s.dir)
}

// screenLatencies reads what screenwatch noted so far (ms).
func (s *screenNvim) screenLatencies() ([]float64, error) {
	b, err := os.ReadFile(s.screen)
	if err != nil {
		return nil, err
	}
	var out []float64
	for _, l := range strings.Fields(string(b)) {
		if f, err := strconv.ParseFloat(l, 64); err == nil {
			out = append(out, f)
		}
	}
	return out, nil
}

// foRe is a first-output line as the command printed it (date +FO%s.%N).
var foRe = regexp.MustCompile(`FO(\d{10}\.\d{9})`)

// runScreenwatch reads what Neovim draws in its pane (tmux pipe-pane) and
// prints, for each first-output line the first time it is drawn, how
// long ago (ms) the command printed it.
func runScreenwatch(r io.Reader, w io.Writer) error {
	seen := map[string]bool{}
	out := bufio.NewWriter(w)
	buf := make([]byte, 64<<10)
	var carry []byte
	for {
		n, err := r.Read(buf)
		now := time.Now()
		if n > 0 {
			data := append(carry, buf[:n]...)
			for _, m := range foRe.FindAllSubmatch(data, -1) {
				ts := string(m[1])
				if seen[ts] {
					continue
				}
				seen[ts] = true
				f, _ := strconv.ParseFloat(ts, 64)
				fmt.Fprintf(out, "%.3f\n", float64(now.UnixNano())/1e6-f*1e3)
			}
			out.Flush()
			carry = append(carry[:0], data[max(0, len(data)-32):]...)
		}
		if err != nil {
			if err == io.EOF {
				return nil
			}
			return err
		}
	}
}
