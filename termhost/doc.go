// Package termhost runs commands in real ptys and keeps what they print:
// rendered text for an agent, raw bytes for a display. It knows nothing of
// ACP or Neovim.
//
// # Lifecycle
//
// Host.Create validates the spec (absolute, existing Dir; a command found
// on the PATH of the terminal's own environment, or a line run by bash
// --noprofile --norc -c (/bin/sh without bash: internal/lineshell) when
// Spec.Shell), starts the command on a new pty with Setsid and Setctty, and
// returns at once. The command leads its own session and process group
// (pgid == pid), so Kill, Signal and Release act on the group: background
// children die with it. Kill sends SIGTERM (and SIGCONT, so a stopped job
// can act on it; an interactive shell, Spec.ShellIntegration, also gets
// SIGHUP, which it passes on to its jobs in their own groups) and arms a
// SIGKILL for whatever of the group, or of any other group of its session
// (such jobs), is alive after Options.KillGrace; "alive" skips zombies,
// found through /proc.
// Release kills the same way when anything of the group is left (even
// after the command exited), lets pending Waits return the kill's status,
// closes the pty once the output is drained, and makes the Host forget the
// id: Get then fails with `unknown terminal "id"`, and the Terminal's
// methods that can fail return ErrReleased. Host.Close releases everything
// and waits (at most KillGrace plus a second) until every group is gone.
// Processes that start their own session (setsid, daemons) leave the group;
// they are found through the marker every command's environment carries
// (MarkerEnv, tree.go) and killed with it. Only one exec'd with a clean
// environment outside the session is out of reach.
//
// # The read loop
//
// Each terminal has one goroutine reading the pty master (readloop.go).
// Every chunk goes through shellinteg.Filter, which cuts shell
// integration markers (OSC 633/133) out; what passes is appended to the
// display's log (internal/rawlog), the agent's rendered text
// (internal/render's Store) and the AHP state's content, and nothing else
// happens: no channel send that can block (the log's notification is a
// 1-buffered, non-blocking send, subscribers are woken by closing a
// channel), no call into a consumer. The master is a
// non-blocking descriptor on Go's poller (creack/pty's ioctls leave it
// blocking; startPty duplicates it), so read deadlines work and Close
// unblocks a pending Read.
//
// # The drain rule
//
// The exit is reported (Done closed, Wait returns, Output().Exit set) only
// when the command has exited and its output has been read to the end. A
// second goroutine reaps the command; the read loop decides "the end":
//
//   - EOF: the read fails with EIO once every holder of the pty's slave
//     side has closed it, after all buffered output was read. This is the
//     usual case and costs no waiting.
//   - A background child that still holds the slave open means there is no
//     EOF. After the command exited, the loop reads with a deadline: the
//     output is drained once the pty has been quiet for 100ms, or at the
//     latest one second after the exit if the child keeps printing.
//
// Everything the command itself wrote sits in the pty's buffer when it
// exits, and the loop reads that buffer far faster than a second, so none
// of it is lost. After the exit is reported the loop keeps reading what
// stragglers print, into the rendered text only, until EOF or Release.
// The display's log is closed at EOF or when the exit is reported,
// whichever comes first, so a display can show the exit; with Limits it
// waits for the exit, so the line that says a limit stopped the command
// (limits.go) reaches the display too.
//
// # AHP state and actions
//
// Each terminal has an AHP state (package ahp: title, cwd, size, claim,
// exit, content parts, supportsCommandDetection) changed only by actions,
// with the reducer's rules, each numbered in order (state.go). The
// read loop applies terminal/data (the filtered bytes, an incomplete UTF-8
// character held back for the next read) and what shellinteg.Parser makes
// of each OSC payload (commandExecuted/Finished, cwdChanged,
// titleChanged), in stream order, so command boundaries fall exactly
// between the bytes around each marker; Resize applies resized, the exit
// applies exited before Done closes, Claims().Set applies claimed. Content is
// bounded: the parts' text lives in one ring of the newest 256 KiB
// (content.go).
//
// The API is a set of commands plus one ordered stream per terminal:
// State/StateSummary copy the state; Dispatch takes the actions a client
// may send (input, resized, claimed, titleChanged, cleared); Subscribe
// returns a state and a Subscription whose Next yields every later action
// with its sequence number, or a fresh state (resync) when the subscriber
// fell further behind than the bounded log keeps. The reader never waits
// for a subscriber. While nobody subscribes, terminal/data costs one copy
// into the ring and no allocation; a subscriber's data action is a copy.
//
// The Host keeps the root listing (listing.go: a TerminalInfo per live
// terminal), rebuilt and replaced whole (root/terminalsChanged) when a
// terminal is created or released or its title, claim or exit changes;
// WatchListing returns it with a channel closed at the next change.
//
// Spec.ShellIntegration starts bash or zsh with our scripts injected
// (shellinteg.Prepare, in a per-terminal directory under one temporary
// directory per Host, removed by Close) and a fresh nonce, so command
// lines the shell reports are trusted and others are not.
package termhost
