package session

import (
	"encoding/json"
	"strings"

	"github.com/agentrun/agentrun.nvim/acp/agentterm"
	acpsdk "github.com/coder/acp-go-sdk"
)

// The agent's mode is a promise agentrun keeps: under terminal.approve =
// "agent" (the default), a command for our terminals runs without a
// question unless the session's current mode is one that asks before
// acting (Claude's Manual and Plan, Codex's Read-only, any mode whose
// description says it asks); then the user is asked, as the agent
// itself would have.

// modeInfo is one mode as an agent describes it.
type modeInfo struct {
	ID, Name, Description string
}

// currentMode returns the session's current mode: from its modes, else
// from a config option of category "mode"; ok is false when the agent
// offers neither.
func currentMode(modes *acpsdk.SessionModeState, options []acpsdk.SessionConfigOption) (modeInfo, bool) {
	if modes != nil {
		for _, m := range modes.AvailableModes {
			if m.Id == modes.CurrentModeId {
				desc := ""
				if m.Description != nil {
					desc = *m.Description
				}
				return modeInfo{ID: string(m.Id), Name: m.Name, Description: desc}, true
			}
		}
		return modeInfo{ID: string(modes.CurrentModeId), Name: string(modes.CurrentModeId)}, true
	}
	// config options are read as JSON: their select options come flat or
	// in groups.
	raw, err := json.Marshal(options)
	if err != nil {
		return modeInfo{}, false
	}
	var opts []struct {
		Category     string          `json:"category"`
		CurrentValue string          `json:"currentValue"`
		Options      json.RawMessage `json:"options"`
	}
	if json.Unmarshal(raw, &opts) != nil {
		return modeInfo{}, false
	}
	type choice struct {
		Value       string  `json:"value"`
		Name        string  `json:"name"`
		Description *string `json:"description"`
		Options     []struct {
			Value       string  `json:"value"`
			Name        string  `json:"name"`
			Description *string `json:"description"`
		} `json:"options"`
	}
	for _, o := range opts {
		if o.Category != "mode" {
			continue
		}
		var choices []choice
		_ = json.Unmarshal(o.Options, &choices)
		for _, c := range choices {
			for _, sub := range append([]struct {
				Value       string  `json:"value"`
				Name        string  `json:"name"`
				Description *string `json:"description"`
			}{{c.Value, c.Name, c.Description}}, c.Options...) {
				if sub.Value == o.CurrentValue && sub.Value != "" {
					desc := ""
					if sub.Description != nil {
						desc = *sub.Description
					}
					return modeInfo{ID: sub.Value, Name: sub.Name, Description: desc}, true
				}
			}
		}
		return modeInfo{ID: o.CurrentValue, Name: o.CurrentValue}, true
	}
	return modeInfo{}, false
}

// asksFirst says whether mode m of the agent named agent asks before it
// acts: known agents by mode id (their agentterm.Profile), others by what the
// mode says of itself.
func asksFirst(agent string, m modeInfo) bool {
	if asks, known := agentterm.ProfileNamed(agent).AsksFirst(m.ID); known {
		return asks
	}
	text := strings.ToLower(m.Name + " " + m.Description)
	for _, no := range []string{"without ask", "never ask", "don't ask", "do not ask", "without approval", "no approval", "bypass", "accepts all", "auto-approve", "automatically"} {
		if strings.Contains(text, no) {
			return false
		}
	}
	for _, yes := range []string{"always ask", "ask before", "asks before", "ask first", "requires approval", "require approval", "ask for approval", "prompts for approval", "prompt for approval", "confirm", "read-only", "read only"} {
		if strings.Contains(text, yes) {
			return true
		}
	}
	return false
}

// modePromise returns the name of session key's current mode when that
// mode asks before acting ("" when it does not, or the session has no
// modes).
func (ss *Sessions) modePromise(key string) string {
	ss.mu.Lock()
	s := ss.byKey[key]
	ss.mu.Unlock()
	if s == nil || s.s == nil || s.agent == nil {
		return ""
	}
	m, ok := currentMode(s.s.Modes(), s.s.ConfigOptions())
	if !ok || !asksFirst(agentName(s.agent.Info()), m) {
		return ""
	}
	if m.Name != "" {
		return m.Name
	}
	return m.ID
}
