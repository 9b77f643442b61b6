package tests

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// fakeChat is the model API for the agents that speak to an
// OpenAI-compatible provider with Chat Completions (opencode, Qwen Code,
// Copilot CLI):
// POST /v1/chat/completions on loopback, streamed as OpenAI streams it
// (server-sent "data:" chunks of chat.completion.chunk, tool calls as
// tool_calls deltas, then "data: [DONE]"). It answers as a model that,
// when the conversation's last message is the user's and it is offered a
// shell tool it knows (chatShellTools: agentrun's own first), calls it
// with command; when the
// last message is a tool's result, says "The tool said: " and that
// result; otherwise says "OK" (a title or summary request). It stops with
// the test (its server is closed in Cleanup).
type fakeChat struct {
	URL     string // the base URL, ending in /v1
	command string

	mu       sync.Mutex
	requests []string // "POST /v1/chat/completions stream=true tools=[...] last=user" for the failure log
	bodies   []string // the requests' bodies
	results  []string // the tool results it was sent
	calls    int      // tool calls it made
}

// chatShellTools are the shell tools of the agents, by the name the agent
// gives the model, with the arguments each takes for a command line.
var chatShellTools = []struct {
	name string
	args func(line string) map[string]any
}{
	// agentrun's MCP terminal tool (agents.<name>.terminals = "agentrun"),
	// as opencode names it: preferred when offered
	{"agentrun_run_command", func(line string) map[string]any {
		return map[string]any{"command": line, "description": "Runs the command"}
	}},
	// the same as Qwen Code names it (offered to the model only when its
	// settings' tools.visible lists it: Qwen defers MCP tools)
	{"mcp__agentrun__run_command", func(line string) map[string]any {
		return map[string]any{"command": line, "description": "Runs the command"}
	}},
	// the same as Copilot CLI names it (served over HTTP)
	{"agentrun-run_command", func(line string) map[string]any {
		return map[string]any{"command": line, "description": "Runs the command"}
	}},
	// opencode, Copilot CLI
	{"bash", func(line string) map[string]any {
		return map[string]any{"command": line, "description": "Runs the command"}
	}},
	// Qwen Code (and Gemini CLI)
	{"run_shell_command", func(line string) map[string]any {
		return map[string]any{"command": line, "description": "Runs the command", "is_background": false}
	}},
}

func startFakeChat(t *testing.T, command string) *fakeChat {
	t.Helper()
	f := &fakeChat{command: command}
	f.URL = serveLoopback(t, f) + "/v1"
	return f
}

// chatRequest is what is read of a Chat Completions request.
type chatRequest struct {
	Model  string `json:"model"`
	Stream bool   `json:"stream"`
	Tools  []struct {
		Type     string `json:"type"`
		Function struct {
			Name string `json:"name"`
		} `json:"function"`
	} `json:"tools"`
	Messages []struct {
		Role    string          `json:"role"`
		Content json.RawMessage `json:"content"`
	} `json:"messages"`
}

func (f *fakeChat) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	var req chatRequest
	_ = json.Unmarshal(body, &req)
	var tools []string
	for _, t := range req.Tools {
		tools = append(tools, t.Function.Name)
	}
	last := ""
	if n := len(req.Messages); n > 0 {
		last = req.Messages[n-1].Role
	}
	f.mu.Lock()
	f.bodies = append(f.bodies, string(body))
	f.requests = append(f.requests, fmt.Sprintf("%s %s model=%s stream=%v tools=%v last=%s", r.Method, r.URL.Path, req.Model, req.Stream, tools, last))
	f.mu.Unlock()
	if r.Method == http.MethodGet && strings.HasSuffix(r.URL.Path, "/models") {
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, `{"object":"list","data":[{"id":"fake-model","object":"model","created":0,"owned_by":"fake"}]}`)
		return
	}
	if r.Method != http.MethodPost || !strings.HasSuffix(r.URL.Path, "/chat/completions") {
		http.Error(w, `{"error":{"message":"not here","type":"invalid_request_error"}}`, http.StatusNotFound)
		return
	}
	f.mu.Lock()
	command := f.command
	f.mu.Unlock()
	switch last {
	case "tool":
		result := textOf(req.Messages[len(req.Messages)-1].Content)
		f.mu.Lock()
		f.results = append(f.results, result)
		f.mu.Unlock()
		f.stream(w, req, "The tool said: "+result, "", nil)
		return
	case "user":
		for _, st := range chatShellTools {
			for _, name := range tools {
				if name == st.name {
					f.mu.Lock()
					f.calls++
					id := fmt.Sprintf("call_fake%d", f.calls)
					f.mu.Unlock()
					f.stream(w, req, "", id, map[string]any{"name": name, "args": st.args(command)})
					return
				}
			}
		}
	}
	f.stream(w, req, "OK", "", nil)
}

