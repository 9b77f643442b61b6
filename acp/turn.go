package acp

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"sync"
	"time"

	acpsdk "github.com/coder/acp-go-sdk"
)

// A prompt turn (session/prompt) and its cancel (session/cancel) reach
// the agent in the order the user gave them. The editor begins a turn
// (StartTurn) and cancels it (CancelTurn) in its own order, at once; the
// prompt is written later, from the turn's goroutine. A cancel that comes
// before the prompt was sent keeps it from being sent (the turn ends
// "cancelled"); one that comes while the prompt is being written is sent
// right after it (promptWritten). The other order, cancel then prompt on
// the wire, is a cancel the agent ignores and a turn that runs on
// (TestCancelRightAfterPrompt).

// Turn is a prompt turn begun on a session (StartTurn) whose prompt is
// sent with Send.
type Turn struct {
	s *Session
}

// StartTurn begins a prompt turn: from now on CancelTurn cancels it. One
// turn at a time: it is an error while the previous one runs. Send sends
// its prompt.
func (s *Session) StartTurn() (*Turn, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ended {
		return nil, fmt.Errorf("prompt: session %q has ended", s.id)
	}
	if s.busy {
		return nil, fmt.Errorf("prompt: session %q is still answering the previous prompt", s.id)
	}
	s.busy = true
	s.cancelled = false
	s.onWire = false
	s.told = newSignal()
	s.turn = nil
	return &Turn{s: s}, nil
}

// Send sends the turn's prompt (blocks: text, and context from the editor:
// resources, links) and waits for the agent's stop reason ("end_turn",
// "cancelled", ...); a turn cancelled before its prompt was sent ends
// "cancelled" without sending it. Every session update the agent sent
// before answering has been handed to the editor when Send returns. If ctx
// ends first, the turn is cancelled with session/cancel. If the agent
// exits meanwhile the error wraps its *ExitError; if it is stopped with
// Close, ErrStopped. The turn ends when Send returns.
func (t *Turn) Send(ctx context.Context, blocks []acpsdk.ContentBlock) (string, error) {
	s := t.s
	a := s.agent
	defer func() {
		s.mu.Lock()
		s.busy = false
		s.mu.Unlock()
	}()
	s.mu.Lock()
	cancelled := s.cancelled
	s.mu.Unlock()
	if cancelled {
		return string(acpsdk.StopReasonCancelled), nil
	}
	req := acpsdk.PromptRequest{
		SessionId: acpsdk.SessionId(s.id),
		Prompt:    blocks,
	}
	resp, err := acpsdk.SendRequest[acpsdk.PromptResponse](a.conn, ctx, acpsdk.AgentMethodSessionPrompt, req)
	if a.isClosing() {
		// Whatever the agent answered while being stopped (its terminals
		// were released under it), the turn ended because of the stop.
		return "", fmt.Errorf("prompt: agent %q: %w", a.cfg.Name, ErrStopped)
	}
	if err != nil {
		if endErr := a.endedErr(); endErr != nil {
			return "", fmt.Errorf("prompt: %w", endErr)
		}
		if ctx.Err() != nil {
			_ = s.Cancel(context.Background())
			return "", fmt.Errorf("prompt: %w", ctx.Err())
		}
		return "", fmt.Errorf("agent %q: %w", a.cfg.Name, describeRPCError("session/prompt", err))
	}
	if err := a.updates.flush(ctx); err != nil {
		return string(resp.StopReason), fmt.Errorf("prompt: waiting for the editor to take the session updates: %w", err)
	}
	return string(resp.StopReason), nil
}

// Prompt sends text as one prompt turn and waits for the agent's stop
// reason: StartTurn, then Send.
func (s *Session) Prompt(ctx context.Context, text string) (string, error) {
	return s.PromptBlocks(ctx, []acpsdk.ContentBlock{acpsdk.TextBlock(text)})
}

// PromptBlocks is Prompt with content blocks (text, and context from the
// editor: resources, links).
func (s *Session) PromptBlocks(ctx context.Context, blocks []acpsdk.ContentBlock) (string, error) {
	t, err := s.StartTurn()
	if err != nil {
		return "", err
	}
	return t.Send(ctx, blocks)
}

// Cancel asks the agent to stop the current turn: CancelTurn, then what
// it returns.
func (s *Session) Cancel(ctx context.Context) error {
	return s.CancelTurn()(ctx)
}

