package acp

import (
	"context"
	"errors"
	"fmt"

	acpsdk "github.com/coder/acp-go-sdk"
)

// Sign-in (ACP authenticate). An agent lists its ways to sign in in its
// initialize answer and answers session/new with auth_required (-32000)
// until the user has used one. Three kinds:
//   - agent: the agent signs in itself when asked (authenticate);
//   - terminal: the client runs the agent's own program with the method's
//     args and env in an interactive terminal, and never calls
//     authenticate; exit status 0 means signed in;
//   - env_var: the user sets environment variables and starts the agent
//     again.

// AuthMethod is one way the agent offers to sign in.
type AuthMethod struct {
	ID          string `json:"id"`
	Name        string `json:"name"`
	Description string `json:"description,omitempty"`
	// Type is "agent", "terminal" or "env_var".
	Type string `json:"type"`
	// Args and Env are laid over the agent's own command for a terminal
	// method.
	Args []string          `json:"args,omitempty"`
	Env  map[string]string `json:"env,omitempty"`
	// Vars names the variables an env_var method needs.
	Vars []string `json:"vars,omitempty"`
}

// authRequiredCode is ACP's error code for "sign in first".
const authRequiredCode = -32000

// IsAuthRequired reports whether err is (or wraps) the agent's
// auth_required answer.
func IsAuthRequired(err error) bool {
	var re *acpsdk.RequestError
	return errors.As(err, &re) && re.Code == authRequiredCode
}

// AuthMethods returns the ways the agent offers to sign in (from its
// initialize answer), in its order.
func (a *Agent) AuthMethods() []AuthMethod {
	var out []AuthMethod
	for _, m := range a.info.AuthMethods {
		switch {
		case m.Terminal != nil:
			t := m.Terminal
			env := map[string]string{}
			for k, v := range t.Env {
				if s, ok := v.(string); ok {
					env[k] = s
				}
			}
			out = append(out, AuthMethod{ID: t.Id, Name: t.Name, Description: deref(t.Description), Type: "terminal", Args: t.Args, Env: env})
		case m.EnvVar != nil:
			e := m.EnvVar
			var vars []string
			for _, v := range e.Vars {
				vars = append(vars, v.Name)
			}
			out = append(out, AuthMethod{ID: e.Id, Name: e.Name, Description: deref(e.Description), Type: "env_var", Vars: vars})
		case m.Agent != nil:
			out = append(out, AuthMethod{ID: m.Agent.Id, Name: m.Agent.Name, Description: deref(m.Agent.Description), Type: "agent"})
		}
	}
	return out
}

// AuthMethod returns the agent's sign-in method id.
func (a *Agent) AuthMethod(id string) (AuthMethod, error) {
	var ids []string
	for _, m := range a.AuthMethods() {
		if m.ID == id {
			return m, nil
		}
		ids = append(ids, m.ID)
	}
	if len(ids) == 0 {
		return AuthMethod{}, fmt.Errorf("agent %q offers no way to sign in", a.cfg.Name)
	}
	return AuthMethod{}, fmt.Errorf("agent %q has no sign-in method %q (it has %v)", a.cfg.Name, id, ids)
}

// Authenticate asks the agent to sign in with method id, which must be of
// type "agent" (a terminal method runs the agent's program instead:
// LoginCommand).
func (a *Agent) Authenticate(ctx context.Context, id string) error {
	m, err := a.AuthMethod(id)
	if err != nil {
		return err
	}
	if m.Type != "agent" {
		return fmt.Errorf("agent %q: sign-in method %q is a %s method, not one the agent runs itself", a.cfg.Name, id, m.Type)
	}
	_, err = acpsdk.SendRequest[acpsdk.AuthenticateResponse](a.conn, ctx, acpsdk.AgentMethodAuthenticate, acpsdk.AuthenticateRequest{MethodId: id})
	if err != nil {
		if endErr := a.endedErr(); endErr != nil {
			return fmt.Errorf("authenticate: %w", endErr)
		}
		return fmt.Errorf("agent %q: %w", a.cfg.Name, describeRPCError("authenticate", err))
	}
	return nil
}

// LoginCommand is the command a terminal sign-in method runs: the agent's
// own argv with the method's args after it, and its environment with the
// method's env laid over it.
func (a *Agent) LoginCommand(m AuthMethod) (argv, env []string) {
	argv = append(append([]string{}, a.cfg.Command...), m.Args...)
	env = append([]string{}, a.cfg.Env...)
	for k, v := range m.Env {
		env = append(env, k+"="+v)
	}
	return argv, env
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}
