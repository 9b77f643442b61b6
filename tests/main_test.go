// Package tests holds agentrun's integration tests: real headless Neovim
// with the plugin on its runtimepath, the real agentrun binary (built once
// in TestMain) and the real demo agent, driven over Neovim's RPC.
package tests

import (
	"encoding/json"
	"flag"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

var (
	// root is the plugin's root directory (the repository).
	root string
	// binary is the agentrun binary built for this run.
	binary string
	// nvimBin is the Neovim the tests run: $AGENTRUN_NVIM (make test sets
	// it for each supported version). Without it the tests do not run:
	// they need what make deps installs (Neovim, tmux, sshd, the npm
	// peers), which a fresh clone's go test ./... does not have.
	nvimBin = ""
	// runMarker is the KEY=VALUE every process of this run inherits
	// (findProcesses tells them from another suite's running beside).
	runMarker string
)

func TestMain(m *testing.M) {
	os.Exit(run(m))
}

func run(m *testing.M) int {
	nvimBin = os.Getenv("AGENTRUN_NVIM")
	if nvimBin == "" {
		// go test ./... on a fresh clone: the unit tests elsewhere run,
		// these say once why they did not.
		fmt.Println("tests: the integration tests did not run: they need Neovim, tmux, sshd and the npm test peers that make deps installs; make test runs them on every Neovim, or name one: AGENTRUN_NVIM=$(bash scripts/nvim-versions.sh 0.12) go test ./tests/")
		flag.Parse()
		if err := flag.Set("test.skip", "."); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		return m.Run()
	}
	wd, err := os.Getwd()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	root = filepath.Dir(wd)
	runMarker = fmt.Sprintf("AGENTRUN_TEST_RUN=%d", os.Getpid())
	os.Setenv("AGENTRUN_TEST_RUN", strconv.Itoa(os.Getpid()))
	if _, err := exec.LookPath(nvimBin); err != nil {
		fmt.Fprintf(os.Stderr, "tests: Neovim %q not found (make deps installs it)\n", nvimBin)
		return 1
	}
	if out, err := exec.Command(nvimBin, "--version").Output(); err == nil {
		fmt.Printf("tests: running against %s (%s)\n", strings.SplitN(string(out), "\n", 2)[0], nvimBin)
	}
	dir, err := os.MkdirTemp("", "agentrun-tests-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(dir)
	version, err := os.ReadFile(filepath.Join(root, "VERSION"))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	// scripts/integration.sh builds it once for all its parts
	if binary = os.Getenv("AGENTRUN_TEST_BINARY"); binary == "" {
		binary = filepath.Join(dir, "agentrun")
		build := exec.Command("go", "build", "-ldflags", "-X main.version="+strings.TrimSpace(string(version)), "-o", binary, ".")
		build.Dir = root
		if out, err := build.CombinedOutput(); err != nil {
			fmt.Fprintf(os.Stderr, "tests: building agentrun: %v\n%s", err, out)
			return 1
		}
	}
	return m.Run()
}

// onceAcrossNeovims skips t in make test's runs on the second and later
// Neovim versions (the Makefile sets AGENTRUN_ONCE_ACROSS_NEOVIMS for
// them; the first is the newest): what t checks does not change with the
// local Neovim. The tests over SSH (their Neovim is the remote user's) and
// the real agent packages' (what those agents send and do; the plugin's
// handling of the same updates runs on every version with the TypeScript
// SDK test agents) use it, to keep make test within its time. go test
// alone runs them.
func onceAcrossNeovims(t *testing.T) {
	t.Helper()
	if os.Getenv("AGENTRUN_ONCE_ACROSS_NEOVIMS") != "" {
		t.Skip("does not depend on the local Neovim's version: make test runs it with the first version only")
	}
}

// serveLoopback serves h on 127.0.0.1 (a port of its own) until t ends
// and returns its base URL: the fake model APIs.
func serveLoopback(t *testing.T, h http.Handler) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: h}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	return "http://" + ln.Addr().String()
}

// npmBin is the entry point bin of npm package pkg at version, installed
// in tests/dir by scripts/deps.sh (a real agent package); it fails t
// saying how to install it when it is missing or another version.
func npmBin(t *testing.T, dir, pkg, version, bin string) string {
	t.Helper()
	at := filepath.Join(root, "tests", dir, "node_modules", filepath.FromSlash(pkg))
	raw, err := os.ReadFile(filepath.Join(at, "package.json"))
	if err != nil {
		t.Fatalf("%s is not installed in tests/%s (scripts/deps.sh installs it): %v", pkg, dir, err)
	}
	var meta struct {
		Version string            `json:"version"`
		Bin     map[string]string `json:"bin"`
	}
	if err := json.Unmarshal(raw, &meta); err != nil || meta.Version != version {
		t.Fatalf("tests/%s has %s %q, want %s (run scripts/deps.sh): %v", dir, pkg, meta.Version, version, err)
	}
	return filepath.Join(at, meta.Bin[bin])
}

// backendGoneAtCleanup returns where the test puts the backend's pid once
// it runs: at cleanup, before the agent's HOME goes, the backend (and so
// agent, the real agent package it runs) must have stopped.
func backendGoneAtCleanup(t *testing.T, agent string) *int {
	t.Helper()
	backend := new(int)
	t.Cleanup(func() {
		if *backend > 0 {
			eventually(t, "the backend (and so "+agent+") to stop", 10*time.Second, func() (bool, string) { return !alive(*backend), "alive" })
		}
	})
	return backend
}

// TestOffline: run by scripts/integration.sh in a network namespace of
// its own (AGENTRUN_TEST_OFFLINE), the tests and the real agents they
// start see the loopback alone: nothing reaches a real model API.
func TestOffline(t *testing.T) {
	if os.Getenv("AGENTRUN_TEST_OFFLINE") == "" {
		t.Skip("not run offline (scripts/integration.sh runs the tests so where unshare -n is allowed)")
	}
	ifs, err := net.Interfaces()
	if err != nil {
		t.Fatal(err)
	}
	for _, i := range ifs {
		if i.Flags&net.FlagLoopback == 0 {
			t.Errorf("a network interface besides the loopback: %s", i.Name)
		}
	}
}
