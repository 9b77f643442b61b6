package server

import (
	"fmt"

	"github.com/agentrun/agentrun.nvim/ahp"
	"github.com/agentrun/agentrun.nvim/termhost"
	"github.com/sourcegraph/jsonrpc2"
)

// dispatch applies a client's action, or echoes it to the client alone
// with the reason it was refused. It answers nothing itself (AHP's
// dispatchAction is fire and forget; a request gets an empty result).
func (c *conn) dispatch(p ahp.DispatchActionParams) (any, error) {
	act, err := ahp.DecodeAction(p.Action)
	if err != nil {
		return nil, rpcError(jsonrpc2.CodeInvalidParams, "dispatchAction: %v", err)
	}
	s := c.s
	s.mu.Lock()
	origin := ahp.Origin{ClientID: c.clientID, ClientSeq: p.ClientSeq}
	present := s.presentLocked()
	local := s.local
	s.mu.Unlock()
	// Letting go (agentrun's use of AHP): the holder claims the terminal
	// for "detached", nobody; it goes back to whoever held it before the
	// holder took it (a session: then it may be taken again as the first
	// time), else to the editor that runs it when that editor is there.
	letGo := false
	if c, ok := act.(ahp.ClaimedAction); ok && c.Claim == ahp.ClientClaim(ahp.DetachedClient) {
		letGo = true
		s.mu.Lock()
		prev, had := s.before[c.Terminal]
		s.mu.Unlock()
		switch {
		case had && !(prev.Kind == ahp.ClaimClient && prev.ClientID == origin.ClientID):
			act = ahp.ClaimedAction{Terminal: c.Terminal, Claim: prev}
		case local != "":
			act = ahp.ClaimedAction{Terminal: c.Terminal, Claim: ahp.ClientClaim(local)}
		}
	}
	uri := ahp.ActionTerminal(act)
	reject := func(why string) (any, error) {
		s.mu.Lock()
		defer s.mu.Unlock()
		c.rejectLocked(act, origin, why)
		return nil, nil
	}
	id, err := ahp.TerminalID(uri)
	if err != nil {
		return reject(fmt.Sprintf("%s names no terminal: %v", act.ActionType(), err))
	}
	t, err := s.host.Get(id)
	if err != nil {
		return reject(fmt.Sprintf("no terminal %q here (it was disposed, or never existed)", id))
	}
	var from ahp.Claim // the holder a client's claim replaces
	allow := func(st ahp.TerminalState) error {
		from = st.Claim
		if letGo {
			if h := st.Claim; h.Kind != ahp.ClaimClient || h.ClientID != origin.ClientID {
				return fmt.Errorf("only its holder lets go of a terminal; it is %s's", describe(h))
			}
			return nil
		}
		return mayDispatch(origin.ClientID, act, st, present, local)
	}
	if _, ok := act.(ahp.InputAction); ok {
		// Input is a side effect, published here (not by the terminal);
		// the pty write may take a while and must not hold the server.
		if _, err := t.Dispatch(act, allow); err != nil {
			return reject(err.Error())
		}
		s.mu.Lock()
		s.publishLocked(uri, act, &origin)
		s.mu.Unlock()
		return nil, nil
	}
	// Holding the lock while the terminal publishes: the feed cannot
	// pass the action on before its origin is recorded.
	s.mu.Lock()
	defer s.mu.Unlock()
	seq, err := t.Dispatch(act, allow)
	if err != nil {
		c.rejectLocked(act, origin, err.Error())
		return nil, nil
	}
	if seq == 0 {
		// Nothing changed (the same claim or title): still the client's
		// action, echoed so it knows.
		s.publishLocked(uri, act, &origin)
		return nil, nil
	}
	s.origins[originKey{uri, seq}] = origin
	s.noteClaimLocked(uri, act, from, letGo)
	return nil, nil
}

// noteClaimLocked keeps, when a client takes terminal uri, the holder it
// took it from, and forgets it when the terminal goes back (s.mu held).
// A holder that left (a client not there any more) is not one to give it
// back to: the one before it stays.
func (s *Server) noteClaimLocked(uri string, act ahp.Action, from ahp.Claim, letGo bool) {
	c, ok := act.(ahp.ClaimedAction)
	switch {
	case !ok:
	case letGo || c.Claim.Kind != ahp.ClaimClient:
		delete(s.before, uri)
	case from.Kind == ahp.ClaimClient && from.ClientID != s.local && from.ClientID != ahp.DetachedClient:
		// from a client that left (one there would have refused)
	case from != c.Claim:
		s.before[uri] = from
	}
}

