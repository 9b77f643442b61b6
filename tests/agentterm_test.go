package tests

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// Agent-owned terminals, as real agents send them (recorded in
// tests/testdata/agentterm, replayed by the demo agent over real stdio):
// the split, its end marker, the chat and status() for each shape.

type agentTerm struct {
	ID       string `msgpack:"id"`
	Owner    string `msgpack:"owner"`
	Command  string `msgpack:"command"`
	State    string `msgpack:"state"`
	ExitCode *int   `msgpack:"exit_code"`
	Cwd      string `msgpack:"cwd"`
	Bufnr    int    `msgpack:"bufnr"`
}

// replay runs the demo agent's !replay of a recorded session.
func (e *editor) replay(name string) {
	e.t.Helper()
	e.cmd("AgentPrompt !replay " + filepath.Join(root, "tests", "testdata", "agentterm", name+".jsonl"))
}

// agentTerminal waits until status() has agent-owned terminal id in a
// state ok accepts, and returns it.
func (e *editor) agentTerminal(id string, ok func(agentTerm) bool) agentTerm {
	e.t.Helper()
	var found agentTerm
	e.waitFor("agent terminal "+id, 10*time.Second, func() (bool, string) {
		var ts []agentTerm
		e.lua(`return require("agentrun").status().terminals`, &ts)
		for _, t := range ts {
			if t.ID == id && t.Owner == "agent" && t.Bufnr > 0 && ok(t) {
				found = t
				return true, ""
			}
		}
		return false, fmt.Sprintf("%+v", ts)
	})
	return found
}

