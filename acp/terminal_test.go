package acp

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Bad input from an agent is answered with a JSON-RPC error saying what was
// wrong, and the client keeps working.
func TestBadRequestsAnsweredWithErrors(t *testing.T) {
	r := newRecorder()
	a, _ := start(t, selfAgent(t, "probe"), r, Options{})
	s := newSession(t, a)
	file := filepath.Join(s.Cwd(), "file")
	if err := os.WriteFile(file, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name     string
		step     probeStep
		wantCode int
		wantMsg  string
	}{
		{"unknown method", rawReq("terminal/frobnicate", `{}`), -32601, "Method not found"},
		{"unknown extension method", rawReq("_agentrun/nothing", `{}`), -32601, "Method not found"},
		{"params missing", probeStep{Method: "terminal/create"}, -32602, "params are missing"},
		{"params not an object", rawReq("terminal/create", `[1,2]`), -32602, "params must be an object, not array"},
		{"command wrong type", rawReq("terminal/create", `{"sessionId":"$SESSION","command":42}`), -32602, "command must be a string, not number"},
		{"command missing", rawReq("terminal/create", `{"sessionId":"$SESSION"}`), -32602, "command is required"},
		{"args wrong type", rawReq("terminal/create", `{"sessionId":"$SESSION","command":"ls","args":"-l"}`), -32602, "args must be an array, not string"},
		{"relative cwd", rawReq("terminal/create", `{"sessionId":"$SESSION","command":"true","cwd":"rel/dir"}`), -32602, `cwd "rel/dir" is not an absolute path`},
		{"cwd not a directory", rawReq("terminal/create", fmt.Sprintf(`{"sessionId":"$SESSION","command":"true","cwd":%q}`, file)), -32602, "is not a directory"},
		{"negative outputByteLimit", rawReq("terminal/create", `{"sessionId":"$SESSION","command":"true","outputByteLimit":-1}`), -32602, "outputByteLimit must not be negative, not -1"},
		{"absurd outputByteLimit", rawReq("terminal/create", `{"sessionId":"$SESSION","command":"true","outputByteLimit":2147483648}`), -32602, "outputByteLimit 2147483648 is more than the maximum"},
		{"fractional outputByteLimit", rawReq("terminal/create", `{"sessionId":"$SESSION","command":"true","outputByteLimit":1.5}`), -32602, "outputByteLimit must be an integer, not number 1.5"},
		{"env entry without name", rawReq("terminal/create", `{"sessionId":"$SESSION","command":"true","env":[{"name":"","value":"x"}]}`), -32602, "env[0].name is empty"},
		{"env name with =", rawReq("terminal/create", `{"sessionId":"$SESSION","command":"true","env":[{"name":"A","value":"1"},{"name":"B=C","value":"x"}]}`), -32602, `env[1].name "B=C" contains '='`},
		{"env not a list", rawReq("terminal/create", `{"sessionId":"$SESSION","command":"true","env":"A=B"}`), -32602, "env must be an array, not string"},
		{"NUL in the command", rawReq("terminal/create", `{"sessionId":"$SESSION","command":"echo a\u0000b"}`), -32602, `command "echo a\x00b" contains a NUL byte`},
		{"NUL in an argument", rawReq("terminal/create", `{"sessionId":"$SESSION","command":"echo","args":["ok","a\u0000b"]}`), -32602, `args[1] "a\x00b" contains a NUL byte`},
		{"NUL in the cwd", rawReq("terminal/create", `{"sessionId":"$SESSION","command":"true","cwd":"/tmp\u0000x"}`), -32602, "contains a NUL byte"},
		{"command not found", rawReq("terminal/create", `{"sessionId":"$SESSION","command":"agentrun-no-such-cmd","args":["x"]}`), -32002, `command "agentrun-no-such-cmd" not found`},
		{"sessionId missing", rawReq("terminal/create", `{"command":"true"}`), -32602, "sessionId is required"},
		{"unknown session", rawReq("terminal/create", `{"sessionId":"nope","command":"true"}`), -32002, `unknown session "nope"`},
		{"terminalId missing", rawReq("terminal/output", `{"sessionId":"$SESSION"}`), -32602, "terminalId is required"},
		{"unknown terminal", rawReq("terminal/output", `{"sessionId":"$SESSION","terminalId":"nope"}`), -32002, `unknown terminal "nope"`},
		{"wait on unknown terminal", rawReq("terminal/wait_for_exit", `{"sessionId":"$SESSION","terminalId":"nope"}`), -32002, `unknown terminal "nope"`},
		{"kill unknown terminal", rawReq("terminal/kill", `{"sessionId":"$SESSION","terminalId":"nope"}`), -32002, `unknown terminal "nope"`},
		{"release unknown terminal", rawReq("terminal/release", `{"sessionId":"$SESSION","terminalId":"nope"}`), -32002, `unknown terminal "nope"`},
		{"read relative path", rawReq("fs/read_text_file", `{"sessionId":"$SESSION","path":"rel.txt"}`), -32602, `path "rel.txt" is not absolute`},
		{"read line 0", rawReq("fs/read_text_file", `{"sessionId":"$SESSION","path":"/x","line":0}`), -32602, "line must be 1 or more, not 0"},
		{"write without content", rawReq("fs/write_text_file", `{"sessionId":"$SESSION","path":"/tmp/x"}`), -32602, "content is required"},
		{"permission without options", rawReq("session/request_permission", `{"sessionId":"$SESSION","toolCall":{"toolCallId":"c1"},"options":[]}`), -32602, "options must not be empty"},
	}
	steps := make([]probeStep, 0, len(cases)+1)
	for _, tc := range cases {
		steps = append(steps, tc.step)
	}
	// The client still works after all that.
	steps = append(steps, rawReq("terminal/create", `{"sessionId":"$SESSION","command":"true"}`))
	results := probe(t, s, r, steps...)
	for i, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			res := results[i]
			if res.Error == nil {
				t.Fatalf("got result %s, want error %d %q", res.Result, tc.wantCode, tc.wantMsg)
			}
			if res.Error.Code != tc.wantCode || !strings.Contains(res.Error.Message, tc.wantMsg) {
				t.Fatalf("got error %d %q, want %d containing %q", res.Error.Code, res.Error.Message, tc.wantCode, tc.wantMsg)
			}
		})
	}
	terminalID(t, results[len(cases)])
}

