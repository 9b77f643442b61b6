package acp

import (
	"context"
	"errors"
	"fmt"
	"time"

	acpsdk "github.com/coder/acp-go-sdk"
)

// Earlier sessions: session/list, and opening one again with session/load
// (history replayed) or session/resume (without it); session/close when a
// session is stopped. Each is asked for only when the agent's initialize
// answer says it has it, so a user gets "this agent cannot …" instead of
// "method not found".

// maxListPages bounds the pages ListSessions follows.
const maxListPages = 20

// CanList reports whether the agent lists its sessions (session/list).
func (a *Agent) CanList() bool { return a.info.AgentCapabilities.SessionCapabilities.List != nil }

// CanLoad reports whether the agent reopens sessions with their history
// (session/load).
func (a *Agent) CanLoad() bool { return a.info.AgentCapabilities.LoadSession }

// CanResume reports whether the agent reopens sessions without replaying
// them (session/resume).
func (a *Agent) CanResume() bool { return a.info.AgentCapabilities.SessionCapabilities.Resume != nil }

// ListSessions returns the agent's sessions whose working directory is cwd
// (all of them when cwd is ""), following its pages, as it orders them.
func (a *Agent) ListSessions(ctx context.Context, cwd string) ([]acpsdk.SessionInfo, error) {
	if !a.CanList() {
		return nil, fmt.Errorf("agent %q does not list its sessions", a.cfg.Name)
	}
	var out []acpsdk.SessionInfo
	req := acpsdk.ListSessionsRequest{}
	if cwd != "" {
		req.Cwd = &cwd
	}
	for page := 0; page < maxListPages; page++ {
		resp, err := acpsdk.SendRequest[acpsdk.ListSessionsResponse](a.conn, ctx, acpsdk.AgentMethodSessionList, req)
		if err != nil {
			if endErr := a.endedErr(); endErr != nil {
				return nil, fmt.Errorf("list sessions: %w", endErr)
			}
			return nil, fmt.Errorf("agent %q: %w", a.cfg.Name, describeRPCError("session/list", err))
		}
		out = append(out, resp.Sessions...)
		if resp.NextCursor == nil || *resp.NextCursor == "" {
			break
		}
		req.Cursor = resp.NextCursor
	}
	return out, nil
}

// opened is what session/new, session/load and session/resume answer.
// Models is the older "models" field (Gemini CLI; models.go).
type opened struct {
	SessionId     acpsdk.SessionId             `json:"sessionId"`
	Modes         *acpsdk.SessionModeState     `json:"modes"`
	ConfigOptions []acpsdk.SessionConfigOption `json:"configOptions"`
	Models        *legacyModels                `json:"models"`
}

// openSession sends session/new, or session/load or session/resume when
// opts names an earlier session. Its errors name the agent.
func (a *Agent) openSession(ctx context.Context, cwd string, opts SessionOptions) (opened, error) {
	servers := append([]acpsdk.McpServer{}, opts.McpServers...)
	switch {
	case opts.Load != "" && opts.Resume != "":
		return opened{}, errors.New("open session: both Load and Resume are set")
	case opts.Load != "":
		if !a.CanLoad() {
			return opened{}, fmt.Errorf("agent %q cannot load earlier sessions", a.cfg.Name)
		}
		req := acpsdk.LoadSessionRequest{SessionId: acpsdk.SessionId(opts.Load), Cwd: cwd, McpServers: servers, Meta: opts.Meta}
		resp, err := acpsdk.SendRequest[opened](a.conn, ctx, acpsdk.AgentMethodSessionLoad, req)
		if err != nil {
			return opened{}, fmt.Errorf("agent %q: %w", a.cfg.Name, describeRPCError("session/load", err))
		}
		resp.SessionId = req.SessionId
		return resp, nil
	case opts.Resume != "":
		if !a.CanResume() {
			return opened{}, fmt.Errorf("agent %q cannot resume earlier sessions", a.cfg.Name)
		}
		req := acpsdk.ResumeSessionRequest{SessionId: acpsdk.SessionId(opts.Resume), Cwd: cwd, McpServers: servers, Meta: opts.Meta}
		resp, err := acpsdk.SendRequest[opened](a.conn, ctx, acpsdk.AgentMethodSessionResume, req)
		if err != nil {
			return opened{}, fmt.Errorf("agent %q: %w", a.cfg.Name, describeRPCError("session/resume", err))
		}
		resp.SessionId = req.SessionId
		return resp, nil
	}
	req := acpsdk.NewSessionRequest{Cwd: cwd, McpServers: servers, Meta: opts.Meta}
	resp, err := acpsdk.SendRequest[opened](a.conn, ctx, acpsdk.AgentMethodSessionNew, req)
	if err != nil {
		return opened{}, fmt.Errorf("agent %q: %w", a.cfg.Name, describeRPCError("session/new", err))
	}
	return resp, nil
}

// closeSessions sends session/close for each session, when the agent has
// it, so the agent frees them before it is stopped; bounded by grace.
func (a *Agent) closeSessions(sessions []*Session, grace time.Duration) {
	if a.info.AgentCapabilities.SessionCapabilities.Close == nil || len(sessions) == 0 {
		return
	}
	ctx, cancel := context.WithTimeout(a.ctx, grace)
	defer cancel()
	for _, s := range sessions {
		_, err := acpsdk.SendRequest[acpsdk.CloseSessionResponse](a.conn, ctx, acpsdk.AgentMethodSessionClose, acpsdk.CloseSessionRequest{SessionId: acpsdk.SessionId(s.id)})
		if err != nil {
			a.log.Info("session/close failed", "session", s.id, "err", err)
		}
	}
}

// Abandon lets go of a session just opened that will not be used (one
// opened again with other options): the agent is told with
// session/close when it has it (Gemini CLI 0.61 has not: it keeps it),
// and nothing of it is kept here. The editor is told nothing: it never
// used it.
func (s *Session) Abandon(ctx context.Context) {
	a := s.agent
	a.mu.Lock()
	delete(a.sessions, s.id)
	a.mu.Unlock()
	a.agentTerms.Forget(s.id)
	if a.info.AgentCapabilities.SessionCapabilities.Close == nil {
		return
	}
	if _, err := acpsdk.SendRequest[acpsdk.CloseSessionResponse](a.conn, ctx, acpsdk.AgentMethodSessionClose, acpsdk.CloseSessionRequest{SessionId: acpsdk.SessionId(s.id)}); err != nil {
		a.log.Info("session/close of a session let go failed", "session", s.id, "err", err)
	}
}
