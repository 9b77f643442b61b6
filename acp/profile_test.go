package acp

import (
	"bufio"
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	acpsdk "github.com/coder/acp-go-sdk"
)

var update = flag.Bool("update", false, "write acp/testdata/profiles/*.golden from what the decoder makes of the fixtures")

// fixturesDir holds the agents' recorded updates (the demo agent's
// `!replay` recordings).
const fixturesDir = "../tests/testdata/agentterm"

// fixtureProfile is the profile whose fixture name is (by the longest key
// it starts with); nil for a common shape's fixture ("v2").
func fixtureProfile(name string) *profile {
	var best *profile
	for _, p := range profiles {
		if strings.HasPrefix(name, p.key) && (best == nil || len(p.key) > len(best.key)) {
			best = p
		}
	}
	return best
}

// commonFixtures are the fixtures of shapes no one agent owns.
var commonFixtures = map[string]bool{"v2": true}

// TestProfileFixtures replays each agent's recordings through the
// decoder (as update.go hands them over) and compares what it makes of
// them, event by event, with the fixture's golden file: each profile's
// golden replays. Every fixture belongs to a profile (or is a common
// shape's), every profile has one, and no hook of another agent's
// profile recognises an update of this one's (so the profiles do not
// depend on the order they are tried in).
func TestProfileFixtures(t *testing.T) {
	files, err := filepath.Glob(filepath.Join(fixturesDir, "*.jsonl"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no fixtures in %s: %v", fixturesDir, err)
	}
	has := map[string]bool{}
	for _, f := range files {
		name := strings.TrimSuffix(filepath.Base(f), ".jsonl")
		p := fixtureProfile(name)
		if p == nil && !commonFixtures[name] {
			t.Errorf("fixture %s belongs to no profile: name it <key>-….jsonl after its agent's profile (profile_<key>.go)", name)
			continue
		}
		if p != nil {
			has[p.key] = true
		}
		t.Run(name, func(t *testing.T) {
			got := replayFixture(t, f, p)
			golden := filepath.Join("testdata", "profiles", name+".golden")
			if *update {
				if err := os.MkdirAll(filepath.Dir(golden), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(golden, []byte(got), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v: write it with go test ./acp -run TestProfileFixtures -update, and read it", err)
			}
			if got != string(want) {
				t.Errorf("what the decoder makes of %s changed:\n--- got\n%s--- want (%s)\n%s", name, got, golden, want)
			}
		})
	}
	for _, p := range profiles {
		if !has[p.key] {
			t.Errorf("profile %s (%s) has no fixture: record its agent's updates in %s/%s-….jsonl", p.key, p.name, fixturesDir, p.key)
		}
	}
}

// replayFixture feeds the updates of fixture path to a fresh decoder for
// an agent of profile own (nil: none known) and writes down the events.
func replayFixture(t *testing.T, path string, own *profile) string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	at := newAgentTerms()
	at.keepsReporting = own != nil && own.keepsReporting
	var b strings.Builder
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 16<<20)
	for line := 1; sc.Scan(); line++ {
		var step struct {
			Update json.RawMessage `json:"update"`
		}
		if err := json.Unmarshal(sc.Bytes(), &step); err != nil {
			t.Fatalf("line %d: %v", line, err)
		}
		if step.Update == nil {
			continue // a pause, a wait, another notification
		}
		params := json.RawMessage(`{"sessionId":"s","update":` + string(step.Update) + `}`)
		if _, ev, ok, err := at.fromV2(params); ok {
			if err != nil {
				t.Fatalf("line %d: %v", line, err)
			}
			fmt.Fprintf(&b, "line %d: %s\n", line, eventText(ev))
			continue
		}
		var n acpsdk.SessionNotification
		if err := json.Unmarshal(params, &n); err != nil {
			t.Fatalf("line %d: %v", line, err)
		}
		if u, ok := toolUpdateOf(n); ok {
			for _, p := range profiles {
				if hooks := recognises(p, u); p != own && len(hooks) > 0 {
					t.Errorf("line %d: profile %s's %s took an update of %s's", line, p.key, strings.Join(hooks, ", "), nameOf(own))
				}
			}
		}
		evs := at.fromUpdate(n, func(string, string) bool { return false })
		if len(evs) == 0 {
			fmt.Fprintf(&b, "line %d: -\n", line)
		}
		for _, ev := range evs {
			fmt.Fprintf(&b, "line %d: %s\n", line, eventText(ev))
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

func nameOf(p *profile) string {
	if p == nil {
		return "no agent"
	}
	return p.key
}

// recognises lists the hooks of p that recognise update u as their
// agent's.
func recognises(p *profile, u *toolUpdate) []string {
	var hooks []string
	add := func(name string, ok bool) {
		if ok {
			hooks = append(hooks, name)
		}
	}
	if p.outputAtEnd != nil {
		add("outputAtEnd", p.outputAtEnd(u))
	}
	if p.notCommand != nil {
		add("notCommand", p.notCommand(u))
	}
	if p.command != nil {
		_, ok := p.command(u)
		add("command", ok)
	}
	if p.cwd != nil {
		add("cwd", p.cwd(u) != "")
	}
	if p.notRun != nil {
		add("notRun", p.notRun(u) != "")
	}
	if p.finalOutput != nil {
		_, _, ok := p.finalOutput(u)
		add("finalOutput", ok && u.final)
	}
	if p.trailer != nil {
		_, _, ok := p.trailer(u.text)
		add("trailer", ok)
	}
	if p.end != nil {
		_, ok := p.end(u)
		add("end", ok && u.final)
	}
	if p.exitCode != nil {
		_, _, ok := p.exitCode(u.rawOutput)
		add("exitCode", ok)
	}
	if p.placeholderTitle != "" {
		add("placeholderTitle", u.title == p.placeholderTitle)
	}
	for _, key := range p.outputKeys {
		_, ok := u.meta[key]
		add(key, ok)
	}
	sort.Strings(hooks)
	return hooks
}

// eventText writes an event down on one line, its output quoted.
func eventText(e AgentTerminal) string {
	var b bytes.Buffer
	fmt.Fprintf(&b, "%s", e.ID)
	if e.ToolCallID != "" && e.ToolCallID != e.ID {
		fmt.Fprintf(&b, " (tool call %s)", e.ToolCallID)
	}
	if e.Started {
		b.WriteString(" started")
	}
	if e.KeepsReporting {
		b.WriteString(" keeps-reporting")
	}
	if e.Title != "" {
		fmt.Fprintf(&b, " title=%q", e.Title)
	}
	if e.Cwd != "" {
		fmt.Fprintf(&b, " cwd=%q", e.Cwd)
	}
	if e.Replace {
		b.WriteString(" replace")
	}
	if len(e.Output) > 0 {
		fmt.Fprintf(&b, " output=%q", e.Output)
	}
	if e.Exited {
		b.WriteString(" exited")
		if e.ExitCode != nil {
			fmt.Fprintf(&b, " exit=%d", *e.ExitCode)
		}
		if e.Signal != "" {
			fmt.Fprintf(&b, " signal=%s", e.Signal)
		}
		if e.NotRun != "" {
			fmt.Fprintf(&b, " not-run=%s", e.NotRun)
		}
		if e.Failed {
			b.WriteString(" failed")
		}
		if e.Unreported {
			b.WriteString(" unreported")
		}
	}
	return b.String()
}

// TestProfileNamed: an agent is known by each of the names its profile
// lists, a fork by the part of a name its profile names; any other name
// is no known agent (the zero Profile: its own terminals, no _meta).
func TestProfileNamed(t *testing.T) {
	for _, p := range profiles {
		for _, n := range p.agentNames {
			if got := ProfileNamed(n); got.p != p {
				t.Errorf("ProfileNamed(%q) = %q, want %q", n, got.Name(), p.name)
			}
		}
	}
	cases := []struct{ name, want string }{
		{"@agentclientprotocol/claude-agent-acp", "Claude Code"},
		{"@zed-industries/claude-code-acp", ""},
		{"my-codex-fork", "Codex"},
		{"Copilot", "Copilot CLI"},
		{"demo", ""},
		{"", ""},
	}
	for _, c := range cases {
		if got := ProfileNamed(c.name).Name(); got != c.want {
			t.Errorf("ProfileNamed(%q) = %q, want %q", c.name, got, c.want)
		}
	}
	if p := ProfileNamed("unknown"); p.OurTerminals() || p.MCPHTTPOnly() || p.SessionMeta([]string{"x"}) != nil || p.ToolNotTaken("x") != "" {
		t.Errorf("an unknown agent has ways: %+v", p)
	}
	if _, known := ProfileNamed("unknown").AsksFirst("default"); known {
		t.Error("an unknown agent's modes are known")
	}
	if got := ToolCallOfMCPCall(map[string]any{"claudecode/toolUseId": "toolu_1"}); got != "toolu_1" {
		t.Errorf("Claude Code's tools/call names tool call %q, want toolu_1", got)
	}
	if got := ToolCallOfMCPCall(map[string]any{"other": "x"}); got != "" {
		t.Errorf("a tools/call that names none names %q", got)
	}
}
