package mcptool

import (
	"context"
	"crypto/rand"
	"crypto/subtle"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// HTTPServer serves the same tools over MCP's streamable HTTP, for
// agents that refuse stdio MCP servers from the client but take HTTP
// ones (Copilot CLI 1.0: "Rejecting non-http/sse MCP server"). It runs
// in the backend, listens on 127.0.0.1 only (a port of its own) and
// answers only requests that carry its secret as a bearer token: the
// secret goes to one agent, in its session's mcpServers entry; every
// other request gets 401. Close stops it (the session ended).
type HTTPServer struct {
	// URL is where the agent reaches it: http://127.0.0.1:PORT/mcp.
	URL string
	// Secret is the bearer token a request must carry
	// (Authorization: Bearer <Secret>).
	Secret string

	srv *http.Server
	ln  net.Listener
}

// ServeHTTP starts serving the tools for the session token names over
// HTTP on 127.0.0.1; c makes the backend's requests in-process.
func ServeHTTP(c Caller, token, version string) (*HTTPServer, error) {
	var raw [32]byte
	if _, err := rand.Read(raw[:]); err != nil {
		return nil, fmt.Errorf("the MCP terminal tool's secret: %w", err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("the MCP terminal tool over HTTP: listening on 127.0.0.1: %w", err)
	}
	h := &HTTPServer{URL: "http://" + ln.Addr().String() + "/mcp", Secret: hex.EncodeToString(raw[:]), ln: ln}
	server := NewServer(&backend{c: c, token: token}, version)
	mcpHandler := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return server }, nil)
	h.srv = &http.Server{Handler: h.authorized(mcpHandler), ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = h.srv.Serve(ln) }()
	return h, nil
}

// authorized lets through only the requests to /mcp that carry the
// secret; the others get 401 (no secret, a wrong one) or 404.
func (h *HTTPServer) authorized(next http.Handler) http.Handler {
	want := []byte("Bearer " + h.Secret)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got := []byte(strings.TrimSpace(r.Header.Get("Authorization")))
		if subtle.ConstantTimeCompare(got, want) != 1 {
			http.Error(w, "agentrun's MCP terminal tool: this request has no Authorization header with the session's bearer token", http.StatusUnauthorized)
			return
		}
		if r.URL.Path != "/mcp" {
			http.Error(w, fmt.Sprintf("agentrun's MCP terminal tool is at /mcp, not %q", r.URL.Path), http.StatusNotFound)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// Headers is what the agent sends with each request: the secret.
func (h *HTTPServer) Headers() map[string]string {
	return map[string]string{"Authorization": "Bearer " + h.Secret}
}

// Close stops the server: the listener closes and open requests end.
func (h *HTTPServer) Close() error {
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	if err := h.srv.Shutdown(ctx); err != nil && !errors.Is(err, context.DeadlineExceeded) {
		return fmt.Errorf("stopping the MCP terminal tool at %s: %w", h.URL, err)
	}
	return h.srv.Close()
}
