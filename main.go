// Command agentrun is the backend of agentrun.nvim, and its terminals
// from a shell. Started by Neovim with no arguments it serves the plugin
// over msgpack-RPC on stdio (package editor). The subcommands:
//
//	ls [ssh://HOST]     list the user's agentrun terminals, here or on HOST (package hostcli)
//	attach [--take] ID  show terminal ID live; --take holds it to type into it (hostcli)
//	kill ID             kill terminal ID: SIGTERM, then SIGKILL (hostcli)
//	serve-stdio         AHP to the user's hosts on stdio: what ssh runs for ls/attach/kill ssh://… (package sshlink)
//	ssh-forward URL PORT  a port there reached from 127.0.0.1 here; serve-port PORT its far end (sshlink)
//	ssh-backend URL     what Neovim runs for an agent on URL's machine: relays to serve-backend there (sshlink)
//	serve-backend       ssh-backend's far end: the backend on stdio; --resume[-or-new] PID joins one whose link dropped
//	mcp                 the MCP server with agentrun's terminal tools, started by an agent (package mcptool)
//	demo-agent          the built-in ACP demo agent: each prompt is a shell command (package demoagent)
//	check-sandbox       say whether bubblewrap works here, for :checkhealth (package sandbox)
//	version             print the version (also --version, -v)
//	build-info          the version, how it was built, Go version and platform, for :checkhealth
//	help                print the usage (also --help, -h; ls, attach and kill take --help)
//	guard               the backend's helper that kills what a SIGKILLed backend left (package guard); not for users
package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"os/signal"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/agentrun/agentrun.nvim/internal/demoagent"
	"github.com/agentrun/agentrun.nvim/internal/editor"
	"github.com/agentrun/agentrun.nvim/internal/guard"
	"github.com/agentrun/agentrun.nvim/internal/hostcli"
	"github.com/agentrun/agentrun.nvim/internal/mcptool"
	"github.com/agentrun/agentrun.nvim/internal/sandbox"
	"github.com/agentrun/agentrun.nvim/internal/sshlink"
	"golang.org/x/term"
)

// usage is what agentrun --help prints.
const usage = `agentrun: the backend of agentrun.nvim, and its terminals from a shell.

Usage:
  agentrun ls [--json]           list the terminals of every agentrun host (Neovim) of yours,
                                 with the TCP ports they listen on; --json for scripts
  agentrun ls [--json] ssh://[user@]host[:port]
                                 the same on another machine, over SSH (agentrun of this
                                 version must be installed there)
  agentrun attach [--take] ID    show terminal ID live (its scrollback first); Ctrl-] detaches;
                                 --take holds it so you type into it
  agentrun kill ID               kill terminal ID (SIGTERM, then SIGKILL)
  agentrun serve-stdio           AHP to your hosts over stdin/stdout (what ssh runs for the above)
  agentrun serve-backend [--resume[-or-new] PID]
                                 the plugin's backend on stdio, for a Neovim on another machine
                                 (what ssh runs for agents.<name>.host = "ssh://…"); --resume:
                                 the one here whose link dropped, with its sessions
  agentrun serve-port PORT       this machine's port PORT on stdin/stdout (what ssh runs for
                                 a port forwarded to another machine's Neovim)
  agentrun version               print the version
  agentrun build-info            how this binary was built (for :checkhealth)
  agentrun help                  print this

An ID is PID:term-N (as ls prints it), term-N when only one host has it, or
ssh://[user@]host[:port]/PID:term-N on another machine. $AGENTRUN_SSH_CONFIG names
an ssh_config file for these links (ssh -F).

Neovim starts agentrun itself (no subcommand: the RPC host on stdio); agentrun mcp,
demo-agent, check-sandbox, ssh-backend and ssh-forward are started by it too. See :help agentrun.
`

// version is set at build time from the VERSION file.
var version = "dev"

// origin says how the binary was built, set at build time: "release"
// (make release: the binaries a GitHub release carries), "make" (make
// build); "" is a plain go build.
var origin = ""

// buildInfo is what `agentrun build-info` prints for :checkhealth, one
// key=value a line.
func buildInfo() string {
	o := origin
	if o == "" {
		o = "go build"
	}
	return fmt.Sprintf("version=%s\norigin=%s\ngo=%s\nplatform=%s/%s", version, o, runtime.Version(), runtime.GOOS, runtime.GOARCH)
}

