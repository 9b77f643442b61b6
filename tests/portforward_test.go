package tests

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"regexp"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// TestRemoteDevServerPortForwarded: a dev server an agent on another
// machine runs (the demo agent over the real sshd, as the remote user)
// listens on 127.0.0.1 there; gx forwards its port (agentrun ssh-forward,
// an ssh per connection running serve-port there) and opens a URL here
// (vim.ui.open, recorded) that answers with the server's directory
// listing of the remote's home, big files and several connections at
// once included; gx again gives the same URL; a port it does not listen
// on and a terminal of this machine get a sentence; the listener here is
// on 127.0.0.1 only and stops when the command ends; another's stops
// when the link drops, and what was connected through it is closed.
// (Not onceAcrossNeovims: Lua starts and stops the forward.)
func TestRemoteDevServerPortForwarded(t *testing.T) {
	r := startSSHRemote(t)
	const big = 3_000_000
	if out, err := r.SSH(fmt.Sprintf(`cd && echo forwarded > fwd-marker.txt && head -c %d /dev/zero | tr '\0' z > big.txt`, big)).CombinedOutput(); err != nil {
		t.Fatalf("files on the remote: %v\n%s", err, out)
	}
	e := remoteAgentEditor(t, r)
	e.lua(`_G.opened = {}; vim.ui.open = function(url) table.insert(_G.opened, url) end`, nil)
	e.runDemoOn(r)

	port := freePort(t)
	cmd := fmt.Sprintf("python3 -m http.server --bind 127.0.0.1 %d", port)
	e.cmd("AgentPrompt " + cmd)
	term := e.waitTerminal(cmd, 15*time.Second)
	e.waitFor("the server's port in Lua's state", 20*time.Second, func() (bool, string) {
		var ports []int
		e.lua(`return require("agentrun.state").terminals[...].ports or {}`, &ports, term.ID)
		return slices.Contains(ports, port), fmt.Sprint(ports)
	})

	// What cannot be forwarded gets a sentence.
	var why string
	e.lua(`local _, err = require("agentrun.portforward").url(require("agentrun.state").terminals[...], 1); return err`, &why, term.ID)
	if want := fmt.Sprintf("%s does not listen on port 1 on %s (it listens on %d)", term.ID, remoteAlias, port); why != want {
		t.Errorf("a port it does not listen on: %q, want %q", why, want)
	}
	e.lua(`local _, err = require("agentrun.portforward").url({ id = "term-1", state = "running", ports = { 80 } }, 80); return err`, &why)
	if !strings.Contains(why, "term-1 is no command of an agent on another machine") {
		t.Errorf("a terminal of this machine: %q", why)
	}

	// gx: forwarded, and the URL opened.
	browse := func() []string {
		e.lua(`require("agentrun.ui.activity").browse(require("agentrun.state").terminals[...])`, nil, term.ID)
		var opened []string
		e.lua(`return _G.opened`, &opened)
		return opened
	}
	opened := browse()
	if len(opened) != 1 || !regexp.MustCompile(`^http://localhost:\d+$`).MatchString(opened[0]) {
		t.Fatalf("gx opened %q, want one http://localhost:PORT (notes: %+v)", opened, e.notes())
	}
	url := opened[0]
	e.waitNote(fmt.Sprintf("%s: port %d on %s is forwarded to %s (until the command ends)", term.ID, port, remoteAlias, url), 5*time.Second)
	localPort := strings.TrimPrefix(url, "http://localhost:")

	client := &http.Client{Timeout: 20 * time.Second, Transport: &http.Transport{DisableKeepAlives: true}}
	get := func(path string) ([]byte, error) {
		resp, err := client.Get(url + path)
		if err != nil {
			return nil, err
		}
		defer resp.Body.Close()
		body, err := io.ReadAll(resp.Body)
		if err == nil && resp.StatusCode != http.StatusOK {
			err = fmt.Errorf("status %s", resp.Status)
		}
		return body, err
	}
	body, err := get("/")
	if err != nil || !bytes.Contains(body, []byte("Directory listing")) || !bytes.Contains(body, []byte("fwd-marker.txt")) {
		t.Fatalf("GET %s/: %v\n%s", url, err, body)
	}
	// big answers, several connections at once
	var wg sync.WaitGroup
	errs := make(chan error, 4)
	for i := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			path := "/big.txt"
			if i%2 == 1 {
				path = "/fwd-marker.txt"
			}
			b, err := get(path)
			switch {
			case err != nil:
				errs <- fmt.Errorf("GET %s: %w", path, err)
			case path == "/big.txt" && (len(b) != big || bytes.Count(b, []byte("z")) != big):
				errs <- fmt.Errorf("GET %s: %d bytes, want %d z's", path, len(b), big)
			case path == "/fwd-marker.txt" && string(b) != "forwarded\n":
				errs <- fmt.Errorf("GET %s: %q", path, b)
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}

	// Here, only 127.0.0.1 listens.
	if c, err := net.DialTimeout("tcp", "127.0.0.2:"+localPort, time.Second); err == nil {
		c.Close()
		t.Errorf("the forward answers on 127.0.0.2:%s: it listens beyond 127.0.0.1", localPort)
	}
	// gx again: the same URL, still one forward.
	if again := browse(); len(again) != 2 || again[1] != url {
		t.Errorf("gx again opened %q, want %s again", again, url)
	}
	var n int
	e.lua(`return #require("agentrun.portforward").forwarded()`, &n)
	if n != 1 {
		t.Errorf("%d forwards after gx twice, want 1", n)
	}

	// The command's end ends the forward.
	since := e.mark()
	e.lua(`require("agentrun.rpc").request("kill", ..., true)`, nil, term.ID)
	e.waitEvent("AgentRunTerminalExited", since, 15*time.Second)
	eventually(t, "the local port to refuse connections", 10*time.Second, func() (bool, string) {
		c, err := net.DialTimeout("tcp", "127.0.0.1:"+localPort, time.Second)
		if err == nil {
			c.Close()
			return false, "it still accepts"
		}
		return true, ""
	})
	e.lua(`return #require("agentrun.portforward").forwarded()`, &n)
	if n != 0 {
		t.Errorf("%d forwards after the command ended", n)
	}

	// Another server, forwarded, and a connection through it left open:
	// the link drops (its ssh killed), and both end here.
	port = freePort(t)
	cmd = fmt.Sprintf("python3 -m http.server --bind 127.0.0.1 %d", port)
	e.cmd("AgentPrompt " + cmd)
	term = e.waitTerminal(cmd, 15*time.Second)
	e.waitFor("the second server's port in Lua's state", 20*time.Second, func() (bool, string) {
		var ports []int
		e.lua(`return require("agentrun.state").terminals[...].ports or {}`, &ports, term.ID)
		return slices.Contains(ports, port), fmt.Sprint(ports)
	})
	opened = browse()
	url = opened[len(opened)-1]
	localPort = strings.TrimPrefix(url, "http://localhost:")
	if body, err := get("/"); err != nil || !bytes.Contains(body, []byte("fwd-marker.txt")) {
		t.Fatalf("GET %s/ of the second server: %v\n%s", url, err, body)
	}
	held, err := net.DialTimeout("tcp", "127.0.0.1:"+localPort, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer held.Close()
	if _, err := held.Write([]byte("GET / HTTP/1.1\r\nHost: localhost\r\n")); err != nil { // not finished: the server waits
		t.Fatal(err)
	}
	var ssh int
	for _, p := range descendants(e.pid) {
		if strings.HasPrefix(p.Cmdline, "ssh ") && strings.Contains(p.Cmdline, "serve-backend") {
			ssh = p.PID
		}
	}
	if ssh == 0 {
		t.Fatalf("no ssh running serve-backend under Neovim: %+v", descendants(e.pid))
	}
	if err := syscall.Kill(ssh, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	e.waitNote("link lost; its sessions go on there", 15*time.Second)
	_ = held.SetReadDeadline(time.Now().Add(10 * time.Second))
	if n, err := held.Read(make([]byte, 100)); err == nil || errors.Is(err, os.ErrDeadlineExceeded) {
		t.Errorf("the connection through the dropped link is still open (read %d bytes, %v)", n, err)
	}
	if c, err := net.DialTimeout("tcp", "127.0.0.1:"+localPort, time.Second); err == nil {
		c.Close()
		t.Errorf("127.0.0.1:%s still accepts after the link dropped", localPort)
	}
	e.lua(`return #require("agentrun.portforward").forwarded()`, &n)
	if n != 0 {
		t.Errorf("%d forwards after the link dropped", n)
	}
	e.lua(`local _, err = require("agentrun.portforward").url(require("agentrun.state").terminals[...], ...); return err`, &why, term.ID, port)
	if !strings.Contains(why, "link lost; its sessions go on there: :AgentRun "+r.URL()) {
		t.Errorf("gx with the link down: %q", why)
	}
}

// TestRemoteForwardDuringHitEnterPromptOnScreen: a port of a command on
// another machine, forwarded, answers while Neovim shows a hit-enter
// prompt (a long :echo): the relay is agentrun ssh-forward's, not
// Neovim's loop, which the prompt holds (it stalled until Enter when
// Lua relayed).
func TestRemoteForwardDuringHitEnterPromptOnScreen(t *testing.T) {
	r := startSSHRemote(t)
	if out, err := r.SSH(`cd && echo during-the-prompt > hitenter-marker.txt`).CombinedOutput(); err != nil {
		t.Fatalf("a file on the remote: %v\n%s", err, out)
	}
	s := startScreen(t, 100, 30, fmt.Sprintf(`vim.env.AGENTRUN_SSH_CONFIG = %q; vim.ui.open = function() end`, r.Config))
	s.waitShows(10*time.Second, "~")
	s.keys(":AgentRun "+r.URL()+" demo", "Enter")
	s.waitShows(20*time.Second, "demo on "+remoteAlias)
	port := freePort(t)
	s.typeText(fmt.Sprintf("cd && python3 -m http.server --bind 127.0.0.1 %d", port))
	s.keys("C-s")
	var url string
	eventually(t, "the server's port forwarded", 30*time.Second, func() (bool, string) {
		s.luaValue(fmt.Sprintf(`(function() for _, t in pairs(require("agentrun.state").terminals) do if vim.tbl_contains(t.ports or {}, %d) then return require("agentrun.portforward").url(t, %d) end end return "" end)()`, port, port), &url)
		return url != "", "no terminal listens on it yet"
	})
	s.keys("Escape", `:echo join(range(1, 20), "\n")`, "Enter")
	s.waitShows(5*time.Second, "Press ENTER or type command to continue")
	client := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{DisableKeepAlives: true}}
	start := time.Now()
	resp, err := client.Get(url + "/hitenter-marker.txt")
	if err != nil {
		t.Fatalf("GET through the forward during the hit-enter prompt: %v", err)
	}
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil || string(body) != "during-the-prompt\n" {
		t.Fatalf("GET through the forward during the hit-enter prompt: %q, %v", body, err)
	}
	took := time.Since(start)
	if sc := s.capture(); !strings.Contains(sc, "Press ENTER or type command to continue") {
		t.Fatalf("the hit-enter prompt went away before the answer came (%s): the test proves nothing\n%s", took, sc)
	}
	s.keys("Enter")
}

// TestRemotePortAfterAttach: a dev server a Neovim on another machine
// runs (its agent's command), attached here with :AgentAttach
// ssh://host/PID:term-N, is known to listen on its port, and gx forwards
// it: the URL opened answers with the server's files.
func TestRemotePortAfterAttach(t *testing.T) {
	r := startSSHRemote(t)
	if out, err := r.SSH(`cd && echo after-attach > fwd-marker.txt`).CombinedOutput(); err != nil {
		t.Fatalf("a file on the remote: %v\n%s", err, out)
	}
	there := r.StartEditor()
	there.startSession()
	port := freePort(t)
	cmd := fmt.Sprintf("cd && python3 -m http.server --bind 127.0.0.1 %d", port)
	there.cmd("AgentPrompt " + cmd)
	term := there.waitTerminal(cmd, 15*time.Second)
	name := fmt.Sprintf("%s/%d:%s", r.URL(), there.backendPid(), term.ID)

	e := remoteAgentEditor(t, r)
	e.lua(`_G.opened = {}; vim.ui.open = function(url) table.insert(_G.opened, url) end`, nil)
	e.cmd("AgentAttach " + name)
	e.waitFor("the attached terminal's port known", 30*time.Second, func() (bool, string) {
		var ports []int
		e.lua(`local t = require("agentrun.ui.actions").terminal(...); return t and t.ports or {}`, &ports, name)
		return slices.Contains(ports, port), fmt.Sprint(ports)
	})
	e.lua(`require("agentrun.ui.actions").perform("browse", ...)`, nil, name) // what gx in its split does
	var opened []string
	e.lua(`return _G.opened`, &opened)
	if len(opened) != 1 {
		t.Fatalf("gx opened %q, want one URL (notes: %+v)", opened, e.notes())
	}
	e.waitNote(fmt.Sprintf("%s: port %d on %s is forwarded to %s (until the command ends)", name, port, r.URL(), opened[0]), 5*time.Second)
	client := &http.Client{Timeout: 20 * time.Second}
	resp, err := client.Get(opened[0] + "/fwd-marker.txt")
	if err != nil {
		t.Fatalf("GET through the forward: %v", err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if strings.TrimSpace(string(body)) != "after-attach" {
		t.Errorf("GET through the forward: %q", body)
	}
}
