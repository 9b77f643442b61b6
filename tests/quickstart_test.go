package tests

import (
	"crypto/sha256"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"testing"
	"time"
)

// TestReadmeQuickstartIsShort: the README starts with a quickstart of at
// most 60 lines (install, the first session, the three keys).
func TestReadmeQuickstartIsShort(t *testing.T) {
	readme, err := os.ReadFile(filepath.Join(root, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, after, ok := strings.Cut(string(readme), "\n## Quickstart\n")
	if !ok {
		t.Fatal("README has no ## Quickstart")
	}
	quick, _, _ := strings.Cut(after, "\n## ")
	if n := strings.Count(quick, "\n"); n > 60 {
		t.Errorf("the quickstart is %d lines, want at most 60", n)
	}
	for _, want := range []string{"vim.pack.add", "lazy.nvim", ":AgentRun", "`<C-s>`", "`<C-c>`", "`X`"} {
		if !strings.Contains(quick, want) {
			t.Errorf("the quickstart does not mention %s", want)
		}
	}
}

// TestScreenQuickstartWithVimPack walks the README's quickstart as a new
// user on Neovim 0.12 does: its vim.pack lines in init.lua (the plugin
// from this repository, its release served on 127.0.0.1), the install
// confirmed, :AgentBuild run by the PackChanged hook downloading it,
// then :AgentRun, `ls -la` sent with <C-s> and its split.
func TestScreenQuickstartWithVimPack(t *testing.T) {
	out, err := exec.Command(nvimBin, "--headless", "--clean", "-c", "lua io.stdout:write(vim.fn.has('nvim-0.12'))", "-c", "qa!").Output()
	if err != nil || strings.TrimSpace(string(out)) != "1" {
		t.Skipf("vim.pack is Neovim 0.12's (has('nvim-0.12') said %q, %v)", out, err)
	}
	readme, err := os.ReadFile(filepath.Join(root, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile("(?s)With vim.pack[^\n]*\n\n```lua\n(.*?)```").FindSubmatch(readme)
	if m == nil {
		t.Fatal("no vim.pack example in the README")
	}
	snippet := strings.Replace(string(m[1]), "https://github.com/agentrun/agentrun.nvim", "file://"+root, 1)
	// the release of this version, as the installer fetches it
	vb, err := os.ReadFile(filepath.Join(root, "VERSION"))
	if err != nil {
		t.Fatal(err)
	}
	version := strings.TrimSpace(string(vb))
	asset := "agentrun-" + runtime.GOOS + "-" + runtime.GOARCH
	rel := t.TempDir()
	data, err := os.ReadFile(binary)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(rel, asset), data, 0o755); err != nil {
		t.Fatal(err)
	}
	sum := fmt.Sprintf("%x  %s\n", sha256.Sum256(data), asset)
	if err := os.WriteFile(filepath.Join(rel, "checksums.txt"), []byte(sum), 0o644); err != nil {
		t.Fatal(err)
	}
	srv := releaseServer(t, rel, rel, version, asset, nil)
	// init.lua as the user writes it: no plugin on the runtimepath yet
	// (the screen's own setup puts this checkout there; taken off first)
	// (the screens run Neovim with --clean, which leaves the data folder's
	// site/ out of 'packpath': put back where vim.pack installs)
	setup := fmt.Sprintf("vim.opt.rtp:remove(%q)\nvim.opt.packpath:prepend(vim.fn.stdpath('data') .. '/site')\nvim.g.agentrun_bin = nil\nvim.g.agentrun_release_url = %q\n%s", root, srv.URL+"/good", snippet)
	s := startScreen(t, 100, 30, setup)
	s.waitShows(10*time.Second, "Proceed?")
	s.keys("y")
	s.waitFor("the hook's :AgentBuild to download the release", 60*time.Second, func(sc string) bool {
		return strings.Contains(sc, "downloaded the release binary "+version)
	})
	s.keys("Escape") // the long message's hit-enter prompt
	s.keys(":AgentRun", "Enter")
	s.waitShows(10*time.Second, "agentrun · demo · ready")
	s.typeText("ls -la")
	s.keys("C-s")
	s.waitShows(10*time.Second, "ls -la exited with code 0.", splitOf("term-1"))
}
