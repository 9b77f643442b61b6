package agentterm

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	acpsdk "github.com/coder/acp-go-sdk"
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
			_, _, ok, err := NewDecoder().FromV2(json.RawMessage(tc.params))
			if !ok || err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("FromV2 = ok %v, err %v; want an error containing %q", ok, err, tc.want)
			}
		})
	}
	if _, _, ok, _ := NewDecoder().FromV2(json.RawMessage(`{"sessionId":"s","update":{"sessionUpdate":"agent_message_chunk"}}`)); ok {
		t.Error("FromV2 took an agent_message_chunk for a terminal update")
	}
}

// TestAgentTermsV2Patch: a terminal_update patches: an absent field leaves
// the terminal as it was, exitStatus ends it once.
func TestAgentTermsV2Patch(t *testing.T) {
	at := NewDecoder()
	_, ev, _, _ := at.FromV2(json.RawMessage(`{"sessionId":"s","update":{"sessionUpdate":"terminal_update","terminalId":"t","command":"make"}}`))
	if !ev.Started || ev.Title != "make" || ev.Replace || ev.Exited {
		t.Fatalf("first update: %+v", ev)
	}
	_, ev, _, _ = at.FromV2(json.RawMessage(`{"sessionId":"s","update":{"sessionUpdate":"terminal_update","terminalId":"t","exitStatus":{"signal":"SIGTERM"}}}`))
	if ev.Started || !ev.Exited || ev.Signal != "SIGTERM" || ev.ExitCode != nil {
		t.Fatalf("exit update: %+v", ev)
	}
	_, ev, _, _ = at.FromV2(json.RawMessage(`{"sessionId":"s","update":{"sessionUpdate":"terminal_update","terminalId":"t","exitStatus":{"exitCode":0}}}`))
	if ev.Exited {
		t.Fatalf("a second exitStatus ended the terminal again: %+v", ev)
	}
}

// feed decodes v1 session updates (JSON) one by one and returns, per
// update, what they said of agent-owned terminals.
func feed(t *testing.T, at *Decoder, updates ...string) [][]Event {
	t.Helper()
	var out [][]Event
	for _, u := range updates {
		var n acpsdk.SessionNotification
		if err := json.Unmarshal([]byte(`{"sessionId":"s","update":`+u+`}`), &n); err != nil {
			t.Fatalf("%s: %v", u, err)
		}
		out = append(out, at.FromUpdate(n, func(string, string) bool { return false }))
	}
	return out
}

// shown is the output the events of one update carry, as text.
func shown(evs []Event) string {
	var b strings.Builder
	for _, e := range evs {
		b.Write(e.Output)
	}
	return b.String()
}

// TestAgentTermsHoldEarlyOutput: output of a tool call that has not come
// yet (codex-acp sends what a command printed before its tool call) is
// shown when the tool call comes, before what follows.
func TestAgentTermsHoldEarlyOutput(t *testing.T) {
	at := NewDecoder()
	evs := feed(t, at,
		`{"sessionUpdate":"tool_call_update","toolCallId":"c1","_meta":{"terminal_output_delta":{"terminal_id":"c1","data":"early\n"}}}`,
		`{"sessionUpdate":"tool_call","toolCallId":"c1","title":"make","status":"in_progress","content":[{"type":"terminal","terminalId":"c1"}],"_meta":{"terminal_info":{"terminal_id":"c1"}}}`,
		`{"sessionUpdate":"tool_call_update","toolCallId":"c1","_meta":{"terminal_output_delta":{"terminal_id":"c1","data":"later\n"}}}`,
	)
	if len(evs[0]) != 0 {
		t.Errorf("output of an unknown tool call was shown at once: %+v", evs[0])
	}
	if len(evs[1]) != 1 || !evs[1][0].Started || shown(evs[1]) != "early\r\n" {
		t.Errorf("the tool call's start: %+v, want the held output with it", evs[1])
	}
	if shown(evs[2]) != "later\r\n" {
		t.Errorf("later output: %+v", evs[2])
	}
	if len(at.early) != 0 {
		t.Errorf("held output left behind: %v", at.early)
	}
	// Output for a tool call that never comes goes with its session.
	feed(t, at, `{"sessionUpdate":"tool_call_update","toolCallId":"c2","_meta":{"terminal_output_delta":{"terminal_id":"c2","data":"orphan\n"}}}`)
	at.Forget("s")
	if len(at.early)+len(at.byCall)+len(at.byID) != 0 {
		t.Errorf("the ended session's terminals are still known: %v %v %v", at.early, at.byCall, at.byID)
	}
}

