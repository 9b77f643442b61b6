// Package client connects to an agentrun host (package ahp/server) over
// its Unix socket and speaks AHP's terminal part: initialize, subscribe,
// dispatch actions, create and dispose of terminals. Actions arrive in
// order on Envelopes; the client keeps nothing else.
package client

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"strconv"
	"strings"
	"sync"

	"github.com/agentrun/agentrun.nvim/ahp"
	"github.com/agentrun/agentrun.nvim/internal/jsonstr"
	"github.com/agentrun/agentrun.nvim/internal/render"
	"github.com/agentrun/agentrun.nvim/internal/rpcline"
	"github.com/sourcegraph/jsonrpc2"
)

// Client is one connection to a host.
type Client struct {
	rpc *jsonrpc2.Conn
	id  string

	mu        sync.Mutex
	seq       uint64 // clientSeq of the last dispatched action
	lastSeen  uint64 // the newest serverSeq received
	pending   []ahp.Envelope
	wake      chan struct{} // 1-buffered: pending grew
	envelopes chan ahp.Envelope
}

// Dial connects to the host listening on socket path. It does not
// initialize: call Initialize or Reconnect next.
func Dial(ctx context.Context, path, clientID string) (*Client, error) {
	var d net.Dialer
	nc, err := d.DialContext(ctx, "unix", path)
	if err != nil {
		return nil, fmt.Errorf("no host answers on %s: %w", path, err)
	}
	return New(nc, clientID), nil
}

// New is a client on an open connection to a host (a host reached
// through package sshlink, say). It does not initialize: call Initialize
// or Reconnect next.
func New(nc net.Conn, clientID string) *Client {
	c := &Client{id: clientID, envelopes: make(chan ahp.Envelope, 64), wake: make(chan struct{}, 1)}
	stream := rpcline.New(nc)
	stream.Intercept = c.fastAction
	c.rpc = jsonrpc2.NewConn(context.Background(), stream, jsonrpc2.HandlerWithError(c.handle).SuppressErrClosed())
	go c.relay()
	return c
}

// relay hands the received envelopes to Envelopes, so the connection's
// reader never waits on the consumer, and closes it after the last one
// once the connection has ended.
func (c *Client) relay() {
	defer close(c.envelopes)
	for {
		c.mu.Lock()
		batch := c.pending
		c.pending = nil
		c.mu.Unlock()
		for _, e := range batch {
			c.envelopes <- e
		}
		if len(batch) > 0 {
			continue
		}
		select {
		case <-c.wake:
		case <-c.rpc.DisconnectNotify():
			c.mu.Lock()
			rest := c.pending
			c.pending = nil
			c.mu.Unlock()
			for _, e := range rest {
				c.envelopes <- e
			}
			return
		}
	}
}

// ID returns the client's id.
func (c *Client) ID() string { return c.id }

// Envelopes delivers the host's actions in serverSeq order; it is closed
// when the connection ends. Read it promptly: a client that falls far
// behind is disconnected by the host.
func (c *Client) Envelopes() <-chan ahp.Envelope { return c.envelopes }

// LastSeen returns the newest serverSeq received (for Reconnect).
func (c *Client) LastSeen() uint64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.lastSeen
}

// Done is closed when the connection has ended.
func (c *Client) Done() <-chan struct{} { return c.rpc.DisconnectNotify() }

// Close ends the connection.
func (c *Client) Close() error { return c.rpc.Close() }

func (c *Client) handle(_ context.Context, _ *jsonrpc2.Conn, req *jsonrpc2.Request) (any, error) {
	if req.Method != ahp.MethodAction || req.Params == nil {
		return nil, nil
	}
	var p ahp.ActionParams
	if err := json.Unmarshal(*req.Params, &p); err != nil {
		return nil, err
	}
	c.deliver(p.Envelope)
	return nil, nil
}

// fastAction takes the host's terminal/data notifications off the line
// before jsonrpc2 sees them (they are almost all of a flood): the host
// writes them in one fixed layout (package ahp/server), parsed
// here in one pass. Anything else takes the general way.
func (c *Client) fastAction(line []byte) bool {
	rest, ok := bytes.CutPrefix(line, []byte(ahp.ActionLinePrefix+ahp.DataLinePrefix))
	if !ok {
		return false
	}
	termTok, ok := jsonstr.Token(rest)
	if !ok {
		return false
	}
	rest, ok = bytes.CutPrefix(rest[len(termTok):], []byte(`,"data":`))
	if !ok {
		return false
	}
	dataTok, ok := jsonstr.Token(rest)
	if !ok {
		return false
	}
	rest, ok = bytes.CutPrefix(rest[len(dataTok):], []byte(`},"serverSeq":`))
	if !ok {
		return false
	}
	digits, ok := bytes.CutSuffix(rest, []byte("}}}"))
	if !ok {
		return false
	}
	seq, err := strconv.ParseUint(string(digits), 10, 64)
	if err != nil {
		return false
	}
	term, ok1 := jsonstr.Unquote(termTok)
	data, ok2 := jsonstr.Unquote(dataTok)
	if !ok1 || !ok2 {
		return false
	}
	c.deliver(ahp.Envelope{Action: ahp.DataAction{Terminal: term, Data: data}, ServerSeq: seq})
	return true
}

