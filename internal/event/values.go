package event

import (
	"encoding/json"
	"strings"

	"github.com/agentrun/agentrun.nvim/ahp"
	"github.com/agentrun/agentrun.nvim/termhost"
)

// The values events carry that more than one part makes: a terminal's
// end, a claim, a last line, an ACP value, as Lua reads them.

// Exit is the terminal_exit event of every terminal shown here
// (ours, another host's): its id, exit_code or signal, ran_ms when known,
// and its last line (for the notice of an end out of sight) when it has
// one.
func Exit(id string, st termhost.ExitStatus, last string) TerminalExit {
	p := TerminalExit{ID: id, ExitCode: st.Code, LastLine: last}
	if st.Code == nil {
		p.Signal = &st.Signal
	}
	if st.Ran > 0 {
		p.RanMS = st.Ran.Milliseconds()
	}
	return p
}

// Claim is a claim as status() shows it (snake_case, empty fields
// left out).
func Claim(c ahp.Claim) map[string]any {
	m := map[string]any{"kind": c.Kind}
	for k, v := range map[string]string{"session": c.Session, "tool_call_id": c.ToolCallID, "client_id": c.ClientID, "turn_id": c.TurnID} {
		if v != "" {
			m[k] = v
		}
	}
	return m
}

// JSONValue turns an ACP value into plain maps/slices/strings/numbers via
// its JSON form (the SDK's unions marshal themselves), for msgpack to Lua.
func JSONValue(v any) any {
	data, err := json.Marshal(v)
	if err != nil {
		return map[string]any{"error": err.Error()}
	}
	var out any
	if err := json.Unmarshal(data, &out); err != nil {
		return map[string]any{"error": err.Error()}
	}
	return dropNulls(out)
}

// dropNulls removes null map entries: Lua sees an absent field as nil,
// while a null would arrive as vim.NIL (a truthy userdata).
func dropNulls(v any) any {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			if e == nil {
				delete(x, k)
			} else {
				x[k] = dropNulls(e)
			}
		}
	case []any:
		for i, e := range x {
			x[i] = dropNulls(e)
		}
	}
	return v
}

// ErrText is err's message, or "" for nil.
func ErrText(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

// LastLine is the last line of text with something on it, cut to 120
// characters.
func LastLine(text string) string {
	text = strings.TrimRight(text, " \t\r\n")
	if i := strings.LastIndexByte(text, '\n'); i >= 0 {
		text = text[i+1:]
	}
	text = strings.TrimSpace(text)
	if r := []rune(text); len(r) > 120 {
		text = string(r[:119]) + "…"
	}
	return text
}
