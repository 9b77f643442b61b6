package server

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"sync"
	"time"

	"github.com/agentrun/agentrun.nvim/ahp"
	"github.com/agentrun/agentrun.nvim/internal/rpcline"
	"github.com/sourcegraph/jsonrpc2"
)

// conn is one client connection.
type conn struct {
	s      *Server
	rpc    *jsonrpc2.Conn
	stream *rpcline.Stream

	// Guarded by s.mu.
	clientID string
	ready    bool            // initialize or reconnect answered
	subs     map[string]bool // subscribed resources

	qmu    sync.Mutex
	queue  []outgoing
	qbytes int
	wake   chan struct{} // 1-buffered: something was queued
	closed bool
}

// outgoing is one message for the client, in order: an answer or an
// action notification.
type outgoing struct {
	resp  *jsonrpc2.Response
	env   *ahp.Envelope // an envelope for this client alone
	line  []byte        // an "action" notification, encoded once for all
	bytes int
}

// serveConn runs one connection until it ends.
func (s *Server) serveConn(ctx context.Context, nc net.Conn) {
	c := &conn{s: s, subs: make(map[string]bool), wake: make(chan struct{}, 1)}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	c.stream = rpcline.New(nc)
	c.rpc = jsonrpc2.NewConn(ctx, c.stream, c)
	s.mu.Lock()
	s.conns[c] = struct{}{}
	s.mu.Unlock()
	s.changed()
	go c.send(ctx)
	select {
	case <-c.rpc.DisconnectNotify():
	case <-ctx.Done():
		c.rpc.Close()
	}
	s.mu.Lock()
	delete(s.conns, c)
	id := c.clientID
	s.rootIsLocked(s.host.Listing()) // what it held shows as let go
	s.mu.Unlock()
	c.qmu.Lock()
	c.closed = true
	c.qmu.Unlock()
	s.opts.Logf("ahp server: client %q disconnected", id)
	s.changed()
}

func (s *Server) changed() {
	if s.opts.Changed != nil {
		s.opts.Changed()
	}
}

// push queues m (called with s.mu held, so the order of all pushes is
// the order of serverSeq). A client too far behind is disconnected.
func (c *conn) push(m outgoing) {
	c.qmu.Lock()
	if c.closed {
		c.qmu.Unlock()
		return
	}
	if c.qbytes+m.bytes > MaxQueueBytes {
		c.closed = true
		c.queue = nil
		c.qmu.Unlock()
		c.s.opts.Logf("ahp server: client %q fell %d MiB behind; disconnecting it (it may reconnect)", c.clientID, MaxQueueBytes>>20)
		go c.rpc.Close()
		return
	}
	c.queue = append(c.queue, m)
	c.qbytes += m.bytes
	c.qmu.Unlock()
	select {
	case c.wake <- struct{}{}:
	default:
	}
}

// send writes queued messages to the client in order.
func (c *conn) send(ctx context.Context) {
	for {
		select {
		case <-ctx.Done():
			return
		case <-c.wake:
		}
		c.qmu.Lock()
		batch := c.queue
		c.queue, c.qbytes = nil, 0
		c.qmu.Unlock()
		for _, m := range batch {
			var err error
			switch {
			case m.resp != nil:
				err = c.rpc.SendResponse(ctx, m.resp)
			case m.line != nil:
				err = c.stream.WriteLine(m.line)
			default:
				err = c.rpc.Notify(ctx, ahp.MethodAction, ahp.ActionParams{Envelope: *m.env})
			}
			if err != nil {
				c.rpc.Close()
				return
			}
		}
	}
}

// Handle answers one request (jsonrpc2.Handler; requests of a connection
// are handled one at a time, in order). The answer goes through the
// queue, unless the method queued it itself.
func (c *conn) Handle(ctx context.Context, _ *jsonrpc2.Conn, req *jsonrpc2.Request) {
	res, err := c.call(ctx, req)
	if req.Notif {
		if err != nil {
			c.s.opts.Logf("ahp server: notification %s from %q: %v", req.Method, c.clientID, err)
		}
		return
	}
	if res != queued {
		c.answer(req, res, err)
	}
}

// queued is what a method returns when it queued its answer itself
// (under the server's lock, ordered with the actions).
var queued = &struct{}{}

