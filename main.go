// Command agentrun is the backend of agentrun.nvim. Started by Neovim with
// no arguments it serves the plugin over msgpack-RPC on stdio; the
// subcommands are "demo-agent" (the built-in ACP demo agent) and "version".
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/agentrun/agentrun.nvim/demoagent"
	"github.com/agentrun/agentrun.nvim/editor"
)

// version is set at build time from the VERSION file.
var version = "dev"

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP)
	defer stop()
	args := os.Args[1:]
	cmd := ""
	if len(args) > 0 {
		cmd = args[0]
	}
	var err error
	switch cmd {
	case "":
		err = editor.Serve(ctx, version)
	case "demo-agent":
		err = demoagent.Run(ctx, os.Stdin, os.Stdout)
	case "version", "--version", "-v":
		fmt.Println(version)
	default:
		err = fmt.Errorf("unknown subcommand %q (want demo-agent or version)", cmd)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "agentrun:", err)
		os.Exit(1)
	}
}
