package tests

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// An agent's file writes (fs/write_text_file) answer to the same policy
// as its commands: outside the project they are asked; agentrun's own
// state (the remembered answers, the config, the socket folder) is never
// written, however the path is spelt.

// TestFsWriteOutsideTheProjectIsAsked: a write outside the session's
// project (also one spelt with .. from inside it) shows the question with
// the file; refused, the file is untouched and the agent is told.
func TestFsWriteOutsideTheProjectIsAsked(t *testing.T) {
	tests := []struct {
		name     string
		pick     int // 1 Write it, 2 Refuse
		viaDots  bool
		wantChat string
		wantFile string
	}{
		{"refused", 2, false, "the user did not allow writing", "before\n"},
		{"refused, spelt with ..", 2, true, "the user did not allow writing", "before\n"},
		{"allowed", 1, false, "Wrote 6 bytes to", "agent\n"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e := startEditor(t, "")
			outside := filepath.Join(t.TempDir(), "outside.txt")
			if err := os.WriteFile(outside, []byte("before\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			path := outside
			if tc.viaDots {
				rel, err := filepath.Rel(e.dir, outside)
				if err != nil {
					t.Fatal(err)
				}
				path = e.dir + "/" + rel // e.dir/../../tmp/…/outside.txt
			}
			e.stubSelect(tc.pick)
			e.startSession()
			e.cmd(`AgentPrompt !write ` + path + ` agent\n`)
			chat := e.waitChat(tc.wantChat, 10*time.Second)
			if !strings.Contains(chat, "? write file "+path) || !strings.Contains(chat, "outside the project") {
				t.Errorf("the chat does not name the file and say it is outside the project:\n%s", chat)
			}
			p := e.picked()
			if len(p) != 1 || !strings.Contains(p[0].Prompt, path) || !strings.Contains(p[0].Prompt, "OUTSIDE the project") {
				t.Errorf("the question = %+v, want one naming %s, outside the project", p, path)
			}
			if got, _ := os.ReadFile(outside); string(got) != tc.wantFile {
				t.Errorf("the file holds %q, want %q", got, tc.wantFile)
			}
		})
	}
}

// TestFsWriteIntoAgentrunsStateIsRefused: whatever the spelling (plain,
// through .., through a symlink in the project), a write into the
// remembered answers, the config or the socket folder is refused without
// a question, the file is unchanged, and the chat and the agent say why.
func TestFsWriteIntoAgentrunsStateIsRefused(t *testing.T) {
	tests := []struct {
		name string
		path func(e *editor, answers string) (write, real string)
	}{
		{"the remembered answers", func(e *editor, answers string) (string, string) { return answers, answers }},
		{"the remembered answers through ..", func(e *editor, answers string) (string, string) {
			rel, _ := filepath.Rel(e.dir, answers)
			return filepath.Join(e.dir, "sub") + "/../" + filepath.Join("..", filepath.Base(e.dir), rel), answers
		}},
		{"the remembered answers through a symlink", func(e *editor, answers string) (string, string) {
			if err := os.Symlink(filepath.Dir(answers), filepath.Join(e.dir, "innocent")); err != nil {
				t.Fatal(err)
			}
			return filepath.Join(e.dir, "innocent", filepath.Base(answers)), answers
		}},
		{"the config", func(e *editor, _ string) (string, string) {
			p := filepath.Join(e.dir, "config", "nvim", "init.lua")
			return p, p
		}},
		{"the socket folder", func(e *editor, _ string) (string, string) {
			p := filepath.Join(e.rt, "agentrun", "planted.sock")
			return p, p
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e := startEditor(t, `require("agentrun").setup({ terminal = { approve = "ask" } })`)
			var answers string
			e.lua(`return require("agentrun.policy").file(vim.fn.getcwd())`, &answers)
			if err := os.MkdirAll(filepath.Dir(answers), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(answers, []byte("echo kept\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			if err := os.MkdirAll(filepath.Join(e.dir, "config", "nvim"), 0o755); err != nil {
				t.Fatal(err)
			}
			write, real := tc.path(e, answers)
			before, _ := os.ReadFile(real)
			e.stubSelect(1) // a question, if one were asked, would allow it
			e.startSession()
			e.cmd(`AgentPrompt !write ` + write + ` *\n`)
			chat := e.waitChat("Could not write", 10*time.Second)
			if !strings.Contains(chat, "agentrun does not let an agent write its own state") {
				t.Errorf("the chat does not say why:\n%s", chat)
			}
			if !strings.Contains(chat, "refused the agent's write") {
				t.Errorf("agentrun's own line is not in the chat:\n%s", chat)
			}
			if p := e.picked(); len(p) != 0 {
				t.Errorf("a question was shown: %+v", p)
			}
			if after, _ := os.ReadFile(real); string(after) != string(before) {
				t.Errorf("%s changed: %q, was %q", real, after, before)
			}
		})
	}
}

// TestFsWriteUnderAskIsAskedInTheProject: under terminal.approve = "ask" a
// write in the project is asked as a command is; under the default it is
// not.
func TestFsWriteUnderAskIsAskedInTheProject(t *testing.T) {
	tests := []struct {
		name, setup string
		asked       int
	}{
		{"ask", `require("agentrun").setup({ terminal = { approve = "ask" } })`, 1},
		{"agent (the default)", "", 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e := startEditor(t, tc.setup)
			path := filepath.Join(e.dir, "in.txt")
			e.stubSelect(1)
			e.startSession()
			e.cmd(`AgentPrompt !write ` + path + ` agent\n`)
			e.waitChat("Wrote 6 bytes to", 10*time.Second)
			if p := e.picked(); len(p) != tc.asked {
				t.Errorf("questions shown: %+v, want %d", p, tc.asked)
			}
		})
	}
}