// CancelTurn cancels the current turn at once: its pending permission
// requests are answered "cancelled", as are any the agent sends before
// the turn ends, and a prompt not yet sent is not sent. It returns the
// rest, which may wait on the agent's stdin: telling the agent
// (session/cancel; after the prompt when it is being written) and
// stopping the commands the turn started in our terminals. The running
// Send returns the agent's stop reason, normally "cancelled".
func (s *Session) CancelTurn() func(context.Context) error {
	s.mu.Lock()
	if s.ended {
		s.mu.Unlock()
		return func(context.Context) error { return fmt.Errorf("cancel: session %q has ended", s.id) }
	}
	s.cancelled = true
	for _, cancel := range s.perms {
		cancel(ErrTurnCancelled)
	}
	turn := s.turn
	told := s.told
	// a prompt not yet on the wire: Send sees the cancel and sends
	// nothing, or it is being written and promptWritten tells the agent
	tell := !s.busy || s.onWire
	s.mu.Unlock()
	return func(ctx context.Context) error {
		var err error
		// The agent hears of the cancel first: a command it waits on
		// that ends by our SIGINT then ends in a turn it knows is
		// cancelled (the other order let it answer end_turn).
		if tell {
			err = s.sendCancel(ctx)
			told.fire()
		}
		// Every command the turn started in our terminals stops (SIGINT,
		// then the kill after the grace), whatever the agent makes of the
		// cancel: Claude Code does not stop the commands its MCP tools
		// started.
		for _, t := range turn {
			s.stopTerminal(t)
		}
		return err
	}
}

// sendCancel sends session/cancel for the session.
func (s *Session) sendCancel(ctx context.Context) error {
	err := s.agent.conn.SendNotification(ctx, acpsdk.AgentMethodSessionCancel, acpsdk.CancelNotification{SessionId: acpsdk.SessionId(s.id)})
	if err != nil {
		return fmt.Errorf("cancel session %q: %w", s.id, err)
	}
	return nil
}

// promptWritten is told that the current turn's session/prompt is written
// to the agent: a cancel that came while it was being written is sent now,
// after it. It runs under the connection's write lock, so the cancel goes
// from a goroutine of its own.
func (s *Session) promptWritten() {
	s.mu.Lock()
	if !s.busy || s.onWire {
		s.mu.Unlock()
		return
	}
	s.onWire = true
	tell := s.cancelled
	told := s.told
	s.mu.Unlock()
	if tell {
		go func() {
			if err := s.sendCancel(s.agent.ctx); err != nil {
				s.agent.log.Warn("cancel after its prompt", "session", s.id, "err", err)
			}
			told.fire()
		}()
	}
}

// cancelToldWait bounds how long a refusal for a cancelled turn waits for
// the agent to be sent session/cancel (a stdin the agent does not read).
const cancelToldWait = 2 * time.Second

// refuseCancelled waits, before a request of a cancelled turn is refused
// (a command, a permission request answered "cancelled"), until the agent
// has been sent session/cancel, at most cancelToldWait or until ctx ends.
// The agent then reads the cancel before the refusal and ends the turn
// "cancelled", as ACP has it; the other order let it take the refusal as
// the user's answer and end the turn end_turn.
func (s *Session) refuseCancelled(ctx context.Context) {
	s.mu.Lock()
	told, cancelled, ended := s.told, s.cancelled, s.ended
	s.mu.Unlock()
	if told == nil || !cancelled || ended {
		return
	}
	timer := time.NewTimer(cancelToldWait)
	defer timer.Stop()
	select {
	case <-told.ch:
	case <-ctx.Done():
	case <-timer.C:
	}
}

// signal is closed once (fire), by whichever of its senders comes first.
type signal struct {
	once sync.Once
	ch   chan struct{}
}

// newSignal returns a signal not yet fired.
func newSignal() *signal { return &signal{ch: make(chan struct{})} }

// fire closes the signal's channel; later calls do nothing. A nil signal
// (no turn begun) is ignored.
func (g *signal) fire() {
	if g != nil {
		g.once.Do(func() { close(g.ch) })
	}
}

// promptMethod is how a session/prompt request reads on the wire: JSON's
// quotes, unescaped, so never inside a string (a prompt's text).
var promptMethod = []byte(`"method":"` + acpsdk.AgentMethodSessionPrompt + `"`)

// promptWatch is the writer under the connection: it writes each message
// (one Write each) and, after a session/prompt, tells its session.
type promptWatch struct {
	w       io.Writer
	written func(sessionID string)
}

// Write implements io.Writer.
func (p promptWatch) Write(msg []byte) (int, error) {
	n, err := p.w.Write(msg)
	if err != nil || !bytes.Contains(msg, promptMethod) {
		return n, err
	}
	var m struct {
		Method string `json:"method"`
		Params struct {
			SessionID string `json:"sessionId"`
		} `json:"params"`
	}
	if json.Unmarshal(msg, &m) == nil && m.Method == acpsdk.AgentMethodSessionPrompt {
		p.written(m.Params.SessionID)
	}
	return n, err
}

// promptWritten tells session id that its prompt is on the wire.
func (a *Agent) promptWritten(id string) {
	a.mu.Lock()
	s := a.sessions[id]
	a.mu.Unlock()
	if s != nil {
		s.promptWritten()
	}
}
