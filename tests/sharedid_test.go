package tests

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// luaValue evaluates the Lua expression expr in the screen's Neovim through
// a typed command and decodes its JSON into out.
func (s *screen) luaValue(expr string, out any) {
	s.t.Helper()
	f := filepath.Join(s.dir, "value.json")
	_ = os.Remove(f)
	s.keys("Escape", `:lua vim.fn.writefile({vim.fn.json_encode(`+expr+`)}, "`+f+`")`, "Enter")
	eventually(s.t, "the value of "+expr, 5*time.Second, func() (bool, string) {
		b, err := os.ReadFile(f)
		if err != nil || !strings.HasSuffix(string(b), "\n") {
			return false, fmt.Sprint(err)
		}
		err = json.Unmarshal(b, out)
		return err == nil, fmt.Sprint(err)
	})
}

// chatOf is the whole transcript of session key's chat.
func (s *screen) chatOf(key string) string {
	s.t.Helper()
	var lines []string
	s.luaValue(`vim.api.nvim_buf_get_lines(require("agentrun.state").sessions["`+key+`"].chat.buf, 0, -1, false)`, &lines)
	return strings.Join(lines, "\n")
}

// TestJourneySharedSessionID: two agents that give their sessions the same
// ACP id (the demo agent twice: both say demo-session-1) are two sessions
// on the screen. A command of the second runs and :AgentStop stops that
// session under it (the chat says so in a sentence), then a new demo
// session's prompt is answered in its own chat: each chat holds only its
// own turns, in order, the stopped one keeps its tool call and terminal,
// and status() and :AgentTerminals name each terminal's session.
func TestJourneySharedSessionID(t *testing.T) {
	s := startDemoScreenSized(t, 160, 40, `require("agentrun").setup({ agents = { demo2 = { cmd = { vim.g.agentrun_bin, "demo-agent" } } } })`)
	s.keys("Escape", ":AgentRun demo2", "Enter")
	s.waitShows(10*time.Second, "agentrun · demo2 · ready")
	s.keys("Escape", ":AgentPrompt sleep 100", "Enter")
	s.waitShows(10*time.Second, "sleep 100 [execute] · in progress")
	s.keys(":AgentStop", "Enter")
	s.waitShows(10*time.Second, "agentrun · demo2 · ended")
	s.keys(":AgentRun demo", "Enter")
	s.waitShows(10*time.Second, "agentrun · demo · ready")
	s.keys("Escape", ":AgentPrompt echo to-demo-one", "Enter")
	s.waitShows(10*time.Second, "echo to-demo-one exited with code 0.")

	var sessions []struct {
		Key, ID, Agent string
		Ended, Current bool
	}
	s.luaValue(`require("agentrun").status().sessions`, &sessions)
	var cur string
	ids := map[string]bool{}
	for _, se := range sessions {
		ids[se.ID] = true
		if se.Current {
			cur = se.Key
		}
	}
	if len(sessions) < 2 || len(ids) != 1 || cur == "" || cur == "2" {
		t.Fatalf("sessions %+v: want demo, demo2 (key 2, ended) and the current demo one, all with one ACP id", sessions)
	}

	// Each chat holds its own turns only, in order.
	chats := map[string]struct{ want, not []string }{
		"2": {
			want: []string{"> sleep 100", "Running `sleep 100`", "sleep 100", "term-1", "(agentrun) you stopped this session (:AgentStop); its terminals were killed. :AgentRun starts a new one"},
			not:  []string{"to-demo-one", "the turn failed", "agent stopped", `agent "demo2"`},
		},
		cur: {
			want: []string{"> echo to-demo-one", "Running `echo to-demo-one`", "`echo to-demo-one` exited with code 0."},
			not:  []string{"sleep 100", "the turn failed", "agent stopped", "you stopped"},
		},
	}
	for key, c := range chats {
		text := s.chatOf(key)
		at := 0
		for _, w := range c.want {
			i := strings.Index(text[at:], w)
			if i < 0 {
				t.Errorf("chat %s does not read %q after what came before:\n%s", key, w, text)
				break
			}
			at += i + len(w)
		}
		for _, n := range c.not {
			if strings.Contains(text, n) {
				t.Errorf("chat %s shows %q:\n%s", key, n, text)
			}
		}
		for _, l := range strings.Split(text, "\n") {
			if strings.Count(l, "Running `")+strings.Count(l, "exited with code")+strings.Count(l, "was killed by") > 1 {
				t.Errorf("chat %s: two messages share the line %q", key, l)
			}
		}
	}

	// status() names each terminal's session by key.
	var terms []struct{ ID, Key, Command string }
	s.luaValue(`require("agentrun").status().terminals`, &terms)
	want := map[string]string{"sleep 100": "2", "echo to-demo-one": cur}
	if len(terms) != 2 {
		t.Fatalf("status().terminals %+v, want two", terms)
	}
	for _, tm := range terms {
		if want[tm.Command] != tm.Key {
			t.Errorf("status(): terminal %s (%s) has key %q, want %q", tm.ID, tm.Command, tm.Key, want[tm.Command])
		}
	}
	// So does :AgentTerminals, in its SESSION column.
	s.keys("Escape", ":AgentTerminals", "Enter")
	sc := s.waitShows(5*time.Second, "agentrun terminals —", "SESSION")
	rows := map[string]string{}
	for _, l := range strings.Split(sc, "\n") {
		if f := strings.Fields(l); len(f) > 3 && strings.HasPrefix(f[0], "term-") {
			rows[f[0]] = f[1] + " " + f[2]
		}
	}
	for _, tm := range terms {
		agent := "demo"
		if tm.Key == "2" {
			agent = "demo2"
		}
		if w := agent + " " + tm.Key; rows[tm.ID] != w {
			t.Errorf(":AgentTerminals names %s's session %q, want %q:\n%s", tm.ID, rows[tm.ID], w, sc)
		}
	}
}
