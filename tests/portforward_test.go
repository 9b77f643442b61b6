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
// listens on 127.0.0.1 there; gx forwards its port over the link the
// agent already uses and opens a URL here (vim.ui.open, recorded) that
// answers with the server's directory listing of the remote's home, big
// files and several connections at once included; gx again gives the
// same URL; a port it does not listen on and a terminal of this machine
// get a sentence; the listener here is on 127.0.0.1 only and stops when
// the command ends; another's stops when the link drops, and what was
// connected through it is closed. (Not onceAcrossNeovims: the relay is this Neovim's
// libuv.)
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
		e.lua(`require("agentrun.ui.term").browse(require("agentrun.state").terminals[...])`, nil, term.ID)
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
