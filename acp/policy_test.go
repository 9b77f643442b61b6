package acp

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentrun/agentrun.nvim/internal/lineshell"
	"github.com/agentrun/agentrun.nvim/internal/sandbox"
	"github.com/agentrun/agentrun.nvim/internal/testdeps"
)

func TestAllowedCwdRoots(t *testing.T) {
	outside := t.TempDir()
	for _, tc := range []struct {
		name    string
		roots   func(sessionCwd string) []string
		cwd     func(sessionCwd string) string
		allowed bool
	}{
		{"default: session cwd", nil, func(c string) string { return c }, true},
		{"default: below", nil, func(c string) string { return filepath.Join(c, "sub") }, true},
		{"default: parent", nil, func(c string) string { return filepath.Dir(c) }, false},
		{"default: sibling with common prefix", nil, func(c string) string { return c + "-evil" }, false},
		{"default: symlink leading out", nil, func(c string) string { return filepath.Join(c, "link") }, false},
		{"explicit root", func(string) []string { return []string{outside} }, func(string) string { return outside }, true},
		{"explicit root excludes session cwd", func(string) []string { return []string{outside} }, func(c string) string { return c }, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := newRecorder()
			sessionCwd := filepath.Join(t.TempDir(), "project")
			for _, d := range []string{filepath.Join(sessionCwd, "sub"), sessionCwd + "-evil"} {
				if err := os.MkdirAll(d, 0o755); err != nil {
					t.Fatal(err)
				}
			}
			if err := os.Symlink(outside, filepath.Join(sessionCwd, "link")); err != nil {
				t.Fatal(err)
			}
			var opts Options
			if tc.roots != nil {
				opts.AllowedCwdRoots = tc.roots(sessionCwd)
			}
			a, _ := start(t, selfAgent(t, "probe"), r, opts)
			s, err := a.NewSession(context.Background(), sessionCwd)
			if err != nil {
				t.Fatal(err)
			}
			cwd := tc.cwd(sessionCwd)
			res := probe(t, s, r, rawReq("terminal/create", fmt.Sprintf(`{"sessionId":"$SESSION","command":"true","cwd":%q}`, cwd)))[0]
			switch {
			case tc.allowed && res.Error != nil:
				t.Errorf("cwd %s refused: %s", cwd, res.Error.Message)
			case !tc.allowed && res.Error == nil:
				t.Errorf("cwd %s allowed", cwd)
			case !tc.allowed && (res.Error.Code != -32602 || !strings.Contains(res.Error.Message, fmt.Sprintf("cwd %q is outside the allowed directories", cwd))):
				t.Errorf("refusal %d %q", res.Error.Code, res.Error.Message)
			}
		})
	}
}