func TestAgentOwnedTerminals(t *testing.T) {
	tests := []struct {
		name, fixture, id string
		command           string   // the split's command: the tool call's title
		exit              int      // exit code status() reports
		split             []string // what the split shows, in this order
		notInSplit        []string
		chat              string
		cwd               string
		unreported        bool // the agent never says the exit code
	}{
		{name: "Claude Code 0.23, success", fixture: "claude-success", id: "toolu_01",
			command: "printf 'claude-one\\nclaude-two\\n'",
			split:   []string{"the agent runs this command itself", "claude-one", "claude-two", exitMarker(0)},
			chat:    "● printf 'claude-one\\nclaude-two\\n' [execute] · completed"},
		{name: "Claude Code 0.23, failure (exit code from rawOutput)", fixture: "claude-failure", id: "toolu_01", exit: 3,
			command: "sh -c 'echo out; echo oops >&2; exit 3'",
			split:   []string{"claude-out", "claude-oops", exitMarker(3)},
			chat:    "✗ sh -c 'echo out; echo oops >&2; exit 3' [execute] · failed"},
		{name: "codex with the terminal_output opt-in", fixture: "codex-optin", id: "call_codex1", exit: 2,
			command: "ls codex", cwd: "/tmp",
			split: []string{"codex-line1", "codex-line2", exitMarker(2)},
			chat:  "✗ ls codex [execute] · failed"},
		{name: "codex without it (deltas, no terminal_exit)", fixture: "codex-delta", id: "call_codex1",
			command: "ls codex", cwd: "/tmp",
			split: []string{"delta-line1", "delta-line2", exitMarker(0)},
			chat:  "● ls codex [execute] · completed"},
		{name: "ACP v2 terminal_update and terminal_output_chunk", fixture: "v2", id: "term_v2",
			command: "make v2", cwd: "/tmp",
			split:      []string{"new-snapshot", "after-replace", exitMarker(0)},
			notInSplit: []string{"old-snapshot", "chunk-one"},
			chat:       "● make v2 [execute] · completed"},
		// Agents that report a command only as a tool call. opencode's is
		// recorded from opencode 1.18.33 (tests/opencode_test.go runs it). A
		// command that exited 3 failed, whatever the agent called its
		// tool call.
		{name: "opencode: cumulative output, exit in rawOutput.metadata.exit", fixture: "opencode", id: "call_fake1", exit: 3,
			command: "for i in 1 2 3; do echo tick $i; sleep 0.4; done; exit 3", cwd: "/home/user/project",
			split: []string{"tick 1", "tick 2", "tick 3", exitMarker(3)},
			chat:  "✗ for i in 1 2 3; do echo tick $i; sleep 0.4; done; exit 3 [execute] · failed (exit 3)"},
		// Qwen Code's are recorded from Qwen Code 0.24.4 (tests/qwen_test.go):
		// after a permission request, nothing names the command but the
		// final text; with none (a read-only command), an in_progress
		// update does. Its output comes at the end.
		{name: "Qwen Code: output at the end, rawOutput.exitCode", fixture: "qwen", id: "call_fake1", exit: 3,
			command: `for i in 1 2 3; do echo "qwen tick $i"; sleep 0.2; done; exit 3`, cwd: "/home/user/project",
			split:      []string{"qwen tick 1", "qwen tick 3", exitMarker(3)},
			notInSplit: []string{"Exit Code:", "Process Group"},
			chat:       "✗ Shell [execute] · failed (exit 3)"},
		{name: "Qwen Code, a read-only command in plan mode (and its mode-update notification)", fixture: "qwen-plan", id: "call_fake1",
			command: "echo planning", cwd: "/home/user/project",
			split:      []string{"planning", exitMarker(0)},
			notInSplit: []string{"Exit Code:"},
			chat:       "● Shell: echo planning (Runs the command) [execute] · completed"},
		// Copilot CLI's are recorded from Copilot CLI 1.0.102
		// (tests/copilot_test.go): titled with the model's description,
		// all output so far in each update, the exit in a line of text
		// after it and in rawOutput.contents' shell_exit, "completed".
		{name: "Copilot CLI: titled with the command, exit and cwd from its shell_exit", fixture: "copilot", id: "call_fake1", exit: 3, cwd: "/home/user/project",
			command:    `for i in 1 2 3 4 5; do echo "copilot tick $i"; sleep 0.4; done; exit 3`,
			split:      []string{"copilot tick 1", "copilot tick 5", exitMarker(3)},
			notInSplit: []string{"shellId", "anew"},
			chat:       `✗ for i in 1 2 3 4 5; do echo "copilot tick $i"; sleep 0.4; done; exit 3 [execute] · failed (exit 3)`},
		// Gemini CLI 0.61, recorded (tests/gemini_test.go): no tool_call,
		// only its permission request, then one update, "completed"
		// whatever the exit, with no output.
		{name: "Gemini CLI: no output and no exit code, said so", fixture: "gemini", id: "run_shell_command__run_shell_command_1795866057365_0", unreported: true,
			command: "echo hello; exit 3",
			split:   []string{"the agent sent no output for this command", "[ended; the agent did not say its exit code]"},
			chat:    "● echo hello; exit 3 [execute] · ended; the agent did not say its exit code"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e := startEditor(t, "")
			e.startSession()
			e.recordExits()
			e.replay(tc.fixture)
			term := e.agentTerminal(tc.id, func(x agentTerm) bool { return x.State == "exited" })
			// the same User event as for our own terminals, once
			exits := e.exits()
			wantHow := fmt.Sprintf("exit %d", tc.exit)
			if tc.unreported {
				wantHow = "ended; the agent did not say its exit code"
			}
			switch {
			case len(exits) != 1:
				t.Errorf("User AgentRunTerminalExited fired %d times, want once: %+v", len(exits), exits)
			case exits[0].NoData: // Neovim 0.7: no data to check
			case exits[0].ID != tc.id || exits[0].How != wantHow || exits[0].RanMS == nil || *exits[0].RanMS < 0:
				t.Errorf("User AgentRunTerminalExited said %+v, want id %q, how %q and how long it ran", exits[0], tc.id, wantHow)
			}
			text := e.waitBuf(term.Bufnr, 10*time.Second, tc.split...)
			at := 0
			for _, w := range tc.split {
				i := strings.Index(text[at:], w)
				if i < 0 {
					t.Fatalf("the split does not show %q after what came before it:\n%s", w, text)
				}
				at += i + len(w)
			}
			for _, w := range tc.notInSplit {
				if strings.Contains(text, w) {
					t.Errorf("the split still shows %q, which a later snapshot replaced:\n%s", w, text)
				}
			}
			if tc.unreported {
				if term.Command != tc.command || term.ExitCode != nil {
					t.Errorf("status() says %+v (exit %v), want command %q and no exit code", term, term.ExitCode, tc.command)
				}
			} else if term.Command != tc.command || term.ExitCode == nil || *term.ExitCode != tc.exit || term.Cwd != tc.cwd {
				t.Errorf("status() says %+v (exit %v), want command %q, exit %d, cwd %q", term, term.ExitCode, tc.command, tc.exit, tc.cwd)
			}
			e.waitChat(tc.chat, 5*time.Second)
			var name string
			e.lua(`return vim.api.nvim_buf_get_name(...)`, &name, term.Bufnr)
			// (its first 19 characters: the tab line cuts a long name
			// from the left, and a name at each "/")
			if want := []rune(strings.ReplaceAll(tc.command, "/", "∕")); !strings.Contains(name, string(want[:min(len(want), 19)])) {
				t.Errorf("the split's name %q does not follow the command %q", name, tc.command)
			}
		})
	}
}

