package acp

import (
	"encoding/json"
	"math"

	acpsdk "github.com/coder/acp-go-sdk"
)

// TerminalMeta is what an agent that runs commands itself (codex-acp,
// claude-agent-acp >= 0.18) says about one of them in a tool call's _meta,
// because we advertise clientCapabilities._meta.terminal_output. Such a
// "display-only" terminal has no pty of ours: the editor shows its output.
type TerminalMeta struct {
	// ToolCallID is the tool call the _meta came with.
	ToolCallID string
	// TerminalID names the terminal (codex uses the tool call id).
	TerminalID string
	// Started is set by _meta.terminal_info, with the command's Cwd.
	Started bool
	Cwd     string
	// Data is output from _meta.terminal_output (raw, may hold escapes).
	Data string
	// Exited is set by _meta.terminal_exit, with ExitCode or Signal.
	Exited   bool
	ExitCode *int
	Signal   string
}

// TerminalMetaOf extracts the terminal _meta of a tool_call or
// tool_call_update; ok is false when there is none.
func TerminalMetaOf(u acpsdk.SessionUpdate) (m TerminalMeta, ok bool) {
	var meta map[string]any
	switch {
	case u.ToolCall != nil:
		meta, m.ToolCallID = u.ToolCall.Meta, string(u.ToolCall.ToolCallId)
	case u.ToolCallUpdate != nil:
		meta, m.ToolCallID = u.ToolCallUpdate.Meta, string(u.ToolCallUpdate.ToolCallId)
	default:
		return m, false
	}
	if info, found := metaObject(meta, "terminal_info"); found {
		ok, m.Started = true, true
		m.TerminalID = metaString(info, "terminal_id")
		m.Cwd = metaString(info, "cwd")
	}
	if out, found := metaObject(meta, "terminal_output"); found {
		ok = true
		if id := metaString(out, "terminal_id"); id != "" {
			m.TerminalID = id
		}
		m.Data = metaString(out, "data")
	}
	if exit, found := metaObject(meta, "terminal_exit"); found {
		ok, m.Exited = true, true
		if id := metaString(exit, "terminal_id"); id != "" {
			m.TerminalID = id
		}
		if code, isNum := metaNumber(exit, "exit_code"); isNum {
			m.ExitCode = &code
		}
		m.Signal = metaString(exit, "signal")
	}
	if !ok {
		return TerminalMeta{}, false
	}
	if m.TerminalID == "" {
		m.TerminalID = m.ToolCallID
	}
	return m, true
}

func metaObject(meta map[string]any, key string) (map[string]any, bool) {
	v, ok := meta[key].(map[string]any)
	return v, ok
}

func metaString(obj map[string]any, key string) string {
	s, _ := obj[key].(string)
	return s
}

func metaNumber(obj map[string]any, key string) (int, bool) {
	switch v := obj[key].(type) {
	case float64:
		if v == math.Trunc(v) && math.Abs(v) < 1<<31 {
			return int(v), true
		}
	case json.Number:
		if n, err := v.Int64(); err == nil {
			return int(n), true
		}
	case int:
		return v, true
	}
	return 0, false
}
