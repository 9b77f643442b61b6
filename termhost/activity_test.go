package termhost

import (
	"fmt"
	"net"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/agentrun/agentrun.nvim/internal/wait"
)

// A command that waits on `read` is seen reading its input, and not once
// it got a line and went on to sleep; a shell pipeline's reader in the
// foreground is seen too.
func TestReadsInput(t *testing.T) {
	for _, tc := range []struct{ name, script string }{
		{"read", `read -r x; echo "got $x"; sleep 30`},
		{"python", `python3 -c 'import sys; print("got " + input("name? ")); import time; time.sleep(30)'`},
		{"pipeline", `echo start | cat >/dev/null; head -n1 | sed 's/^/got /'; sleep 30`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := testHost(t, Options{})
			term := create(t, h, shell(t, tc.script))
			wait.Until(t, "the command to wait for input", 10*time.Second, func() (bool, string) {
				return term.ReadsInput(), "not reading"
			})
			if _, err := term.Write([]byte("bob\r")); err != nil {
				t.Fatal(err)
			}
			wait.Until(t, "the answer", 10*time.Second, func() (bool, string) {
				return strings.Contains(term.Output().Text, "got bob"), term.Output().Text
			})
			for range 5 {
				if term.ReadsInput() {
					t.Fatal("still reading after the line was given")
				}
				time.Sleep(50 * time.Millisecond)
			}
		})
	}
}

// The ports a command listens on are found, also a child's, and only
// while it listens.
func TestPorts(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	h := testHost(t, Options{})
	term := create(t, h, shell(t, `python3 -m http.server --bind 127.0.0.1 `+strconv.Itoa(port)+` & wait`))
	wait.Until(t, "the server's port", 10*time.Second, func() (bool, string) {
		p := term.Ports()
		return len(p) == 1 && p[0] == port, strconv.Itoa(len(p))
	})
	if list, _ := h.WatchListing(); len(list) != 1 || len(list[0].Ports) != 1 || list[0].Ports[0] != port {
		t.Errorf("the listing: %+v, want the port", list)
	}
	if err := term.Kill(); err != nil {
		t.Fatal(err)
	}
	<-term.Done()
	// the listing, before anyone looks at the ports again
	wait.Until(t, "the listing to show the end", 5*time.Second, func() (bool, string) {
		list, _ := h.WatchListing()
		return len(list) == 1 && list[0].ExitSignal != "", fmt.Sprintf("%+v", list)
	})
	if list, _ := h.WatchListing(); len(list[0].Ports) > 0 {
		t.Errorf("the listing shows ports %v for a command that ended", list[0].Ports)
	}
	if p := term.Ports(); len(p) != 0 {
		t.Errorf("ports after the end: %v", p)
	}
}
