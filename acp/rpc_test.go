package acp

import (
	"errors"
	"testing"

	acpsdk "github.com/coder/acp-go-sdk"
)

// TestRPCErrorsReadAsSentences: an error response shows the agent's own
// explanation, with JSON-RPC errors it quoted unwrapped, never raw JSON.
func TestRPCErrorsReadAsSentences(t *testing.T) {
	tests := []struct {
		name string
		re   *acpsdk.RequestError
		want string
	}{
		{"message only", &acpsdk.RequestError{Code: -32602, Message: "cwd must be absolute"},
			"session/prompt failed: cwd must be absolute"},
		{"data.error over a generic message", &acpsdk.RequestError{Code: -32603, Message: "Internal error", Data: map[string]any{"error": "the model is overloaded"}},
			"session/prompt failed: the model is overloaded"},
		{"data.details", &acpsdk.RequestError{Code: -32603, Message: "Internal error", Data: map[string]any{"details": "rate limited"}},
			"session/prompt failed: rate limited"},
		{"a quoted error inside", &acpsdk.RequestError{Code: -32603, Message: "Internal error", Data: map[string]any{
			"error": `terminal/wait_for_exit: {"code":-32603,"message":"terminal \"term-1\" was taken over by the user"}`}},
			`session/prompt failed: terminal/wait_for_exit: terminal "term-1" was taken over by the user`},
		{"nested twice", &acpsdk.RequestError{Code: -32603, Message: "Internal error", Data: map[string]any{
			"error": `a: {"code":-32603,"message":"Internal error","data":{"error":"b: {\"code\":1,\"message\":\"c\"}"}} then`}},
			"session/prompt failed: a: b: c then"},
		{"broken JSON stays", &acpsdk.RequestError{Code: -32603, Message: `x {"code": oops`},
			`session/prompt failed: x {"code": oops`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := describeRPCError("session/prompt", tc.re)
			if got := err.Error(); got != tc.want {
				t.Errorf("got  %q\nwant %q", got, tc.want)
			}
			var re *acpsdk.RequestError
			if !errors.As(err, &re) || re != tc.re {
				t.Error("the RequestError is no longer reachable with errors.As")
			}
		})
	}
}