// answer queues the response to req.
func (c *conn) answer(req *jsonrpc2.Request, res any, err error) {
	resp := &jsonrpc2.Response{ID: req.ID}
	if err == nil {
		err = resp.SetResult(res)
	}
	if err != nil {
		e, ok := err.(*jsonrpc2.Error)
		if !ok {
			e = &jsonrpc2.Error{Code: jsonrpc2.CodeInternalError, Message: err.Error()}
		}
		resp.Error = e
	}
	n := 64
	if resp.Result != nil {
		n += len(*resp.Result)
	}
	c.push(outgoing{resp: resp, bytes: n})
}

func (c *conn) call(ctx context.Context, req *jsonrpc2.Request) (any, error) {
	c.s.mu.Lock()
	ready := c.ready
	c.s.mu.Unlock()
	if !ready && req.Method != ahp.MethodInitialize && req.Method != ahp.MethodReconnect {
		return nil, rpcError(jsonrpc2.CodeInvalidRequest, "%s before initialize: the first request must be initialize (or reconnect)", req.Method)
	}
	switch req.Method {
	case ahp.MethodInitialize:
		var p ahp.InitializeParams
		if err := params(req, &p); err != nil {
			return nil, err
		}
		return c.initialize(req, p)
	case ahp.MethodReconnect:
		var p ahp.ReconnectParams
		if err := params(req, &p); err != nil {
			return nil, err
		}
		return c.reconnect(req, p)
	case ahp.MethodSubscribe:
		var p ahp.SubscribeParams
		if err := params(req, &p); err != nil {
			return nil, err
		}
		return c.subscribe(req, p.Resource)
	case ahp.MethodUnsubscribe:
		var p ahp.SubscribeParams
		if err := params(req, &p); err != nil {
			return nil, err
		}
		c.s.mu.Lock()
		delete(c.subs, p.Resource)
		c.s.mu.Unlock()
		return nil, nil
	case ahp.MethodDispatchAction:
		var p ahp.DispatchActionParams
		if err := params(req, &p); err != nil {
			return nil, err
		}
		return c.dispatch(p)
	case ahp.MethodCreateTerminal:
		var p ahp.CreateTerminalParams
		if err := params(req, &p); err != nil {
			return nil, err
		}
		return c.createTerminal(ctx, p)
	case ahp.MethodDisposeTerminal:
		var p ahp.DisposeTerminalParams
		if err := params(req, &p); err != nil {
			return nil, err
		}
		return c.disposeTerminal(p)
	}
	if fn := c.s.opts.Extensions[req.Method]; fn != nil {
		var raw json.RawMessage
		if req.Params != nil {
			raw = *req.Params
		}
		if req.Notif {
			return fn(ctx, raw)
		}
		// Each request on its own: one that waits long (an MCP tool
		// waiting for a command's end) must not hold up the connection's
		// next ones (the same tool stopping that command).
		go func() {
			res, err := fn(ctx, raw)
			c.answer(req, res, err)
		}()
		return queued, nil
	}
	return nil, rpcError(jsonrpc2.CodeMethodNotFound, "method %q is not served here (this host serves AHP terminals)", req.Method)
}

// params decodes req's params into v.
func params(req *jsonrpc2.Request, v any) error {
	if req.Params == nil {
		return rpcError(jsonrpc2.CodeInvalidParams, "%s: params missing", req.Method)
	}
	if err := json.Unmarshal(*req.Params, v); err != nil {
		return rpcError(jsonrpc2.CodeInvalidParams, "%s: invalid params: %v", req.Method, err)
	}
	return nil
}

func rpcError(code int64, format string, args ...any) *jsonrpc2.Error {
	return &jsonrpc2.Error{Code: code, Message: fmt.Sprintf(format, args...)}
}

// refuse answers the first request of a connection that is not let in
// with the reason, and closes it.
func refuse(nc net.Conn, why error) {
	defer nc.Close()
	_ = nc.SetDeadline(time.Now().Add(2 * time.Second))
	var req jsonrpc2.Request
	if err := json.NewDecoder(bufio.NewReader(nc)).Decode(&req); err != nil {
		return
	}
	resp := jsonrpc2.Response{ID: req.ID, Error: rpcError(jsonrpc2.CodeInvalidRequest, "refused: %v", why)}
	_ = json.NewEncoder(nc).Encode(resp)
}
