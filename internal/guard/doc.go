// Package guard cleans up after a backend that dies without cleaning up
// itself (SIGKILL, the OOM killer, a crash in a cgo call): a small
// process, `agentrun guard`, that outlives the backend and kills the
// terminals' processes, and the agents, the backend can no longer kill.
// An agent is registered like a terminal's session: its pid is its
// process group id, which the same rule (process group or session equal
// to the registered id) finds, plus its own marker.
//
// Why a process: when the backend is killed, no code of it runs. Closing
// its ptys hangs them up, which ends most commands, but not one that
// ignores SIGHUP (nohup, a shell's `trap` of HUP). Only another process
// can still act, and the simplest one to trust is a child that does
// nothing but wait for its stdin to end.
//
// The protocol is lines on the guard's stdin, a pipe only the backend
// holds (close-on-exec, so no command inherits it):
//
//	+SID STARTTIME [MARKER]
//	                 a terminal's session started: SID is the pid of its
//	                 leader (termhost starts every command with setsid),
//	                 STARTTIME its start time (procstat.Stat.Start), read while the
//	                 leader could not yet be reaped; MARKER the environment
//	                 entry (NAME=value) every process of the terminal
//	                 inherits (termhost.MarkerEnv)
//	-SID             that session has no process left
//	bye              the backend cleaned up itself
//
// Registrations are counted per SID: once a session's leader is reaped
// its pid may be reused by a new terminal whose +SID can reach the guard
// before the old terminal's -SID does.
//
// At EOF after "bye" the guard exits without killing anything. At EOF
// without it (the backend died) it sends SIGKILL to every process whose
// session id (from the process table, internal/procstat) is a registered SID, or that
// started since its leader with the session's MARKER in its environment
// (it left the session: setsid, a daemon), rescanning
// until none is left or about 2 s have passed, then exits. A SID whose
// leader still exists with another start time is skipped: the pid was
// reused by an unrelated process. Members of a session need no such
// check, because Linux does not hand out a pid while any process still
// has it as its session or process group id: a process in session SID is
// in the session we registered.
//
// The guard ignores SIGHUP, SIGINT and SIGTERM, and the backend starts
// it in a process group of its own, so what ends the backend (Neovim's
// jobstop signals the backend's whole group) does not end the guard. What
// still escapes: a process that left the session and was exec'd with a
// clean environment (env -i, systemd-run), and everything when the guard
// itself is killed too (a SIGKILL of every process, a cgroup teardown).
package guard
