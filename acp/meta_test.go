package acp

import (
	"encoding/json"
	"strings"
	"testing"

	acpsdk "github.com/coder/acp-go-sdk"
)

// What codex-acp sends for a command it runs itself, as TerminalMetaOf
// reads it.
func TestTerminalMetaOf(t *testing.T) {
	for _, tc := range []struct {
		name string
		json string
		ok   bool
		want TerminalMeta
	}{
		{"info", `{"sessionUpdate":"tool_call","toolCallId":"call_1","title":"ls","content":[{"type":"terminal","terminalId":"call_1"}],"_meta":{"terminal_info":{"terminal_id":"call_1","cwd":"/p"}}}`,
			true, TerminalMeta{ToolCallID: "call_1", TerminalID: "call_1", Started: true, Cwd: "/p"}},
		{"output", `{"sessionUpdate":"tool_call_update","toolCallId":"call_1","_meta":{"terminal_output":{"terminal_id":"call_1","data":"a\r\n"}}}`,
			true, TerminalMeta{ToolCallID: "call_1", TerminalID: "call_1", Data: "a\r\n"}},
		{"exit", `{"sessionUpdate":"tool_call_update","toolCallId":"call_1","status":"completed","_meta":{"terminal_exit":{"terminal_id":"call_1","exit_code":0,"signal":null}}}`,
			true, TerminalMeta{ToolCallID: "call_1", TerminalID: "call_1", Exited: true, ExitCode: acpsdk.Ptr(0)}},
		{"signal", `{"sessionUpdate":"tool_call_update","toolCallId":"c2","_meta":{"terminal_exit":{"terminal_id":"t2","exit_code":null,"signal":"SIGKILL"}}}`,
			true, TerminalMeta{ToolCallID: "c2", TerminalID: "t2", Exited: true, Signal: "SIGKILL"}},
		{"no id falls back to the tool call", `{"sessionUpdate":"tool_call_update","toolCallId":"c3","_meta":{"terminal_output":{"data":"x"}}}`,
			true, TerminalMeta{ToolCallID: "c3", TerminalID: "c3", Data: "x"}},
		{"plain tool call", `{"sessionUpdate":"tool_call","toolCallId":"c4","title":"read"}`, false, TerminalMeta{}},
		{"message", `{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"hi"}}`, false, TerminalMeta{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var u acpsdk.SessionUpdate
			if err := json.Unmarshal([]byte(tc.json), &u); err != nil {
				t.Fatal(err)
			}
			got, ok := TerminalMetaOf(u)
			if ok != tc.ok || !sameMeta(got, tc.want) {
				t.Errorf("TerminalMetaOf = %+v, %v; want %+v, %v", got, ok, tc.want, tc.ok)
			}
		})
	}
}

func sameMeta(a, b TerminalMeta) bool {
	if (a.ExitCode == nil) != (b.ExitCode == nil) || a.ExitCode != nil && *a.ExitCode != *b.ExitCode {
		return false
	}
	a.ExitCode, b.ExitCode = nil, nil
	return a == b
}

// The demo agent's "!meta" streams a display-only terminal end to end.
func TestDemoDisplayOnlyTerminal(t *testing.T) {
	r := newRecorder()
	a, _ := start(t, selfAgent(t, "demo"), r, Options{})
	s := newSession(t, a)
	prompt(t, s, "!meta printf 'one\\ntwo ü'; exit 2")
	var started, exited TerminalMeta
	var data strings.Builder
	for _, u := range r.sessionUpdates(s.ID()) {
		m, ok := TerminalMetaOf(u)
		if !ok {
			continue
		}
		if m.Started {
			started = m
		}
		data.WriteString(m.Data)
		if m.Exited {
			exited = m
		}
	}
	if !started.Started || started.Cwd != s.Cwd() || started.TerminalID == "" {
		t.Errorf("terminal_info %+v", started)
	}
	if data.String() != "one\ntwo ü" {
		t.Errorf("terminal_output data %q", data.String())
	}
	if !exited.Exited || exited.ExitCode == nil || *exited.ExitCode != 2 || exited.TerminalID != started.TerminalID {
		t.Errorf("terminal_exit %+v", exited)
	}
	select {
	case c := <-r.created:
		t.Errorf("a client terminal %v was created for a display-only command", c)
	default:
	}
}
