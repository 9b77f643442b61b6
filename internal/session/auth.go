package session

import (
	"context"
	"fmt"
	"strings"

	"github.com/agentrun/agentrun.nvim/acp"
	"github.com/agentrun/agentrun.nvim/internal/event"
	"github.com/agentrun/agentrun.nvim/internal/shquote"
	"github.com/agentrun/agentrun.nvim/termhost"
)

// Sign-in. An agent that answers session/new with auth_required keeps
// running; Lua gets "auth_required" with the agent's methods and asks the
// user which to use (:AgentLogin asks the same of a running session).
// An "agent" method is the agent's authenticate; a "terminal" method runs
// the agent's own program with the method's args in a terminal the user
// holds and types into (exit status 0 means signed in). Once signed in,
// a session that was waiting for it opens.

// askSignIn tells Lua that s's agent wants the user to sign in (why: the
// agent's answer, or a failed attempt).
func (ss *Sessions) askSignIn(s *session, why error) {
	ss.log.Info("agent asks the user to sign in", "key", s.key, "agent", s.name, "why", why)
	ss.events.Push(event.AuthRequired{Key: s.key, Agent: s.name, Methods: event.JSONValue(s.agent.AuthMethods()), Error: event.ErrText(why)})
}

// AuthMethods returns the ways session key's agent offers to sign in.
func (ss *Sessions) AuthMethods(key string) (any, error) {
	s, err := ss.sessionIn(key, false)
	if err != nil {
		return nil, fmt.Errorf("sign in: %w", err)
	}
	return event.JSONValue(s.agent.AuthMethods()), nil
}

// Login signs session key's agent in with method id. An agent method
// runs in the background ("message" or "auth_required" follows, or the
// session starts); a terminal method returns {id, command} of the terminal
// it runs in, for Lua to show.
func (ss *Sessions) Login(key, id string) (map[string]any, error) {
	s, err := ss.sessionIn(key, false)
	if err != nil {
		return nil, fmt.Errorf("sign in: %w", err)
	}
	m, err := s.agent.AuthMethod(id)
	if err != nil {
		return nil, err
	}
	switch m.Type {
	case "agent":
		go func() {
			ctx, cancel := context.WithTimeout(ss.ctx, startTimeout)
			defer cancel()
			ss.signedIn(s, m, s.agent.Authenticate(ctx, id))
		}()
		return map[string]any{}, nil
	case "terminal":
		t, err := ss.loginTerminal(s, m)
		if err != nil {
			return nil, err
		}
		go func() {
			st, err := t.Wait(ss.ctx)
			if err == nil && (st.Code == nil || *st.Code != 0) {
				err = fmt.Errorf("the sign-in command ended with %s", st)
			}
			ss.signedIn(s, m, err)
		}()
		return map[string]any{"id": t.ID(), "command": t.Spec().Title}, nil
	}
	return nil, fmt.Errorf("sign in with %q: set %s (in agents.%s.env or your shell) and :AgentRun again", m.Name, strings.Join(m.Vars, ", "), s.name)
}

// loginTerminal runs terminal method m of s's agent in a terminal the
// user holds.
func (ss *Sessions) loginTerminal(s *session, m acp.AuthMethod) (*termhost.Terminal, error) {
	argv, extra := s.agent.LoginCommand(m)
	spec := termhost.Spec{Command: argv[0], Args: argv[1:], Dir: s.args.Cwd, Title: "sign in: " + shquote.Join(argv)}
	t, err := ss.deps.UserTerminal(spec, extra)
	if err != nil {
		return nil, fmt.Errorf("sign in with %q: %w", m.Name, err)
	}
	ss.log.Info("sign-in terminal started", "key", s.key, "method", m.ID, "terminal", t.ID())
	return t, nil
}

// signedIn follows a sign-in attempt: a session waiting for it opens
// (once, however many attempts succeed), a running one is told; a failure
// asks again.
func (ss *Sessions) signedIn(s *session, m acp.AuthMethod, err error) {
	ss.mu.Lock()
	waiting := s.s == nil && !s.ended && !ss.closing
	open := err == nil && waiting && !s.reopening
	if open {
		s.reopening = true
		ss.starting.Add(1) // under ss.mu, as in start: shutdown waits for it
	}
	ss.mu.Unlock()
	switch {
	case err != nil && waiting:
		ss.log.Warn("sign-in failed", "key", s.key, "method", m.ID, "err", err)
		ss.askSignIn(s, fmt.Errorf("signing in with %q failed: %w", m.Name, err))
	case err != nil:
		ss.log.Warn("sign-in failed", "key", s.key, "method", m.ID, "err", err)
		ss.events.Push(event.Message{Key: s.key, Level: "error", Text: fmt.Sprintf("signing in with %q failed: %s", m.Name, event.ErrText(err))})
	case open:
		ss.log.Info("signed in; opening the session", "key", s.key, "method", m.ID)
		defer ss.starting.Done()
		ctx, cancel := context.WithTimeout(ss.starts, startTimeout)
		defer cancel()
		ss.openSession(ctx, s)
		ss.mu.Lock()
		s.reopening = false
		ss.mu.Unlock()
	case !waiting:
		ss.log.Info("signed in", "key", s.key, "method", m.ID)
		ss.events.Push(event.Message{Key: s.key, Level: "info", Text: fmt.Sprintf("signed in with %q", m.Name)})
	}
}
