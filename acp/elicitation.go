package acp

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"

	acpsdk "github.com/coder/acp-go-sdk"
)

// Elicitation is what an agent asks the user through elicitation/create:
// a form (Fields, in the order the agent's schema lists them) or a URL to
// open. Scoped to a session (SessionID, maybe ToolCallID) or to a request
// outside any session (RequestID).
type Elicitation struct {
	SessionID  string
	ToolCallID string
	RequestID  any
	Mode       string // "form" or "url"
	Message    string
	// Fields are the form's properties, each {name, schema}; Required
	// names those that must be answered.
	Fields   []ElicitationField
	Required []string
	// URL and ID are a URL elicitation's.
	URL string
	ID  string
}

// ElicitationField is one property of a form: its name and its JSON
// Schema (type, title, description, enum/oneOf, bounds, default).
type ElicitationField struct {
	Name   string         `json:"name"`
	Schema map[string]any `json:"schema"`
}

// ElicitationAnswer is the user's answer: Action "accept" (with Content
// for a form), "decline" or "cancel".
type ElicitationAnswer struct {
	Action  string         `json:"action"`
	Content map[string]any `json:"content,omitempty"`
}

// elicitationRequest is elicitation/create's params as they come; the
// schema stays raw so that its properties keep their order.
type elicitationRequest struct {
	SessionID       string          `json:"sessionId"`
	ToolCallID      *string         `json:"toolCallId"`
	RequestID       any             `json:"requestId"`
	Mode            string          `json:"mode"`
	Message         string          `json:"message"`
	RequestedSchema json.RawMessage `json:"requestedSchema"`
	URL             string          `json:"url"`
	ElicitationID   string          `json:"elicitationId"`
}

// handleElicitationCreate asks the user what the agent asks (a form, or a
// URL to open) through the editor. Within a session it is tied to the
// turn as a permission request is: a cancelled turn answers "cancel".
// A mode we do not know is refused (the spec: never render it as one we
// know).
func (a *Agent) handleElicitationCreate(ctx context.Context, params json.RawMessage) (any, *acpsdk.RequestError) {
	const method = acpsdk.ClientMethodElicitationCreate
	var req elicitationRequest
	if rerr := decodeParams(method, params, &req); rerr != nil {
		return nil, rerr
	}
	e := Elicitation{SessionID: req.SessionID, RequestID: req.RequestID, Mode: req.Mode, Message: req.Message}
	if req.ToolCallID != nil {
		e.ToolCallID = *req.ToolCallID
	}
	switch req.Mode {
	case "form":
		fields, required, err := formFields(req.RequestedSchema)
		if err != nil {
			return nil, invalidParams(method, "requestedSchema: %v", err)
		}
		e.Fields, e.Required = fields, required
	case "url":
		u, err := url.Parse(req.URL)
		if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
			return nil, invalidParams(method, "url %q is not an http(s) URL", req.URL)
		}
		if req.ElicitationID == "" {
			return nil, invalidParams(method, "elicitationId is required with mode \"url\"")
		}
		e.URL, e.ID = req.URL, req.ElicitationID
	default:
		return nil, invalidParams(method, "mode %q is not one this client offers (form, url)", req.Mode)
	}
	cancelled := ElicitationAnswer{Action: "cancel"}
	actx := ctx
	var held *Session
	if req.SessionID != "" {
		s, rerr := a.session(ctx, method, acpsdk.SessionId(req.SessionID))
		if rerr != nil {
			return nil, rerr
		}
		tctx, release, ok := s.holdForTurn(ctx)
		if !ok {
			return cancelled, nil
		}
		defer release()
		actx, held = tctx, s
		// the tool call it is about came just before it: shown first
		_ = a.updates.flush(actx)
	} else if req.RequestID == nil {
		return nil, invalidParams(method, "sessionId or requestId is required")
	}
	ans, err := a.ed.Elicit(actx, e)
	if errors.Is(context.Cause(actx), ErrTurnCancelled) {
		if held != nil {
			held.refuseCancelled(ctx)
		}
		return cancelled, nil
	}
	if err != nil {
		return nil, internalError(fmt.Errorf("elicitation: %w", err))
	}
	switch ans.Action {
	case "accept":
		if e.Mode == "url" {
			ans.Content = nil
		}
	case "decline", "cancel":
		ans.Content = nil
	default:
		return nil, internalError(fmt.Errorf("elicitation: the editor answered %q, not accept, decline or cancel", ans.Action))
	}
	return ans, nil
}

// handleElicitationComplete tells the editor that a URL elicitation the
// agent asked for is done (its page was completed).
func (a *Agent) handleElicitationComplete(ctx context.Context, params json.RawMessage) (any, *acpsdk.RequestError) {
	const method = acpsdk.ClientMethodElicitationComplete
	var n struct {
		ElicitationID string `json:"elicitationId"`
	}
	if rerr := decodeParams(method, params, &n); rerr != nil {
		return nil, rerr
	}
	if n.ElicitationID == "" {
		return nil, invalidParams(method, "elicitationId is required")
	}
	a.ed.ElicitationComplete(ctx, n.ElicitationID)
	return nil, nil
}

// formFields reads a form's schema: its properties in the order written,
// and the names it requires. Each property must be an object with a type.
func formFields(raw json.RawMessage) ([]ElicitationField, []string, error) {
	if len(bytes.TrimSpace(raw)) == 0 || string(bytes.TrimSpace(raw)) == "null" {
		return nil, nil, errors.New("missing")
	}
	var s struct {
		Properties json.RawMessage `json:"properties"`
		Required   []string        `json:"required"`
	}
	if err := json.Unmarshal(raw, &s); err != nil {
		return nil, nil, err
	}
	names, err := objectKeys(s.Properties)
	if err != nil {
		return nil, nil, fmt.Errorf("properties: %w", err)
	}
	var props map[string]map[string]any
	if len(names) > 0 {
		if err := json.Unmarshal(s.Properties, &props); err != nil {
			return nil, nil, fmt.Errorf("properties: %w", err)
		}
	}
	fields := make([]ElicitationField, 0, len(names))
	for _, n := range names {
		p := props[n]
		if _, ok := p["type"].(string); !ok {
			return nil, nil, fmt.Errorf("property %q has no type", n)
		}
		fields = append(fields, ElicitationField{Name: n, Schema: p})
	}
	for _, r := range s.Required {
		if _, ok := props[r]; !ok {
			return nil, nil, fmt.Errorf("required names %q, which is not a property", r)
		}
	}
	return fields, s.Required, nil
}

// objectKeys returns the keys of the JSON object raw in the order written
// (none for a missing or null one).
func objectKeys(raw json.RawMessage) ([]string, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return nil, nil
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return nil, errors.New("not an object")
	}
	var keys []string
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return nil, err
		}
		keys = append(keys, t.(string))
		var skip json.RawMessage
		if err := dec.Decode(&skip); err != nil {
			return nil, err
		}
	}
	return keys, nil
}
