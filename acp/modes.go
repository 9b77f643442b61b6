package acp

import (
	"context"
	"fmt"
	"strings"

	acpsdk "github.com/coder/acp-go-sdk"
)

// Modes and config options (ACP session/set_mode, session/set_config_option):
// what session/new offered, changed by the user through these methods or
// by the agent itself (current_mode_update, config_option_update, which
// the editor follows from the session updates it gets anyway).

// Modes returns the session's modes as session/new offered them (nil when
// the agent has none), with the current one as last set here.
func (s *Session) Modes() *acpsdk.SessionModeState {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.modes == nil {
		return nil
	}
	m := *s.modes
	return &m
}

// ConfigOptions returns the session's config options (model and others)
// as last reported.
func (s *Session) ConfigOptions() []acpsdk.SessionConfigOption {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]acpsdk.SessionConfigOption(nil), s.config...)
}

// SetMode asks the agent to switch the session to mode id.
func (s *Session) SetMode(ctx context.Context, id string) error {
	s.mu.Lock()
	modes := s.modes
	s.mu.Unlock()
	if modes == nil {
		return fmt.Errorf("agent %q offers no modes", s.agent.cfg.Name)
	}
	known := false
	for _, m := range modes.AvailableModes {
		known = known || string(m.Id) == id
	}
	if !known {
		return fmt.Errorf("agent %q has no mode %q (it has %s)", s.agent.cfg.Name, id, modeIDs(modes))
	}
	_, err := acpsdk.SendRequest[acpsdk.SetSessionModeResponse](s.agent.conn, ctx, acpsdk.AgentMethodSessionSetMode,
		acpsdk.SetSessionModeRequest{SessionId: acpsdk.SessionId(s.id), ModeId: acpsdk.SessionModeId(id)})
	if err != nil {
		return fmt.Errorf("agent %q: %w", s.agent.cfg.Name, describeRPCError("session/set_mode", err))
	}
	s.mu.Lock()
	s.modes.CurrentModeId = acpsdk.SessionModeId(id)
	s.mu.Unlock()
	return nil
}

func modeIDs(m *acpsdk.SessionModeState) string {
	out := ""
	for i, mode := range m.AvailableModes {
		if i > 0 {
			out += ", "
		}
		out += string(mode.Id)
	}
	return out
}

// SetConfigOption asks the agent to set select option id to value and
// returns every option as the agent reports them then.
func (s *Session) SetConfigOption(ctx context.Context, id, value string) ([]acpsdk.SessionConfigOption, error) {
	if err := s.checkConfigValue(id, value); err != nil {
		return nil, err
	}
	s.mu.Lock()
	legacy := s.legacyModels && id == legacyModelOption
	s.mu.Unlock()
	if legacy {
		return s.setLegacyModel(ctx, value)
	}
	req := acpsdk.SetSessionConfigOptionRequest{ValueId: &acpsdk.SetSessionConfigOptionValueId{
		SessionId: acpsdk.SessionId(s.id), ConfigId: acpsdk.SessionConfigId(id), Value: acpsdk.SessionConfigValueId(value),
	}}
	resp, err := acpsdk.SendRequest[acpsdk.SetSessionConfigOptionResponse](s.agent.conn, ctx, acpsdk.AgentMethodSessionSetConfigOption, req)
	if err != nil {
		return nil, fmt.Errorf("agent %q: %w", s.agent.cfg.Name, describeRPCError("session/set_config_option", err))
	}
	s.mu.Lock()
	s.config = resp.ConfigOptions
	s.mu.Unlock()
	return resp.ConfigOptions, nil
}

// checkConfigValue refuses value for option id when the agent advertised
// the option's values and value is not one of them, naming those it has
// (as SetMode does for modes); an option the agent did not advertise, or
// one without a list of values, is left for the agent to judge.
func (s *Session) checkConfigValue(id, value string) error {
	s.mu.Lock()
	config := s.config
	s.mu.Unlock()
	for _, o := range config {
		sel := o.Select
		if sel == nil || string(sel.Id) != id {
			continue
		}
		values := selectValues(sel.Options)
		if len(values) == 0 {
			return nil
		}
		for _, v := range values {
			if v == value {
				return nil
			}
		}
		return fmt.Errorf("agent %q has no %s %q (it has %s)", s.agent.cfg.Name, id, value, strings.Join(values, ", "))
	}
	return nil
}

// selectValues lists a select option's values, groups flattened.
func selectValues(o acpsdk.SessionConfigSelectOptions) []string {
	var out []string
	if u := o.Ungrouped; u != nil {
		for _, v := range *u {
			out = append(out, string(v.Value))
		}
	}
	if g := o.Grouped; g != nil {
		for _, group := range *g {
			for _, v := range group.Options {
				out = append(out, string(v.Value))
			}
		}
	}
	return out
}

// followModeUpdates keeps Modes and ConfigOptions current when the agent
// changes them itself (called with every session update).
func (s *Session) followModeUpdates(u acpsdk.SessionUpdate) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if m := u.CurrentModeUpdate; m != nil && s.modes != nil {
		s.modes.CurrentModeId = m.CurrentModeId
	}
	if c := u.ConfigOptionUpdate; c != nil {
		config := c.ConfigOptions
		if s.legacyModels && !hasCategory(config, acpsdk.SessionConfigOptionCategoryModel) {
			// the models the older field offered stay offered
			for _, o := range s.config {
				if o.Select != nil && string(o.Select.Id) == legacyModelOption {
					config = append(append([]acpsdk.SessionConfigOption(nil), config...), o)
				}
			}
		}
		s.config = config
	}
}
