package acp

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"sync"
	"time"

	acpsdk "github.com/coder/acp-go-sdk"

	"github.com/agentrun/agentrun.nvim/termhost"
)

// Why this file is long: a Session is one ACP session: its prompt turns,
// cancel, its terminals and its end, all under the session's one lock.

// Session is one ACP session with an agent.
type Session struct {
	agent *Agent
	id    string
	cwd   string

	mu        sync.Mutex
	busy      bool // a prompt turn is begun and not yet ended (turn.go)
	cancelled bool // the current turn was cancelled (CancelTurn)
	// onWire: the current turn's session/prompt is written to the agent
	// (promptWritten); a cancel before it waits for it (turn.go)
	onWire bool
	// told: the agent has been sent session/cancel for the current turn
	// (turn.go); refusals for a cancelled turn wait for it (refuseCancelled)
	told      *signal
	perms     map[int]context.CancelCauseFunc
	nextPerm  int
	terminals map[string]*termhost.Terminal
	turn      []*termhost.Terminal // created during the current turn: Cancel stops them
	// created holds the id of every terminal this session created, also
	// after the agent released it (a tool call may still embed one the
	// user took over: it is ours, not one the agent runs itself).
	created map[string]bool
	// gone holds the terminals the agent was told the user took over: it
	// moved on, so they are the user's for good. Given back to the
	// session later (a let go), the agent's release or the session's end
	// still only forgets them (TestOlderClaimEventKeepsTake walked into
	// a release that killed one just given back).
	gone   map[string]bool
	modes  *acpsdk.SessionModeState     // session/new's, current mode kept (modes.go)
	config []acpsdk.SessionConfigOption // as last reported
	// legacyModels: config's model option stands for the older "models"
	// field, switched with session/set_model (models.go)
	legacyModels bool
	ended        bool
	endOnce      sync.Once
	done         chan struct{}
}

// ErrTurnCancelled is the cause given to pending questions (permission
// requests, approvals, elicitations) when the turn is cancelled or the
// session ends; any other cause means the agent withdrew the request.
var ErrTurnCancelled = errors.New("turn cancelled")

// SessionOptions are what session/new carries besides the cwd.
type SessionOptions struct {
	// McpServers are offered to the agent (stdio servers it starts).
	McpServers []acpsdk.McpServer
	// Meta is session/new's _meta (agent-specific options).
	Meta map[string]any
	// Load, when set, opens this earlier session with session/load instead
	// of starting a new one: the agent replays its history as session
	// updates before the call returns (sessions.go).
	Load string
	// Resume, when set, opens this earlier session with session/resume:
	// the agent picks it up without replaying its history.
	Resume string
}

// NewSession starts a session whose working directory is cwd, which must
// be an absolute path to a directory. No MCP servers are passed.
func (a *Agent) NewSession(ctx context.Context, cwd string) (*Session, error) {
	return a.NewSessionWith(ctx, cwd, SessionOptions{})
}

