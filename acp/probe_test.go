package acp

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"sort"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	acpsdk "github.com/coder/acp-go-sdk"
)

// The probe is a scriptable agent for wire-level tests: each prompt's text
// is a JSON list of steps. A step sends one raw request to the client
// (anything, malformed on purpose), or makes the agent die. The results —
// the raw result or the error object — come back as one
// agent_message_chunk holding their JSON list.
//
// In params, "$SESSION" becomes the prompt's session id and "$T<i>" the
// terminalId returned by step i.

// probeStep is one step of a probe script.
type probeStep struct {
	Method string          `json:"method,omitempty"`
	Params json.RawMessage `json:"params,omitempty"`
	// Exit makes the agent write Stderr to stderr and exit with this code.
	Exit   *int   `json:"exit,omitempty"`
	Stderr string `json:"stderr,omitempty"`
	// KillSelf makes the agent send itself SIGKILL.
	KillSelf bool `json:"killSelf,omitempty"`
	// AwaitPath makes the agent wait until this file exists (the test
	// creates it when it has done its part between two steps).
	AwaitPath string `json:"awaitPath,omitempty"`
}

// probeResult is the outcome of one request step.
type probeResult struct {
	Result json.RawMessage      `json:"result,omitempty"`
	Error  *acpsdk.RequestError `json:"error,omitempty"`
	// Cancels counts the session/cancel notifications the agent had read
	// when this step's answer reached it.
	Cancels int64 `json:"cancels"`
}

// probeCancels counts the session/cancel notifications the probe read.
var probeCancels atomic.Int64

// req builds a request step; params are marshalled to JSON.
func req(method string, params any) probeStep {
	b, err := json.Marshal(params)
	if err != nil {
		panic(err)
	}
	return probeStep{Method: method, Params: b}
}

// rawReq builds a request step with literal JSON params.
func rawReq(method, params string) probeStep {
	return probeStep{Method: method, Params: json.RawMessage(params)}
}

// runProbe serves the probe agent on stdio.
func runProbe() {
	var conn *acpsdk.Connection
	var sessions atomic.Int64
	ready := make(chan struct{}) // conn is set
	handler := func(ctx context.Context, method string, params json.RawMessage) (any, *acpsdk.RequestError) {
		<-ready
		switch method {
		case "initialize":
			return map[string]any{"protocolVersion": 1, "agentCapabilities": map[string]any{}, "authMethods": []any{}}, nil
		case "session/new":
			return map[string]any{"sessionId": fmt.Sprintf("probe-%d", sessions.Add(1))}, nil
		case "session/cancel":
			probeCancels.Add(1)
			return nil, nil
		case "session/prompt":
			return probePrompt(ctx, conn, params)
		}
		return nil, acpsdk.NewMethodNotFound(method)
	}
	conn = acpsdk.NewConnection(handler, os.Stdout, os.Stdin)
	close(ready)
	<-conn.Done()
}

func probePrompt(ctx context.Context, conn *acpsdk.Connection, params json.RawMessage) (any, *acpsdk.RequestError) {
	var p struct {
		SessionID string `json:"sessionId"`
		Prompt    []struct {
			Text string `json:"text"`
		} `json:"prompt"`
	}
	if err := json.Unmarshal(params, &p); err != nil || len(p.Prompt) == 0 {
		return nil, acpsdk.NewInvalidParams(map[string]any{"error": "probe wants a prompt"})
	}
	var steps []probeStep
	if err := json.Unmarshal([]byte(p.Prompt[0].Text), &steps); err != nil {
		return nil, acpsdk.NewInvalidParams(map[string]any{"error": "probe script: " + err.Error()})
	}
	vars := map[string]string{"$SESSION": p.SessionID}
	results := []probeResult{}
	for i, st := range steps {
		switch {
		case st.Exit != nil:
			fmt.Fprintln(os.Stderr, st.Stderr)
			os.Exit(*st.Exit)
		case st.KillSelf:
			_ = syscall.Kill(os.Getpid(), syscall.SIGKILL)
			select {}
		case st.AwaitPath != "":
			for {
				if _, err := os.Stat(st.AwaitPath); err == nil {
					break
				}
				time.Sleep(10 * time.Millisecond)
			}
			results = append(results, probeResult{})
			continue
		}
		var params any
		if st.Params != nil {
			b := []byte(st.Params)
			// Longest names first: "$T1" must not eat the start of "$T12".
			names := make([]string, 0, len(vars))
			for k := range vars {
				names = append(names, k)
			}
			sort.Slice(names, func(i, j int) bool { return len(names[i]) > len(names[j]) })
			for _, k := range names {
				b = bytes.ReplaceAll(b, []byte(k), []byte(vars[k]))
			}
			params = json.RawMessage(b)
		}
		raw, err := acpsdk.SendRequest[json.RawMessage](conn, ctx, st.Method, params)
		// the SDK has handled every notification read before the answer
		res := probeResult{Cancels: probeCancels.Load()}
		if err != nil {
			var re *acpsdk.RequestError
			if !errors.As(err, &re) {
				re = &acpsdk.RequestError{Code: -1, Message: err.Error()}
			}
			res.Error = re
		} else {
			res.Result = raw
			var created struct {
				TerminalID string `json:"terminalId"`
			}
			if st.Method == "terminal/create" && json.Unmarshal(raw, &created) == nil {
				vars[fmt.Sprintf("$T%d", i)] = created.TerminalID
			}
		}
		results = append(results, res)
	}
	out, _ := json.Marshal(results)
	_ = conn.SendNotification(ctx, "session/update", map[string]any{
		"sessionId": p.SessionID,
		"update": map[string]any{
			"sessionUpdate": "agent_message_chunk",
			"content":       map[string]any{"type": "text", "text": string(out)},
		},
	})
	return map[string]any{"stopReason": "end_turn"}, nil
}

// probe runs a script in session s and returns one result per step.
func probe(t *testing.T, s *Session, r *recorder, steps ...probeStep) []probeResult {
	t.Helper()
	script, err := json.Marshal(steps)
	if err != nil {
		t.Fatal(err)
	}
	prompt(t, s, string(script))
	msgs := r.messages(s.ID())
	if len(msgs) == 0 {
		t.Fatalf("probe sent no results")
	}
	var results []probeResult
	if err := json.Unmarshal([]byte(msgs[len(msgs)-1]), &results); err != nil {
		t.Fatalf("probe results %q: %v", msgs[len(msgs)-1], err)
	}
	if len(results) != len(steps) {
		t.Fatalf("probe returned %d results for %d steps", len(results), len(steps))
	}
	return results
}

// terminalID reads terminal/create's result.
func terminalID(t *testing.T, res probeResult) string {
	t.Helper()
	if res.Error != nil {
		t.Fatalf("terminal/create failed: %s", res.Error.Message)
	}
	var r struct {
		TerminalID string `json:"terminalId"`
	}
	if err := json.Unmarshal(res.Result, &r); err != nil || r.TerminalID == "" {
		t.Fatalf("terminal/create result %s", res.Result)
	}
	return r.TerminalID
}
