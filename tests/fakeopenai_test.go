package tests

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
)

// fakeOpenAI is the model API for a real Codex offline: the Responses API
// (what codex app-server speaks to an OpenAI-style provider) on loopback,
// answering as a model that, when it has a shell tool and has not called
// it yet, calls it with command, and otherwise says what the tool
// returned. It stops with the test (its listener is closed in Cleanup).
type fakeOpenAI struct {
	URL     string
	command string
	// extra are more arguments of the call (sandbox_permissions, …).
	extra map[string]any

	mu       sync.Mutex
	requests []string // "POST /v1/responses tools=[...]" for the failure log
	calls    int      // function calls it made
}

func startFakeOpenAI(t *testing.T, command string) *fakeOpenAI {
	t.Helper()
	f := &fakeOpenAI{command: command}
	f.URL = serveLoopback(t, f) + "/v1"
	return f
}

// responsesRequest is what is read of a Responses API request.
type responsesRequest struct {
	Model  string `json:"model"`
	Stream bool   `json:"stream"`
	Tools  []struct {
		Type string `json:"type"`
		Name string `json:"name"`
	} `json:"tools"`
	Input []struct {
		Type   string          `json:"type"`
		Role   string          `json:"role"`
		CallID string          `json:"call_id"`
		Output json.RawMessage `json:"output"`
	} `json:"input"`
}

// shellTools are the names codex gives its command tool, with the
// arguments each takes for a command line.
var shellTools = []struct {
	name string
	args func(line string) map[string]any
}{
	{"shell_command", func(line string) map[string]any { return map[string]any{"command": line} }},
	{"exec_command", func(line string) map[string]any { return map[string]any{"cmd": line} }},
	{"shell", func(line string) map[string]any {
		return map[string]any{"command": []string{"bash", "-lc", line}}
	}},
}

func (f *fakeOpenAI) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	var req responsesRequest
	_ = json.Unmarshal(body, &req)
	var tools []string
	for _, t := range req.Tools {
		tools = append(tools, t.Type+":"+t.Name)
	}
	f.mu.Lock()
	f.requests = append(f.requests, fmt.Sprintf("%s %s stream=%v tools=%v", r.Method, r.URL.Path, req.Stream, tools))
	f.mu.Unlock()
	if r.Method != http.MethodPost || !strings.HasSuffix(r.URL.Path, "/responses") {
		http.Error(w, `{"error":{"message":"not here","type":"invalid_request_error"}}`, http.StatusNotFound)
		return
	}
	result, answered := "", false
	for _, in := range req.Input {
		if in.Type == "function_call_output" {
			answered = true
			result = textOf(in.Output)
		}
	}
	if answered {
		f.respond(w, map[string]any{"type": "message", "role": "assistant", "id": "msg_fake", "status": "completed",
			"content": []any{map[string]any{"type": "output_text", "text": "The tool said: " + result, "annotations": []any{}}}})
		return
	}
	for _, st := range shellTools {
		for _, t := range req.Tools {
			if t.Name != st.name {
				continue
			}
			a := st.args(f.command)
			for k, v := range f.extra {
				a[k] = v
			}
			args, _ := json.Marshal(a)
			f.mu.Lock()
			f.calls++
			id := fmt.Sprintf("call_fake%d", f.calls)
			f.mu.Unlock()
			f.respond(w, map[string]any{"type": "function_call", "id": "fc_" + id, "call_id": id, "name": st.name, "arguments": string(args), "status": "completed"})
			return
		}
	}
	f.respond(w, map[string]any{"type": "message", "role": "assistant", "id": "msg_fake", "status": "completed",
		"content": []any{map[string]any{"type": "output_text", "text": "OK", "annotations": []any{}}}})
}

// respond streams one output item as the Responses API's server-sent
// events: created, the item added and done, completed.
func (f *fakeOpenAI) respond(w http.ResponseWriter, item map[string]any) {
	w.Header().Set("Content-Type", "text/event-stream")
	seq := 0
	send := func(data map[string]any) {
		data["sequence_number"] = seq
		seq++
		b, _ := json.Marshal(data)
		fmt.Fprintf(w, "event: %s\ndata: %s\n\n", data["type"], b)
		if fl, ok := w.(http.Flusher); ok {
			fl.Flush()
		}
	}
	resp := map[string]any{"id": "resp_fake", "object": "response", "status": "in_progress", "model": "gpt-fake", "output": []any{}}
	send(map[string]any{"type": "response.created", "response": resp})
	send(map[string]any{"type": "response.output_item.added", "output_index": 0, "item": item})
	if item["type"] == "message" {
		text := item["content"].([]any)[0].(map[string]any)["text"]
		send(map[string]any{"type": "response.output_text.delta", "output_index": 0, "content_index": 0, "item_id": item["id"], "delta": text})
	}
	send(map[string]any{"type": "response.output_item.done", "output_index": 0, "item": item})
	done := map[string]any{"id": "resp_fake", "object": "response", "status": "completed", "model": "gpt-fake", "output": []any{item},
		"usage": map[string]any{"input_tokens": 10, "input_tokens_details": map[string]any{"cached_tokens": 0}, "output_tokens": 5,
			"output_tokens_details": map[string]any{"reasoning_tokens": 0}, "total_tokens": 15}}
	send(map[string]any{"type": "response.completed", "response": done})
}

func (f *fakeOpenAI) log() string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return strings.Join(f.requests, "\n")
}