// NewSessionWith is NewSession with MCP servers and _meta, or opens an
// earlier session (opts.Load, opts.Resume). Every session update the
// agent sent before answering has been handed to the editor when it
// returns.
func (a *Agent) NewSessionWith(ctx context.Context, cwd string, opts SessionOptions) (*Session, error) {
	if !isAbs(cwd) {
		return nil, fmt.Errorf("new session: cwd %q is not an absolute path", cwd)
	}
	cwd = filepath.Clean(cwd)
	if fi, err := os.Stat(cwd); err != nil {
		return nil, fmt.Errorf("new session: cwd %q: %w", cwd, err)
	} else if !fi.IsDir() {
		return nil, fmt.Errorf("new session: cwd %q is not a directory", cwd)
	}
	a.mu.Lock()
	if a.ended || a.closing {
		a.mu.Unlock()
		return nil, fmt.Errorf("new session: agent %q has ended", a.cfg.Name)
	}
	// Requests for the new session may arrive before session/new returns;
	// lookups wait while a session is being created.
	a.newInFlight++
	a.mu.Unlock()
	defer func() {
		a.mu.Lock()
		a.newInFlight--
		a.sessionsChangedLocked()
		a.mu.Unlock()
	}()

	resp, err := a.openSession(ctx, cwd, opts)
	if err != nil {
		if endErr := a.endedErr(); endErr != nil {
			return nil, fmt.Errorf("new session: %w", endErr)
		}
		return nil, err
	}
	if resp.SessionId == "" {
		return nil, fmt.Errorf("agent %q: session/new returned an empty sessionId", a.cfg.Name)
	}
	// Every update the agent sent before answering (a loaded session's
	// history) reaches the editor first, as Prompt guarantees for a turn.
	if err := a.updates.flush(ctx); err != nil {
		return nil, fmt.Errorf("new session: waiting for the editor to take the session updates: %w", err)
	}
	s := &Session{
		agent:     a,
		id:        string(resp.SessionId),
		cwd:       cwd,
		perms:     make(map[int]context.CancelCauseFunc),
		terminals: make(map[string]*termhost.Terminal),
		done:      make(chan struct{}),
		modes:     resp.Modes,
	}
	s.config, s.legacyModels = withLegacyModels(resp.ConfigOptions, resp.Models)
	a.mu.Lock()
	if a.ended {
		a.mu.Unlock()
		return nil, fmt.Errorf("new session: agent %q has ended", a.cfg.Name)
	}
	a.sessions[s.id] = s
	a.mu.Unlock()
	a.log.Info("session started", "session", s.id, "cwd", cwd)
	return s, nil
}

// sessionsChangedLocked wakes lookups waiting for a session; a.mu held.
func (a *Agent) sessionsChangedLocked() {
	close(a.sessChanged)
	a.sessChanged = make(chan struct{})
}

// session finds the session an agent request names. While a session/new
// is in flight it waits for it, since the agent may use the new id before
// our request returns.
func (a *Agent) session(ctx context.Context, method string, id acpsdk.SessionId) (*Session, *acpsdk.RequestError) {
	if id == "" {
		return nil, invalidParams(method, "sessionId is required")
	}
	timeout := time.NewTimer(10 * time.Second)
	defer timeout.Stop()
	for {
		a.mu.Lock()
		s, ok := a.sessions[string(id)]
		waiting := a.newInFlight > 0
		changed := a.sessChanged
		a.mu.Unlock()
		if ok {
			s.mu.Lock()
			ended := s.ended
			s.mu.Unlock()
			if ended {
				return nil, notFound(fmt.Errorf("session %q has ended", id))
			}
			return s, nil
		}
		if !waiting {
			return nil, notFound(fmt.Errorf("unknown session %q", id))
		}
		select {
		case <-changed:
		case <-ctx.Done():
			return nil, acpsdk.NewRequestCancelled(map[string]any{"error": ctx.Err().Error()})
		case <-timeout.C:
			return nil, notFound(fmt.Errorf("unknown session %q", id))
		}
	}
}

// ID returns the agent's session id.
func (s *Session) ID() string { return s.id }

// Cwd returns the session's working directory.
func (s *Session) Cwd() string { return s.cwd }

// Agent returns the agent the session belongs to.
func (s *Session) Agent() *Agent { return s.agent }

// Done is closed when the session has ended (its agent ended or was
// closed) and its terminals are released.
func (s *Session) Done() <-chan struct{} { return s.done }

// stopTerminal stops t (termhost's Stop) unless the user took it over:
// then it is theirs and goes on.
func (s *Session) stopTerminal(t *termhost.Terminal) {
	if takenOver(t) || s.theUsers(t) {
		return
	}
	if err := t.Stop(); err != nil && !errors.Is(err, termhost.ErrReleased) {
		s.agent.log.Warn("stopping a cancelled turn's command", "terminal", t.ID(), "err", err)
	}
}

