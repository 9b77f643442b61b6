package acp

import (
	"context"
	"encoding/json"
	"fmt"

	acpsdk "github.com/coder/acp-go-sdk"
)

// Models offered in the older "models" field of session/new (Gemini CLI
// 0.61 offers its models only so, switched with session/set_model) stand
// here as one more config option of category "model", with id "model":
// :AgentModel, the status line and status() then treat them as every
// agent's models, and setting that option sends session/set_model.

// legacyModelOption is the id of the option that stands for them.
const legacyModelOption = "model"

// legacyModels is the older field: {availableModels, currentModelId}.
type legacyModels struct {
	Available []struct {
		ModelID     string  `json:"modelId"`
		Name        string  `json:"name"`
		Description *string `json:"description"`
	} `json:"availableModels"`
	Current string `json:"currentModelId"`
}

// withLegacyModels returns config with m's models added as a select
// option of category "model", unless m offers none or config has a model
// option of its own (the newer way wins); legacy says it was added.
func withLegacyModels(config []acpsdk.SessionConfigOption, m *legacyModels) (out []acpsdk.SessionConfigOption, legacy bool) {
	if m == nil || len(m.Available) == 0 || hasCategory(config, acpsdk.SessionConfigOptionCategoryModel) {
		return config, false
	}
	opts := acpsdk.SessionConfigSelectOptionsUngrouped{}
	for _, x := range m.Available {
		name := x.Name
		if name == "" {
			name = x.ModelID
		}
		opts = append(opts, acpsdk.SessionConfigSelectOption{Value: acpsdk.SessionConfigValueId(x.ModelID), Name: name, Description: x.Description})
	}
	cat := acpsdk.SessionConfigOptionCategoryModel
	o := acpsdk.SessionConfigOption{Select: &acpsdk.SessionConfigOptionSelect{
		Type:         "select",
		Id:           legacyModelOption,
		Name:         "Model",
		Category:     &cat,
		CurrentValue: acpsdk.SessionConfigValueId(m.Current),
		Options:      acpsdk.SessionConfigSelectOptions{Ungrouped: &opts},
	}}
	return append(append([]acpsdk.SessionConfigOption(nil), config...), o), true
}

// hasCategory says whether config has an option of category c.
func hasCategory(config []acpsdk.SessionConfigOption, c acpsdk.SessionConfigOptionCategory) bool {
	for _, o := range config {
		if o.Select != nil && o.Select.Category != nil && *o.Select.Category == c {
			return true
		}
	}
	return false
}

// setLegacyModel switches the session to model id with session/set_model
// and returns the config options with it current.
func (s *Session) setLegacyModel(ctx context.Context, id string) ([]acpsdk.SessionConfigOption, error) {
	req := map[string]any{"sessionId": s.id, "modelId": id}
	if _, err := acpsdk.SendRequest[json.RawMessage](s.agent.conn, ctx, "session/set_model", req); err != nil {
		return nil, fmt.Errorf("agent %q: %w", s.agent.cfg.Name, describeRPCError("session/set_model", err))
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	config := append([]acpsdk.SessionConfigOption(nil), s.config...)
	for i, o := range config {
		if o.Select != nil && string(o.Select.Id) == legacyModelOption {
			sel := *o.Select
			sel.CurrentValue = acpsdk.SessionConfigValueId(id)
			config[i] = acpsdk.SessionConfigOption{Select: &sel}
		}
	}
	s.config = config
	return config, nil
}