func main() {
	if len(os.Args) == 2 && os.Args[1] == "guard" {
		runGuard()
		return
	}
	hostcli.Version = version
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP)
	defer stop()
	args := os.Args[1:]
	cmd := ""
	if len(args) > 0 {
		cmd = args[0]
	}
	var err error
	if (cmd == "ls" || cmd == "attach" || cmd == "kill") && slices.ContainsFunc(args[1:], func(a string) bool { return a == "--help" || a == "-h" }) {
		cmd = "help" // agentrun ls --help: the usage, not "no such host"
	}
	if cmd == "" && term.IsTerminal(int(os.Stdin.Fd())) {
		// typed in a shell: the backend speaks msgpack to Neovim on its
		// stdin, and would wait there in silence
		fmt.Fprint(os.Stderr, "agentrun: the backend runs under Neovim, not in a terminal; here you can:\n\n")
		cmd = "help"
	}
	switch cmd {
	case "":
		// AGENTRUN_CPUPROFILE names a file for a CPU profile of the
		// backend (bench/README.md: how the bench's figures were traced).
		if path := os.Getenv("AGENTRUN_CPUPROFILE"); path != "" {
			if f, perr := os.Create(path); perr == nil && pprof.StartCPUProfile(f) == nil {
				defer f.Close()
				defer pprof.StopCPUProfile()
			}
		}
		err = editor.Serve(ctx, version)
	case "demo-agent":
		err = demoagent.Run(ctx, os.Stdin, os.Stdout)
	case "version", "--version", "-v":
		fmt.Println(version)
	case "build-info":
		fmt.Println(buildInfo())
	case "help", "--help", "-h":
		fmt.Print(usage)
	case "ls":
		asJSON := false
		var rest []string
		for _, a := range args[1:] {
			switch {
			case a == "--json":
				asJSON = true
			case strings.HasPrefix(a, "-"):
				err = fmt.Errorf("agentrun ls takes --json, not %q; usage: agentrun ls [--json] [ssh://[user@]host[:port]]", a)
			default:
				rest = append(rest, a)
			}
		}
		if err != nil {
			break
		}
		if len(rest) > 1 {
			err = fmt.Errorf("usage: agentrun ls [--json] [ssh://[user@]host[:port]]")
			break
		}
		where := ""
		if len(rest) == 1 {
			where = rest[0]
		}
		err = hostcli.Ls(ctx, os.Stdout, where, asJSON, 0)
	case "attach":
		take := len(args) > 1 && args[1] == "--take"
		if take {
			args = append(args[:1], args[2:]...)
		}
		if len(args) != 2 {
			err = fmt.Errorf("usage: agentrun attach [--take] ID (agentrun ls lists the ids)")
			break
		}
		err = hostcli.Attach(ctx, os.Stdin, os.Stdout, args[1], take)
	case "kill":
		if len(args) != 2 {
			err = fmt.Errorf("usage: agentrun kill ID (agentrun ls lists the ids)")
			break
		}
		err = hostcli.Kill(ctx, os.Stdout, args[1])
	case "ssh-forward", sshlink.ForwardServe:
		// ssh-forward URL PORT: a port of a command on URL's machine
		// reached from 127.0.0.1 here (Neovim starts it, per forward);
		// serve-port PORT is its far end (sshlink/forward.go).
		n := len(args) - 1
		port := 0
		if n >= 1 {
			port, err = strconv.Atoi(args[n])
		}
		switch {
		case args[0] == "ssh-forward" && (n != 2 || err != nil || port <= 0 || port > 65535):
			err = fmt.Errorf("usage: agentrun ssh-forward ssh://[user@]host[:port] PORT (Neovim starts it)")
		case args[0] == "ssh-forward":
			err = sshlink.RunForward(ctx, os.Stdin, os.Stdout, args[1], port)
		case n != 1 || err != nil || port <= 0 || port > 65535:
			err = fmt.Errorf("usage: agentrun serve-port PORT (what ssh-forward runs there)")
		default:
			err = sshlink.ServePort(ctx, os.Stdin, os.Stdout, port)
		}
	case "serve-stdio":
		// The far end of `agentrun ls/attach ssh://host`: AHP to this
		// user's hosts over stdin and stdout (package sshlink).
		err = sshlink.Serve(ctx, os.Stdin, os.Stdout, version)
	case "ssh-backend":
		// What Neovim starts for agents.<name>.host = "ssh://…": the
		// backend on that machine, its RPC relayed over ssh (sshlink).
		// --resume-or-new PID joins the one there whose link dropped (0:
		// the newest) or else starts one; --end PID joins it only to shut
		// it down (a Neovim quitting while its link is down).
		mode, pid := "", 0
		if len(args) == 4 && slices.Contains([]string{"--resume-or-new", "--end"}, args[2]) {
			mode = strings.TrimPrefix(args[2], "--")
			pid, err = strconv.Atoi(args[3])
			args = args[:2]
		}
		if len(args) != 2 || err != nil {
			err = fmt.Errorf("usage: agentrun ssh-backend ssh://[user@]host[:port][/dir] [--resume-or-new PID|--end PID] (Neovim starts it)")
			break
		}
		// A hangup (the terminal Neovim runs in closed) is Neovim's to
		// judge: it asks the backend there to shut down, or not, and its
		// end closes our stdin. Caught, not ignored, as for serve-backend.
		signal.Notify(make(chan os.Signal, 1), syscall.SIGHUP)
		rctx, rstop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
		defer rstop()
		err = sshlink.RunBackend(rctx, args[1], version, mode, pid)
	case sshlink.BackendServe:
		// The far end of ssh-backend: the hello line, then the backend
		// on stdio as Neovim would start it here; with --resume PID, a
		// relay to the backend here whose link dropped (-or-new: else a
		// new backend, as without).
		if len(args) == 3 && (args[1] == "--resume" || args[1] == "--resume-or-new") {
			pid, perr := strconv.Atoi(args[2])
			if perr != nil {
				err = fmt.Errorf("usage: agentrun serve-backend [--resume PID|--resume-or-new PID]")
				break
			}
			c, got, derr := editor.DialLingering(pid)
			if errors.Is(derr, sshlink.ErrNothingLingers) && sshlink.TakeOver(pid) {
				// Its Neovim took the link as lost before this machine
				// noticed: the old link is told, and the backend lingers.
				c, got, derr = waitLingering(pid)
			}
			switch {
			case derr == nil:
				if err = sshlink.WriteBackendHello(os.Stdout, version, got, got); err == nil {
					link := sshlink.BoxEnd(os.Stdin, os.Stdout, got)
					editor.RelayTo(ctx, c, link, link)
					link.Close()
				}
			case args[1] == "--resume" && errors.Is(derr, sshlink.ErrNothingLingers):
				err = sshlink.WriteBackendHello(os.Stdout, version, -1, 0)
			case args[1] == "--resume":
				err = derr
			}
			if derr == nil || args[1] == "--resume" {
				break
			}
			// --resume-or-new with nothing lingering: a new backend
		}
		if os.Getenv("AGENTRUN_LOG") == "" {
			if home, herr := os.UserHomeDir(); herr == nil {
				dir := filepath.Join(home, ".local", "state", "agentrun")
				if os.MkdirAll(dir, 0o700) == nil {
					os.Setenv("AGENTRUN_LOG", filepath.Join(dir, "remote-backend.log"))
				}
			}
		}
		// A hangup is the link dropping, which the end of stdin says
		// too: the backend keeps its sessions and commands then
		// (editor.Serve lingers), so only SIGTERM and SIGINT end it.
		// Caught, not ignored: the commands it starts get the default
		// disposition.
		signal.Notify(make(chan os.Signal, 1), syscall.SIGHUP)
		bctx, bstop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
		defer bstop()
		if err = sshlink.WriteBackendHello(os.Stdout, version, 0, os.Getpid()); err == nil {
			// The RPC stream owns the real stdout (in frames, with
			// beats: sshlink.BoxEnd); anything printed goes to stderr.
			link := sshlink.BoxEnd(os.Stdin, os.Stdout, os.Getpid())
			os.Stdout = os.Stderr
			err = editor.ServeOn(bctx, version, link, link)
		}
	case "mcp":
		err = mcptool.Run(ctx, version)
	case "check-sandbox":
		// :checkhealth agentrun asks whether terminal.sandbox can work.
		var path string
		if path, err = sandbox.Available(); err == nil {
			fmt.Println("bubblewrap works here:", path)
		}
	default:
		err = fmt.Errorf("unknown subcommand %q (agentrun --help lists them)", cmd)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "agentrun:", err)
		os.Exit(1)
	}
}