// StopTerminal stops the session's terminal id as a cancelled turn does
// (SIGINT, then the kill after the grace), unless the user took it over;
// agentrun's MCP tool does this when the agent cancels its tool call.
func (s *Session) StopTerminal(id string) error {
	s.mu.Lock()
	t := s.terminals[id]
	s.mu.Unlock()
	if t == nil {
		return fmt.Errorf("session %q has no terminal %q (released, or never created)", s.id, id)
	}
	s.stopTerminal(t)
	return nil
}

// holdForTurn ties a request the agent is waiting on (a permission request,
// a command approval) to the session's current turn. It returns a context,
// derived from ctx, that Cancel and the session's end cancel with
// ErrTurnCancelled, and release, which the caller defers. ok is false, and
// nothing is held, when the turn was already cancelled or the session ended:
// the caller answers without asking (once the agent was told of the cancel,
// refuseCancelled).
func (s *Session) holdForTurn(ctx context.Context) (tctx context.Context, release func(), ok bool) {
	tctx, cancel := context.WithCancelCause(ctx)
	s.mu.Lock()
	if s.cancelled || s.ended {
		s.mu.Unlock()
		cancel(nil)
		s.refuseCancelled(ctx)
		return nil, nil, false
	}
	id := s.nextPerm
	s.nextPerm++
	s.perms[id] = cancel
	s.mu.Unlock()
	return tctx, func() {
		s.mu.Lock()
		delete(s.perms, id)
		s.mu.Unlock()
		cancel(nil)
	}, true
}

// Terminal returns one of this session's live (not released) terminals.
func (s *Session) Terminal(id string) (*termhost.Terminal, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	t, ok := s.terminals[id]
	return t, ok
}

// created reports whether this session created terminal id (terminal/
// create), released since or not.
func (s *Session) createdTerminal(id string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.created[id]
}

// Terminals returns this session's live terminals, ordered by id.
func (s *Session) Terminals() []*termhost.Terminal {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]*termhost.Terminal, 0, len(s.terminals))
	for _, t := range s.terminals {
		out = append(out, t)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID() < out[j].ID() })
	return out
}

// end releases the session's terminals, answers its pending permission
// requests and tells the editor why the session ended. Idempotent.
func (s *Session) end(reason error) {
	s.endOnce.Do(func() {
		s.mu.Lock()
		s.ended = true
		for _, cancel := range s.perms {
			cancel(ErrTurnCancelled)
		}
		terms := make([]*termhost.Terminal, 0, len(s.terminals))
		for _, t := range s.terminals {
			terms = append(terms, t)
		}
		s.terminals = map[string]*termhost.Terminal{}
		s.mu.Unlock()

		a := s.agent
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		for _, t := range terms {
			if s.theUsers(t) || !t.Claims().ReleaseUnlessClientHeld() {
				a.log.Info("terminal the user took over outlives its session", "session", s.id, "terminal", t.ID())
				continue
			}
			a.log.Info("terminal released with its session", "session", s.id, "terminal", t.ID())
			a.ed.TerminalReleased(ctx, s.id, t.ID())
		}
		a.mu.Lock()
		delete(a.sessions, s.id)
		a.mu.Unlock()
		a.agentTerms.Forget(s.id)
		a.log.Info("session ended", "session", s.id, "reason", reason)
		a.ed.SessionEnded(ctx, s.id, reason)
		close(s.done)
	})
}

// isAbs reports whether p is an absolute path.
func isAbs(p string) bool { return p != "" && filepath.IsAbs(p) }

// toldTakenOver records that the agent was told the user took t over
// (an answer carried takenOverError): t is the user's from then on.
func (s *Session) toldTakenOver(t *termhost.Terminal) {
	s.mu.Lock()
	if s.gone == nil {
		s.gone = make(map[string]bool)
	}
	s.gone[t.ID()] = true
	s.mu.Unlock()
}

// theUsers reports whether the agent was told the user took t over.
func (s *Session) theUsers(t *termhost.Terminal) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.gone[t.ID()]
}
