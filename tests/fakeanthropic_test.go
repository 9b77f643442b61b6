package tests

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"sync"
	"testing"
)

// fakeAnthropic is the model API for a real Claude Code offline: the
// Messages API on loopback, answering as a model that, when it is offered
// agentrun's run_command tool (loaded, not deferred behind ToolSearch),
// or else Claude Code's own Bash, and has not called it yet, calls it with
// command, and otherwise says what the tool returned. It is the one fake
// in these tests: a model cannot run here.
type fakeAnthropic struct {
	URL     string
	command string
	// steps, when set, is the whole of a turn instead: tool calls made one
	// after the other, each once the one before has its result, then
	// "Done."
	steps []fakeStep

	mu       sync.Mutex
	requests []string // "POST /v1/messages tools=[...]" for the failure log
	results  []string // tool_result texts it was sent
	ids      int
}

// fakeStep is one tool call of a scripted turn: tool is Claude Code's
// tool (Read, Edit, Write: its ACP agent's own "mcp__acp__" one when that
// is offered) or "run" (agentrun's run_command, else Bash), with input.
type fakeStep struct {
	tool  string
	input map[string]any
}

// nextID is a fresh tool_use id.
func (f *fakeAnthropic) nextID(prefix string) string {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.ids++
	return fmt.Sprintf("%s%d", prefix, f.ids)
}

func startFakeAnthropic(t *testing.T, command string) *fakeAnthropic {
	t.Helper()
	f := &fakeAnthropic{command: command}
	f.URL = serveLoopback(t, f)
	return f
}

// messagesRequest is what is read of a Messages API request.
type messagesRequest struct {
	Model  string `json:"model"`
	Stream bool   `json:"stream"`
	Tools  []struct {
		Name string `json:"name"`
		// DeferLoading: the tool is only named; the model must load it
		// with ToolSearch before calling it (Claude Code ≥ 2.1's MCP tools).
		DeferLoading bool `json:"defer_loading"`
	} `json:"tools"`
	Messages []struct {
		Role    string          `json:"role"`
		Content json.RawMessage `json:"content"`
	} `json:"messages"`
}

func (f *fakeAnthropic) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	var req messagesRequest
	_ = json.Unmarshal(body, &req)
	var tools []string
	offered := false // run_command is there to call (not deferred)
	bash := false    // Claude Code's own Bash is (our tool is not offered)
	askable := false // AskUserQuestion is (the client offers elicitation forms)
	for _, t := range req.Tools {
		name := t.Name
		if t.DeferLoading {
			name += "(deferred)"
		}
		tools = append(tools, name)
		if t.Name == "mcp__agentrun__run_command" && !t.DeferLoading {
			offered = true
		}
		if t.Name == "Bash" && !t.DeferLoading {
			bash = true
		}
		if t.Name == "AskUserQuestion" && !t.DeferLoading {
			askable = true
		}
	}
	if os.Getenv("AGENTRUN_FAKE_DUMP") != "" {
		os.WriteFile(fmt.Sprintf("%s/req-%d.json", os.Getenv("AGENTRUN_FAKE_DUMP"), len(req.Messages)), body, 0o644)
	}
	f.mu.Lock()
	f.requests = append(f.requests, fmt.Sprintf("%s %s stream=%v tools=%v messages=%d", r.Method, r.URL.Path, req.Stream, tools, len(req.Messages)))
	f.mu.Unlock()
	if !strings.HasSuffix(r.URL.Path, "/v1/messages") {
		http.Error(w, `{"type":"error","error":{"type":"not_found_error","message":"not here"}}`, http.StatusNotFound)
		return
	}
	if len(f.steps) > 0 {
		f.step(w, req, tools)
		return
	}
	// The command asked for: the fake's own, or LINE of the newest
	// prompt "run: LINE" (one session, several commands). Its result is
	// the tool_result of the tool_use that ran it (Claude Code may send
	// the messages merged and out of turn order).
	command := f.command
	asking := false // the newest prompt says "ask": the model asks the user
	type block struct {
		Type      string          `json:"type"`
		Text      string          `json:"text"`
		ID        string          `json:"id"`
		ToolUseID string          `json:"tool_use_id"`
		Input     json.RawMessage `json:"input"`
		Content   json.RawMessage `json:"content"`
	}
	var all []block
	for _, m := range req.Messages {
		var blocks []block
		if json.Unmarshal(m.Content, &blocks) != nil {
			var text string
			if json.Unmarshal(m.Content, &text) == nil {
				blocks = []block{{Type: "text", Text: text}}
			}
		}
		for _, b := range blocks {
			if m.Role == "user" && b.Type == "text" {
				if i := strings.LastIndex(b.Text, "run: "); i >= 0 {
					line, _, _ := strings.Cut(b.Text[i+len("run: "):], "\n")
					command = strings.TrimSpace(line)
				}
				if strings.Contains(b.Text, "ask me") {
					asking = true
				}
			}
		}
		all = append(all, blocks...)
	}
	ran := map[string]bool{}
	asked := map[string]bool{}
	for _, b := range all {
		if b.Type == "tool_use" && strings.HasPrefix(b.ID, "toolu_ask_") {
			asked[b.ID] = true
		}
		var in struct {
			Command string `json:"command"`
		}
		if b.Type == "tool_use" && json.Unmarshal(b.Input, &in) == nil && in.Command == command {
			ran[b.ID] = true
		}
	}
	result, answer := "", ""
	for _, b := range all {
		if b.Type == "tool_result" && ran[b.ToolUseID] {
			result = textOf(b.Content)
		}
		if b.Type == "tool_result" && asked[b.ToolUseID] {
			answer = textOf(b.Content)
		}
	}
	switch {
	case asking && askable && answer == "":
		input, _ := json.Marshal(map[string]any{"questions": []any{map[string]any{
			"question": "Which colour should the button be?", "header": "Colour", "multiSelect": false,
			"options": []any{
				map[string]any{"label": "Red", "description": "warm"},
				map[string]any{"label": "Green", "description": "calm"},
			},
		}}})
		f.respond(w, req.Stream, "tool_use", map[string]any{"type": "tool_use", "id": f.nextID("toolu_ask_"), "name": "AskUserQuestion", "input": map[string]any{}}, string(input))
	case asking && answer != "":
		f.mu.Lock()
		f.results = append(f.results, answer)
		f.mu.Unlock()
		f.respond(w, req.Stream, "end_turn", map[string]any{"type": "text", "text": ""}, "The user said: "+answer)
	case offered && result == "":
		input, _ := json.Marshal(map[string]any{"command": command})
		f.respond(w, req.Stream, "tool_use", map[string]any{"type": "tool_use", "id": f.nextID("toolu_fake1_"), "name": "mcp__agentrun__run_command", "input": map[string]any{}}, string(input))
	case bash && !offered && result == "" && len(req.Messages) > 0 && len(tools) > 1:
		input, _ := json.Marshal(map[string]any{"command": command, "description": "Run the command"})
		f.respond(w, req.Stream, "tool_use", map[string]any{"type": "tool_use", "id": f.nextID("toolu_fake2_"), "name": "Bash", "input": map[string]any{}}, string(input))
	case result != "":
		f.mu.Lock()
		f.results = append(f.results, result)
		f.mu.Unlock()
		f.respond(w, req.Stream, "end_turn", map[string]any{"type": "text", "text": ""}, "The tool said: "+result)
	default:
		f.respond(w, req.Stream, "end_turn", map[string]any{"type": "text", "text": ""}, "OK")
	}
}

