package tests

import (
	"bytes"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"
)

// makeRelease runs `make release` for this machine's platform only, with
// version as VERSION, into dir; it returns the asset's name.
func makeRelease(t *testing.T, dir, version string) string {
	t.Helper()
	cmd := exec.Command("make", "--no-print-directory", "release", "VERSION="+version, "RELEASE_DIR="+dir, "PLATFORMS="+runtime.GOOS+"/"+runtime.GOARCH)
	cmd.Dir = root
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("make release: %v\n%s", err, out)
	}
	return "agentrun-" + runtime.GOOS + "-" + runtime.GOARCH
}

// releaseServer serves release directories on 127.0.0.1 as GitHub does
// (BASE/vVERSION/ASSET), under one prefix per behaviour:
//
//	/good/     the release as `make release` wrote it
//	/old/      a release whose binary says another version (checksums right)
//	/badsum/   checksums.txt with a wrong sha256 for the asset
//	/noasset/  checksums.txt, but the asset is missing (404)
//	/cut/      the asset's connection dies halfway through
//	/slow/     the asset is sent once gate is closed
func releaseServer(t *testing.T, good, old, version, asset string, gate chan struct{}) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		parts := strings.SplitN(strings.TrimPrefix(r.URL.Path, "/"), "/", 3)
		if len(parts) != 3 || parts[1] != "v"+version {
			http.NotFound(w, r)
			return
		}
		how, file := parts[0], parts[2]
		dir := good
		if how == "old" {
			dir = old
		}
		data, err := os.ReadFile(filepath.Join(dir, filepath.Base(file)))
		if err != nil {
			http.NotFound(w, r)
			return
		}
		switch {
		case how == "badsum" && file == "checksums.txt":
			// Another file's sha256 in the asset's place.
			data = []byte(strings.Repeat("0123456789abcdef", 4) + "  " + asset + "\n")
		case how == "noasset" && file == asset:
			http.NotFound(w, r)
			return
		case how == "slow" && file == asset:
			select {
			case <-gate:
			case <-r.Context().Done():
				return
			}
		case how == "cut" && file == asset:
			w.Header().Set("Content-Length", strconv.Itoa(len(data)))
			w.WriteHeader(http.StatusOK)
			_, _ = w.Write(data[:len(data)/2])
			w.(http.Flusher).Flush()
			panic(http.ErrAbortHandler) // the connection closes mid-body
		}
		_, _ = w.Write(data)
	}))
	t.Cleanup(srv.Close)
	return srv
}