// TestAgentOwnedTerminalCancelledByTheAgent: what opencode and Qwen Code
// send of a command a cancel stopped (recorded from opencode 1.18.33 and
// Qwen Code 0.24.4). opencode: "completed", metadata.exit null, its note
// to the model after the output; Qwen: "failed", exitCode 0 beside signal
// 15, outcome "cancelled", a text saying the output was discarded. The
// split shows the output and [cancelled], not the notes, and the chat
// says cancelled.
func TestAgentOwnedTerminalCancelledByTheAgent(t *testing.T) {
	for _, c := range []struct{ fixture, chat, notInSplit, title string }{
		{"opencode-cancel", "⊘ echo started; sleep 29.5; echo finished [execute] · cancelled", "shell_metadata", "echo started; sleep 29.5; echo finished"},
		// Qwen names this command only in its permission request, which
		// a replay does not carry (TestRealQwenCancelStopsTheCommand
		// sees the split titled with it)
		{"qwen-cancel", "⊘ Shell [execute] · cancelled", "discarded", "Shell"},
	} {
		t.Run(c.fixture, func(t *testing.T) {
			e := startEditor(t, "")
			e.startSession()
			e.replay(c.fixture)
			term := e.agentTerminal("call_fake1", func(x agentTerm) bool { return x.State != "running" })
			text := e.waitBuf(term.Bufnr, 5*time.Second, "started", "[cancelled]")
			if strings.Contains(text, c.notInSplit) || strings.Contains(text, exitMarker(0)) || term.ExitCode != nil {
				t.Errorf("the split of the cancelled command (exit %v) reads:\n%s", term.ExitCode, text)
			}
			if term.Command != c.title {
				t.Errorf("the split is titled %q", term.Command)
			}
			e.waitChat(c.chat, 5*time.Second)
		})
	}
}

// TestAgentOwnedTerminalCancelled: Claude Code sends nothing for its tool
// call when the turn is cancelled; the split and the chat say it ended.
func TestAgentOwnedTerminalCancelled(t *testing.T) {
	e := startEditor(t, "")
	e.startSession()
	e.replay("claude-cancel")
	term := e.agentTerminal("toolu_01", func(x agentTerm) bool { return x.Command == "sleep 100" })
	e.waitBuf(term.Bufnr, 5*time.Second, "the agent runs this command itself")
	e.cmd("AgentCancel")
	e.waitBuf(term.Bufnr, 10*time.Second, "[cancelled]")
	e.waitChat("⊘ sleep 100 [execute] · cancelled", 5*time.Second)
	// Its usage_update (sent after the cancel) shows in the chat's status.
	e.waitFor("the usage in the chat's status line", 5*time.Second, func() (bool, string) {
		var status string
		e.lua(`return require("agentrun.state").session().chat:status()`, &status)
		return strings.Contains(status, "1k/200k tokens · $0.01"), status
	})
	if x := e.agentTerminal("toolu_01", func(agentTerm) bool { return true }); x.State == "running" {
		t.Errorf("status() still says running: %+v", x)
	}
}

// TestAgentOwnedTerminalCancelledGemini: Gemini CLI kills its command at
// a cancel and says so in an update it calls "completed" (as recorded from
// the real package): the split shows what the command printed, then
// [cancelled], and the chat says cancelled, not completed.
func TestAgentOwnedTerminalCancelledGemini(t *testing.T) {
	e := startEditor(t, "")
	e.startSession()
	e.replay("gemini-cancel")
	e.waitFor("the turn to run", 5*time.Second, func() (bool, string) {
		var busy bool
		e.lua(`return require("agentrun").status().sessions[1].busy`, &busy)
		return busy, "idle"
	})
	e.cmd("AgentCancel")
	e.waitChat("(turn ended: cancelled)", 10*time.Second)
	term := e.agentTerminal("run_shell_command__run_shell_command_1795866228003_0", func(x agentTerm) bool { return x.State == "exited" })
	text := e.waitBuf(term.Bufnr, 5*time.Second, "started", "[cancelled]")
	if strings.Contains(text, "Command cancelled by user") || strings.Contains(text, "no output") {
		t.Errorf("the cancelled split reads:\n%s", text)
	}
	e.waitChat("⊘ echo started; sleep 37.5; echo never [execute] · cancelled", 5*time.Second)
}

// TestAgentOwnedTerminalCancelledClaude101: Claude Code 2.1 (claude-agent-
// acp 0.101) answers a cancel with the model's rejection text as the
// terminal's output and an update saying the command did not run
// (nonExecutionKind "user-rejected"): the split reads [cancelled], not the
// rejection text as if the command had printed it, and only that; the
// chat says cancelled too.
func TestAgentOwnedTerminalCancelledClaude101(t *testing.T) {
	e := startEditor(t, "")
	e.startSession()
	e.replay("claude101-cancel")
	term := e.agentTerminal("toolu_02", func(x agentTerm) bool { return x.Command == "sleep 200" })
	e.waitBuf(term.Bufnr, 5*time.Second, "the agent runs this command itself")
	e.cmd("AgentCancel")
	e.waitChat("(turn ended: cancelled)", 10*time.Second)
	text := e.waitBuf(term.Bufnr, 5*time.Second, "[cancelled]")
	if strings.Contains(text, "doesn't want to proceed") || strings.Count(text, "[") != 1 {
		t.Errorf("the cancelled split reads:\n%s", text)
	}
	if x := e.agentTerminal("toolu_02", func(agentTerm) bool { return true }); x.State == "running" || x.ExitCode != nil {
		t.Errorf("status() says %+v", x)
	}
	// the chat as the split: cancelled (the agent called it failed)
	e.waitChat("⊘ sleep 200 [execute] · cancelled", 5*time.Second)
}