// step answers a request of a scripted turn: the next step's tool call,
// or "Done." once every step has its result.
func (f *fakeAnthropic) step(w http.ResponseWriter, req messagesRequest, tools []string) {
	done := map[string]bool{}
	for _, m := range req.Messages {
		var blocks []struct {
			Type      string          `json:"type"`
			ToolUseID string          `json:"tool_use_id"`
			Content   json.RawMessage `json:"content"`
		}
		_ = json.Unmarshal(m.Content, &blocks)
		for _, b := range blocks {
			if b.Type == "tool_result" && strings.HasPrefix(b.ToolUseID, "toolu_step_") && !done[b.ToolUseID] {
				done[b.ToolUseID] = true
				f.mu.Lock()
				f.results = append(f.results, textOf(b.Content))
				f.mu.Unlock()
			}
		}
	}
	if len(req.Messages) == 0 || len(tools) < 2 || len(done) >= len(f.steps) {
		f.respond(w, req.Stream, "end_turn", map[string]any{"type": "text", "text": ""}, "Done.")
		return
	}
	st := f.steps[len(done)]
	has := func(name string) bool {
		for _, t := range tools {
			if t == name {
				return true
			}
		}
		return false
	}
	name := st.tool
	switch {
	case st.tool == "run" && has("mcp__agentrun__run_command"):
		name = "mcp__agentrun__run_command"
	case st.tool == "run":
		name = "Bash"
	case has("mcp__acp__" + st.tool):
		name = "mcp__acp__" + st.tool
	}
	input, _ := json.Marshal(st.input)
	f.respond(w, req.Stream, "tool_use", map[string]any{"type": "tool_use", "id": f.nextID("toolu_step_"), "name": name, "input": map[string]any{}}, string(input))
}

// respond answers with one content block: text (delta is the text) or a
// tool_use (delta is its input JSON), streamed as server-sent events or
// as one message.
func (f *fakeAnthropic) respond(w http.ResponseWriter, stream bool, stop string, block map[string]any, delta string) {
	id := f.nextID("msg_fake_") // each answer its own message, as the real API gives
	usage := map[string]any{"input_tokens": 10, "output_tokens": 5}
	if !stream {
		full := map[string]any{}
		for k, v := range block {
			full[k] = v
		}
		if block["type"] == "text" {
			full["text"] = delta
		} else {
			var in any
			_ = json.Unmarshal([]byte(delta), &in)
			full["input"] = in
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]any{
			"id": id, "type": "message", "role": "assistant", "model": "claude-fake",
			"content": []any{full}, "stop_reason": stop, "stop_sequence": nil, "usage": usage,
		})
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	send := func(event string, data any) {
		b, _ := json.Marshal(data)
		fmt.Fprintf(w, "event: %s\ndata: %s\n\n", event, b)
	}
	send("message_start", map[string]any{"type": "message_start", "message": map[string]any{
		"id": id, "type": "message", "role": "assistant", "model": "claude-fake",
		"content": []any{}, "stop_reason": nil, "stop_sequence": nil, "usage": usage,
	}})
	send("content_block_start", map[string]any{"type": "content_block_start", "index": 0, "content_block": block})
	d := map[string]any{"type": "text_delta", "text": delta}
	if block["type"] == "tool_use" {
		d = map[string]any{"type": "input_json_delta", "partial_json": delta}
	}
	send("content_block_delta", map[string]any{"type": "content_block_delta", "index": 0, "delta": d})
	send("content_block_stop", map[string]any{"type": "content_block_stop", "index": 0})
	send("message_delta", map[string]any{"type": "message_delta", "delta": map[string]any{"stop_reason": stop, "stop_sequence": nil}, "usage": map[string]any{"output_tokens": 5}})
	send("message_stop", map[string]any{"type": "message_stop"})
}

func (f *fakeAnthropic) log() string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return strings.Join(f.requests, "\n")
}

var _ = testing.Verbose