// mayDispatch is the claim rule: a client acts on a terminal it holds; it
// may claim one a session holds, or give its own back to a session, but
// not take one another client holds while that client is there (present:
// connected, or the local editor). A client that left holds nothing.
func mayDispatch(client string, act ahp.Action, st ahp.TerminalState, present map[string]bool, local string) error {
	holder := st.Claim
	mine := holder.Kind == ahp.ClaimClient && holder.ClientID == client
	if holder.Kind == ahp.ClaimClient && !mine && !present[holder.ClientID] {
		holder = ahp.Claim{} // its holder left: anyone may claim it
	}
	if c, ok := act.(ahp.ClaimedAction); ok {
		switch {
		case c.Claim.Kind == ahp.ClaimClient && c.Claim.ClientID != client:
			return fmt.Errorf("a client claims a terminal for itself, not for %q", c.Claim.ClientID)
		case holder.Kind == ahp.ClaimClient && !mine:
			return &HeldError{ClientID: holder.ClientID, Local: local != "" && holder.ClientID == local}
		case c.Claim.Kind == ahp.ClaimSession && !mine && holder.Kind != "" && holder.Session != c.Claim.Session:
			return fmt.Errorf("held by session %q; only its holder can give it to another session", holder.Session)
		}
		return nil
	}
	if mine {
		return nil
	}
	if holder.Kind == "" {
		return fmt.Errorf("%s needs the terminal's claim, which no one there holds; claim it first", act.ActionType())
	}
	return fmt.Errorf("%s needs the terminal's claim, which %s holds; claim it first", act.ActionType(), describe(holder))
}

// describe names a claim's holder for a person.
func describe(c ahp.Claim) string {
	if c.Kind == ahp.ClaimClient {
		return fmt.Sprintf("client %q", c.ClientID)
	}
	if c.ToolCallID != "" {
		return fmt.Sprintf("session %q (tool call %s)", c.Session, c.ToolCallID)
	}
	return fmt.Sprintf("session %q", c.Session)
}

// Claim gives terminal t to client (the local editor's takeover), by the
// same rule as a client's claimed action: not while another client that
// is there holds it. It returns the reason when refused.
func (s *Server) Claim(t *termhost.Terminal, client string) error {
	act := ahp.ClaimedAction{Terminal: t.URI(), Claim: ahp.ClientClaim(client)}
	s.mu.Lock()
	defer s.mu.Unlock()
	present := s.presentLocked()
	present[client] = true
	_, err := t.Dispatch(act, func(st ahp.TerminalState) error { return mayDispatch(client, act, st, present, s.local) })
	if err == nil {
		delete(s.before, t.URI()) // its own editor's now, for good
	}
	return err
}

// rejectLocked echoes act to c alone with the reason the server refused
// it (s.mu held: it is ordered with the actions c gets).
func (c *conn) rejectLocked(act ahp.Action, origin ahp.Origin, why string) {
	c.push(outgoing{env: &ahp.Envelope{Action: act, ServerSeq: c.s.seq, Origin: &origin, RejectionReason: why}, bytes: 256})
}

// HeldError is the refusal of a claim while another client that is there
// holds the terminal.
type HeldError struct {
	ClientID string // the holder
	Local    bool   // the holder is the editor that runs the terminal
}

// Error names the holder as its user knows it and the step that makes
// it let go: "held by another Neovim (host 4242); q in its split there
// lets go of it".
func (e *HeldError) Error() string {
	var nvim, cli int
	switch {
	case e.Local:
		return "held by its own Neovim; :AgentDetach, then :qa there, frees it"
	case scan(e.ClientID, "nvim-%d", &nvim):
		return fmt.Sprintf("held by another Neovim (host %d); q in its split there lets go of it", nvim)
	case scan(e.ClientID, "cli-%d", &cli):
		return fmt.Sprintf("held by `agentrun attach --take` (pid %d); Ctrl-] there lets go of it", cli)
	}
	return fmt.Sprintf("held by client %q; it lets go when it disconnects", e.ClientID)
}

// scan reports whether s is exactly format with one number, into n.
func scan(s, format string, n *int) bool {
	_, err := fmt.Sscanf(s, format, n)
	return err == nil && fmt.Sprintf(format, *n) == s
}