// TestAgentOwnedTerminalSaidOfAfterTheCancel: Claude Code may send a
// cancelled command's tool call after the turn ended; its split ends with
// "[cancelled]" (no placeholder waiting for output that never comes) and
// the chat shows the tool call cancelled, not pending. Its split is named
// after its command (it was terminal/toolu_02 sleep 100).
func TestAgentOwnedTerminalSaidOfAfterTheCancel(t *testing.T) {
	s := startRunScreen(t, runtimeDir(t), 120, 35)
	s.prompt("!replay " + filepath.Join(root, "tests", "testdata", "agentterm", "claude-cancel-late.jsonl"))
	s.waitShows(10*time.Second, "agentrun · demo · working")
	s.keys("Escape", ":AgentCancel", "Enter")
	sc := s.waitShows(10*time.Second, " · sleep 100", "[cancelled]", "sleep 100 [execute] · cancelled")
	if strings.Contains(sc, "the agent runs this command itself") || strings.Contains(sc, "· pending") {
		t.Errorf("a command said of after the cancel still waits:\n%s", sc)
	}
	// the split is named after its command, not the agent's id for it
	if shows(sc, splitOf("toolu_02")) {
		t.Errorf("the split's name carries the agent's id:\n%s", sc)
	}
}

// TestReplayTwiceKeepsTheFirstTurn: the demo agent's second !replay in a
// session is a turn of its own: the first turn's tool call and split keep
// what they showed, and the second has its own tool call and split (the
// recordings all start at toolu_01; a real agent never reuses an id).
func TestReplayTwiceKeepsTheFirstTurn(t *testing.T) {
	e := startEditor(t, "")
	e.startSession()
	e.replay("claude-success")
	first := e.agentTerminal("toolu_01", func(x agentTerm) bool { return x.State == "exited" })
	e.waitChat("● printf 'claude-one\\nclaude-two\\n' [execute] · completed", 5*time.Second)
	e.replay("claude-failure")
	second := e.agentTerminal("toolu_01-r2", func(x agentTerm) bool { return x.State == "exited" })
	chat := e.waitChat("✗ sh -c 'echo out; echo oops >&2; exit 3' [execute] · failed", 5*time.Second)
	if !strings.Contains(chat, "● printf 'claude-one\\nclaude-two\\n' [execute] · completed") {
		t.Errorf("the first turn's tool call changed:\n%s", chat)
	}
	if first.Bufnr == second.Bufnr {
		t.Fatalf("both turns show in buffer %d", first.Bufnr)
	}
	text := e.waitBuf(first.Bufnr, 5*time.Second, "claude-one", exitMarker(0))
	if strings.Contains(text, "claude-out") {
		t.Errorf("the first split shows the second turn's output:\n%s", text)
	}
	e.waitBuf(second.Bufnr, 5*time.Second, "claude-out", exitMarker(3))
}

// TestReplaySaysWhatIsWrong: the demo agent's !replay of a file that is
// not there, of a file that is not a recording, and with no name, answers
// in sentences — no Go error strings. (The tests' binary is not in the
// plugin's bin/, so it knows no recordings by name: demoagent's
// TestOpenRecording covers the names.)
func TestReplaySaysWhatIsWrong(t *testing.T) {
	e := startEditor(t, "")
	e.startSession()
	notRecording := filepath.Join(root, "main.go")
	for _, tc := range []struct{ arg, want string }{
		{"/nonexistent/file.jsonl", "Cannot replay /nonexistent/file.jsonl: there is no such file or recording. Give a recording's path."},
		{notRecording, "Cannot replay " + notRecording + ": line 1 is not a recorded step"},
		{"", "Usage: `!replay FILE.jsonl`."},
	} {
		e.cmd("AgentPrompt !replay " + tc.arg)
		chat := e.waitChat(tc.want, 5*time.Second)
		for _, bad := range []string{"no such file or directory", "invalid character", "open /"} {
			if strings.Contains(chat, bad) {
				t.Errorf("!replay %s: the chat shows a Go error string %q:\n%s", tc.arg, bad, chat)
			}
		}
	}
}
