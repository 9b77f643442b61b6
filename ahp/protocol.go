package ahp

import (
	"encoding/json"
	"fmt"
)

// The protocol messages a host and its clients exchange over JSON-RPC 2.0
// (reference/ahp/schema/commands.schema.json and actions.schema.json), for
// the terminal part of AHP: the handshake, subscriptions, dispatched
// actions and the terminal commands.

// ProtocolVersion is the AHP version agentrun speaks.
const ProtocolVersion = "0.1.0"

// RootURI names the root state (the terminal listing).
const RootURI = "agenthost:/root"

// JSON-RPC method names.
const (
	MethodInitialize      = "initialize"
	MethodReconnect       = "reconnect"
	MethodSubscribe       = "subscribe"
	MethodUnsubscribe     = "unsubscribe" // a notification
	MethodDispatchAction  = "dispatchAction"
	MethodCreateTerminal  = "createTerminal"
	MethodDisposeTerminal = "disposeTerminal"
	MethodAction          = "action" // server → client notification
)

// Error codes beyond JSON-RPC's own.
const (
	CodeUnsupportedProtocolVersion = -32005
	CodeNotFound                   = -32004 // agentrun: an unknown terminal
)

// InitializeParams opens a connection.
type InitializeParams struct {
	ProtocolVersions     []string `json:"protocolVersions"`
	ClientID             string   `json:"clientId"`
	InitialSubscriptions []string `json:"initialSubscriptions,omitempty"`
	Locale               string   `json:"locale,omitempty"`
}

// InitializeResult answers initialize.
type InitializeResult struct {
	ProtocolVersion  string     `json:"protocolVersion"`
	ServerSeq        uint64     `json:"serverSeq"`
	Snapshots        []Snapshot `json:"snapshots"`
	DefaultDirectory string     `json:"defaultDirectory,omitempty"`
}

// Snapshot is a resource's state at serverSeq FromSeq: later actions of
// the resource have a greater serverSeq.
type Snapshot struct {
	Resource string          `json:"resource"`
	State    json.RawMessage `json:"state"` // RootState or TerminalState
	FromSeq  uint64          `json:"fromSeq"`
}

// ReconnectParams resumes a dropped connection.
type ReconnectParams struct {
	ClientID          string   `json:"clientId"`
	LastSeenServerSeq uint64   `json:"lastSeenServerSeq"`
	Subscriptions     []string `json:"subscriptions"`
}

// Reconnect result types.
const (
	ReconnectReplay   = "replay"
	ReconnectSnapshot = "snapshot"
)

// ReconnectResult answers reconnect: the missed envelopes (Type replay,
// with the subscriptions that cannot be resumed in Missing) or fresh
// snapshots (Type snapshot) when the gap is older than the host keeps.
type ReconnectResult struct {
	Type      string     `json:"type"`
	Actions   []Envelope `json:"actions,omitempty"`
	Missing   []string   `json:"missing,omitempty"`
	Snapshots []Snapshot `json:"snapshots,omitempty"`
}

// SubscribeParams asks for a resource's snapshot and later actions.
type SubscribeParams struct {
	Resource string `json:"resource"`
}

// SubscribeResult answers subscribe.
type SubscribeResult struct {
	Snapshot Snapshot `json:"snapshot"`
}

// DispatchActionParams sends a client action (fire and forget: the
// answer comes as the action's envelope, with a rejectionReason when the
// host refused it).
type DispatchActionParams struct {
	ClientSeq uint64          `json:"clientSeq"`
	Action    json.RawMessage `json:"action"`
}

// CreateTerminalParams starts a terminal (the user's shell) at a URI the
// client chose.
type CreateTerminalParams struct {
	Terminal string `json:"terminal"`
	Claim    Claim  `json:"claim"`
	Name     string `json:"name,omitempty"`
	Cwd      string `json:"cwd,omitempty"`
	Cols     int    `json:"cols,omitempty"`
	Rows     int    `json:"rows,omitempty"`
}

// DisposeTerminalParams kills a terminal's process and forgets it.
type DisposeTerminalParams struct {
	Terminal string `json:"terminal"`
}

// Origin says which client dispatched an action.
type Origin struct {
	ClientID  string `json:"clientId"`
	ClientSeq uint64 `json:"clientSeq"`
}

// Envelope carries one action with its serverSeq; Origin is set for a
// client's action, RejectionReason when the host refused it (then only
// the client that sent it gets the envelope).
type Envelope struct {
	Action          Action  `json:"-"`
	ServerSeq       uint64  `json:"serverSeq"`
	Origin          *Origin `json:"origin,omitempty"`
	RejectionReason string  `json:"rejectionReason,omitempty"`
}

type envelopeWire struct {
	Action          json.RawMessage `json:"action"`
	ServerSeq       uint64          `json:"serverSeq"`
	Origin          *Origin         `json:"origin,omitempty"`
	RejectionReason string          `json:"rejectionReason,omitempty"`
}

// MarshalJSON writes the envelope with its action.
func (e Envelope) MarshalJSON() ([]byte, error) {
	a, err := json.Marshal(e.Action)
	if err != nil {
		return nil, err
	}
	return json.Marshal(envelopeWire{a, e.ServerSeq, e.Origin, e.RejectionReason})
}

// UnmarshalJSON reads an envelope, decoding its action (DecodeAction).
func (e *Envelope) UnmarshalJSON(data []byte) error {
	var w envelopeWire
	if err := json.Unmarshal(data, &w); err != nil {
		return err
	}
	a, err := DecodeAction(w.Action)
	if err != nil {
		return fmt.Errorf("envelope %d: %w", w.ServerSeq, err)
	}
	*e = Envelope{Action: a, ServerSeq: w.ServerSeq, Origin: w.Origin, RejectionReason: w.RejectionReason}
	return nil
}

// The layout agentrun's host writes action notifications in, one per
// line: every one starts with ActionLinePrefix, a terminal/data one (with
// no origin) continues with DataLinePrefix, the terminal's URI, `,"data":`,
// the data, `},"serverSeq":`, the number and `}}}`. A client may parse
// those on a fast path and must take any other line the general way.
const (
	ActionLinePrefix = `{"jsonrpc":"2.0","method":"action","params":`
	DataLinePrefix   = `{"envelope":{"action":{"type":"terminal/data","terminal":`
)

// ActionParams is the "action" notification's params.
type ActionParams struct {
	Envelope Envelope `json:"envelope"`
}
