package session

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/agentrun/agentrun.nvim/acp"
	"github.com/agentrun/agentrun.nvim/internal/event"
)

// A session's turns: a prompt runs in the background until the agent ends
// the turn ("turn_end"); cancel asks the agent to end it early.

// Prompt starts a prompt turn and returns at once; "turn_end"
// follows with the stop reason or the error.
func (ss *Sessions) Prompt(key, text string, items []contextItem) error {
	s, err := ss.live(key)
	if err != nil {
		return fmt.Errorf("prompt: %w", err)
	}
	pc := s.agent.Info().AgentCapabilities.PromptCapabilities
	blocks, err := promptBlocks(text, items, promptCaps{embedded: pc.EmbeddedContext, image: pc.Image})
	if err != nil {
		return fmt.Errorf("prompt: %w", err)
	}
	ss.mu.Lock()
	if s.busy {
		ss.mu.Unlock()
		return fmt.Errorf("prompt: session %q is still answering the previous prompt; wait, or :AgentCancel", key)
	}
	// the turn begins here, in the order of the editor's requests: a
	// cancel that follows cancels it, even before its prompt is sent
	turn, err := s.s.StartTurn()
	if err != nil {
		ss.mu.Unlock()
		return err
	}
	s.busy = true
	ss.mu.Unlock()
	// Lua shows the prompt as it sends it; a Neovim taking the session
	// over (linger.go) is shown it from here.
	ss.events.PushReplayOnly(event.PromptSent{Key: key, Text: text})
	go func() {
		stop, err := turn.Send(ss.ctx, blocks)
		ss.mu.Lock()
		s.busy = false
		stopped := s.stopped && errors.Is(err, acp.ErrStopped)
		ss.mu.Unlock()
		end := event.TurnEnd{Key: key, StopReason: stop, Error: event.ErrText(err)}
		switch {
		case stopped:
			// The user stopped the session (:AgentStop): the turn did
			// not fail, it ended there.
			ss.log.Info("turn ended: the session was stopped", "key", key)
			end.StopReason, end.Error, end.Stopped = "cancelled", "", true
		case err != nil:
			ss.log.Warn("prompt failed", "key", key, "err", err)
		}
		ss.toolNotTaken(s)
		ss.events.Push(end)
		if acp.IsAuthRequired(err) {
			// Claude Code asks for sign-in at the first prompt, not at
			// session/new: offer the ways now, then the prompt again.
			ss.askSignIn(s, nil)
		}
	}()
	return nil
}

// Cancel sends session/cancel (pending permission requests answer
// "cancelled"); the running prompt then ends with its stop reason.
func (ss *Sessions) Cancel(key string) error {
	s, err := ss.live(key)
	if err != nil {
		return fmt.Errorf("cancel: %w", err)
	}
	// the turn is cancelled now, in the order of the editor's requests
	// (not a turn begun later); telling the agent may wait on it
	tell := s.s.CancelTurn()
	go func() {
		ctx, cancel := context.WithTimeout(ss.ctx, 10*time.Second)
		defer cancel()
		if err := tell(ctx); err != nil {
			ss.log.Warn("cancel failed", "key", key, "err", err)
		}
	}()
	return nil
}