// textOf is what the fake model APIs read as text: a JSON string, or a
// list of parts with text (a chat message's content, a function call's
// output, a tool result).
func textOf(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var parts []struct {
		Text string `json:"text"`
	}
	_ = json.Unmarshal(raw, &parts)
	var b strings.Builder
	for _, p := range parts {
		b.WriteString(p.Text)
	}
	return b.String()
}

// stream answers as OpenAI streams a chat completion: the role, then the
// text or the tool call (its name, then its arguments in two pieces, as
// a model's arguments arrive), the finish reason, the usage, [DONE].
func (f *fakeChat) stream(w http.ResponseWriter, req chatRequest, text, callID string, call map[string]any) {
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	model := req.Model
	if model == "" {
		model = "fake-model"
	}
	created := time.Now().Unix()
	send := func(delta map[string]any, finish any) {
		chunk := map[string]any{"id": "chatcmpl-fake", "object": "chat.completion.chunk", "created": created, "model": model,
			"choices": []any{map[string]any{"index": 0, "delta": delta, "logprobs": nil, "finish_reason": finish}}}
		b, _ := json.Marshal(chunk)
		fmt.Fprintf(w, "data: %s\n\n", b)
		if fl, ok := w.(http.Flusher); ok {
			fl.Flush()
		}
	}
	send(map[string]any{"role": "assistant", "content": ""}, nil)
	finish := "stop"
	if call != nil {
		args, _ := json.Marshal(call["args"])
		half := len(args) / 2
		send(map[string]any{"tool_calls": []any{map[string]any{"index": 0, "id": callID, "type": "function",
			"function": map[string]any{"name": call["name"], "arguments": ""}}}}, nil)
		for _, piece := range []string{string(args[:half]), string(args[half:])} {
			send(map[string]any{"tool_calls": []any{map[string]any{"index": 0, "function": map[string]any{"arguments": piece}}}}, nil)
		}
		finish = "tool_calls"
	} else {
		send(map[string]any{"content": text}, nil)
	}
	send(map[string]any{}, finish)
	usage, _ := json.Marshal(map[string]any{"id": "chatcmpl-fake", "object": "chat.completion.chunk", "created": created, "model": model,
		"choices": []any{}, "usage": map[string]any{"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}})
	fmt.Fprintf(w, "data: %s\n\ndata: [DONE]\n\n", usage)
}

// setCommand changes the command the model calls its shell tool with
// from the next request on.
func (f *fakeChat) setCommand(command string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.command = command
}

func (f *fakeChat) log() string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return strings.Join(f.requests, "\n")
}

// sent reports whether a request the agent sent holds text (as JSON
// encodes it: a newline is \n).
func (f *fakeChat) sent(text string) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, b := range f.bodies {
		if strings.Contains(b, text) {
			return true
		}
	}
	return false
}

// agentCmd is argv as a Lua list for agents.<name>.cmd. With
// $AGENTRUN_TEST_RECORD set to a directory, the agent runs behind a
// script that appends what it reads and writes there (in.jsonl,
// out.jsonl): how the recordings in testdata/agentterm were made.
func agentCmd(t *testing.T, argv ...string) string {
	t.Helper()
	if rec := os.Getenv("AGENTRUN_TEST_RECORD"); rec != "" {
		var quoted []string
		for _, a := range argv {
			quoted = append(quoted, "'"+strings.ReplaceAll(a, "'", `'\''`)+"'")
		}
		script := filepath.Join(t.TempDir(), "record.sh")
		body := fmt.Sprintf("#!/bin/sh\ntee -a '%s/in.jsonl' | %s | tee -a '%s/out.jsonl'\n", rec, strings.Join(quoted, " "), rec)
		if err := os.WriteFile(script, []byte(body), 0o755); err != nil {
			t.Fatal(err)
		}
		argv = []string{script}
	}
	var items []string
	for _, a := range argv {
		items = append(items, fmt.Sprintf("%q", a))
	}
	return "{ " + strings.Join(items, ", ") + " }"
}

// askCase is one way an agent's question before its command ends: the
// rules set (Lua, "" none), the answer picked (its index; 0: none must be
// asked), whether the command ran, and what the chat says of it.
type askCase struct {
	name, rules string
	pick        int
	ran         bool
	chat        string
}

// askCases runs each case against an agent start gives (offline against
// a fake chat API whose model runs line, which writes ran.txt): one
// question naming the command when the user decides, none when a rule
// does, and the command ran only when allowed.
func askCases(t *testing.T, line string, start func(t *testing.T, fake *fakeChat) *editor, cases []askCase) {
	t.Helper()
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			fake := startFakeChat(t, line)
			e := start(t, fake)
			if c.rules != "" {
				e.lua(`require("agentrun").setup(vim.tbl_deep_extend("force", require("agentrun.config").get(), { terminal = { approve = `+c.rules+` } }))`, nil)
			}
			e.stubSelect(c.pick)
			e.cmd("AgentPrompt run it")
			e.waitChat(c.chat, 30*time.Second)
			e.idle(30 * time.Second)
			var asked []string // the questions' prompts
			e.lua(`return vim.tbl_map(function(p) return p.prompt end, _G.picked)`, &asked)
			switch {
			case c.pick == 0 && len(asked) != 0:
				t.Errorf("asked %q for a command the rules decide", asked)
			case c.pick != 0 && (len(asked) != 1 || !strings.Contains(asked[0], line)):
				t.Errorf("asked %q, want one question naming the command", asked)
			}
			_, err := os.Stat(filepath.Join(e.cwd(), "ran.txt"))
			if ran := err == nil; ran != c.ran {
				t.Errorf("the command ran: %v, want %v\n%s", ran, c.ran, e.chat())
			}
		})
	}
}

// cancelOurToolsNext has the model run a long command with our tool and
// :AgentCancel it: the command gets SIGINT, nothing of it is left, the
// turn ends cancelled. It returns the command line.
func cancelOurToolsNext(t *testing.T, e *editor, fake *fakeChat) string {
	t.Helper()
	line := "echo started; sleep 29.5; echo finished"
	fake.setCommand(line)
	e.cmd("AgentPrompt run another")
	next := e.waitTerminal(line, 20*time.Second)
	e.waitBuf(next.Bufnr, 20*time.Second, "started")
	var procs []proc
	for _, p := range allProcs() {
		if strings.Contains(p.Cmdline, "sleep 29.5") {
			procs = append(procs, p)
		}
	}
	e.cmd("AgentCancel")
	e.waitChat("(turn ended: cancelled)", 20*time.Second)
	waitNoLeftovers(t, "the cancelled command", procs, 10*time.Second)
	if text := e.waitBuf(next.Bufnr, 10*time.Second, interruptedMarker); strings.Contains(text, "finished") {
		t.Errorf("the cancelled command ran to its end:\n%s", text)
	}
	return line
}
