//go:build linux

package main

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"sync"
	"time"

	acpsdk "github.com/coder/acp-go-sdk"

	"github.com/agentrun/agentrun.nvim/acp"
	"github.com/agentrun/agentrun.nvim/acp/agentterm"
)

// The in-process acp client's logger and editor for the benchmarks that
// drive it without Neovim (outputlat.go).

// recordHandler is a slog.Handler keeping the "took" and "writing" of
// records with msg.
type recordHandler struct {
	msg           string
	mu            sync.Mutex
	took, writing []time.Duration
}

func (h *recordHandler) Enabled(context.Context, slog.Level) bool { return true }
func (h *recordHandler) WithAttrs([]slog.Attr) slog.Handler       { return h }
func (h *recordHandler) WithGroup(string) slog.Handler            { return h }

func (h *recordHandler) Handle(_ context.Context, r slog.Record) error {
	if r.Message != h.msg {
		return nil
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	r.Attrs(func(a slog.Attr) bool {
		switch a.Key {
		case "took":
			h.took = append(h.took, a.Value.Duration())
		case "writing":
			h.writing = append(h.writing, a.Value.Duration())
		}
		return true
	})
	return nil
}

func (h *recordHandler) durations() (took, writing []time.Duration) {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]time.Duration(nil), h.took...), append([]time.Duration(nil), h.writing...)
}

// replyEditor keeps the agent's message text and refuses everything else.
type replyEditor struct {
	mu  sync.Mutex
	buf strings.Builder
}

func (e *replyEditor) text() string {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.buf.String()
}

func (e *replyEditor) SessionUpdate(_ context.Context, n acpsdk.SessionNotification) {
	if c := n.Update.AgentMessageChunk; c != nil && c.Content.Text != nil {
		e.mu.Lock()
		e.buf.WriteString(c.Content.Text.Text)
		e.mu.Unlock()
	}
}

var errRefused = errors.New("the benchmark editor does not do that")

func (e *replyEditor) RequestPermission(context.Context, acpsdk.RequestPermissionRequest) (acpsdk.RequestPermissionResponse, error) {
	return acpsdk.RequestPermissionResponse{}, errRefused
}

func (e *replyEditor) Elicit(context.Context, acp.Elicitation) (acp.ElicitationAnswer, error) {
	return acp.ElicitationAnswer{}, errRefused
}

func (e *replyEditor) ElicitationComplete(context.Context, string) {}

func (e *replyEditor) ReadTextFile(context.Context, acpsdk.ReadTextFileRequest) (acpsdk.ReadTextFileResponse, error) {
	return acpsdk.ReadTextFileResponse{}, errRefused
}

func (e *replyEditor) WriteTextFile(context.Context, acpsdk.WriteTextFileRequest) (acpsdk.WriteTextFileResponse, error) {
	return acpsdk.WriteTextFileResponse{}, errRefused
}

func (e *replyEditor) TerminalCreated(context.Context, string, string)        {}
func (e *replyEditor) TerminalReleased(context.Context, string, string)       {}
func (e *replyEditor) SessionEnded(context.Context, string, error)            {}
func (e *replyEditor) AgentTerminal(context.Context, string, agentterm.Event) {}
