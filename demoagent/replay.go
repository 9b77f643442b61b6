package demoagent

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"time"

	acpsdk "github.com/coder/acp-go-sdk"
)

// replay sends the session updates recorded in a JSON Lines file, as an
// agent that was observed sent them, to show (and test) how the client
// renders shapes the demo agent does not produce itself: Claude Code's and
// codex's agent-owned terminals, the ACP v2 draft's terminal updates. Each
// line is one of
//
//	{"update": {...}}      a session/update (written as is, sessionId added)
//	{"sleep": ms}          a pause
//	{"wait": "cancel"}     wait for session/cancel; the turn then ends
//	                       "cancelled" after the remaining lines
//
// The updates go to stdout raw, not through the SDK, so shapes it does not
// know (the v2 draft's) reach the client as they were recorded.
func (d *demo) replay(ctx context.Context, s *session, path string) (acpsdk.StopReason, error) {
	if path == "" {
		return d.say(s, "Usage: `!replay FILE.jsonl`")
	}
	f, err := os.Open(path)
	if err != nil {
		return d.say(s, fmt.Sprintf("Cannot replay %s: %v", path, err))
	}
	defer f.Close()
	stop := acpsdk.StopReasonEndTurn
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 16<<20)
	for line := 1; sc.Scan(); line++ {
		if len(sc.Bytes()) == 0 {
			continue
		}
		var step struct {
			Update json.RawMessage `json:"update"`
			Sleep  int             `json:"sleep"`
			Wait   string          `json:"wait"`
		}
		if err := json.Unmarshal(sc.Bytes(), &step); err != nil {
			return d.say(s, fmt.Sprintf("%s:%d is not a replay step: %v", path, line, err))
		}
		switch {
		case step.Update != nil:
			msg, err := json.Marshal(map[string]any{"jsonrpc": "2.0", "method": "session/update",
				"params": map[string]any{"sessionId": s.id, "update": step.Update}})
			if err != nil {
				return "", err
			}
			if _, err := d.out.Write(append(msg, '\n')); err != nil {
				return "", err
			}
		case step.Sleep > 0:
			time.Sleep(time.Duration(step.Sleep) * time.Millisecond)
		case step.Wait == "cancel":
			<-ctx.Done()
			stop = acpsdk.StopReasonCancelled
		}
	}
	if err := sc.Err(); err != nil {
		return d.say(s, fmt.Sprintf("Cannot read %s: %v", path, err))
	}
	return stop, nil
}