func TestApproveHook(t *testing.T) {
	r := newRecorder()
	var mu sync.Mutex
	var asked []Command
	opts := Options{Approve: func(_ context.Context, c Command) (bool, error) {
		mu.Lock()
		asked = append(asked, c)
		mu.Unlock()
		if strings.Contains(c.Line, "chmod ") {
			return false, &Refusal{Why: "refused: `chmod 777 x` matches deny \"chmod *\""}
		}
		return !strings.Contains(c.Line, "rm "), nil
	}}
	var audits []AuditRecord
	opts.Audit = func(rec AuditRecord) {
		mu.Lock()
		audits = append(audits, rec)
		mu.Unlock()
	}
	a, _ := start(t, selfAgent(t, "probe"), r, opts)
	s := newSession(t, a)
	results := probe(t, s, r,
		rawReq("terminal/create", `{"sessionId":"$SESSION","command":"rm -rf important"}`),
		rawReq("terminal/create", `{"sessionId":"$SESSION","command":"printf","args":["%s\n","a b"]}`),
		rawReq("terminal/create", `{"sessionId":"$SESSION","command":"chmod 777 x"}`),
	)
	if e := results[0].Error; e == nil || e.Message != "the user did not allow the command" {
		t.Errorf("refused command: %+v %s", e, results[0].Result)
	}
	// refused by a rule: the agent is told which, not that the user refused
	if e := results[2].Error; e == nil || e.Message != "agentrun did not run the command (terminal.approve): refused: `chmod 777 x` matches deny \"chmod *\"" {
		t.Errorf("command a rule refused: %+v %s", e, results[2].Result)
	}
	terminalID(t, results[1])
	mu.Lock()
	defer mu.Unlock()
	want := []Command{
		{Session: s.ID(), Line: "rm -rf important", Argv: lineshell.Argv("rm -rf important"), Cwd: s.Cwd()},
		{Session: s.ID(), Line: `printf '%s` + "\n" + `' 'a b'`, Argv: []string{"printf", "%s\n", "a b"}, Cwd: s.Cwd()},
		{Session: s.ID(), Line: "chmod 777 x", Argv: lineshell.Argv("chmod 777 x"), Cwd: s.Cwd()},
	}
	if fmt.Sprint(asked) != fmt.Sprint(want) {
		t.Errorf("asked %q\nwant  %q", asked, want)
	}
	if len(audits) == 0 || audits[0].Event != "refused" || audits[0].Line != "rm -rf important" {
		t.Errorf("audit records %+v, want a refusal first", audits)
	}
	if !slices.ContainsFunc(audits, func(r AuditRecord) bool { return r.Event == "refused" && r.Line == "chmod 777 x" }) {
		t.Errorf("audit records %+v, want the rule's refusal among them", audits)
	}
}

func TestMaxRunTimeKills(t *testing.T) {
	r := newRecorder()
	a, _ := start(t, selfAgent(t, "probe"), r, Options{MaxRunTime: 300 * time.Millisecond})
	s := newSession(t, a)
	began := time.Now()
	results := probe(t, s, r,
		rawReq("terminal/create", `{"sessionId":"$SESSION","command":"sleep 30"}`),
		rawReq("terminal/wait_for_exit", `{"sessionId":"$SESSION","terminalId":"$T0"}`),
	)
	if got := string(results[1].Result); got != `{"exitCode":null,"signal":"SIGTERM"}` {
		t.Errorf("wait_for_exit = %s %+v", got, results[1].Error)
	}
	if took := time.Since(began); took > 10*time.Second {
		t.Errorf("took %v", took)
	}
}

