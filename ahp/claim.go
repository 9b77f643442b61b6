package ahp

import (
	"fmt"
	"strings"
)

// Claim records who holds a terminal: a client (a connected editor or
// CLI, for its user) or a session, optionally scoped to one of its turns
// and tool calls. These are AHP's words; a session is whatever the host's
// user calls one (agentrun: an ACP session).
type Claim struct {
	Kind       string `json:"kind"` // ClaimSession or ClaimClient
	Session    string `json:"session,omitempty"`
	ToolCallID string `json:"toolCallId,omitempty"`
	ClientID   string `json:"clientId,omitempty"`
	// TurnID is the AHP session claim's optional turn (set with ToolCallID
	// while a tool call uses the terminal).
	TurnID string `json:"turnId,omitempty"`
}

// The claim kinds (AHP): a client (the user's editor) or a session (an
// agent's, in the background or, with ToolCallID, in use by a tool call).
const (
	ClaimClient  = "client"
	ClaimSession = "session"
)

// DetachedClient is the client a detached terminal is held by once the
// editor that detached it has left: nobody that is there; any client may
// take it over.
const DetachedClient = "detached"

// ClientClaim is the claim of client id: the user drives the terminal.
func ClientClaim(id string) Claim { return Claim{Kind: ClaimClient, ClientID: id} }

// SessionClaim is the claim of a session, in use by tool call toolCall
// ("": in the background).
func SessionClaim(session, toolCall string) Claim {
	return Claim{Kind: ClaimSession, Session: session, ToolCallID: toolCall}
}

// ByClient reports whether a client (the user) holds the terminal.
func (c Claim) ByClient() bool { return c.Kind == ClaimClient }

// Validate reports whether c is a well-formed AHP claim: a client claim
// names its client, a session claim its session, and nothing else.
func (c Claim) Validate() error {
	switch c.Kind {
	case ClaimClient:
		if c.ClientID == "" {
			return fmt.Errorf("client claim has no clientId")
		}
		if c.Session != "" || c.TurnID != "" || c.ToolCallID != "" {
			return fmt.Errorf("client claim %q carries session fields", c.ClientID)
		}
	case ClaimSession:
		if c.Session == "" {
			return fmt.Errorf("session claim has no session")
		}
		if c.ClientID != "" {
			return fmt.Errorf("session claim %q carries clientId %q", c.Session, c.ClientID)
		}
	default:
		return fmt.Errorf("claim kind %q is neither \"session\" nor \"client\"", c.Kind)
	}
	return nil
}

// ClientName names client id for a person: "Neovim 4242" (an editor's
// host, nvim-PID), "agentrun attach 4242" (the CLI, cli-PID), else
// "client ID".
func ClientName(id string) string {
	for _, k := range []struct{ prefix, name string }{{"nvim-", "Neovim "}, {"cli-", "agentrun attach "}} {
		if pid, ok := strings.CutPrefix(id, k.prefix); ok && pid != "" && strings.Trim(pid, "0123456789") == "" {
			return k.name + pid
		}
	}
	return "client " + id
}
