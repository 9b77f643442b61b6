package mcptool

import (
	"context"
	"encoding/json"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// recorder is a Caller that records the backend requests the tools make
// and answers run_command's as a command that printed "hi" and exited 3.
type recorder struct {
	mu    sync.Mutex
	calls []string
}

func (r *recorder) Call(_ context.Context, method string, params, result any) error {
	raw, _ := json.Marshal(params)
	r.mu.Lock()
	r.calls = append(r.calls, method+" "+string(raw))
	r.mu.Unlock()
	var reply string
	switch {
	case strings.Contains(string(raw), `"terminal/create"`):
		reply = `{"terminalId":"term-1"}`
	case strings.Contains(string(raw), `"terminal/output"`):
		reply = `{"output":"hi\n","truncated":false,"exitStatus":{"exitCode":3}}`
	default:
		reply = `{}`
	}
	if result == nil {
		return nil
	}
	return json.Unmarshal([]byte(reply), result)
}

func (r *recorder) seen() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return strings.Join(r.calls, "\n")
}

// bearer adds the Authorization header to every request.
type bearer struct{ secret string }

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.secret)
	return http.DefaultTransport.RoundTrip(r)
}

// TestHTTPToolNeedsItsSecret: the tool over HTTP listens on 127.0.0.1
// only; a request without the session's bearer token, or with another,
// gets 401 and reaches no tool; with it, an MCP client lists the tools and
// runs a command through the backend (the session's token with each
// request, and the agent's listing and call reported); once closed,
// nothing answers on its port.
func TestHTTPToolNeedsItsSecret(t *testing.T) {
	rec := &recorder{}
	h, err := ServeHTTP(rec, "tok-1", "test")
	if err != nil {
		t.Fatal(err)
	}
	u, err := url.Parse(h.URL)
	if err != nil {
		t.Fatal(err)
	}
	if host := u.Hostname(); host != "127.0.0.1" || u.Path != "/mcp" {
		t.Errorf("it serves at %s, want http://127.0.0.1:PORT/mcp", h.URL)
	}
	if tcp, ok := h.ln.Addr().(*net.TCPAddr); !ok || !tcp.IP.Equal(net.IPv4(127, 0, 0, 1)) {
		t.Errorf("it listens on %v, want 127.0.0.1 only", h.ln.Addr())
	}
	if len(h.Secret) < 32 || h.Headers()["Authorization"] != "Bearer "+h.Secret {
		t.Errorf("secret %q, headers %v", h.Secret, h.Headers())
	}
	initialize := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"x","version":"1"}}}`
	for _, auth := range []string{"", "Bearer wrong", "Bearer " + h.Secret + "x", h.Secret} {
		req, _ := http.NewRequest(http.MethodPost, h.URL, strings.NewReader(initialize))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		if auth != "" {
			req.Header.Set("Authorization", auth)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusUnauthorized {
			t.Errorf("a request with Authorization %q got %s, want 401", auth, resp.Status)
		}
	}
	if got := rec.seen(); got != "" {
		t.Errorf("refused requests reached the backend: %s", got)
	}

	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	client := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, nil)
	cs, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: h.URL, HTTPClient: &http.Client{Transport: bearer{h.Secret}}, DisableStandaloneSSE: true}, nil)
	if err != nil {
		t.Fatalf("an MCP client with the secret: %v", err)
	}
	tools, err := cs.ListTools(ctx, nil)
	if err != nil || len(tools.Tools) != len(Names) {
		t.Fatalf("tools/list: %v, %+v", err, tools)
	}
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "run_command", Arguments: map[string]any{"command": "echo hi; exit 3"}})
	if err != nil || len(res.Content) == 0 {
		t.Fatalf("run_command: %v %+v", err, res)
	}
	if text := res.Content[0].(*mcp.TextContent).Text; !strings.Contains(text, "exited with code 3") || !strings.Contains(text, "hi") {
		t.Errorf("run_command answered %q", text)
	}
	cs.Close()
	got := rec.seen()
	for _, want := range []string{
		`agentrun/tool_seen {"method":"tools/list","token":"tok-1"}`,
		`agentrun/tool_seen {"method":"tools/call","token":"tok-1"}`,
		`agentrun/terminal {"method":"terminal/create","params":{"command":"echo hi; exit 3"},"token":"tok-1"`,
	} {
		if !strings.Contains(got, want) {
			t.Errorf("the backend was not asked %s; it was asked:\n%s", want, got)
		}
	}

	if err := h.Close(); err != nil {
		t.Fatal(err)
	}
	if c, err := net.DialTimeout("tcp", u.Host, time.Second); err == nil {
		c.Close()
		t.Errorf("%s still answers after Close", u.Host)
	}
}
