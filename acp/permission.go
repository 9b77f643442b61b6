package acp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	acpsdk "github.com/coder/acp-go-sdk"
)

// handleRequestPermission asks the editor to pick one of the agent's
// options. A turn the user cancelled answers "cancelled" at once, whether
// the request was already pending or arrives afterwards, without waiting
// for the editor's prompt to go away.
func (a *Agent) handleRequestPermission(ctx context.Context, params json.RawMessage) (any, *acpsdk.RequestError) {
	const method = acpsdk.ClientMethodSessionRequestPermission
	var req acpsdk.RequestPermissionRequest
	if rerr := decodeParams(method, params, &req); rerr != nil {
		return nil, rerr
	}
	if len(req.Options) == 0 {
		return nil, invalidParams(method, "options must not be empty")
	}
	s, rerr := a.session(ctx, method, req.SessionId)
	if rerr != nil {
		return nil, rerr
	}
	cancelled := acpsdk.RequestPermissionResponse{Outcome: acpsdk.NewRequestPermissionOutcomeCancelled()}

	pctx, release, ok := s.holdForTurn(ctx)
	if !ok {
		return cancelled, nil
	}
	defer release()

	// The tool call this request is about usually arrived just before it as
	// a session/update; let the editor show it first.
	_ = a.updates.flush(pctx)
	// The command it is about may be named only here (the profiles'
	// permissionAsked).
	a.agentTerms.Asked(string(req.SessionId), req.ToolCall)

	type answer struct {
		resp acpsdk.RequestPermissionResponse
		err  error
	}
	ch := make(chan answer, 1)
	go func() {
		resp, err := a.ed.RequestPermission(pctx, req)
		ch <- answer{resp, err}
	}()
	select {
	case ans := <-ch:
		if errors.Is(context.Cause(pctx), ErrTurnCancelled) {
			s.refuseCancelled(ctx)
			return cancelled, nil
		}
		if ans.err != nil {
			return nil, internalError(fmt.Errorf("permission request: %w", ans.err))
		}
		if err := checkOutcome(req, ans.resp); err != nil {
			return nil, internalError(err)
		}
		if allowed(req, ans.resp) {
			// a split that opens as the command starts (the profiles'
			// permissionAllowed)
			if terms := a.agentTerms.Permitted(string(req.SessionId), req.ToolCall); terms != nil {
				a.updates.push(queued{sid: string(req.SessionId), terms: terms})
			}
		}
		return ans.resp, nil
	case <-pctx.Done():
		if errors.Is(context.Cause(pctx), ErrTurnCancelled) {
			s.refuseCancelled(ctx)
			return cancelled, nil
		}
		return nil, acpsdk.NewRequestCancelled(map[string]any{"error": context.Cause(pctx).Error()})
	}
}

// allowed reports whether resp picked one of req's allow options.
func allowed(req acpsdk.RequestPermissionRequest, resp acpsdk.RequestPermissionResponse) bool {
	if sel := resp.Outcome.Selected; sel != nil {
		for _, o := range req.Options {
			if o.OptionId == sel.OptionId {
				return o.Kind == acpsdk.PermissionOptionKindAllowOnce || o.Kind == acpsdk.PermissionOptionKindAllowAlways
			}
		}
	}
	return false
}

// checkOutcome makes sure the editor picked exactly one outcome and, if an
// option, one the agent offered.
func checkOutcome(req acpsdk.RequestPermissionRequest, resp acpsdk.RequestPermissionResponse) error {
	if err := resp.Outcome.Validate(); err != nil {
		return fmt.Errorf("editor gave no permission outcome: %w", err)
	}
	if sel := resp.Outcome.Selected; sel != nil {
		for _, o := range req.Options {
			if o.OptionId == sel.OptionId {
				return nil
			}
		}
		return fmt.Errorf("editor chose option %q, which the agent did not offer", sel.OptionId)
	}
	return nil
}
