package server

import (
	"encoding/json"
	"os"
	"slices"

	"github.com/agentrun/agentrun.nvim/ahp"
	"github.com/sourcegraph/jsonrpc2"
)

// initialize opens the connection: the protocol version, the client's
// id, and snapshots of its initial subscriptions.
func (c *conn) initialize(req *jsonrpc2.Request, p ahp.InitializeParams) (any, error) {
	if !slices.Contains(p.ProtocolVersions, ahp.ProtocolVersion) {
		return nil, rpcError(ahp.CodeUnsupportedProtocolVersion, "this host speaks AHP %s, not any of %q", ahp.ProtocolVersion, p.ProtocolVersions)
	}
	s := c.s
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := c.openLocked(ahp.MethodInitialize, p.ClientID); err != nil {
		return nil, err
	}
	res := ahp.InitializeResult{ProtocolVersion: ahp.ProtocolVersion, ServerSeq: s.seq, Snapshots: c.subscribeAllLocked(p.InitialSubscriptions)}
	if home, err := os.UserHomeDir(); err == nil {
		res.DefaultDirectory = ahp.FileURI(home)
	}
	s.opts.Logf("ahp server: client %q connected", c.clientID)
	c.answer(req, res, nil)
	return queued, nil
}

// reconnect resumes a client: the envelopes it missed, or snapshots when
// the server no longer has them all.
func (c *conn) reconnect(req *jsonrpc2.Request, p ahp.ReconnectParams) (any, error) {
	s := c.s
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := c.openLocked(ahp.MethodReconnect, p.ClientID); err != nil {
		return nil, err
	}
	var missing []string
	for _, uri := range p.Subscriptions {
		if uri == ahp.RootURI || s.feeds[uri] != nil && !s.feeds[uri].gone {
			c.subs[uri] = true
		} else {
			missing = append(missing, uri)
		}
	}
	if p.LastSeenServerSeq <= s.seq {
		if envs, ok := s.log.since(p.LastSeenServerSeq, c.subs); ok {
			s.opts.Logf("ahp server: client %q reconnected: %d actions replayed", c.clientID, len(envs))
			c.answer(req, ahp.ReconnectResult{Type: ahp.ReconnectReplay, Actions: envs, Missing: missing}, nil)
			return queued, nil
		}
	}
	// Too far behind (or another server's seq): fresh snapshots.
	c.subs = make(map[string]bool)
	res := ahp.ReconnectResult{Type: ahp.ReconnectSnapshot, Snapshots: c.subscribeAllLocked(p.Subscriptions)}
	s.opts.Logf("ahp server: client %q reconnected with snapshots", c.clientID)
	c.answer(req, res, nil)
	return queued, nil
}

// openLocked makes c the connection of client id, once: what initialize
// and reconnect (method) both do first; s.mu held.
func (c *conn) openLocked(method, id string) error {
	if id == "" {
		return rpcError(jsonrpc2.CodeInvalidParams, "%s: clientId is empty", method)
	}
	if c.ready {
		return rpcError(jsonrpc2.CodeInvalidRequest, "%s: this connection is already initialized (as %q)", method, c.clientID)
	}
	c.clientID, c.ready = id, true
	c.s.rootIsLocked(c.s.host.Listing()) // what it holds shows as held again
	return nil
}

// subscribeAllLocked subscribes c to each of uris and returns their
// snapshots (none for a resource that does not exist); s.mu held.
func (c *conn) subscribeAllLocked(uris []string) []ahp.Snapshot {
	snaps := []ahp.Snapshot{}
	for _, uri := range uris {
		if snap, ok := c.subscribeLocked(uri); ok {
			snaps = append(snaps, snap)
		}
	}
	return snaps
}

// subscribe answers with the resource's snapshot; its later actions follow.
func (c *conn) subscribe(req *jsonrpc2.Request, uri string) (any, error) {
	s := c.s
	s.mu.Lock()
	defer s.mu.Unlock()
	snap, ok := c.subscribeLocked(uri)
	if !ok {
		return nil, rpcError(ahp.CodeNotFound, "no resource %q here (the root is %s; terminals are listed there)", uri, ahp.RootURI)
	}
	c.answer(req, ahp.SubscribeResult{Snapshot: snap}, nil)
	return queued, nil
}

// subscribeLocked subscribes c to uri and returns its snapshot (s.mu
// held); false for a resource that does not exist.
func (c *conn) subscribeLocked(uri string) (ahp.Snapshot, bool) {
	s := c.s
	var state any
	if uri == ahp.RootURI {
		s.rootIsLocked(s.host.Listing())
		state = s.root
	} else {
		f := s.feedLocked(uri)
		if f == nil || f.gone {
			return ahp.Snapshot{}, false
		}
		state = f.state
	}
	b, err := json.Marshal(state)
	if err != nil {
		return ahp.Snapshot{}, false
	}
	c.subs[uri] = true
	return ahp.Snapshot{Resource: uri, State: b, FromSeq: s.seq}, true
}
