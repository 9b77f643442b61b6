package editor

import (
	"context"
	"fmt"
	"path/filepath"
	"time"

	"github.com/agentrun/agentrun.nvim/acp"
)

// policyArgs are the user's limits for one session's terminals (the
// terminal.* options allowed_cwd, approve, max_run_ms and byte_limit).
type policyArgs struct {
	// AllowedCwd lists absolute roots; empty means the session cwd.
	AllowedCwd []string `msgpack:"allowed_cwd"`
	// Approve is "never" (run without asking), "always" (ask the user) or
	// "function" (ask terminal.approve, which may ask the user).
	Approve string `msgpack:"approve"`
	// MaxRunMS kills a command after this many milliseconds; 0 = no limit.
	MaxRunMS int `msgpack:"max_run_ms"`
	// ByteLimit caps every terminal's retained output; 0 = the host's.
	ByteLimit int `msgpack:"byte_limit"`
}

// check reports the first bad field, named as the Lua option.
func (p policyArgs) check() error {
	for _, root := range p.AllowedCwd {
		if !filepath.IsAbs(root) {
			return fmt.Errorf("terminal.allowed_cwd: %q is not an absolute path", root)
		}
	}
	switch p.Approve {
	case "", "never", "always", "function":
	default:
		return fmt.Errorf("terminal.approve: want \"never\", \"always\" or a function, not %q", p.Approve)
	}
	if p.MaxRunMS < 0 {
		return fmt.Errorf("terminal.max_run_ms: must be >= 0, not %d", p.MaxRunMS)
	}
	if p.ByteLimit < 0 {
		return fmt.Errorf("terminal.byte_limit: must be >= 0, not %d", p.ByteLimit)
	}
	return nil
}

// applyPolicy sets the policy fields of opts for the session with key.
func (b *Bridge) applyPolicy(opts *acp.Options, key string, p policyArgs) {
	opts.AllowedCwdRoots = p.AllowedCwd
	opts.MaxRunTime = time.Duration(p.MaxRunMS) * time.Millisecond
	opts.ByteCap = p.ByteLimit
	if p.Approve == "always" || p.Approve == "function" {
		opts.Approve = b.approver(key)
	}
	opts.Notice = func(msg string) {
		b.events.push(evMessage, map[string]any{"key": key, "level": "warn", "text": msg})
	}
}

// approver asks Lua whether a terminal command may run: Lua calls
// terminal.approve or shows vim.ui.select with the exact command line and
// answers with "answer_question" (token, "run" or "" to refuse).
func (b *Bridge) approver(key string) func(ctx context.Context, cmd acp.Command) (bool, error) {
	return func(ctx context.Context, cmd acp.Command) (bool, error) {
		token, id, err := b.ask(ctx, "a", approveQuestion, map[string]any{
			"key": key, "session_id": cmd.Session,
			"line": cmd.Line, "argv": cmd.Argv, "cwd": cmd.Cwd,
		})
		if err != nil {
			return false, err
		}
		b.log.Info("command approval", "token", token, "line", cmd.Line, "allowed", id == "run")
		return id == "run", nil
	}
}
