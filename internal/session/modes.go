package session

import (
	"context"
	"fmt"
	"time"

	"github.com/agentrun/agentrun.nvim/internal/event"
)

// Modes and config options (models, and whatever else an agent offers):
// Lua reads them from session_started and follows the agent's own
// changes in the session updates; these handlers change them.

// SetMode switches session key to mode id.
func (ss *Sessions) SetMode(key, id string) error {
	s, err := ss.live(key)
	if err != nil {
		return fmt.Errorf("mode: %w", err)
	}
	ctx, cancel := context.WithTimeout(ss.ctx, 10*time.Second)
	defer cancel()
	if err := s.s.SetMode(ctx, id); err != nil {
		return err
	}
	ss.log.Info("mode set", "key", key, "mode", id)
	return nil
}

// SetConfig sets config option id of session key to value and
// returns every option as the agent now reports them.
func (ss *Sessions) SetConfig(key, id, value string) (any, error) {
	s, err := ss.live(key)
	if err != nil {
		return nil, fmt.Errorf("config: %w", err)
	}
	ctx, cancel := context.WithTimeout(ss.ctx, 10*time.Second)
	defer cancel()
	opts, err := s.s.SetConfigOption(ctx, id, value)
	if err != nil {
		return nil, err
	}
	ss.log.Info("config option set", "key", key, "option", id, "value", value)
	return event.JSONValue(opts), nil
}
