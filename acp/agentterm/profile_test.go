package agentterm

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

var update = flag.Bool("update", false, "write acp/agentterm/testdata/profiles/*.golden from what the decoder makes of the fixtures")

// fixturesDir holds the agents' recorded updates (the demo agent's
// `!replay` recordings).
const fixturesDir = "../../tests/testdata/agentterm"

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
				t.Fatalf("%v: write it with go test ./acp/agentterm -run TestProfileFixtures -update, and read it", err)
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
	at := NewDecoder()
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
		if _, ev, ok, err := at.FromV2(params); ok {
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
		evs := at.FromUpdate(n, func(string, string) bool { return false })
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
func eventText(e Event) string {
	var b bytes.Buffer
	b.WriteString(e.ID)
	word := func(on bool, format string, args ...any) {
		if on {
			fmt.Fprintf(&b, " "+format, args...)
		}
	}
	word(e.ToolCallID != "" && e.ToolCallID != e.ID, "(tool call %s)", e.ToolCallID)
	word(e.Started, "started")
	word(e.KeepsReporting, "keeps-reporting")
	word(e.Title != "", "title=%q", e.Title)
	word(e.Cwd != "", "cwd=%q", e.Cwd)
	word(e.Replace, "replace")
	word(len(e.Output) > 0, "output=%q", e.Output)
	word(e.Exited, "exited")
	if e.Exited && e.ExitCode != nil {
		word(true, "exit=%d", *e.ExitCode)
	}
	word(e.Exited && e.Signal != "", "signal=%s", e.Signal)
	word(e.Exited && e.NotRun != "", "not-run=%s", e.NotRun)
	word(e.Exited && e.Failed, "failed")
	word(e.Exited && e.Unreported, "unreported")
	return b.String()
}