// A session may only touch its own terminals: another session's id is
// unknown to it, and the owner's terminal is unaffected.
func TestSessionOnlyTouchesOwnTerminals(t *testing.T) {
	r := newRecorder()
	a, _ := start(t, selfAgent(t, "probe"), r, Options{})
	owner, other := newSession(t, a), newSession(t, a)
	id := terminalID(t, probe(t, owner, r, rawReq("terminal/create", `{"sessionId":"$SESSION","command":"echo started; sleep 30"}`))[0])

	params := fmt.Sprintf(`{"sessionId":"$SESSION","terminalId":%q}`, id)
	methods := []string{"terminal/output", "terminal/wait_for_exit", "terminal/kill", "terminal/release"}
	var steps []probeStep
	for _, m := range methods {
		steps = append(steps, rawReq(m, params))
	}
	for i, res := range probe(t, other, r, steps...) {
		want := fmt.Sprintf("unknown terminal %q", id)
		if res.Error == nil || res.Error.Code != -32002 || res.Error.Message != want {
			t.Errorf("%s from another session: %+v %s, want error %q", methods[i], res.Error, res.Result, want)
		}
	}
	term, ok := owner.Terminal(id)
	if !ok || term.Released() {
		t.Fatalf("owner's terminal gone after the other session's attempts")
	}
	results := probe(t, owner, r, rawReq("terminal/kill", params), rawReq("terminal/wait_for_exit", params), rawReq("terminal/release", params))
	for i, want := range []string{`{}`, `{"exitCode":null,"signal":"SIGTERM"}`, `{}`} {
		if results[i].Error != nil || string(results[i].Result) != want {
			t.Errorf("owner step %d: %+v %s, want %s", i, results[i].Error, results[i].Result, want)
		}
	}
}

// The exact JSON on the wire: explicit nulls, exitStatus only after exit.
func TestTerminalWireShapes(t *testing.T) {
	r := newRecorder()
	a, _ := start(t, selfAgent(t, "probe"), r, Options{})
	s := newSession(t, a)
	results := probe(t, s, r,
		rawReq("terminal/create", `{"sessionId":"$SESSION","command":"printf 'a\\033[1mb\\033[0m\\r\\nc'; exit 3"}`),
		rawReq("terminal/wait_for_exit", `{"sessionId":"$SESSION","terminalId":"$T0"}`),
		rawReq("terminal/output", `{"sessionId":"$SESSION","terminalId":"$T0"}`),
		rawReq("terminal/release", `{"sessionId":"$SESSION","terminalId":"$T0"}`),
		rawReq("terminal/output", `{"sessionId":"$SESSION","terminalId":"$T0"}`),
		rawReq("terminal/create", `{"sessionId":"$SESSION","command":"sleep 30"}`),
		rawReq("terminal/output", `{"sessionId":"$SESSION","terminalId":"$T5"}`),
		rawReq("terminal/release", `{"sessionId":"$SESSION","terminalId":"$T5"}`),
	)
	id := terminalID(t, results[0])
	for _, tc := range []struct {
		step int
		want string
	}{
		{1, `{"exitCode":3,"signal":null}`},
		{2, `{"output":"ab\nc","truncated":false,"exitStatus":{"exitCode":3,"signal":null}}`},
		{3, `{}`},
		{6, `{"output":"","truncated":false}`},
		{7, `{}`},
	} {
		if res := results[tc.step]; res.Error != nil || string(res.Result) != tc.want {
			t.Errorf("step %d: got %s %+v, want %s", tc.step, res.Result, res.Error, tc.want)
		}
	}
	if e := results[4].Error; e == nil || e.Message != fmt.Sprintf("unknown terminal %q", id) {
		t.Errorf("output after release: %+v", results[4])
	}
	var created map[string]any
	_ = json.Unmarshal(results[0].Result, &created)
	if len(created) != 1 {
		t.Errorf("create result %s has extra fields", results[0].Result)
	}
}