// TestAgentTermsClaudeNotRun: Claude Code 2.1 at a cancel sends the
// model's rejection text as the terminal's output, then an update saying
// the command did not run (nonExecutionKind): the text is not shown, the
// terminal ends saying so. A command that ran shows its output and exit.
func TestAgentTermsClaudeNotRun(t *testing.T) {
	start := `{"sessionUpdate":"tool_call","toolCallId":"toolu_1","title":"sleep 100","status":"in_progress","content":[{"type":"terminal","terminalId":"toolu_1"}],"_meta":{"claudeCode":{"toolName":"Bash"},"terminal_info":{"terminal_id":"toolu_1"}}}`
	t.Run("cancelled", func(t *testing.T) {
		evs := feed(t, NewDecoder(), start,
			`{"sessionUpdate":"tool_call_update","toolCallId":"toolu_1","_meta":{"terminal_output":{"terminal_id":"toolu_1","data":"The user doesn't want to proceed with this tool use."}}}`,
			`{"sessionUpdate":"tool_call_update","toolCallId":"toolu_1","status":"failed","_meta":{"claudeCode":{"toolName":"Bash","nonExecutionKind":"user-rejected"},"terminal_exit":{"terminal_id":"toolu_1","exit_code":null,"signal":null}}}`,
		)
		if len(evs[1]) != 0 {
			t.Errorf("the output was shown before Claude said whether it ran: %+v", evs[1])
		}
		if len(evs[2]) != 1 || !evs[2][0].Exited || evs[2][0].NotRun != "user-rejected" || shown(evs[2]) != "" || evs[2][0].ExitCode != nil {
			t.Errorf("the end: %+v, want not run (user-rejected), no output", evs[2])
		}
	})
	t.Run("ran", func(t *testing.T) {
		evs := feed(t, NewDecoder(), start,
			`{"sessionUpdate":"tool_call_update","toolCallId":"toolu_1","_meta":{"terminal_output":{"terminal_id":"toolu_1","data":"oops\n"}}}`,
			`{"sessionUpdate":"tool_call_update","toolCallId":"toolu_1","status":"failed","_meta":{"claudeCode":{"toolName":"Bash"},"terminal_exit":{"terminal_id":"toolu_1","exit_code":3,"signal":null}}}`,
		)
		if len(evs[2]) != 1 || shown(evs[2]) != "oops\r\n" || !evs[2][0].Exited || evs[2][0].ExitCode == nil || *evs[2][0].ExitCode != 3 || evs[2][0].NotRun != "" {
			t.Errorf("the end: %+v, want the output then exit 3", evs[2])
		}
	})
}

