//go:build linux

package main

import (
	"encoding/json"
	"fmt"
	"time"

	acpsdk "github.com/coder/acp-go-sdk"
)

// sdkEncodeLatency times what our part of terminal/output would cost if
// the answer went the plain way, through the SDK (acp-go-sdk's
// Connection marshals the handler's result, then the envelope holding it
// as a json.RawMessage, which encoding/json validates and copies again):
// the text copied out as a string, then those two json.Marshal calls. It
// is the same-run baseline of "ours, request in → answer handed to
// write(2)", without the write. answer is the prebuilt terminal/output
// result (prebuildOutput).
func sdkEncodeLatency(answer []byte, n int) ([]time.Duration, error) {
	var res struct {
		Output string `json:"output"`
	}
	if err := json.Unmarshal(answer, &res); err != nil {
		return nil, fmt.Errorf("decode the prebuilt answer: %w", err)
	}
	text := []byte(res.Output)
	type envelope struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Result  json.RawMessage `json:"result"`
	}
	code := 0
	took := make([]time.Duration, 0, n)
	for i := 0; i < n; i++ {
		began := time.Now()
		result, err := json.Marshal(acpsdk.TerminalOutputResponse{
			Output:     string(text), // the snapshot, as Terminal.Output copies it
			Truncated:  true,
			ExitStatus: &acpsdk.TerminalExitStatus{ExitCode: &code},
		})
		if err != nil {
			return nil, err
		}
		msg, err := json.Marshal(envelope{JSONRPC: "2.0", ID: json.RawMessage("7"), Result: result})
		if err != nil {
			return nil, err
		}
		_ = append(msg, '\n')
		took = append(took, time.Since(began))
	}
	return took, nil
}