// runGuard runs the backend's guard (package guard) on stdin. It must
// outlive the backend, so the signals that end the backend (Neovim's
// jobstop, a hangup) are ignored; only its stdin's end stops it. Its
// stderr is the backend's log file, if any.
func runGuard() {
	signal.Ignore(syscall.SIGHUP, syscall.SIGINT, syscall.SIGTERM)
	log := slog.New(slog.NewTextHandler(os.Stderr, nil)).With("guard_pid", os.Getpid())
	err := guard.Run(context.Background(), os.Stdin, func(format string, args ...any) {
		log.Info(fmt.Sprintf(format, args...))
	})
	if err != nil {
		log.Error("guard failed", "err", err)
		os.Exit(1)
	}
}

// waitLingering waits (a few seconds at most) for the backend pid, whose
// stale link was just told to end (sshlink.TakeOver), to linger, and
// joins it.
func waitLingering(pid int) (net.Conn, int, error) {
	deadline := time.Now().Add(10 * time.Second)
	for {
		c, got, err := editor.DialLingering(pid)
		if err == nil || !errors.Is(err, sshlink.ErrNothingLingers) || time.Now().After(deadline) {
			return c, got, err
		}
		time.Sleep(100 * time.Millisecond) // it closes its old link's input, then listens
	}
}
