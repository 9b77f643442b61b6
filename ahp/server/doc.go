// Package server serves a termhost.Host to other programs over a Unix
// socket as the Agent Host Protocol's terminal part (JSON-RPC 2.0, one
// JSON object per line): a second editor, the `agentrun` CLI or anything
// that speaks AHP can list the terminals, watch one live, type into one it
// holds, take one over, create and dispose of them.
//
// # Ordering
//
// Every action the server sends has a serverSeq, one counter for the
// whole server. A terminal's actions come from one termhost subscription
// (a feed, started when the terminal is first subscribed and kept until
// it is gone), which also keeps the server's own copy of the terminal's
// state: a snapshot is that copy at the serverSeq it reports, so a client
// that applies the later actions follows the terminal exactly. Every
// message to a client (answers and actions alike) goes through one queue
// per connection, filled under the server's lock, so a subscribe's answer
// always comes before the actions that follow its snapshot.
//
// # Nobody waits on a client
//
// The pty read loop never waits on a feed (termhost's subscriptions are
// bounded logs), and a feed never waits on a connection: a client whose
// queue passes MaxQueueBytes is disconnected, and may reconnect.
//
// # Reconnect
//
// The server keeps the newest envelopes it sent (a bounded log).
// reconnect{lastSeenServerSeq} answers with the envelopes of the client's
// subscriptions after that seq when the log still holds them all, else
// with fresh snapshots.
//
// # Who may connect
//
// Only processes of the user the server runs as: the peer's uid
// (SO_PEERCRED on Linux, LOCAL_PEERCRED on macOS) is checked on every connection, besides the socket's
// mode (0600) and its directory's (0700, internal/rundir).
//
// # Claims
//
// A client may type into, resize, rename or clear a terminal only while
// it holds it (a client claim with its clientId); it may claim a terminal
// a session holds (taking it over from an agent) but not one another
// client holds. The check and the change are one step (termhost's
// Dispatch), so when two clients claim at once exactly one wins; the other
// gets its action back with a rejectionReason.
package server
