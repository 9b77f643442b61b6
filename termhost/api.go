package termhost

import (
	"time"

	"github.com/agentrun/agentrun.nvim/ahp"
)

// ExitStatus is how a terminal's process ended. Exactly one of Code and
// Signal is set: Code for a normal exit, Signal (a conventional name such
// as "SIGTERM") for a death by signal. Ran is how long it ran (zero when
// not known: a terminal of another host that did not say).
type ExitStatus struct {
	Code   *int
	Signal string
	Ran    time.Duration
}

// codeCopy returns a copy of Code (nil for a death by signal).
func (s ExitStatus) codeCopy() *int {
	if s.Code == nil {
		return nil
	}
	c := *s.Code
	return &c
}

// Output is a snapshot of a terminal's rendered text, as the agent reads it.
type Output struct {
	// Text is rendered text: no escape sequences, "\r" redraws collapsed,
	// "\n" line ends, valid UTF-8, at most the byte limit (the tail is kept).
	Text string
	// Truncated reports that earlier output was dropped to honour the limit.
	Truncated bool
	// Exit is set once the process has exited and its output is drained.
	Exit *ExitStatus
}

// Spec describes the command a terminal runs.
type Spec struct {
	// Command is the program to exec with Args, or, when Shell is set, a
	// whole command line for bash --noprofile --norc -c (internal/lineshell).
	Command string
	Args    []string
	Shell   bool
	// Env is the complete environment as KEY=VALUE; nil means os.Environ().
	Env []string
	// Dir is the absolute working directory; empty means the host
	// process's working directory.
	Dir string
	// ByteLimit bounds the retained rendered text: nil means the host's
	// cap (Options.ByteLimit) and 0 keeps nothing, as an agent's
	// outputByteLimit does.
	ByteLimit *int
	// Cols and Rows are the initial pty size; 0 means 80x24.
	Cols, Rows uint16
	// Title is the initial human-readable title; empty means the command line.
	Title string
	// Claim is the terminal's initial owner; the zero Claim means the
	// local user, {kind: "client", clientId: "local"}.
	Claim ahp.Claim
	// ShellIntegration starts Command, an interactive bash or zsh (Args
	// empty, Shell false), with agentrun's shell integration injected
	// (package shellinteg): it then reports prompts, command lines, exit
	// codes and its cwd, which the terminal's State shows. Another shell
	// starts as it is, without command detection.
	ShellIntegration bool
	// Nonce is the secret an OSC 633;E command line must carry to be
	// trusted. With ShellIntegration, Create makes one when it is empty;
	// set it for a shell integrated some other way.
	Nonce string
	// ID is the terminal's id; empty means the next free "term-N". An id
	// any terminal of the Host ever had is refused.
	ID string
	// Wrap is put in front of the command: a confining launcher such as
	// package sandbox's bwrap argv, which runs the rest. The command is
	// still looked up (and reported missing) as without it.
	Wrap []string
	// Confined says in a few words what Wrap does, for people (status
	// lines, titles); empty when nothing confines the command.
	Confined string
	// Limits bound what the command and everything it starts may use.
	Limits Limits
	// RunOf and Run say that this terminal runs a command again (R in
	// Neovim): RunOf is the first run's id, the row a listing shows it
	// in, and Run which run it is (2 for the first rerun). Zero for a
	// command's first run.
	RunOf string
	Run   int
}

// Limits bound a terminal's command; a zero field is no limit. CPUTime,
// OpenFiles and FileSize are each process's own (rlimits, set before the
// command starts and inherited by its children); Memory and Processes
// count the whole tree together, watched by the Host, which kills the
// tree when it goes over. A command stopped by a limit says so at the end
// of its output (Terminal.LimitHit).
type Limits struct {
	Memory    int64         // bytes resident, all processes together
	Processes int           // processes alive at once
	CPUTime   time.Duration // CPU time per process (SIGXCPU)
	OpenFiles int           // open files per process
	FileSize  int64         // bytes per file written (SIGXFSZ)
}

// Zero reports whether l sets no limit.
func (l Limits) Zero() bool { return l == Limits{} }

// Options configures a Host.
type Options struct {
	// ByteLimit is the rendered-text cap when a Spec gives none: the
	// user's terminal.byte_limit (zero: DefaultByteLimit, 16 MiB).
	ByteLimit int
	// KillGrace is how long Kill waits after SIGTERM before SIGKILL
	// (default 3s).
	KillGrace time.Duration
	// DisplayBytes bounds the raw byte log kept for the display (default
	// 1 MiB: 10000 lines of scrollback at about 100 bytes a line; a
	// display needs no more than its scrollback can show).
	DisplayBytes int
	// IDSuffix is appended to the ids the host makes up ("term-3" +
	// "@devbox"): a client that shows the terminals of several hosts
	// side by side tells them apart by it. Empty: none.
	IDSuffix string
	// IDBase is the number the made-up ids count on from (term-<IDBase+1>);
	// default 0.
	IDBase int
	// Logf receives diagnostics; nil discards them.
	Logf func(format string, args ...any)
	// SessionStarted, when set, is called with a command's pid, which is
	// also the id of the session it leads (every command starts in a
	// session of its own), right after it started and before it can be
	// reaped: /proc/<pid> still describes it; and with the environment
	// entry (MarkerEnv=token) every process the command starts inherits,
	// also one that leaves the session. It runs on Create's goroutine and
	// must not block. A watcher outside the Host (the backend's guard)
	// uses them to kill what a dead Host cannot.
	SessionStarted func(pid int, marker string)
	// SessionEnded, when set, is called once for each SessionStarted,
	// after the terminal was released and cleaned up and no process of
	// its session is left alive (zombies aside). A terminal that is never
	// released stays started, whatever still runs in it. It runs on a
	// goroutine of the terminal's and must not block for long.
	SessionEnded func(pid int)
}
