package acp

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"github.com/agentrun/agentrun.nvim/internal/lineshell"
	"github.com/agentrun/agentrun.nvim/internal/shquote"
	"github.com/agentrun/agentrun.nvim/termhost"
	acpsdk "github.com/coder/acp-go-sdk"
)

// Command is a terminal command an agent asked to run, as the approval
// hook and the audit log see it.
type Command struct {
	// Session is the ACP session id.
	Session string
	// Line is the command as a person reads it: the shell line, or the
	// argv quoted for a shell.
	Line string
	// Argv is exactly what runs: lineshell.Argv(line) (bash --noprofile
	// --norc -c line) or the command with its args.
	Argv []string
	// Env are the variables the agent set for it (terminal/create's env),
	// NAME=value in its order: part of the command, judged and shown.
	Env []string
	// Cwd is the absolute working directory.
	Cwd string
	// Sandbox describes the confinement it runs in ("project (no
	// network; writes only in /src/app)"); empty when it runs unconfined.
	Sandbox string
	// ToolCall is the tool call it runs for, when known (agentrun's MCP
	// tool); empty otherwise.
	ToolCall string
}

// AuditRecord is one entry of the command audit trail.
type AuditRecord struct {
	Time time.Time
	// Event is "start", "refused" or "exit".
	Event string
	Command
	// Terminal is the terminal id (empty when refused).
	Terminal string
	// Exit is set for "exit" records.
	Exit *termhost.ExitStatus
	// Limit says which limit stopped the command (for "exit"), if any.
	Limit string
}

// commandOf describes what spec will run.
func commandOf(session string, spec termhost.Spec) Command {
	c := Command{Session: session, Cwd: spec.Dir}
	if spec.Shell {
		c.Line = spec.Command
		c.Argv = lineshell.Argv(spec.Command)
	} else {
		c.Argv = append([]string{spec.Command}, spec.Args...)
		c.Line = shquote.Join(c.Argv)
	}
	return c
}

// confine applies the user's sandbox and limits to spec, and records the
// sandbox in cmd (so the approval question and the audit log show it).
// A sandbox that cannot be set up refuses the command: it never runs
// unconfined instead.
func (a *Agent) confine(ctx context.Context, s *Session, spec *termhost.Spec, cmd *Command) *acpsdk.RequestError {
	spec.Limits = a.opts.Limits
	if a.opts.Sandbox == nil {
		return nil
	}
	p, err := a.opts.Sandbox(ctx, *cmd)
	if err == nil && p != nil {
		roots := a.opts.AllowedCwdRoots
		if len(roots) == 0 {
			roots = []string{s.cwd}
		}
		p.Writable = append(append([]string(nil), p.Writable...), roots...)
		spec.Wrap, err = p.Prefix(spec.Dir)
		cmd.Sandbox = p.Describe()
		spec.Confined = cmd.Sandbox
	}
	if err != nil {
		a.audit(AuditRecord{Time: time.Now(), Event: "refused", Command: *cmd})
		return &acpsdk.RequestError{Code: -32603, Message: fmt.Sprintf("not run, because terminal.sandbox cannot confine it: %v", err)}
	}
	return nil
}

// checkCwd enforces AllowedCwdRoots (default: the session's cwd and
// below). Symlinks are resolved so a link cannot lead outside.
func (a *Agent) checkCwd(s *Session, cwd string) error {
	roots := a.opts.AllowedCwdRoots
	if len(roots) == 0 {
		roots = []string{s.cwd}
	}
	real := resolve(cwd)
	for _, root := range roots {
		if within(resolve(root), real) {
			return nil
		}
	}
	return fmt.Errorf("cwd %q is outside the allowed directories (%s)", cwd, strings.Join(roots, ", "))
}

// resolve follows symlinks where the path exists.
func resolve(p string) string {
	if r, err := filepath.EvalSymlinks(p); err == nil {
		return r
	}
	return filepath.Clean(p)
}

