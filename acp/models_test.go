package acp

import (
	"encoding/json"
	"testing"

	acpsdk "github.com/coder/acp-go-sdk"
)

// TestLegacyModels: the older "models" field becomes a model option, not
// when the agent has a model option of its own, and survives a
// config_option_update that says nothing of models.
func TestLegacyModels(t *testing.T) {
	var m legacyModels
	if err := json.Unmarshal([]byte(`{"availableModels":[{"modelId":"auto","name":"Auto"},{"modelId":"gemini-2.5-pro","name":"Gemini 2.5 Pro"}],"currentModelId":"auto"}`), &m); err != nil {
		t.Fatal(err)
	}
	config, legacy := withLegacyModels(nil, &m)
	if !legacy || len(config) != 1 || config[0].Select == nil || config[0].Select.CurrentValue != "auto" || len(selectValues(config[0].Select.Options)) != 2 {
		t.Fatalf("withLegacyModels gave %+v (legacy %v)", config, legacy)
	}
	var own []acpsdk.SessionConfigOption
	if err := json.Unmarshal([]byte(`[{"type":"select","id":"m","name":"Model","category":"model","currentValue":"x","options":[{"value":"x","name":"X"}]}]`), &own); err != nil {
		t.Fatal(err)
	}
	if c, legacy := withLegacyModels(own, &m); legacy || len(c) != 1 {
		t.Errorf("an agent's own model option lost to the older field: %+v", c)
	}
	s := &Session{config: config, legacyModels: true}
	var other []acpsdk.SessionConfigOption
	if err := json.Unmarshal([]byte(`[{"type":"select","id":"effort","name":"Effort","currentValue":"hi","options":[{"value":"hi","name":"High"}]}]`), &other); err != nil {
		t.Fatal(err)
	}
	s.followModeUpdates(acpsdk.SessionUpdate{ConfigOptionUpdate: &acpsdk.SessionConfigOptionUpdate{ConfigOptions: other}})
	if len(s.config) != 2 || !hasCategory(s.config, acpsdk.SessionConfigOptionCategoryModel) {
		t.Errorf("after an update without models: %+v", s.config)
	}
}