// TestAgentTermsOfToolCallsOnly: the shapes of agents that report a
// command only as a tool call (as issue 38's table records Gemini CLI
// 0.61, Qwen Code 0.24, opencode 1.18 and Copilot CLI 1.0 sending them):
// a split titled with the command, the output (cumulative updates
// appended as they grow, text at the end as it comes), and the true exit
// code, or a word that the agent gave none. Gemini's are as recorded from
// the real package (tests/gemini_test.go).
func TestAgentTermsOfToolCallsOnly(t *testing.T) {
	cases := []struct {
		name    string
		updates []string
		title   string
		output  string
		exit    *int
		unrep   bool
		notRun  string
	}{
		{"opencode: cumulative output, exit in rawOutput.metadata.exit", []string{
			`{"sessionUpdate":"tool_call","toolCallId":"c1","title":"bash","kind":"execute","status":"pending","rawInput":{"command":"make test"}}`,
			`{"sessionUpdate":"tool_call_update","toolCallId":"c1","status":"in_progress","content":[{"type":"content","content":{"type":"text","text":"one\n"}}]}`,
			`{"sessionUpdate":"tool_call_update","toolCallId":"c1","status":"in_progress","content":[{"type":"content","content":{"type":"text","text":"one\ntwo\n"}}]}`,
			`{"sessionUpdate":"tool_call_update","toolCallId":"c1","status":"completed","rawOutput":{"output":"one\ntwo\n","metadata":{"exit":3}},"content":[{"type":"content","content":{"type":"text","text":"one\ntwo\n"}}]}`,
		}, "make test", "one\r\ntwo\r\n", intp(3), false, ""},
		{"Qwen: text at the end, rawOutput.exitCode", []string{
			`{"sessionUpdate":"tool_call","toolCallId":"c2","title":"Shell","kind":"execute","status":"pending","rawInput":{"command":"false","description":"fail"}}`,
			`{"sessionUpdate":"tool_call_update","toolCallId":"c2","status":"in_progress","_meta":{"shellProgress":1}}`,
			`{"sessionUpdate":"tool_call_update","toolCallId":"c2","status":"failed","rawOutput":{"exitCode":1,"pid":42},"content":[{"type":"content","content":{"type":"text","text":"Output: (empty)\nExit Code: 1"}}]}`,
		}, "false", "Output: (empty)\r\nExit Code: 1", intp(1), false, ""},
		{"Copilot: the description as title, exit only in the text", []string{
			`{"sessionUpdate":"tool_call","toolCallId":"c3","title":"Run the tests","kind":"execute","status":"pending","rawInput":{"command":"npm test","description":"Run the tests"}}`,
			`{"sessionUpdate":"tool_call_update","toolCallId":"c3","status":"in_progress","content":[{"type":"content","content":{"type":"text","text":"ok 1\n"}}]}`,
			`{"sessionUpdate":"tool_call_update","toolCallId":"c3","status":"completed","content":[{"type":"content","content":{"type":"text","text":"ok 1\nnot ok 2\n<shellId: 1 completed with exit code 3>"}}]}`,
		}, "npm test", "ok 1\r\nnot ok 2\r\n", intp(3), false, ""},
		{"Copilot 1.0.102 as recorded: the exit in rawOutput.contents' shell_exit", []string{
			`{"sessionUpdate":"tool_call","toolCallId":"c6","title":"Runs the command","kind":"execute","status":"pending","rawInput":{"command":"echo tick; exit 3","description":"Runs the command"}}`,
			`{"sessionUpdate":"tool_call_update","toolCallId":"c6","content":[{"type":"content","content":{"type":"text","text":"tick\n"}}]}`,
			`{"sessionUpdate":"tool_call_update","toolCallId":"c6","status":"completed","content":[{"type":"content","content":{"type":"text","text":"tick\n<shellId: 0 completed with exit code 3>"}}],"rawOutput":{"content":"tick\n<shellId: 0 completed with exit code 3>","contents":[{"type":"shell_exit","shellId":"0","exitCode":3,"cwd":"/p","outputPreview":"tick\n"}]}}`,
		}, "echo tick; exit 3", "tick\r\n", intp(3), false, ""},
		{"Gemini: no tool_call, no output, no exit code", []string{
			`{"sessionUpdate":"tool_call_update","toolCallId":"run_shell_command__run_shell_command_1795866057365_0","status":"completed","title":"echo hello; exit 3","content":[],"locations":[],"kind":"execute"}`,
		}, "echo hello; exit 3", "(the agent sent no output", nil, true, ""},
		{"Gemini: a command it killed at a cancel", []string{
			`{"sessionUpdate":"tool_call_update","toolCallId":"run_shell_command__run_shell_command_1795866228003_0","status":"completed","title":"echo started; sleep 37.5; echo never","content":[{"type":"content","content":{"type":"text","text":"Command cancelled by user.\n\nOutput before cancellation:\nstarted"}}],"locations":[],"kind":"execute"}`,
		}, "echo started; sleep 37.5; echo never", "started", nil, false, "cancelled"},
		{"output that is no continuation is shown anew", []string{
			`{"sessionUpdate":"tool_call","toolCallId":"c5","title":"x","kind":"execute","rawInput":{"command":"top -b"}}`,
			`{"sessionUpdate":"tool_call_update","toolCallId":"c5","content":[{"type":"content","content":{"type":"text","text":"frame 1\n"}}]}`,
			`{"sessionUpdate":"tool_call_update","toolCallId":"c5","status":"completed","rawOutput":{"exitCode":0},"content":[{"type":"content","content":{"type":"text","text":"frame 2\n"}}]}`,
		}, "top -b", "frame 2\r\n", intp(0), false, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var all []Event
			for _, evs := range feed(t, NewDecoder(), c.updates...) {
				all = append(all, evs...)
			}
			if len(all) == 0 || !all[0].Started {
				t.Fatalf("no terminal started: %+v", all)
			}
			var title, output string
			var last Event
			for _, e := range all {
				if e.Title != "" {
					title = e.Title
				}
				if e.Replace {
					output = ""
				}
				output += string(e.Output)
				last = e
			}
			if title != c.title {
				t.Errorf("title %q, want %q", title, c.title)
			}
			if !strings.Contains(output, c.output) || strings.Contains(output, "<shellId") || strings.Contains(output, "anew") && !strings.Contains(c.name, "anew") {
				t.Errorf("output %q, want it to hold %q", output, c.output)
			}
			if !last.Exited || last.Unreported != c.unrep || last.NotRun != c.notRun || (c.exit == nil) != (last.ExitCode == nil) || c.exit != nil && *c.exit != *last.ExitCode {
				t.Errorf("end %+v, want exit %v (unreported %v, not run %q)", last, c.exit, c.unrep, c.notRun)
			}
		})
	}
}