// within reports whether p is root or below it.
func within(root, p string) bool {
	rel, err := filepath.Rel(root, p)
	if err != nil {
		return false
	}
	return rel == "." || (rel != ".." && !strings.HasPrefix(rel, "../"))
}

// approve asks the Approve hook, if any, whether cmd may run. Like a
// permission request, a pending approval belongs to the session's turn:
// cancelling the turn (or ending the session) refuses it at once, and a
// command asked for after the cancel is refused without asking.
func (a *Agent) approve(ctx context.Context, s *Session, cmd Command) *acpsdk.RequestError {
	if a.opts.Approve == nil {
		return nil
	}
	actx, release, held := s.holdForTurn(ctx)
	if !held {
		a.audit(AuditRecord{Time: time.Now(), Event: "refused", Command: cmd})
		return internalError(errors.New("the user cancelled the turn; the command was not run"))
	}
	defer release()
	type answer struct {
		ok  bool
		err error
	}
	ch := make(chan answer, 1)
	go func() {
		ok, err := a.opts.Approve(actx, cmd)
		ch <- answer{ok, err}
	}()
	var ok bool
	var err error
	select {
	case ans := <-ch:
		ok, err = ans.ok, ans.err
	case <-actx.Done():
		err = context.Cause(actx)
	}
	if errors.Is(context.Cause(actx), ErrTurnCancelled) {
		s.refuseCancelled(ctx)
		a.audit(AuditRecord{Time: time.Now(), Event: "refused", Command: cmd})
		return internalError(errors.New("the user cancelled the turn; the command was not run"))
	}
	var refusal *Refusal
	if errors.As(err, &refusal) {
		a.audit(AuditRecord{Time: time.Now(), Event: "refused", Command: cmd})
		return internalError(refusal)
	}
	if err != nil {
		return internalError(fmt.Errorf("approving %q: %w", cmd.Line, err))
	}
	if !ok {
		a.audit(AuditRecord{Time: time.Now(), Event: "refused", Command: cmd})
		return internalError(errors.New("the user did not allow the command"))
	}
	return nil
}

// Refusal is an Approve error that refuses a command by the user's
// rules, not by their answer: the agent is told so, with why.
type Refusal struct {
	// Why is the rule's reason ("`rm -rf x` matches deny \"rm *\"").
	Why string
}

func (r *Refusal) Error() string {
	return "agentrun did not run the command (terminal.approve): " + r.Why
}

func (a *Agent) auditStart(cmd Command, terminal string) {
	a.audit(AuditRecord{Time: time.Now(), Event: "start", Command: cmd, Terminal: terminal})
}

func (a *Agent) auditExit(cmd Command, terminal string, st termhost.ExitStatus, limit string) {
	a.audit(AuditRecord{Time: time.Now(), Event: "exit", Command: cmd, Terminal: terminal, Exit: &st, Limit: limit})
}

// audit writes the audit line to the log and passes rec to the hook.
func (a *Agent) audit(rec AuditRecord) {
	attrs := []any{
		"event", rec.Event, "time", rec.Time.Format(time.RFC3339Nano), "session", rec.Session,
		"terminal", rec.Terminal, "cwd", rec.Cwd, "argv", rec.Argv,
	}
	if rec.Sandbox != "" {
		attrs = append(attrs, "sandbox", rec.Sandbox)
	}
	if rec.Limit != "" {
		attrs = append(attrs, "stopped_by_limit", rec.Limit)
	}
	if rec.Exit != nil {
		if rec.Exit.Code != nil {
			attrs = append(attrs, "exit_code", *rec.Exit.Code)
		}
		if rec.Exit.Signal != "" {
			attrs = append(attrs, "signal", rec.Exit.Signal)
		}
	}
	a.log.Info("audit: terminal command", attrs...)
	if a.opts.Audit != nil {
		a.opts.Audit(rec)
	}
}
