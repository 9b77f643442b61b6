package session

import (
	"context"
	"fmt"
	"path/filepath"
	"sort"

	"github.com/agentrun/agentrun.nvim/acp"
	"github.com/agentrun/agentrun.nvim/internal/event"
	acpsdk "github.com/coder/acp-go-sdk"
)

// Earlier sessions: :AgentSessions lists an agent's sessions of the cwd
// (session/list) and starts one again in a new chat, loaded (its history
// replayed into the chat) or resumed; with continue_last, :AgentRun opens
// the cwd's most recent session. An agent process has one session here,
// so listing starts the agent when no session of it runs (and stops that
// one again once it has answered).

// ListArgs is what Lua sends to list an agent's sessions.
type ListArgs struct {
	Agent string   `msgpack:"agent"`
	Cmd   []string `msgpack:"cmd"`
	Env   []string `msgpack:"env"`
	Cwd   string   `msgpack:"cwd"`
}

// List asks agent args.Agent for its sessions of args.Cwd
// in the background (starting the agent may take a while) and returns a
// token at once; "session_list" follows with that token and either error
// or sessions (newest first, each {session_id, title, updated_at, cwd})
// and whether they can be loaded (history shown) or only resumed.
func (ss *Sessions) List(args ListArgs) (string, error) {
	if args.Cwd == "" {
		args.Cwd = backendDir()
	}
	if !filepath.IsAbs(args.Cwd) {
		return "", fmt.Errorf("sessions: cwd %q is not absolute", args.Cwd)
	}
	if len(args.Cmd) == 0 || args.Cmd[0] == "" {
		return "", fmt.Errorf("sessions: agent %q has an empty cmd", args.Agent)
	}
	token := ss.ids.Next("list-")
	ss.mu.Lock()
	if ss.closing {
		ss.mu.Unlock()
		return "", fmt.Errorf("sessions: shutting down")
	}
	ss.starting.Add(1) // an agent started for the list: shutdown waits for it
	ss.mu.Unlock()
	go func() {
		defer ss.starting.Done()
		p, err := ss.listSessions(args)
		if err != nil {
			p = event.SessionList{Error: err.Error()}
		}
		p.Token, p.Agent = token, args.Agent
		ss.events.Push(p)
	}()
	return token, nil
}

// listSessions asks the agent of a live session named args.Agent, or a
// new one started for this (and stopped again), for its sessions.
func (ss *Sessions) listSessions(args ListArgs) (event.SessionList, error) {
	ctx, cancel := context.WithTimeout(ss.starts, startTimeout)
	defer cancel()
	a := ss.runningAgent(args.Agent)
	if a == nil {
		var err error
		a, err = acp.Start(ctx, acp.AgentConfig{Name: args.Agent, Command: args.Cmd, Env: args.Env, Dir: args.Cwd}, ss.deps.EditorFor(""), ss.agentOptions(ss.deps.Host()))
		if err != nil {
			return event.SessionList{}, err
		}
		// Neovim quitting meanwhile (ss.starts cancelled): no grace.
		defer func() {
			if ctx.Err() != nil {
				_ = a.Terminate()
			} else {
				_ = a.Close()
			}
		}()
	}
	list, err := a.ListSessions(ctx, args.Cwd)
	if err != nil {
		return event.SessionList{}, err
	}
	sortNewestFirst(list)
	out := make([]event.EarlierSession, 0, len(list))
	for _, si := range list {
		m := event.EarlierSession{SessionID: string(si.SessionId), Cwd: si.Cwd}
		if si.Title != nil {
			m.Title = *si.Title
		}
		if si.UpdatedAt != nil {
			m.UpdatedAt = *si.UpdatedAt
		}
		out = append(out, m)
	}
	return event.SessionList{Sessions: out, Load: a.CanLoad(), Resume: a.CanResume()}, nil
}

// runningAgent returns the agent of a live session named agent, if any.
func (ss *Sessions) runningAgent(agent string) *acp.Agent {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	for _, s := range ss.byKey {
		if s.name == agent && !s.ended && s.s != nil {
			return s.agent
		}
	}
	return nil
}

// sortNewestFirst orders sessions by their last activity (RFC 3339 times
// sort as text), those without one last, keeping the agent's order among
// equals.
func sortNewestFirst(list []acpsdk.SessionInfo) {
	at := func(si acpsdk.SessionInfo) string {
		if si.UpdatedAt == nil {
			return ""
		}
		return *si.UpdatedAt
	}
	sort.SliceStable(list, func(i, j int) bool { return at(list[i]) > at(list[j]) })
}

// sessionOptions turns what Lua asked for into session/new's, load's or
// resume's options. Continue finds the cwd's most recent session and
// loads it (resumes it when the agent cannot load); when there is none,
// or the agent keeps no list, a new session starts and note says why.
func (ss *Sessions) sessionOptions(ctx context.Context, a *acp.Agent, args StartArgs) (acp.SessionOptions, string, error) {
	opts := acp.SessionOptions{Load: args.Load, Resume: args.Resume}
	if !args.Continue || args.Load != "" || args.Resume != "" {
		return opts, "", nil
	}
	if !a.CanList() || (!a.CanLoad() && !a.CanResume()) {
		return opts, fmt.Sprintf("%s cannot reopen earlier sessions; this is a new one", args.Agent), nil
	}
	list, err := a.ListSessions(ctx, args.Cwd)
	if err != nil {
		return opts, "", err
	}
	if len(list) == 0 {
		return opts, "no earlier session in " + args.Cwd + "; this is a new one", nil
	}
	sortNewestFirst(list)
	last := list[0]
	title := string(last.SessionId)
	if last.Title != nil && *last.Title != "" {
		title = *last.Title
	}
	if a.CanLoad() {
		opts.Load = string(last.SessionId)
		return opts, fmt.Sprintf("continuing %q", title), nil
	}
	opts.Resume = string(last.SessionId)
	return opts, fmt.Sprintf("continuing %q (the agent resumes it without showing its history)", title), nil
}