// toolsDir is a directory of links to the named commands only, to be
// Neovim's $PATH: which downloader and hasher the installer finds, and
// whether it finds Go.
func toolsDir(t *testing.T, names ...string) string {
	t.Helper()
	dir := t.TempDir()
	for _, n := range names {
		p, err := exec.LookPath(n)
		if err != nil {
			t.Skipf("%s is not installed", n)
		}
		if err := os.Symlink(p, filepath.Join(dir, n)); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// TestInstallBinary walks the installer (build.lua, :AgentBuild) against
// a release made by `make release` and served on 127.0.0.1: every way an
// install ends, and what is (not) left on disk.
func TestInstallBinary(t *testing.T) {
	vb, err := os.ReadFile(filepath.Join(root, "VERSION"))
	if err != nil {
		t.Fatal(err)
	}
	version := strings.TrimSpace(string(vb))
	rel := t.TempDir()
	good, old := filepath.Join(rel, "good"), filepath.Join(rel, "old")
	asset := makeRelease(t, good, version)
	makeRelease(t, old, "0.0.0-old")
	gate := make(chan struct{})
	srv := releaseServer(t, good, old, version, asset, gate)
	// The editors' XDG_CACHE_HOME is private: give their go builds the
	// test's build cache (a cold one takes minutes on 2 cores).
	gocache, err := exec.Command("go", "env", "GOCACHE").Output()
	if err != nil {
		t.Fatal(err)
	}

	tests := []struct {
		name   string
		how    string // the server's behaviour
		method string // install.run's
		path   string // Neovim's $PATH ("": the test's)
		ok     bool
		says   []string
		origin string // the installed binary's build-info origin; "": nothing installed
	}{
		{"download with curl", "good", "auto", "", true,
			[]string{"downloaded the release binary " + version, "sha256 checked"}, "release"},
		{"download with wget and shasum", "good", "auto", toolsDir(t, "wget", "shasum"), true,
			[]string{"downloaded the release binary " + version}, "release"},
		{"wrong checksum is refused", "badsum", "auto", "", false,
			[]string{"checksums.txt says " + strings.Repeat("0123456789abcdef", 4), "refused, nothing was installed"}, ""},
		{"missing asset falls back to go build", "noasset", "auto", "", true,
			[]string{"built the binary " + version + " with Go", "because the download failed", "404"}, "build"},
		{"missing asset with download only", "noasset", "download", "", false,
			[]string{"could not download", asset, "404"}, ""},
		{"interrupted download, no Go", "cut", "auto", toolsDir(t, "curl", "sha256sum"), false,
			[]string{"the download failed (curl could not download", "Go is not installed", "nothing was installed"}, ""},
		{"a release of another version is refused", "old", "auto", "", false,
			[]string{"says it is version 0.0.0-old, not the plugin's " + version}, ""},
		{"go build on request", "good", "go", "", true,
			[]string{"built the binary " + version + " with Go"}, "build"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			dest := filepath.Join(dir, "agentrun")
			// What an install left when its Neovim died mid-download: the
			// next install removes it.
			for _, f := range []string{".agentrun-install-999999", ".agentrun-install-999999.sums"} {
				if err := os.WriteFile(filepath.Join(dir, f), []byte("half"), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			e := startEditor(t, "")
			e.lua(`vim.g.agentrun_bin, vim.g.agentrun_release_url, vim.env.GOCACHE = ...`, nil, dest, srv.URL+"/"+tc.how, strings.TrimSpace(string(gocache)))
			if tc.path != "" {
				e.lua(`vim.env.PATH = ...`, nil, tc.path)
			}
			var res []any
			e.lua(`local steps = {}
local ok, msg = require("agentrun.install").run(..., function(s) table.insert(steps, s) end)
return { ok, msg, table.concat(steps, "\n") }`, &res, tc.method)
			msg := fmt.Sprint(res[1])
			t.Logf("install says: %s (its steps: %s)", msg, res[2])
			// each step is said as it starts: a build names its Go
			if steps := fmt.Sprint(res[2]); tc.origin == "build" && !strings.Contains(steps, "building with Go ") {
				t.Errorf("a build did not say it builds with Go: steps %q", steps)
			}
			if res[0] != tc.ok {
				t.Fatalf("install ok = %v, want %v: %s", res[0], tc.ok, msg)
			}
			for _, s := range tc.says {
				if !strings.Contains(msg, s) {
					t.Errorf("install says %q; want it to say %q", msg, s)
				}
			}
			// Only the binary and its note, never a temporary file.
			entries, _ := os.ReadDir(dir)
			var names []string
			for _, en := range entries {
				names = append(names, en.Name())
			}
			if tc.origin == "" {
				if len(names) != 0 {
					t.Fatalf("nothing should be installed, but %s holds %v", dir, names)
				}
				return
			}
			if strings.Join(names, " ") != "agentrun agentrun.source" {
				t.Errorf("%s holds %v, want agentrun and agentrun.source", dir, names)
			}
			info, err := exec.Command(dest, "build-info").Output()
			if err != nil || !strings.Contains(string(info), "version="+version+"\n") || !strings.Contains(string(info), "origin="+tc.origin+"\n") {
				t.Errorf("installed binary's build-info %q (%v), want version %s origin %s", info, err, version, tc.origin)
			}
			// :checkhealth says how it got there and that it matches.
			e.lua(`vim.env.PATH = ...`, nil, os.Getenv("PATH"))
			report := e.checkhealth()
			want := "built with go"
			if tc.origin == "release" {
				want = "downloaded from " + srv.URL + "/good/v" + version + "/" + asset + " and checked against its sha256"
			}
			if !strings.Contains(report, "the backend binary is ") || !strings.Contains(report, want) || !healthOK(report, "backend "+dest+" runs, version "+version+" (matches the plugin's VERSION)") {
				t.Errorf("checkhealth does not say %q and that the binary matches VERSION:\n%s", want, report)
			}
			// Neovim 0.7's own terminal crash (wide glyphs, narrower then
			// taller) is named on 0.7 only.
			if warned := strings.Contains(report, "Neovim 0.7 can crash when a terminal window"); warned != knownOpen07() {
				t.Errorf("checkhealth on %s warns of Neovim 0.7's terminal crash: %v, want %v:\n%s", nvimVersion(), warned, knownOpen07(), report)
			}
		})
	}

	// A stale binary (the plugin was updated, the binary not) is found
	// at start and by :checkhealth, both naming the fix; :AgentBuild
	// installs the right one over it in the background (Neovim answers
	// while the download waits; a second :AgentBuild is told one is
	// under way) and the session starts.
	t.Run("stale binary detected and fixed with AgentBuild", func(t *testing.T) {
		dest := filepath.Join(t.TempDir(), "agentrun")
		data, err := os.ReadFile(filepath.Join(old, asset))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(dest, data, 0o755); err != nil {
			t.Fatal(err)
		}
		e := startEditor(t, "")
		e.lua(`vim.g.agentrun_bin, vim.g.agentrun_release_url = ...`, nil, dest, srv.URL+"/slow")
		e.cmd("AgentRun")
		e.waitFor("the stale binary named", 5*time.Second, func() (bool, string) {
			var msg string
			e.lua(`return _G.notes[1] and _G.notes[1].msg or ""`, &msg)
			return strings.Contains(msg, "the backend binary is stale (version 0.0.0-old, plugin "+version+")") && strings.Contains(msg, ":AgentBuild"), msg
		})
		if report := e.checkhealth(); !healthError.MatchString(report) || !strings.Contains(report, "stale") || !strings.Contains(report, ":AgentBuild") {
			t.Errorf("checkhealth does not flag the stale binary with its fix:\n%s", report)
		}
		notes := func() []string {
			var msgs []string
			e.lua(`return vim.tbl_map(function(n) return n.msg end, _G.notes)`, &msgs)
			return msgs
		}
		e.lua(`_G.notes = {}`, nil)
		e.cmd("AgentBuild nonsense")
		if n := notes(); len(n) != 1 || !strings.Contains(n[0], `:AgentBuild takes auto, download or go, not "nonsense"`) {
			t.Errorf(":AgentBuild nonsense said %q", n)
		}
		e.lua(`_G.notes = {}`, nil)
		e.cmd("AgentBuild")
		e.cmd("AgentBuild download")
		// at once, what it does: what it downloads
		if n := notes(); len(n) != 2 || !strings.Contains(n[0], "downloading agentrun-") || !strings.Contains(n[0], " "+version+" …") || !strings.Contains(n[1], "an install is already under way") {
			t.Fatalf("while the download waits, :AgentBuild twice said %q", n)
		}
		close(gate)
		e.waitFor(":AgentBuild to end", 30*time.Second, func() (bool, string) {
			n := notes()
			return len(n) == 3, strings.Join(n, "\n")
		})
		if n := notes(); !strings.Contains(n[2], "downloaded the release binary "+version) {
			t.Fatalf(":AgentBuild ended with %q", n[2])
		}
		if out, _ := exec.Command(dest, "version").Output(); string(bytes.TrimSpace(out)) != version {
			t.Fatalf("after :AgentBuild the binary says %q, want %s", out, version)
		}
		e.startSession()
	})

	// lazy.nvim's build step runs build.lua: it installs, and fails the
	// build with the reason when nothing could be installed.
	t.Run("build.lua", func(t *testing.T) {
		dest := filepath.Join(t.TempDir(), "agentrun")
		e := startEditor(t, "")
		e.lua(`vim.g.agentrun_bin, vim.g.agentrun_release_url = ...`, nil, dest, srv.URL+"/good")
		e.cmd("luafile " + filepath.Join(root, "build.lua"))
		if out, _ := exec.Command(dest, "version").Output(); string(bytes.TrimSpace(out)) != version {
			t.Fatalf("after build.lua the binary says %q, want %s", out, version)
		}
		e.lua(`vim.g.agentrun_release_url, vim.env.PATH = ...`, nil, srv.URL+"/badsum", toolsDir(t, "curl", "sha256sum"))
		err := e.v.Command("luafile " + filepath.Join(root, "build.lua"))
		if err == nil || !strings.Contains(err.Error(), "agentrun: the download of") || !strings.Contains(err.Error(), "refused, nothing was installed") {
			t.Errorf("build.lua with a wrong checksum: %v", err)
		}
		if out, _ := exec.Command(dest, "version").Output(); string(bytes.TrimSpace(out)) != version {
			t.Errorf("the refused install changed the binary: it says %q", out)
		}
	})

	// The backend checks the plugin's version too: started by a plugin
	// of another version, it refuses to set up, naming both and the fix.
	t.Run("backend refuses a plugin of another version", func(t *testing.T) {
		e := startEditor(t, "")
		var msg string
		e.lua(`local chan = vim.fn.jobstart({ vim.g.agentrun_bin }, { rpc = true })
local ok, err = pcall(vim.rpcrequest, chan, "setup", { plugin_version = "9.9.9" })
vim.fn.jobstop(chan)
return ok and "accepted" or tostring(err)`, &msg)
		if !strings.Contains(msg, "this backend binary is version "+version+" but the plugin is version 9.9.9: run :AgentBuild") {
			t.Errorf("setup with another plugin version: %q", msg)
		}
	})
}

// TestScreenMissingBinaryIsASentence: a plugin installed without its
// build step (lazy.nvim's `dir = …` never runs build.lua) has no backend
// binary. The first :AgentRun, run as lazy.nvim runs a command it loads
// the plugin for (through vim.cmd), shows our sentence with the fix and
// no Lua stack traceback around it; typed, the same.
func TestScreenMissingBinaryIsASentence(t *testing.T) {
	s := startScreen(t, 160, 20, `vim.g.agentrun_bin = "/nonexistent/agentrun"`)
	want := "(agentrun) the backend binary /nonexistent/agentrun is missing: :AgentBuild installs it"
	for _, typed := range []string{`:lua vim.cmd("AgentRun")`, ":AgentRun"} {
		s.keys(typed, "Enter")
		sc := s.waitShows(5*time.Second, want)
		for _, bad := range []string{"stack traceback", "E5108", "Error executing", "Error detected"} {
			if strings.Contains(sc, bad) {
				t.Errorf("%s shows %q around the sentence:\n%s", typed, bad, sc)
			}
		}
		s.keys("Escape", ":echo ''", "Enter")
		s.waitFor("the message to go", 5*time.Second, func(sc string) bool { return !strings.Contains(sc, want) })
	}
}

// TestScreenOfflineBuildKeepsTheBinary: :AgentBuild download with no
// network (the release server refuses the connection) says the download
// failed and that the binary you have is kept as it was and still works;
// it is still there, unchanged, and a session starts with it. One line,
// with no "Press ENTER" (issue 50).
func TestScreenOfflineBuildKeepsTheBinary(t *testing.T) {
	data, err := os.ReadFile(binary)
	if err != nil {
		t.Fatal(err)
	}
	dest := filepath.Join(t.TempDir(), "agentrun")
	if err := os.WriteFile(dest, data, 0o755); err != nil {
		t.Fatal(err)
	}
	s := startScreen(t, 220, 24, fmt.Sprintf(`vim.g.agentrun_bin, vim.g.agentrun_release_url = %q, "http://127.0.0.1:1"`, dest))
	s.keys(":AgentBuild download", "Enter")
	// (the message is longer than a row: read it joined)
	// (or its shorter form: one line, no "Press ENTER", at any width)
	want := regexp.MustCompile(`\(agentrun\) the download failed(: .*; the binary you have \(` + regexp.QuoteMeta(dest) + `, version [^)]+\) is kept as it was|; your binary \(version [^)]+\) is kept) and still works`)
	sc := s.waitFor("the build to say the binary is kept", 30*time.Second, func(sc string) bool {
		return want.MatchString(strings.ReplaceAll(sc, "\n", ""))
	})
	if strings.Contains(sc, "Press ENTER") {
		t.Errorf("the build's end stops at Press ENTER:\n%s", sc)
	}
	if now, err := os.ReadFile(dest); err != nil || !bytes.Equal(now, data) {
		t.Fatalf("the binary changed (%v)", err)
	}
	s.keys("Enter", ":AgentRun", "Enter")
	s.waitShows(10*time.Second, "agentrun · demo · ready")
}

// TestScreenBuildGoesOnByItself: at 80 columns, :AgentBuild whose
// download fails builds with Go and ends without a key pressed: its steps
// are said in one line each (a longer one stopped at "Press ENTER", and
// the build waited there until the user pressed it).
func TestScreenBuildGoesOnByItself(t *testing.T) {
	env, err := exec.Command("go", "env", "GOCACHE", "GOMODCACHE", "GOPATH").Output()
	if err != nil {
		t.Fatal(err)
	}
	goenv := strings.Split(strings.TrimSpace(string(env)), "\n")
	dest := filepath.Join(t.TempDir(), "agentrun")
	s := startScreen(t, 80, 24, fmt.Sprintf(`vim.g.agentrun_bin, vim.g.agentrun_release_url = %q, "http://127.0.0.1:1"
vim.env.GOCACHE, vim.env.GOMODCACHE, vim.env.GOPATH, vim.env.GOFLAGS = %q, %q, %q, "-mod=mod"`, dest, goenv[0], goenv[1], goenv[2]))
	s.keys(":AgentBuild", "Enter")
	s.waitFor("the build to end by itself", 120*time.Second, func(sc string) bool {
		if strings.Contains(sc, "Press ENTER") && !strings.Contains(sc, "built the binary") {
			t.Fatalf("the build stopped at a Press ENTER prompt:\n%s", sc)
		}
		return strings.Contains(sc, "built the binary")
	})
	if out, err := exec.Command(dest, "version").Output(); err != nil || len(out) == 0 {
		t.Fatalf("no binary built at %s: %v", dest, err)
	}
}

// TestScreenBuildStepsStayInSight: at 80 columns, :AgentBuild's step
// reads whole in :messages ("… (a minute or two) …" was cut off), and on
// the command line it is said again every second with the time it has
// taken and the packages go build -v named (issue 50: 3.5 minutes of the
// same words, nothing in between), also when another message covers it
// while it lasts (vim.pack's own messages left a blank command line for
// the whole first build). (A stand-in go that names three packages and
// never ends its build: the step lasts.)
func TestScreenBuildStepsStayInSight(t *testing.T) {
	bin := t.TempDir()
	fake := "#!/bin/sh\nif [ \"$1\" = env ]; then echo go9.9.9; exit 0; fi\n" +
		"for p in one two three; do echo example.com/m/$p >&2; sleep 0.2; done\nexec sleep 60\n"
	if err := os.WriteFile(filepath.Join(bin, "go"), []byte(fake), 0o755); err != nil {
		t.Fatal(err)
	}
	dest := filepath.Join(t.TempDir(), "agentrun")
	s := startScreen(t, 80, 24, fmt.Sprintf(`vim.g.agentrun_bin, vim.g.agentrun_release_url = %q, "http://127.0.0.1:1"
vim.env.PATH = %q .. ":" .. vim.env.PATH`, dest, bin))
	s.keys(":AgentBuild", "Enter")
	step := "(agentrun) no download: building with Go 9.9.9 (1 to 5 minutes) …"
	// the time and the packages, the estimate left out to fit the line
	going := regexp.MustCompile(`\(agentrun\) no download: building with Go 9\.9\.9 … \d+:\d\d, 3 packages$`)
	lastLine := func() string {
		lines := strings.Split(strings.TrimRight(s.capture(), " \n"), "\n")
		return strings.TrimSpace(lines[len(lines)-1])
	}
	s.waitFor("the step with its time and packages", 10*time.Second, func(string) bool { return going.MatchString(lastLine()) })
	// Something else is said (kept in :messages, so that its order with
	// the step's shows), and the step comes back on the command line
	// while it lasts.
	s.keys(":echomsg 'something else said'", "Enter")
	s.waitFor("the other message said, then the step again", 5*time.Second, func(sc string) bool {
		msgs := s.expr(`execute("messages")`)
		other := strings.Index(msgs, "something else said")
		if other < 0 || strings.Index(msgs, step) < 0 || other < strings.Index(msgs, step) {
			return false
		}
		// the screen read after the other message was said
		return going.MatchString(lastLine())
	})
	s.keys(":messages", "Enter")
	s.waitShows(5*time.Second, "(agentrun) downloading agentrun-", step)
}
