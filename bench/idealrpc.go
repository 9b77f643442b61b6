//go:build linux

package main

import (
	"encoding/json"
	"fmt"
	"time"
)

// The ideal client's side of the conversation: newline-delimited
// JSON-RPC 2.0, the few answers the demo agent needs, and the timing of
// terminal/output.

// rpcMsg is any JSON-RPC 2.0 message.
type rpcMsg struct {
	ID     json.RawMessage `json:"id,omitempty"`
	Method string          `json:"method,omitempty"`
	Params json.RawMessage `json:"params,omitempty"`
	Result json.RawMessage `json:"result,omitempty"`
	Error  json.RawMessage `json:"error,omitempty"`
}

// call sends a request and serves the agent until its response.
func (c *idealClient) call(method string, params any) (json.RawMessage, error) {
	c.nextID++
	id := c.nextID
	if err := c.send(map[string]any{"jsonrpc": "2.0", "id": id, "method": method, "params": params}); err != nil {
		return nil, err
	}
	for {
		line, err := c.in.ReadBytes('\n')
		if err != nil {
			return nil, fmt.Errorf("%s: reading the agent: %w", method, err)
		}
		var m rpcMsg
		if err := json.Unmarshal(line, &m); err != nil {
			return nil, fmt.Errorf("%s: the agent wrote %q: %w", method, line, err)
		}
		parsed := time.Now()
		switch {
		case m.Method == "terminal/output" && m.ID != nil:
			b := append(c.answer, m.ID...)
			b = append(b, "}\n"...)
			began := time.Now()
			_, err = c.stdin.Write(b)
			end := time.Now()
			c.took, c.writes = append(c.took, end.Sub(parsed)), append(c.writes, end.Sub(began))
		case m.Method != "" && m.ID != nil:
			err = c.answerRequest(m)
		case m.Method == "session/update":
			c.update(m.Params)
		case m.Method == "":
			if string(m.ID) != fmt.Sprint(id) {
				continue
			}
			if m.Error != nil {
				return nil, fmt.Errorf("%s: %s", method, m.Error)
			}
			return m.Result, nil
		}
		if err != nil {
			return nil, fmt.Errorf("%s: answering the agent: %w", method, err)
		}
	}
}

// answerRequest answers the agent's requests other than terminal/output.
func (c *idealClient) answerRequest(m rpcMsg) error {
	var result any
	switch m.Method {
	case "terminal/create":
		result = map[string]string{"terminalId": "ideal-1"}
	case "terminal/wait_for_exit":
		result = map[string]any{"exitCode": 0, "signal": nil}
	case "terminal/release", "terminal/kill":
		result = map[string]any{}
	case "session/request_permission":
		result = map[string]any{"outcome": map[string]string{"outcome": "cancelled"}}
	default:
		return c.send(map[string]any{"jsonrpc": "2.0", "id": m.ID,
			"error": map[string]any{"code": -32601, "message": "the ideal client does not do " + m.Method}})
	}
	return c.send(map[string]any{"jsonrpc": "2.0", "id": m.ID, "result": result})
}

// update keeps the text of agent_message_chunk updates.
func (c *idealClient) update(params json.RawMessage) {
	var n struct {
		Update struct {
			SessionUpdate string `json:"sessionUpdate"`
			Content       struct {
				Type string `json:"type"`
				Text string `json:"text"`
			} `json:"content"`
		} `json:"update"`
	}
	if json.Unmarshal(params, &n) == nil && n.Update.SessionUpdate == "agent_message_chunk" && n.Update.Content.Type == "text" {
		c.text.WriteString(n.Update.Content.Text)
	}
}

func (c *idealClient) send(v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	_, err = c.stdin.Write(append(b, '\n'))
	return err
}
