package demoagent

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
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
//	{"notify": {"method": M, "params": {...}}}
//	                       another notification (an agent's extension
//	                       notification: written as is, sessionId set)
//	{"sleep": ms}          a pause
//	{"wait": "cancel"}     wait for session/cancel; the turn then ends
//	                       "cancelled" after the remaining lines
//	{"after_turn": ms}     end the turn here; the remaining lines follow
//	                       ms after it (an agent that says something of a
//	                       cancelled turn late, as Claude Code does)
//
// The updates go to stdout raw, not through the SDK, so shapes it does not
// know (the v2 draft's) reach the client as they were recorded.
func (d *demo) replay(ctx context.Context, s *session, path string) (acpsdk.StopReason, error) {
	if path == "" {
		return d.say(s, "Usage: `!replay FILE.jsonl`"+namesOf(" or `!replay NAME`, NAME one of: %s")+".")
	}
	f, err := openRecording(path)
	if err != nil {
		why := "it cannot be read"
		if errors.Is(err, fs.ErrNotExist) {
			why = "there is no such file or recording"
		} else if errors.Is(err, fs.ErrPermission) {
			why = "you may not read it"
		}
		return d.say(s, fmt.Sprintf("Cannot replay %s: %s. Give a recording's path%s.", path, why, namesOf(", or one of: %s")))
	}
	defer f.Close()
	// A session's second replay and on get ids of their own (a real agent
	// never reuses a tool call's id; the recordings all start at toolu_01).
	suffix := ""
	if n := s.replays.Add(1); n > 1 {
		suffix = fmt.Sprintf("-r%d", n)
	}
	stop := acpsdk.StopReasonEndTurn
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 16<<20)
	for line := 1; sc.Scan(); line++ {
		if len(sc.Bytes()) == 0 {
			continue
		}
		var step struct {
			Update    json.RawMessage `json:"update"`
			Sleep     int             `json:"sleep"`
			Wait      string          `json:"wait"`
			AfterTurn int             `json:"after_turn"`
			Notify    *struct {
				Method string         `json:"method"`
				Params map[string]any `json:"params"`
			} `json:"notify"`
		}
		if err := json.Unmarshal(sc.Bytes(), &step); err != nil {
			return d.say(s, fmt.Sprintf("Cannot replay %s: line %d is not a recorded step (a JSON object such as {\"update\": …} or {\"sleep\": 300}; see internal/demoagent/replay.go).", path, line))
		}
		if step.Update != nil && suffix != "" {
			step.Update = renameIDs(step.Update, suffix)
		}
		switch {
		case step.AfterTurn > 0:
			var late []json.RawMessage
			for sc.Scan() {
				var rest struct {
					Update json.RawMessage `json:"update"`
				}
				if json.Unmarshal(sc.Bytes(), &rest) == nil && rest.Update != nil {
					late = append(late, renameIDs(rest.Update, suffix))
				}
			}
			go func() {
				time.Sleep(time.Duration(step.AfterTurn) * time.Millisecond)
				for _, u := range late {
					if err := d.rawUpdate(s, u); err != nil {
						d.log.Warn("late update", "err", err)
						return
					}
				}
			}()
			return stop, nil
		case step.Update != nil:
			if err := d.rawUpdate(s, step.Update); err != nil {
				return "", err
			}
		case step.Notify != nil && step.Notify.Method != "":
			params := step.Notify.Params
			if params == nil {
				params = map[string]any{}
			}
			params["sessionId"] = s.id
			msg, err := json.Marshal(map[string]any{"jsonrpc": "2.0", "method": step.Notify.Method, "params": params})
			if err != nil {
				return "", fmt.Errorf("replay notification: %w", err)
			}
			if _, err := d.out.Write(append(msg, '\n')); err != nil {
				return "", fmt.Errorf("replay notification: %w", err)
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

// idKeys are the keys whose values name a tool call or a terminal in the
// recorded updates.
var idKeys = map[string]bool{"toolCallId": true, "terminalId": true, "terminal_id": true}

// renameIDs appends suffix to every tool call and terminal id in update u
// ("" leaves u as recorded).
func renameIDs(u json.RawMessage, suffix string) json.RawMessage {
	if suffix == "" {
		return u
	}
	var v any
	if json.Unmarshal(u, &v) != nil {
		return u
	}
	var walk func(any)
	walk = func(v any) {
		switch x := v.(type) {
		case map[string]any:
			for k, e := range x {
				if s, ok := e.(string); ok && idKeys[k] {
					x[k] = s + suffix
				} else {
					walk(e)
				}
			}
		case []any:
			for _, e := range x {
				walk(e)
			}
		}
	}
	walk(v)
	out, err := json.Marshal(v)
	if err != nil {
		return u
	}
	return out
}

// rawUpdate writes update u of session s to stdout as recorded.
func (d *demo) rawUpdate(s *session, u json.RawMessage) error {
	msg, err := json.Marshal(map[string]any{"jsonrpc": "2.0", "method": "session/update",
		"params": map[string]any{"sessionId": s.id, "update": u}})
	if err != nil {
		return fmt.Errorf("replay update: %w", err)
	}
	if _, err := d.out.Write(append(msg, '\n')); err != nil {
		return fmt.Errorf("replay update: %w", err)
	}
	return nil
}

// executable is the running binary's path (a variable for tests).
var executable = os.Executable

// recordingsDir is where the plugin keeps the recordings, found from the
// binary (bin/agentrun in the plugin's directory); "" when not there.
func recordingsDir() string {
	exe, err := executable()
	if err != nil {
		return ""
	}
	dir := filepath.Join(filepath.Dir(filepath.Dir(exe)), "tests", "testdata", "agentterm")
	if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
		return ""
	}
	return dir
}

// recordings lists the names of the plugin's recordings (what !replay
// takes without a path).
func recordings() []string {
	dir := recordingsDir()
	if dir == "" {
		return nil
	}
	files, _ := filepath.Glob(filepath.Join(dir, "*.jsonl"))
	names := make([]string, len(files))
	for i, f := range files {
		names[i] = strings.TrimSuffix(filepath.Base(f), ".jsonl")
	}
	return names
}

// namesOf is format with the recordings' names, or "" when there are none.
func namesOf(format string) string {
	names := recordings()
	if len(names) == 0 {
		return ""
	}
	return fmt.Sprintf(format, strings.Join(names, ", "))
}

// openRecording opens path as given (relative to the session's directory),
// else, relative, in the plugin's directory, else as the name of one of
// its recordings ("claude-success").
func openRecording(path string) (*os.File, error) {
	f, err := os.Open(path)
	if err == nil || filepath.IsAbs(path) {
		return f, err
	}
	if dir := recordingsDir(); dir != "" {
		for _, p := range []string{
			filepath.Join(filepath.Dir(filepath.Dir(filepath.Dir(dir))), path),
			filepath.Join(dir, path),
			filepath.Join(dir, path+".jsonl"),
		} {
			if g, gerr := os.Open(p); gerr == nil {
				return g, nil
			}
		}
	}
	return nil, err
}
