package acp

import (
	"context"
	"errors"
	"fmt"
	"os"

	"github.com/agentrun/agentrun.nvim/ahp"
	"github.com/agentrun/agentrun.nvim/termhost"
	acpsdk "github.com/coder/acp-go-sdk"
)

// Claims (the AHP model) say who holds a terminal. A terminal the agent
// creates starts as {session}; while a tool call embeds it (tool_call or
// tool_call_update content {type: terminal}) it is {session, toolCallId};
// when that tool call completes or fails it goes back to {session}, the
// background. The user can take it over ({client}, set by the editor
// through termhost): from then on it is the user's. The agent may still
// read its output, but terminal/kill is refused, terminal/wait_for_exit
// fails at once (also one already waiting, so the agent moves on),
// terminal/release and the end of the session only make the agent forget
// the id: the process keeps running until the user ends it. Once the
// agent was told so, that holds also after the user gives it back.

// errTakenOver is the cause of a wait cut short by a takeover.
var errTakenOver = errors.New("taken over by the user")

// takenOver reports whether the user holds t.
func takenOver(t *termhost.Terminal) bool { return t.Claims().Holder().ByClient() }

// takenOverError answers an agent's call on terminal t, which the user
// holds, saying where the user took it when not in this Neovim.
func takenOverError(t *termhost.Terminal, id, what string) *acpsdk.RequestError {
	if t.Restarting() {
		// R: stopped to run again, the new run the user's
		return internalError(fmt.Errorf("terminal %q was taken over by the user to run it again%s: this run was stopped and the new one is the user's; the agent can no longer %s it", id, takenWhere(t.Claims().Holder()), what))
	}
	return internalError(fmt.Errorf("terminal %q was taken over by the user%s: it is the user's now (to keep running, stop or run again) and the agent can no longer %s it", id, takenWhere(t.Claims().Holder()), what))
}

// takenWhere says where the user holding c took the terminal, when that
// is not this Neovim: " in another Neovim (host 4242)", " with `agentrun
// attach --take` (pid 4242)"; "" for this Neovim.
func takenWhere(c ahp.Claim) string {
	var n int
	switch {
	case c.Kind != ahp.ClaimClient:
	case scanOne(c.ClientID, "nvim-%d", &n) && n != os.Getpid():
		return fmt.Sprintf(" in another Neovim (host %d)", n)
	case scanOne(c.ClientID, "cli-%d", &n):
		return fmt.Sprintf(" with `agentrun attach --take` (pid %d)", n)
	}
	return ""
}

// scanOne reports whether s is exactly format with one number, into n.
func scanOne(s, format string, n *int) bool {
	_, err := fmt.Sscanf(s, format, n)
	return err == nil && fmt.Sprintf(format, *n) == s
}

// claimFromUpdate follows the tool calls that embed this session's
// terminals: {session, toolCallId} while the call runs, {session} once it
// completed or failed. It never takes a terminal back from the user.
func (a *Agent) claimFromUpdate(n acpsdk.SessionNotification) {
	var (
		call    string
		content []acpsdk.ToolCallContent
		status  acpsdk.ToolCallStatus
	)
	switch u := n.Update; {
	case u.ToolCall != nil:
		call, content, status = string(u.ToolCall.ToolCallId), u.ToolCall.Content, u.ToolCall.Status
	case u.ToolCallUpdate != nil:
		call, content = string(u.ToolCallUpdate.ToolCallId), u.ToolCallUpdate.Content
		if u.ToolCallUpdate.Status != nil {
			status = *u.ToolCallUpdate.Status
		}
	default:
		return
	}
	a.mu.Lock()
	s := a.sessions[string(n.SessionId)]
	a.mu.Unlock()
	if s == nil || call == "" {
		return
	}
	ended := status == acpsdk.ToolCallStatusCompleted || status == acpsdk.ToolCallStatusFailed
	inCall := ahp.SessionClaim(s.id, call)
	background := ahp.SessionClaim(s.id, "")
	for _, c := range content {
		if c.Terminal == nil {
			continue
		}
		if t, ok := s.Terminal(c.Terminal.TerminalId); ok {
			want := inCall
			if ended {
				want = background
			}
			a.claimForSession(t, want)
		}
	}
	if ended {
		for _, t := range s.Terminals() {
			if t.Claims().Holder() == inCall {
				a.claimForSession(t, background)
			}
		}
	}
}

// claimForSession sets a session claim on t unless the user holds it.
func (a *Agent) claimForSession(t *termhost.Terminal, want ahp.Claim) {
	for range 3 { // the claim may change between reading and swapping it
		cur := t.Claims().Holder()
		if cur.ByClient() || cur == want {
			return
		}
		ok, err := t.Claims().CompareAndSwap(cur, want)
		if err != nil || ok {
			return
		}
	}
}

// waitUnlessTakenOver waits for t's exit like Terminal.Wait, but returns
// errTakenOver as soon as the user takes the terminal over.
func waitUnlessTakenOver(ctx context.Context, t *termhost.Terminal) (termhost.ExitStatus, error) {
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	go func() {
		for {
			claim, changed := t.Claims().Watch()
			if claim.ByClient() {
				cancel(errTakenOver)
				return
			}
			select {
			case <-changed:
			case <-ctx.Done():
				return
			}
		}
	}()
	st, err := t.Wait(ctx)
	if err != nil && errors.Is(context.Cause(ctx), errTakenOver) {
		return st, errTakenOver
	}
	if err == nil && takenOver(t) {
		// taken, then stopped at once (R restarts the agent's command:
		// it takes it, then kills it): its end may reach this wait
		// before the watch above sees the claim, and is the user's
		return st, errTakenOver
	}
	return st, err
}
