package acp

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"runtime/debug"
	"strings"

	acpsdk "github.com/coder/acp-go-sdk"
)

// JSON-RPC error codes we answer with (the ACP schema's ErrorCode).
const (
	codeInvalidParams    = -32602
	codeInternalError    = -32603
	codeResourceNotFound = -32002
)

// methodFunc handles one client method: params in, result or error out.
type methodFunc func(ctx context.Context, params json.RawMessage) (any, *acpsdk.RequestError)

// methods is the dispatch table for everything an agent may call on us.
// We dispatch ourselves instead of using the SDK's ClientSideConnection so
// that responses can carry explicit nulls (exitCode/signal) and errors can
// name the offending field.
func (a *Agent) methods() map[string]methodFunc {
	return map[string]methodFunc{
		acpsdk.ClientMethodSessionUpdate:            a.handleSessionUpdate,
		acpsdk.ClientMethodSessionRequestPermission: a.handleRequestPermission,
		acpsdk.ClientMethodElicitationCreate:        a.handleElicitationCreate,
		acpsdk.ClientMethodElicitationComplete:      a.handleElicitationComplete,
		acpsdk.ClientMethodFsReadTextFile:           a.handleReadTextFile,
		acpsdk.ClientMethodFsWriteTextFile:          a.handleWriteTextFile,
		acpsdk.ClientMethodTerminalCreate:           a.handleTerminalCreate,
		acpsdk.ClientMethodTerminalOutput:           a.handleTerminalOutput,
		acpsdk.ClientMethodTerminalWaitForExit:      a.handleTerminalWaitForExit,
		acpsdk.ClientMethodTerminalKill:             a.handleTerminalKill,
		acpsdk.ClientMethodTerminalRelease:          a.handleTerminalRelease,
	}
}

// TerminalRequest runs a terminal/* request as if the agent had sent it
// (the same handler, policy, approval, sandbox, limits and audit): the
// path of the terminal tool an agent reaches over MCP. params are the
// request's JSON, sessionId included.
func (a *Agent) TerminalRequest(ctx context.Context, method string, params json.RawMessage) (any, *acpsdk.RequestError) {
	if !strings.HasPrefix(method, "terminal/") {
		return nil, acpsdk.NewMethodNotFound(method)
	}
	return a.handle(ctx, method, params)
}

// handle is the connection's MethodHandler. A panic in a handler becomes an
// internal error instead of taking the editor's backend down with it.
func (a *Agent) handle(ctx context.Context, method string, params json.RawMessage) (result any, rerr *acpsdk.RequestError) {
	defer func() {
		if p := recover(); p != nil {
			a.log.Error("panic in ACP handler", "method", method, "panic", p, "stack", string(debug.Stack()))
			result, rerr = nil, internalError(fmt.Errorf("%s: internal panic: %v", method, p))
		}
	}()
	fn, ok := a.table[method]
	if !ok {
		return nil, acpsdk.NewMethodNotFound(method)
	}
	return fn(ctx, params)
}

// validator is implemented by the SDK's request types.
type validator interface{ Validate() error }

// decodeParams unmarshals params into v and runs its Validate method,
// turning every failure into an invalid-params error that names the field.
func decodeParams(method string, params json.RawMessage, v any) *acpsdk.RequestError {
	trimmed := bytes.TrimSpace(params)
	if len(trimmed) == 0 || bytes.Equal(trimmed, []byte("null")) {
		return invalidParams(method, "params are missing")
	}
	if err := json.Unmarshal(trimmed, v); err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) {
			if te.Field == "" {
				return invalidParams(method, "params must be %s, not %s", jsonType(te.Type.Kind().String()), te.Value)
			}
			return invalidParams(method, "%s must be %s, not %s", te.Field, jsonType(te.Type.Kind().String()), te.Value)
		}
		return invalidParams(method, "%v", err)
	}
	if val, ok := v.(validator); ok {
		if err := val.Validate(); err != nil {
			return invalidParams(method, "%v", err)
		}
	}
	return nil
}

// jsonType names a Go kind the way an agent author thinks of JSON.
func jsonType(kind string) string {
	switch kind {
	case "int", "int8", "int16", "int32", "int64", "uint", "uint8", "uint16", "uint32", "uint64":
		return "an integer"
	case "float32", "float64":
		return "a number"
	case "string":
		return "a string"
	case "bool":
		return "a boolean"
	case "slice", "array":
		return "an array"
	case "map", "struct":
		return "an object"
	}
	return kind
}

// invalidParams is a -32602 error whose message says what was wrong.
func invalidParams(method, format string, args ...any) *acpsdk.RequestError {
	msg := fmt.Sprintf(format, args...)
	return &acpsdk.RequestError{
		Code:    codeInvalidParams,
		Message: "Invalid params: " + msg,
		Data:    map[string]any{"method": method, "error": msg},
	}
}

// notFound is a -32002 error for unknown sessions, terminals, files and
// commands.
func notFound(err error) *acpsdk.RequestError {
	return &acpsdk.RequestError{Code: codeResourceNotFound, Message: err.Error()}
}

// internalError is a -32603 error carrying err's text as its message.
func internalError(err error) *acpsdk.RequestError {
	var re *acpsdk.RequestError
	if errors.As(err, &re) {
		return re
	}
	if errors.Is(err, fs.ErrNotExist) {
		return notFound(err)
	}
	return &acpsdk.RequestError{Code: codeInternalError, Message: err.Error()}
}

// describeRPCError turns an error from a request we sent into a readable
// one (the SDK's RequestError prints as JSON); errors.As still finds the
// *acpsdk.RequestError.
func describeRPCError(method string, err error) error {
	var re *acpsdk.RequestError
	if errors.As(err, &re) {
		return &rpcError{method: method, re: re}
	}
	return fmt.Errorf("%s failed: %w", method, err)
}

// rpcError is an error response to one of our requests.
type rpcError struct {
	method string
	re     *acpsdk.RequestError
}

// Error says what failed in words a person reads: the agent's own
// explanation (data.error or data.details, else the message), with any
// JSON-RPC error the agent quoted inside it unwrapped the same way, never
// raw JSON.
func (e *rpcError) Error() string {
	return fmt.Sprintf("%s failed: %s", e.method, readable(e.re.Message, e.re.Data))
}

// readable is an error response's explanation: data.error or data.details
// when the agent gave one (the message is then usually the generic
// "Internal error"), else the message; JSON-RPC errors quoted in it are
// replaced by their own explanation.
func readable(message string, data any) string {
	text := message
	if m, ok := data.(map[string]any); ok {
		for _, k := range []string{"error", "details", "message"} {
			if s, ok := m[k].(string); ok && s != "" {
				text = s
				break
			}
		}
	} else if s, ok := data.(string); ok && s != "" {
		text = s
	}
	return unquoteErrors(text)
}

// unquoteErrors replaces each JSON-RPC error object quoted in s
// ({"code":…,"message":…,"data":…}) by its readable explanation.
func unquoteErrors(s string) string {
	for range 8 { // nesting depth we unwrap; more stays as it is
		i := strings.Index(s, `{"code"`)
		if i < 0 {
			return s
		}
		dec := json.NewDecoder(strings.NewReader(s[i:]))
		var obj struct {
			Message string `json:"message"`
			Data    any    `json:"data"`
		}
		if err := dec.Decode(&obj); err != nil {
			return s
		}
		s = s[:i] + readable(obj.Message, obj.Data) + s[i+int(dec.InputOffset()):]
	}
	return s
}

// Unwrap gives the agent's error response, for errors.As and IsAuthRequired.
func (e *rpcError) Unwrap() error { return e.re }
