package session

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"github.com/agentrun/agentrun.nvim/acp"
	"github.com/agentrun/agentrun.nvim/internal/cmdrule"
	"github.com/agentrun/agentrun.nvim/internal/event"
	"github.com/agentrun/agentrun.nvim/internal/lineshell"
	"github.com/agentrun/agentrun.nvim/internal/rundir"
	"github.com/agentrun/agentrun.nvim/internal/sandbox"
	"github.com/agentrun/agentrun.nvim/termhost"
)

// policyArgs are the user's limits for one session's terminals (the
// terminal.* options allowed_cwd, approve, max_run_ms, sandbox and limits;
// byte_limit is the host's, from setup).
type policyArgs struct {
	// AllowedCwd lists absolute roots; empty means the session cwd.
	AllowedCwd []string `msgpack:"allowed_cwd"`
	// Approve is terminal.approve as Lua sends it, checked here: "agent"
	// (ask when the agent's current mode asks before acting:
	// modepromise.go; the default), "ask", "run" or "function" (rules or
	// a function). Lua decides each command (approver); "never" and
	// "always" are the old names of "run" and "ask".
	Approve string `msgpack:"approve"`
	// MaxRunMS kills a command after this many milliseconds; 0 = no limit.
	MaxRunMS int `msgpack:"max_run_ms"`
	// Sandbox is terminal.sandbox: nil (off), a profile, or "function"
	// (asked for each command).
	Sandbox *sandboxArgs `msgpack:"sandbox"`
	// Limits is terminal.limits, sizes in bytes.
	Limits limitsArgs `msgpack:"limits"`
	// Protect lists agentrun's own state on the editor's machine (the
	// remembered answers, the state folder, the config): an agent's
	// fs/write_text_file into one of them is refused. The socket folder
	// is added here.
	Protect []string `msgpack:"protect"`
}

// sandboxArgs is terminal.sandbox as config.policy() sends it.
type sandboxArgs struct {
	Kind    string       `msgpack:"kind"` // "profile" or "function"
	Profile *profileArgs `msgpack:"profile"`
}

// profileArgs is a sandbox profile from Lua: a built-in's name, maybe
// with fields that change it, or a profile of the user's own.
type profileArgs struct {
	Name     string   `msgpack:"name"`
	Writable []string `msgpack:"writable"`
	Network  *bool    `msgpack:"network"`
	Home     string   `msgpack:"home"`
}

// profile resolves p: a built-in name gives the built-in's defaults,
// which the other fields change; another name needs them all.
func (p profileArgs) profile() (sandbox.Profile, error) {
	prof, err := sandbox.Builtin(p.Name)
	if err != nil {
		if p.Network == nil && p.Home == "" && len(p.Writable) == 0 {
			return sandbox.Profile{}, err
		}
		prof = sandbox.Profile{Name: p.Name, Home: sandbox.HomeReadOnly}
	}
	if p.Network != nil {
		prof.Network = *p.Network
	}
	if p.Home != "" {
		prof.Home = p.Home
	}
	prof.Writable = append(prof.Writable, p.Writable...)
	return prof, prof.Validate()
}

// limitsArgs is terminal.limits.
type limitsArgs struct {
	Memory     int64 `msgpack:"memory"`
	Processes  int   `msgpack:"processes"`
	CPUSeconds int   `msgpack:"cpu_seconds"`
	OpenFiles  int   `msgpack:"open_files"`
	FileSize   int64 `msgpack:"file_size"`
}

func (l limitsArgs) limits() termhost.Limits {
	return termhost.Limits{
		Memory: l.Memory, Processes: l.Processes, CPUTime: time.Duration(l.CPUSeconds) * time.Second,
		OpenFiles: l.OpenFiles, FileSize: l.FileSize,
	}
}

// check reports the first bad field, named as the Lua option.
func (p policyArgs) check() error {
	for _, root := range p.AllowedCwd {
		if !filepath.IsAbs(root) {
			return fmt.Errorf("terminal.allowed_cwd: %q is not an absolute path", root)
		}
	}
	switch p.Approve {
	case "", "agent", "ask", "run", "function", "never", "always":
	default:
		return fmt.Errorf("terminal.approve: want \"agent\", \"ask\", \"run\", rules or a function, not %q", p.Approve)
	}
	if p.MaxRunMS < 0 {
		return fmt.Errorf("terminal.max_run_ms: must be >= 0, not %d", p.MaxRunMS)
	}
	if err := p.Limits.limits().Validate(); err != nil {
		return fmt.Errorf("terminal.limits: %w", err)
	}
	if p.Sandbox == nil {
		return nil
	}
	switch p.Sandbox.Kind {
	case "profile":
		if p.Sandbox.Profile == nil {
			return fmt.Errorf("terminal.sandbox: no profile given")
		}
		if _, err := p.Sandbox.Profile.profile(); err != nil {
			return fmt.Errorf("terminal.sandbox: %w", err)
		}
	case "function":
	default:
		return fmt.Errorf("terminal.sandbox: kind %q is neither \"profile\" nor \"function\"", p.Sandbox.Kind)
	}
	// Said before the session starts, not at its first command.
	if _, err := sandbox.Available(); err != nil {
		return fmt.Errorf("terminal.sandbox is set, but %w", err)
	}
	return nil
}

