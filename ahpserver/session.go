package ahpserver

import (
	"encoding/json"
	"os"
	"slices"

	"github.com/agentrun/agentrun.nvim/termhost/ahp"
	"github.com/sourcegraph/jsonrpc2"
)

// initialize opens the connection: the protocol version, the client's
// id, and snapshots of its initial subscriptions.
func (c *conn) initialize(req *jsonrpc2.Request, p ahp.InitializeParams) (any, error) {
	if !slices.Contains(p.ProtocolVersions, ahp.ProtocolVersion) {
		return nil, rpcError(ahp.CodeUnsupportedProtocolVersion, "this host speaks AHP %s, not any of %q", ahp.ProtocolVersion, p.ProtocolVersions)
	}
	if p.ClientID == "" {
		return nil, rpcError(jsonrpc2.CodeInvalidParams, "initialize: clientId is empty")
	}
	s := c.s
	s.mu.Lock()
	defer s.mu.Unlock()
	if c.ready {
		return nil, rpcError(jsonrpc2.CodeInvalidRequest, "initialize: this connection is already initialized (as %q)", c.clientID)
	}
	c.clientID, c.ready = p.ClientID, true
	res := ahp.InitializeResult{ProtocolVersion: ahp.ProtocolVersion, ServerSeq: s.seq, Snapshots: []ahp.Snapshot{}}
	if home, err := os.UserHomeDir(); err == nil {
		res.DefaultDirectory = ahp.FileURI(home)
	}
	for _, uri := range p.InitialSubscriptions {
		if snap, ok := c.subscribeLocked(uri); ok {
			res.Snapshots = append(res.Snapshots, snap)
		}
	}
	s.opts.Logf("ahpserver: client %q connected", c.clientID)
	c.answer(req, res, nil)
	return queued, nil
}

// reconnect resumes a client: the envelopes it missed, or snapshots when
// the server no longer has them all.
func (c *conn) reconnect(req *jsonrpc2.Request, p ahp.ReconnectParams) (any, error) {
	if p.ClientID == "" {
		return nil, rpcError(jsonrpc2.CodeInvalidParams, "reconnect: clientId is empty")
	}
	s := c.s
	s.mu.Lock()
	defer s.mu.Unlock()
	if c.ready {
		return nil, rpcError(jsonrpc2.CodeInvalidRequest, "reconnect: this connection is already initialized (as %q)", c.clientID)
	}
	c.clientID, c.ready = p.ClientID, true
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
			s.opts.Logf("ahpserver: client %q reconnected: %d actions replayed", c.clientID, len(envs))
			c.answer(req, ahp.ReconnectResult{Type: ahp.ReconnectReplay, Actions: envs, Missing: missing}, nil)
			return queued, nil
		}
	}
	// Too far behind (or another server's seq): fresh snapshots.
	res := ahp.ReconnectResult{Type: ahp.ReconnectSnapshot, Snapshots: []ahp.Snapshot{}}
	c.subs = make(map[string]bool)
	for _, uri := range p.Subscriptions {
		if snap, ok := c.subscribeLocked(uri); ok {
			res.Snapshots = append(res.Snapshots, snap)
		}
	}
	s.opts.Logf("ahpserver: client %q reconnected with snapshots", c.clientID)
	c.answer(req, res, nil)
	return queued, nil
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
