// Package sshlink takes agentrun's hosts across machines over SSH, with
// nothing listening on TCP: the local side runs `ssh host agentrun
// serve-stdio` and speaks to the remote user's hosts through that one
// channel's stdin and stdout.
//
// # What serve-stdio relays
//
// All the hosts of the user it runs as, the ones `agentrun ls` would list
// there: it finds their sockets in that user's socket directory
// (internal/rundir) and connects to them as that user, so each host's
// own peer-uid check applies as for a local client; a remote user only
// ever reaches their own terminals. One link carries any number of AHP
// connections to these hosts (ls opens one per host; attach one), each a
// channel of its own.
//
// # The wire
//
// Lines, as AHP itself (JSON-RPC 2.0, one JSON object per line).
// serve-stdio first writes a hello line:
//
//	{"agentrun":"serve-stdio","version":"0.1.0","protocol":1}
//
// and from then on every line either way is "<channel> <line>": channel 0
// carries control messages (JSON), the others one AHP connection each,
// relayed verbatim. The client picks the channel numbers:
//
//	0 {"op":"hosts","id":1}            → 0 {"op":"hosts","id":1,"hosts":[4242]}
//	0 {"op":"open","ch":3,"pid":4242}    (then "3 <AHP line>" either way)
//	0 {"op":"close","ch":3}
//	                                   ← 0 {"op":"closed","ch":3,"error":"…"}
//
// A channel's lines may follow its open at once: serve-stdio reads its
// input in order. "closed" says that a channel's host connection ended
// (or never opened, with the reason); lines for a channel that is not
// open are dropped. The link ends with serve-stdio's input: every host
// connection is closed then, as a dropped client's is, and the client
// may reconnect with AHP's reconnect over a new link.
//
// # The whole backend over SSH
//
// `agentrun ssh-backend URL` (RunBackend; what Neovim starts for an agent
// on another machine) runs `ssh host agentrun serve-backend`, which writes
// the same hello line with "serve-backend" (and PID, the backend's), then
// serves the Neovim backend's msgpack-RPC on its stdio in frames with
// beats (beat.go: a link silent for 20 s is taken as dead on both
// sides); ssh-backend checks the hello and from then on relays the data
// both ways. Its errors are the same sentences. With --resume PID,
// serve-backend instead joins the link to the backend there whose link
// dropped (package editor: RelayTo), first telling a stale link that
// still holds it to end (TakeOver); its hello's Lingering names it, or
// is -1 when none waits (DialBackend's ErrNothingLingers).
//
// # Who uses it
//
// Remote is a machine with a link that starts again when it drops, and
// Remote.Resume resumes an AHP connection over it: `agentrun attach
// ssh://…` (package hostcli) and Neovim's :AgentAttach ssh://… (package
// editor, the remotes part) share them. Neovim's backend makes its
// remotes with NewBatchRemote, and ssh-backend dials with DialBackend:
// both run ssh in batch mode, as it has no terminal there to ask for a
// password on.
package sshlink

// Protocol is the version of the wire above; a client and a serve-stdio
// of different versions refuse each other (the versions of agentrun must
// match anyway).
const Protocol = 2

// Hello is serve-stdio's first line.
type Hello struct {
	Agentrun string `json:"agentrun"` // "serve-stdio"
	Version  string `json:"version"`  // the remote agentrun's version
	Protocol int    `json:"protocol"`
	// Lingering is set by `serve-backend --resume`: the process id of
	// the lingering backend this link now reaches, or -1 when none of
	// the user's waits for a link there.
	Lingering int `json:"lingering,omitempty"`
	// PID is serve-backend's: the process id of the backend this link
	// reaches (a new one's, or the lingering one's).
	PID int `json:"pid,omitempty"`
}

// Control is a message on channel 0.
type Control struct {
	Op    string `json:"op"` // hosts, open, close, closed
	ID    int    `json:"id,omitempty"`
	Ch    int    `json:"ch,omitempty"`
	PID   int    `json:"pid,omitempty"`
	Hosts []int  `json:"hosts,omitempty"`
	Error string `json:"error,omitempty"`
}