func intp(n int) *int { return &n }

// TestAgentTermsOpenWhenAllowed: Gemini CLI names its shell command only
// in a permission request (no tool_call): allowed, its split opens then,
// titled with the command, and the one update at its end closes that
// split. A request about a tool call an update named already, or of
// another kind, opens nothing (a refused one never comes here).
func TestAgentTermsOpenWhenAllowed(t *testing.T) {
	const call = "run_shell_command__run_shell_command_1_0"
	request := func(id, kind string) acpsdk.ToolCallUpdate {
		var tc acpsdk.ToolCallUpdate
		if err := json.Unmarshal([]byte(`{"toolCallId":"`+id+`","status":"pending","kind":"`+kind+`","title":"echo hello; exit 3"}`), &tc); err != nil {
			t.Fatal(err)
		}
		return tc
	}
	at := NewDecoder()
	opened := at.Permitted("s", request(call, "execute"))
	if len(opened) != 1 || !opened[0].Started || opened[0].Title != "echo hello; exit 3" || opened[0].ToolCallID != call {
		t.Fatalf("allowed: %+v, want one split started, titled with the command", opened)
	}
	if again := at.Permitted("s", request(call, "execute")); again != nil {
		t.Errorf("asked again about the same call: %+v, want nothing new", again)
	}
	ended := feed(t, at, `{"sessionUpdate":"tool_call_update","toolCallId":"`+call+`","status":"completed","title":"echo hello; exit 3","content":[],"locations":[],"kind":"execute"}`)[0]
	if len(ended) != 1 || ended[0].Started || !ended[0].Exited || !ended[0].Unreported || ended[0].ID != opened[0].ID {
		t.Errorf("its end: %+v, want the same split ended (exit unreported)", ended)
	}
	feed(t, at, `{"sessionUpdate":"tool_call","toolCallId":"seen","title":"ls","kind":"execute","status":"pending","rawInput":{"command":"ls"}}`)
	if got := at.Permitted("s", request("seen", "execute")); got != nil {
		t.Errorf("a call a tool_call named: %+v, want nothing (its own updates open it)", got)
	}
	if got := at.Permitted("s", request("edit-1", "edit")); got != nil {
		t.Errorf("an edit: %+v, want nothing", got)
	}
}

// TestAgentTermsNoOutputSaidOnce: the split of a command the agent sent
// no output for says why and how to see it in the session's first such
// split (the agent's profile's words: Gemini CLI's names the folder
// trust, or why agentrun kept its shell), and only that it sent none
// in the next ones.
func TestAgentTermsNoOutputSaidOnce(t *testing.T) {
	gemini := profileNamed("gemini-cli")
	if gemini == nil || gemini.noOutput == nil {
		t.Fatal("Gemini CLI's profile says nothing of its commands' output")
	}
	cases := []struct {
		name, how, first string
	}{
		{"Gemini CLI", gemini.noOutput("gemini", ""), `GEMINI_CLI_TRUST_WORKSPACE = "true" in agents.gemini.env`},
		{"Gemini CLI, its shell kept", "", "agentrun kept its shell for this session: why it was kept"},
		{"an agent with no profile", "", `with terminals = "agentrun" it runs in agentrun's terminal`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			at := NewDecoder()
			at.noOutputHow = c.how
			if c.how == "" && c.name != "an agent with no profile" {
				at.ForAgent(ProfileNamed("gemini-cli"), "gemini")
				at.OwnShellKept("why it was kept")
			}
			var outs []string
			for i := 1; i <= 2; i++ {
				u := fmt.Sprintf(`{"sessionUpdate":"tool_call_update","toolCallId":"run_shell_command__%d","status":"completed","title":"echo %d","content":[],"locations":[],"kind":"execute"}`, i, i)
				outs = append(outs, shown(feed(t, at, u)[0]))
			}
			if !strings.Contains(outs[0], c.first) {
				t.Errorf("the first split says %q, want it to say how: %q", outs[0], c.first)
			}
			if !strings.Contains(outs[1], "(the agent sent no output for this command)") || strings.Contains(outs[1], "terminals") {
				t.Errorf("the second split says %q, want only that it sent none", outs[1])
			}
		})
	}
}