// applyPolicy sets the policy fields of opts for the session with key.
func (ss *Sessions) applyPolicy(opts *acp.Options, key string, p policyArgs) {
	opts.AllowedCwdRoots = p.AllowedCwd
	opts.MaxRunTime = time.Duration(p.MaxRunMS) * time.Millisecond
	switch p.Approve {
	case "run", "never":
	default:
		opts.Approve = ss.approver(key, p.Approve == "agent" || p.Approve == "")
	}
	opts.Limits = p.Limits.limits()
	opts.CheckWrite = ss.writeChecker(key, p)
	if sb := p.Sandbox; sb != nil {
		opts.Sandbox = ss.sandboxer(sb)
	}
	opts.Notice = func(msg string) {
		ss.events.Push(event.Message{Key: key, Level: "warn", Text: msg})
	}
}

// sandboxer returns how to confine each command: the configured profile,
// or what terminal.sandbox (a function) says for it.
func (ss *Sessions) sandboxer(sb *sandboxArgs) func(ctx context.Context, cmd acp.Command) (*sandbox.Profile, error) {
	return func(ctx context.Context, cmd acp.Command) (*sandbox.Profile, error) {
		args := sb.Profile
		if sb.Kind == "function" {
			args = nil
			err := ss.deps.ExecLua(ctx, `return require("agentrun.config").sandbox_for(...)`, &args,
				map[string]any{"line": cmd.Line, "argv": cmd.Argv, "cwd": cmd.Cwd, "session": cmd.Session})
			if err != nil {
				return nil, errors.New(luaError(err))
			}
			if args == nil {
				return nil, nil
			}
		}
		p, err := args.profile()
		if err != nil {
			return nil, err
		}
		return &p, nil
	}
}

// luaError is the message of an error raised in Lua, without the RPC
// wrapping and the chunk's location.
func luaError(err error) string {
	msg, _, _ := strings.Cut(err.Error(), "\n") // no stack traceback
	if _, rest, ok := strings.Cut(msg, "exception: "); ok {
		msg = rest
	}
	msg = strings.TrimPrefix(msg, "Lua: ")                  // 0.10+
	return strings.TrimPrefix(msg, "Error executing lua: ") // 0.7
}

// approver asks Lua whether a terminal command may run: Lua decides by
// terminal.approve (check_command reads the line's simple commands) or
// shows vim.ui.select with the exact command line and answers with
// "answer_question" (token, "run" or "" to refuse, and the rule's reason
// when the user's rules refused it). Go alone decides when Lua is asked
// (terminal.approve "run" asks nothing; "agent" only while the mode asks
// first); Lua decides only what it is asked. asks_first names the
// session's current mode when it is one that asks before acting
// (modepromise.go). With followMode (terminal.approve = "agent") Lua is
// asked only then: the command runs at once otherwise.
func (ss *Sessions) approver(key string, followMode bool) func(ctx context.Context, cmd acp.Command) (bool, error) {
	return func(ctx context.Context, cmd acp.Command) (bool, error) {
		ev := event.Approve{
			Key: key, SessionID: cmd.Session,
			Line: cmd.Line, Argv: cmd.Argv, Env: cmd.Env, Cwd: cmd.Cwd, Sandbox: cmd.Sandbox, ToolCall: cmd.ToolCall,
		}
		ev.AsksFirst = ss.modePromise(key)
		if ev.AsksFirst == "" && followMode {
			return true, nil
		}
		token, a, err := ss.deps.Ask(ctx, "a", event.ApproveQuestion, func(token string) event.Payload {
			ev.Token = token
			return ev
		})
		if err != nil {
			return false, err
		}
		ss.log.Info("command approval", "token", token, "line", cmd.Line, "allowed", a.ID == "run")
		switch {
		case a.ID == "run":
			return true, nil
		case a.Why != "":
			// the user's rules refused it, not the user: the agent is told why
			return false, &acp.Refusal{Why: a.Why}
		}
		return false, nil
	}
}