// deliver queues e for Envelopes.
func (c *Client) deliver(e ahp.Envelope) {
	c.mu.Lock()
	if e.RejectionReason == "" && e.ServerSeq > c.lastSeen {
		c.lastSeen = e.ServerSeq
	}
	c.pending = append(c.pending, e)
	c.mu.Unlock()
	select {
	case c.wake <- struct{}{}:
	default:
	}
}

// call makes a request and says plainly what failed.
func (c *Client) call(ctx context.Context, method string, params, result any) error {
	err := c.rpc.Call(ctx, method, params, result)
	var re *jsonrpc2.Error
	if errors.As(err, &re) {
		return &Error{Code: re.Code, Message: re.Message}
	}
	if errors.Is(err, jsonrpc2.ErrClosed) {
		return errors.New("the host closed the connection")
	}
	return err
}

// Error is the host's answer to a request it refused.
type Error struct {
	Code    int64
	Message string
}

func (e *Error) Error() string { return e.Message }

// Initialize opens the session with the host, subscribing to subs.
func (c *Client) Initialize(ctx context.Context, subs ...string) (ahp.InitializeResult, error) {
	var res ahp.InitializeResult
	err := c.call(ctx, ahp.MethodInitialize, ahp.InitializeParams{ProtocolVersions: []string{ahp.ProtocolVersion}, ClientID: c.id, InitialSubscriptions: subs}, &res)
	if err == nil {
		c.seen(res.ServerSeq)
	}
	return res, err
}

// Reconnect resumes after a dropped connection (on a new Client with the
// same id): the missed actions, or snapshots.
func (c *Client) Reconnect(ctx context.Context, lastSeen uint64, subs []string) (ahp.ReconnectResult, error) {
	var res ahp.ReconnectResult
	err := c.call(ctx, ahp.MethodReconnect, ahp.ReconnectParams{ClientID: c.id, LastSeenServerSeq: lastSeen, Subscriptions: subs}, &res)
	if err == nil {
		c.seen(lastSeen)
		for _, e := range res.Actions {
			c.seen(e.ServerSeq)
		}
		for _, s := range res.Snapshots {
			c.seen(s.FromSeq)
		}
	}
	return res, err
}

func (c *Client) seen(seq uint64) {
	c.mu.Lock()
	c.lastSeen = max(c.lastSeen, seq)
	c.mu.Unlock()
}

// Subscribe returns a resource's snapshot; its actions follow on
// Envelopes.
func (c *Client) Subscribe(ctx context.Context, uri string) (ahp.Snapshot, error) {
	var res ahp.SubscribeResult
	err := c.call(ctx, ahp.MethodSubscribe, ahp.SubscribeParams{Resource: uri}, &res)
	return res.Snapshot, err
}

// Dispatch sends an action and returns its clientSeq: its envelope comes
// back on Envelopes with that origin, with a RejectionReason when refused.
func (c *Client) Dispatch(ctx context.Context, act ahp.Action) (uint64, error) {
	b, err := json.Marshal(act)
	if err != nil {
		return 0, err
	}
	c.mu.Lock()
	c.seq++
	seq := c.seq
	c.mu.Unlock()
	return seq, c.call(ctx, ahp.MethodDispatchAction, ahp.DispatchActionParams{ClientSeq: seq, Action: b}, nil)
}

// CreateTerminal starts a shell in a new terminal at uri.
func (c *Client) CreateTerminal(ctx context.Context, p ahp.CreateTerminalParams) error {
	return c.call(ctx, ahp.MethodCreateTerminal, p, nil)
}

// DisposeTerminal kills a terminal and forgets it.
func (c *Client) DisposeTerminal(ctx context.Context, uri string) error {
	return c.call(ctx, ahp.MethodDisposeTerminal, ahp.DisposeTerminalParams{Terminal: uri}, nil)
}

// TerminalState decodes a terminal snapshot's state.
func TerminalState(s ahp.Snapshot) (ahp.TerminalState, error) {
	var st ahp.TerminalState
	if err := json.Unmarshal(s.State, &st); err != nil {
		return st, fmt.Errorf("snapshot of %s: %w", s.Resource, err)
	}
	return st, nil
}

// LastLine is the last non-empty line of a terminal's content as a
// person reads it (escapes removed, redraws collapsed): what a listing's
// LAST LINE column shows.
func LastLine(st ahp.TerminalState) string {
	const tail = 64 << 10
	text := st.Text()
	if len(text) > tail {
		text = text[len(text)-tail:]
	}
	s := render.NewStore(tail)
	s.Append([]byte(text))
	s.Flush()
	rendered, _ := s.Snapshot()
	lines := strings.Split(strings.TrimRight(rendered, "\n "), "\n")
	return strings.TrimSpace(lines[len(lines)-1])
}

// RootState decodes the root snapshot's state.
func RootState(s ahp.Snapshot) (ahp.RootState, error) {
	var st ahp.RootState
	if err := json.Unmarshal(s.State, &st); err != nil {
		return st, fmt.Errorf("snapshot of %s: %w", s.Resource, err)
	}
	return st, nil
}

// Call makes any request (an agentrun extension such as
// "agentrun/terminal") and decodes its result into result.
func (c *Client) Call(ctx context.Context, method string, params, result any) error {
	return c.call(ctx, method, params, result)
}
