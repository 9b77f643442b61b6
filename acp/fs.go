package acp

import (
	"context"
	"encoding/json"
	"fmt"

	acpsdk "github.com/coder/acp-go-sdk"
)

// handleReadTextFile reads a file through the editor (which prefers a
// loaded buffer's unsaved text). line is 1-based; limit counts lines.
func (a *Agent) handleReadTextFile(ctx context.Context, params json.RawMessage) (any, *acpsdk.RequestError) {
	const method = acpsdk.ClientMethodFsReadTextFile
	var req acpsdk.ReadTextFileRequest
	if rerr := decodeParams(method, params, &req); rerr != nil {
		return nil, rerr
	}
	if !isAbs(req.Path) {
		return nil, invalidParams(method, "path %q is not absolute", req.Path)
	}
	if req.Line != nil && *req.Line < 1 {
		return nil, invalidParams(method, "line must be 1 or more, not %d", *req.Line)
	}
	if req.Limit != nil && *req.Limit < 0 {
		return nil, invalidParams(method, "limit must not be negative, not %d", *req.Limit)
	}
	if _, rerr := a.session(ctx, method, req.SessionId); rerr != nil {
		return nil, rerr
	}
	resp, err := a.ed.ReadTextFile(ctx, req)
	if err != nil {
		return nil, internalError(fmt.Errorf("read %q: %w", req.Path, err))
	}
	return resp, nil
}

// handleWriteTextFile writes a file through the editor. Empty content is
// allowed (the SDK's Validate would refuse it), a missing one is not.
func (a *Agent) handleWriteTextFile(ctx context.Context, params json.RawMessage) (any, *acpsdk.RequestError) {
	const method = acpsdk.ClientMethodFsWriteTextFile
	// writeRequest has the SDK type's fields but not its Validate.
	type writeRequest acpsdk.WriteTextFileRequest
	var raw writeRequest
	var fields map[string]json.RawMessage
	if rerr := decodeParams(method, params, &fields); rerr != nil {
		return nil, rerr
	}
	if rerr := decodeParams(method, params, &raw); rerr != nil {
		return nil, rerr
	}
	req := acpsdk.WriteTextFileRequest(raw)
	if _, ok := fields["content"]; !ok {
		return nil, invalidParams(method, "content is required")
	}
	if req.Path == "" {
		return nil, invalidParams(method, "path is required")
	}
	if !isAbs(req.Path) {
		return nil, invalidParams(method, "path %q is not absolute", req.Path)
	}
	s, rerr := a.session(ctx, method, req.SessionId)
	if rerr != nil {
		return nil, rerr
	}
	if rerr := a.checkWrite(ctx, s, req.Path); rerr != nil {
		return nil, rerr
	}
	resp, err := a.ed.WriteTextFile(ctx, req)
	if err != nil {
		return nil, internalError(fmt.Errorf("write %q: %w", req.Path, err))
	}
	return resp, nil
}
