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

// fakeGemini is the model API for a real Gemini CLI offline: the Gemini
// API (generativelanguage's v1beta, what @google/gemini-cli speaks at
// GOOGLE_GEMINI_BASE_URL) on loopback. Its streamGenerateContent answers
// as a model that, offered the shell tool (run_shell_command) and not
// having called it yet, calls it with command, and otherwise says what the
// tool returned. The requests Gemini makes for itself (its model router's
// classifier asks generateContent for a JSON object; countTokens) get
// answers of the shape they ask for. It stops with the test (its
// listener is closed in Cleanup).
type fakeGemini struct {
	URL     string
	command string

	mu       sync.Mutex
	requests []string   // "POST /v1beta/models/M:method tools=[...]" for the failure log
	models   []string   // the model of each streamGenerateContent, in order
	offered  [][]string // the tools each streamGenerateContent offered the model, in order
}

func startFakeGemini(t *testing.T, command string) *fakeGemini {
	t.Helper()
	f := &fakeGemini{command: command}
	f.URL = serveLoopback(t, f)
	return f
}

// geminiRequest is what is read of a generateContent request.
type geminiRequest struct {
	Contents []struct {
		Role  string `json:"role"`
		Parts []struct {
			Text             string `json:"text"`
			FunctionResponse *struct {
				Name     string          `json:"name"`
				Response json.RawMessage `json:"response"`
			} `json:"functionResponse"`
		} `json:"parts"`
	} `json:"contents"`
	Tools []struct {
		FunctionDeclarations []struct {
			Name string `json:"name"`
		} `json:"functionDeclarations"`
	} `json:"tools"`
	GenerationConfig struct {
		ResponseMimeType   string          `json:"responseMimeType"`
		ResponseJSONSchema json.RawMessage `json:"responseJsonSchema"`
		ResponseSchema     json.RawMessage `json:"responseSchema"`
	} `json:"generationConfig"`
}

func (f *fakeGemini) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	var req geminiRequest
	_ = json.Unmarshal(body, &req)
	var tools []string
	for _, t := range req.Tools {
		for _, d := range t.FunctionDeclarations {
			tools = append(tools, d.Name)
		}
	}
	// the path is /v1beta/models/MODEL:METHOD
	model, method, _ := strings.Cut(strings.TrimPrefix(r.URL.Path, "/v1beta/models/"), ":")
	f.mu.Lock()
	f.requests = append(f.requests, fmt.Sprintf("%s %s json=%q tools=%v", r.Method, r.URL.RequestURI(), req.GenerationConfig.ResponseMimeType, tools))
	if method == "streamGenerateContent" {
		f.models = append(f.models, model)
		f.offered = append(f.offered, tools)
	}
	f.mu.Unlock()
	switch {
	case r.Method != http.MethodPost || !strings.HasPrefix(r.URL.Path, "/v1beta/models/"):
		http.Error(w, `{"error":{"code":404,"message":"not here","status":"NOT_FOUND"}}`, http.StatusNotFound)
	case method == "countTokens":
		writeJSON(w, map[string]any{"totalTokens": 10})
	case req.GenerationConfig.ResponseMimeType == "application/json":
		// Gemini's own questions (the router's classifier: how complex is
		// the request): the fields of every schema it asks with.
		text, _ := json.Marshal(map[string]any{"complexity_reasoning": "a simple request", "complexity_score": 10,
			"reasoning": "the user speaks next", "next_speaker": "user"})
		f.answer(w, r, model, map[string]any{"text": string(text)})
	default:
		f.answer(w, r, model, f.turn(req, tools))
	}
}

// turn is the model's part for a conversation: the tool call, or what the
// tool returned.
func (f *fakeGemini) turn(req geminiRequest, tools []string) map[string]any {
	for _, c := range req.Contents {
		for _, p := range c.Parts {
			if p.FunctionResponse != nil {
				var out struct {
					Output string `json:"output"`
					Error  string `json:"error"`
				}
				_ = json.Unmarshal(p.FunctionResponse.Response, &out)
				return map[string]any{"text": "The tool said: " + out.Output + out.Error}
			}
		}
	}
	// agentrun's run_command when Gemini offers it (an MCP tool), else
	// Gemini's own shell
	for _, pick := range []func(string) bool{
		func(name string) bool { return strings.HasSuffix(name, "run_command") },
		func(name string) bool { return name == "run_shell_command" },
	} {
		for _, name := range tools {
			if pick(name) {
				return map[string]any{"functionCall": map[string]any{"name": name, "args": map[string]any{"command": f.command}}}
			}
		}
	}
	return map[string]any{"text": "OK"}
}

// answer sends one candidate with part, as server-sent events for
// streamGenerateContent (alt=sse), else as one JSON object.
func (f *fakeGemini) answer(w http.ResponseWriter, r *http.Request, model string, part map[string]any) {
	resp := map[string]any{
		"candidates": []any{map[string]any{"index": 0, "finishReason": "STOP",
			"content": map[string]any{"role": "model", "parts": []any{part}}}},
		"usageMetadata": map[string]any{"promptTokenCount": 10, "candidatesTokenCount": 5, "totalTokenCount": 15},
		"modelVersion":  model,
	}
	if r.URL.Query().Get("alt") != "sse" {
		writeJSON(w, resp)
		return
	}
	b, _ := json.Marshal(resp)
	w.Header().Set("Content-Type", "text/event-stream")
	fmt.Fprintf(w, "data: %s\r\n\r\n", b)
}

func writeJSON(w http.ResponseWriter, v any) {
	b, _ := json.Marshal(v)
	w.Header().Set("Content-Type", "application/json")
	w.Write(b)
}

func (f *fakeGemini) log() string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return strings.Join(f.requests, "\n")
}

// streamedModels are the models Gemini asked for the conversation's
// turns, in order.
func (f *fakeGemini) streamedModels() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.models...)
}

// offeredTools are the tools Gemini offered the model in each of the
// conversation's turns, in order.
func (f *fakeGemini) offeredTools() [][]string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([][]string(nil), f.offered...)
}
