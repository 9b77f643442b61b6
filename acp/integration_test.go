package acp

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentrun/agentrun.nvim/internal/testdeps"
)

// tsChecks are the checks tests/node/testagent.mjs must report as passed;
// a check it does not report at all fails too.
var tsChecks = []string{
	"capabilities",
	"create_returns_promptly",
	"output_while_running",
	"wait_for_exit_flat",
	"exit_code_nonzero",
	"output_after_exit_nested",
	"rendered_text",
	"byte_limit_tail",
	"byte_limit_utf8_boundary",
	"byte_limit_zero",
	"kill_sigterm_stays_valid",
	"two_waiters",
	"release_answers_pending_wait",
	"release_then_error",
	"unknown_terminal",
	"relative_cwd",
	"default_cwd_is_session_cwd",
	"bad_params",
	"command_not_found",
	"args_exec_no_shell",
	"shell_line_without_args",
	"env_entry_visible",
}

// A test agent written with the official TypeScript SDK drives every
// terminal method against our client over stdio and checks the wire shapes.
func TestTypeScriptSDKAgent(t *testing.T) {
	dir, err := filepath.Abs("../tests/node")
	if err != nil {
		t.Fatal(err)
	}
	testdeps.File(t, filepath.Join(dir, "node_modules", "@agentclientprotocol", "sdk", "package.json"), "the TypeScript SDK test peers")
	node := testdeps.Program(t, "node", "install Node.js 20 or newer")
	r := newRecorder()
	a, _ := start(t, AgentConfig{Name: "ts-testagent", Command: []string{node, filepath.Join(dir, "testagent.mjs")}}, r, Options{})
	s := newSession(t, a)
	if stop := prompt(t, s, "run all checks"); stop != "end_turn" {
		t.Fatalf("stop reason %q", stop)
	}
	report := r.text(s.ID())
	passed := map[string]bool{}
	for _, line := range strings.Split(report, "\n") {
		switch {
		case strings.HasPrefix(line, "PASS "):
			passed[strings.TrimPrefix(line, "PASS ")] = true
		case strings.HasPrefix(line, "FAIL "):
			t.Errorf("test agent: %s", line)
		}
	}
	for _, name := range tsChecks {
		if !passed[name] {
			t.Errorf("test agent did not report PASS %s", name)
		}
	}
	if t.Failed() {
		t.Logf("test agent report:\n%s", report)
	}
}