func TestByteLimit(t *testing.T) {
	for _, tc := range []struct {
		name  string
		limit string
		want  string
	}{
		{"agent asks for more", `,"outputByteLimit":1000`, `{"output":"6789","truncated":true,"exitStatus":{"exitCode":0,"signal":null}}`},
		{"agent asks for nothing", ``, `{"output":"6789","truncated":true,"exitStatus":{"exitCode":0,"signal":null}}`},
		{"agent asks for less", `,"outputByteLimit":2`, `{"output":"89","truncated":true,"exitStatus":{"exitCode":0,"signal":null}}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := newRecorder()
			a, _ := start(t, selfAgent(t, "probe"), r, Options{ByteLimit: 4})
			s := newSession(t, a)
			results := probe(t, s, r,
				rawReq("terminal/create", `{"sessionId":"$SESSION","command":"printf","args":["0123456789"]`+tc.limit+`}`),
				rawReq("terminal/wait_for_exit", `{"sessionId":"$SESSION","terminalId":"$T0"}`),
				rawReq("terminal/output", `{"sessionId":"$SESSION","terminalId":"$T0"}`),
			)
			if got := string(results[2].Result); got != tc.want {
				t.Errorf("output = %s %+v, want %s", got, results[2].Error, tc.want)
			}
		})
	}
}

// Every command leaves an audit line (time, session, cwd, argv, exit) in
// the log, and the hook gets start and exit records.
func TestAuditLog(t *testing.T) {
	r := newRecorder()
	records := make(chan AuditRecord, 10)
	a, logs := start(t, selfAgent(t, "probe"), r, Options{Audit: func(rec AuditRecord) { records <- rec }})
	s := newSession(t, a)
	probe(t, s, r,
		rawReq("terminal/create", `{"sessionId":"$SESSION","command":"exit 5"}`),
		rawReq("terminal/wait_for_exit", `{"sessionId":"$SESSION","terminalId":"$T0"}`),
	)
	startRec := next(t, records, "start record")
	exitRec := next(t, records, "exit record")
	if startRec.Event != "start" || exitRec.Event != "exit" || exitRec.Exit == nil || exitRec.Exit.Code == nil || *exitRec.Exit.Code != 5 {
		t.Fatalf("records %+v %+v", startRec, exitRec)
	}
	if exitRec.Session != s.ID() || exitRec.Cwd != s.Cwd() || exitRec.Terminal == "" || exitRec.Time.IsZero() {
		t.Errorf("exit record %+v", exitRec)
	}
	var line string
	for _, l := range strings.Split(logs.String(), "\n") {
		if strings.Contains(l, "audit: terminal command") && strings.Contains(l, "event=exit") {
			line = l
		}
	}
	for _, want := range []string{"time=", "session=" + s.ID(), "cwd=" + s.Cwd(), fmt.Sprintf("argv=%q", fmt.Sprint(lineshell.Argv("exit 5"))), "exit_code=5"} {
		if !strings.Contains(line, want) {
			t.Errorf("audit line %q lacks %q", line, want)
		}
	}
}

// TestSandboxHook: the profile the hook gives confines the command (it
// cannot write outside the session's cwd), the approval question and the
// audit see it; a hook error refuses the command with its reason.
func TestSandboxHook(t *testing.T) {
	testdeps.LinuxOnly(t, "the sandbox (bubblewrap)")
	_, err := sandbox.Available()
	testdeps.Need(t, err == nil, "bubblewrap (bwrap)", "apt-get install bubblewrap")
	r := newRecorder()
	var mu sync.Mutex
	var asked, audited []string
	opts := Options{
		Sandbox: func(_ context.Context, c Command) (*sandbox.Profile, error) {
			if strings.Contains(c.Line, "boom") {
				return nil, errors.New("no profile for boom")
			}
			p, err := sandbox.Builtin("project")
			return &p, err
		},
		Approve: func(_ context.Context, c Command) (bool, error) {
			mu.Lock()
			asked = append(asked, c.Sandbox)
			mu.Unlock()
			return true, nil
		},
		Audit: func(rec AuditRecord) {
			mu.Lock()
			audited = append(audited, rec.Event+" "+rec.Sandbox)
			mu.Unlock()
		},
	}
	a, _ := start(t, selfAgent(t, "probe"), r, opts)
	s := newSession(t, a)
	results := probe(t, s, r,
		rawReq("terminal/create", `{"sessionId":"$SESSION","command":"echo in > inside; echo out > /usr/agentrun-acp-x; echo done"}`),
		rawReq("terminal/create", `{"sessionId":"$SESSION","command":"echo boom"}`),
	)
	id := terminalID(t, results[0])
	if e := results[1].Error; e == nil || e.Message != "not run, because terminal.sandbox cannot confine it: no profile for boom" {
		t.Errorf("the hook's error: %+v", e)
	}
	term, _ := s.Terminal(id)
	ctx, cancel := context.WithTimeout(context.Background(), waitTimeout)
	defer cancel()
	st, err := term.Wait(ctx)
	out := term.Output().Text
	if err != nil || st.String() != "exit 0" || !strings.Contains(out, "Read-only file system") || !strings.HasSuffix(out, "done\n") {
		t.Errorf("exit %v (%v), output %q", st, err, out)
	}
	if b, err := os.ReadFile(filepath.Join(s.Cwd(), "inside")); err != nil || string(b) != "in\n" {
		t.Errorf("the file written in the session's cwd: %q %v", b, err)
	}
	mu.Lock()
	defer mu.Unlock()
	want := "project (no network; writes only in " + s.Cwd() + ")"
	if len(asked) != 1 || asked[0] != want {
		t.Errorf("asked with sandbox %q, want [%q]", asked, want)
	}
	if len(audited) == 0 || audited[0] != "start "+want {
		t.Errorf("audit %q", audited)
	}
}
