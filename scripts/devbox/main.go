// Command devbox starts the SSH tests' "other machine" for trying the
// remote features by hand: an sshd on 127.0.0.1 (package sshtest), a
// second local user with this build of agentrun, and an ssh_config that
// reaches it. It prints how to use it and runs until interrupted, then
// removes it all (the user's processes of this run too). It needs root.
//
//	make build && go run ./scripts/devbox
package main

import (
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"

	"github.com/agentrun/agentrun.nvim/internal/sshtest"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "devbox:", err)
		os.Exit(1)
	}
}

func run() (err error) {
	if os.Getuid() != 0 {
		return fmt.Errorf("it runs sshd and adds a local user (%s): run it as root", sshtest.RemoteUser)
	}
	bin, err := filepath.Abs("bin/agentrun")
	if err != nil {
		return err
	}
	if _, err := os.Stat(bin); err != nil {
		return fmt.Errorf("%s is missing: run make build first", bin)
	}
	r := &sshtest.Run{}
	defer r.Close()
	defer r.Recover(&err)
	box := sshtest.Start(r, bin)
	fmt.Printf(`a dev box runs: %s (user %s, HOME %s, agentrun %s)
in a shell here:
  export AGENTRUN_SSH_CONFIG=%s
  agentrun ls %s
in Neovim (started from that shell):
  :AgentRun %s demo
  ssh -F "$AGENTRUN_SSH_CONFIG" %s   logs in there
Ctrl-C here stops it and removes what it made.
`, box.URL(), sshtest.RemoteUser, box.Home, box.Bin, box.Config, box.URL(), box.URL(), sshtest.RemoteAlias)
	stop := make(chan os.Signal, 1)
	signal.Notify(stop, syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP)
	<-stop
	fmt.Println("devbox: stopping")
	return nil
}