// writeChecker decides on an agent's file write (acp.Options.CheckWrite):
// into agentrun's own state (p.Protect, the socket folder) it is refused,
// saying so in the chat; outside the project it is asked; inside, the
// user's terminal.approve decides as for commands: "ask" asks, "run"
// writes, and "agent" (and rules or a function, which judge command
// lines) leaves it to the agent's mode (an agent whose mode asks before
// editing asks with a permission request of its own).
func (ss *Sessions) writeChecker(key string, p policyArgs) func(ctx context.Context, w acp.FileWrite) error {
	protect := append([]string(nil), p.Protect...)
	if dir, err := rundir.Dir(); err == nil {
		protect = append(protect, dir)
	}
	return func(ctx context.Context, w acp.FileWrite) error {
		for _, root := range protect {
			if root != "" && filepath.IsAbs(root) && within(acp.RealPath(root), w.Real) {
				shown := w.Path
				if w.Real != filepath.Clean(w.Path) {
					shown = w.Path + " → " + w.Real
				}
				why := fmt.Sprintf("agentrun does not let an agent write its own state (%s)", shown)
				ss.events.Push(event.Message{Key: key, Level: "warn", Text: "✗ refused the agent's write: " + why})
				ss.log.Warn("fs write refused: agentrun's own state", "path", w.Path, "real", w.Real, "protected", root)
				return &acp.Refusal{Why: why}
			}
		}
		ev := event.Approve{Key: key, SessionID: w.Session, File: w.Path, Real: w.Real, Outside: w.Outside}
		if !w.Outside {
			switch p.Approve {
			case "ask", "always":
			default:
				return nil
			}
		}
		ev.AsksFirst = ss.modePromise(key)
		token, a, err := ss.deps.Ask(ctx, "a", event.ApproveQuestion, func(token string) event.Payload {
			ev.Token = token
			return ev
		})
		if err != nil {
			return err
		}
		ss.log.Info("file write approval", "token", token, "path", w.Path, "real", w.Real, "allowed", a.ID == "write")
		if a.ID == "write" {
			return nil
		}
		where := ""
		if w.Outside {
			where = ", outside the session's project"
		}
		return &acp.Refusal{Why: fmt.Sprintf("the user did not allow writing %s%s; it was not written", w.Path, where)}
	}
}

// within reports whether p is root or below it.
func within(root, p string) bool {
	rel, err := filepath.Rel(root, p)
	if err != nil {
		return false
	}
	return rel == "." || (rel != ".." && !strings.HasPrefix(rel, "../"))
}

// checkArgs is what check_command decides on: a command line and the
// rules that apply to it (terminal.approve's, and the commands the user
// always allowed in this project on this machine).
type checkArgs struct {
	Line       string   `msgpack:"line"`
	Allow      []string `msgpack:"allow"`
	Deny       []string `msgpack:"deny"`
	Remembered []string `msgpack:"remembered"`
	Otherwise  string   `msgpack:"otherwise"`
	// Argv, when set, is a command run as it is, without a shell
	// (Codex's exec argv): judged word by word, not as Line.
	Argv []string `msgpack:"argv"`
	// Dialect is the shell that runs Line: "bash" for an agent's own
	// Bash tool; "" for agentrun's terminals (internal/lineshell).
	Dialect string `msgpack:"dialect"`
	// Env are the NAME=value the agent set for the command
	// (terminal/create's env): a sensitive name makes it asked.
	Env []string `msgpack:"env"`
}

// CheckCommand decides on a command line of session key (Lua routes the
// call to the backend of the session's machine; the decision needs
// nothing of the session) by the rules (cmdrule): Lua's one way to know
// what a line runs and whether it may run unasked.
func CheckCommand(key string, args checkArgs) (cmdrule.Verdict, error) {
	switch args.Otherwise {
	case "", cmdrule.Ask, cmdrule.Run, cmdrule.Refuse:
	default:
		return cmdrule.Verdict{}, fmt.Errorf("terminal.approve.otherwise: want \"ask\", \"run\" or \"refuse\", not %q", args.Otherwise)
	}
	rules := cmdrule.Rules{Allow: args.Allow, Deny: args.Deny, Remembered: args.Remembered, Otherwise: args.Otherwise}
	var an cmdrule.Analysis
	switch {
	case len(args.Argv) > 0:
		an = cmdrule.AnalyzeArgv(args.Argv)
	case args.Dialect == "":
		an = cmdrule.Analyze(args.Line)
	case args.Dialect == lineshell.Bash || args.Dialect == lineshell.POSIX:
		an = cmdrule.AnalyzeIn(args.Line, args.Dialect)
	default:
		return cmdrule.Verdict{}, fmt.Errorf("check_command: dialect %q is not \"bash\" or \"posix\"", args.Dialect)
	}
	return rules.DecideAnalysis(an.WithEnv(args.Env)), nil
}

// DescribeRules says, for :checkhealth, what each rule matches, or why
// it cannot be read.
func DescribeRules(rules []string) ([]string, error) {
	out := make([]string, len(rules))
	for i, src := range rules {
		r, err := cmdrule.ParseRule(src)
		if err != nil {
			out[i] = "not a rule: " + err.Error()
			continue
		}
		out[i] = r.Describe()
	}
	return out, nil
}
