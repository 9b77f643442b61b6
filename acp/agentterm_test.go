package acp

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestAgentTermsV2Malformed: a v2 terminal update that cannot be read is
// an error naming what is wrong (the update is dropped, nothing shown).
func TestAgentTermsV2Malformed(t *testing.T) {
	tests := []struct{ name, params, want string }{
		{"no terminal id", `{"sessionId":"s","update":{"sessionUpdate":"terminal_output_chunk","data":"eA=="}}`, "needs sessionId and terminalId"},
		{"chunk not base64", `{"sessionId":"s","update":{"sessionUpdate":"terminal_output_chunk","terminalId":"t","data":"%%%"}}`, `terminal_output_chunk of "t": data is not base64`},
		{"snapshot not base64", `{"sessionId":"s","update":{"sessionUpdate":"terminal_update","terminalId":"t","output":{"data":"!!"}}}`, `terminal_update of "t": output.data is not base64`},
		{"exit status not an object", `{"sessionId":"s","update":{"sessionUpdate":"terminal_update","terminalId":"t","exitStatus":3}}`, `exitStatus must be {exitCode, signal}`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, _, ok, err := newAgentTerms().fromV2(json.RawMessage(tc.params))
			if !ok || err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("fromV2 = ok %v, err %v; want an error containing %q", ok, err, tc.want)
			}
		})
	}
	if _, _, ok, _ := newAgentTerms().fromV2(json.RawMessage(`{"sessionId":"s","update":{"sessionUpdate":"agent_message_chunk"}}`)); ok {
		t.Error("fromV2 took an agent_message_chunk for a terminal update")
	}
}

// TestAgentTermsV2Patch: a terminal_update patches: an absent field leaves
// the terminal as it was, exitStatus ends it once.
func TestAgentTermsV2Patch(t *testing.T) {
	at := newAgentTerms()
	_, ev, _, _ := at.fromV2(json.RawMessage(`{"sessionId":"s","update":{"sessionUpdate":"terminal_update","terminalId":"t","command":"make"}}`))
	if !ev.Started || ev.Title != "make" || ev.Replace || ev.Exited {
		t.Fatalf("first update: %+v", ev)
	}
	_, ev, _, _ = at.fromV2(json.RawMessage(`{"sessionId":"s","update":{"sessionUpdate":"terminal_update","terminalId":"t","exitStatus":{"signal":"SIGTERM"}}}`))
	if ev.Started || !ev.Exited || ev.Signal != "SIGTERM" || ev.ExitCode != nil {
		t.Fatalf("exit update: %+v", ev)
	}
	_, ev, _, _ = at.fromV2(json.RawMessage(`{"sessionId":"s","update":{"sessionUpdate":"terminal_update","terminalId":"t","exitStatus":{"exitCode":0}}}`))
	if ev.Exited {
		t.Fatalf("a second exitStatus ended the terminal again: %+v", ev)
	}
}
