package ahp

import (
	"encoding/json"
	"math/rand"
	"reflect"
	"runtime"
	"strings"
	"testing"

	"github.com/agentrun/agentrun.nvim/internal/jsontest"
)

const testTerm = "agenthost:/terminal/t1"

func intp(n int) *int       { return &n }
func int64p(n int64) *int64 { return &n }

func TestReduceBranchesDoNotSeeEachOther(t *testing.T) {
	s0 := Reduce(TerminalState{Title: "sh"}, DataAction{Terminal: testTerm, Data: "ab"})
	s1 := Reduce(s0, DataAction{Terminal: testTerm, Data: "c"})
	s2 := Reduce(s0, DataAction{Terminal: testTerm, Data: "d"}) // branch from s0 again
	s3 := Reduce(s1, DataAction{Terminal: testTerm, Data: "e"})
	for _, c := range []struct {
		name string
		s    TerminalState
		want string
	}{{"s0", s0, "ab"}, {"s1", s1, "abc"}, {"s2", s2, "abd"}, {"s3", s3, "abce"}} {
		if got := c.s.Text(); got != c.want {
			t.Errorf("%s text = %q, want %q", c.name, got, c.want)
		}
	}
}

// TestAppendTextNeverRewritesAString appends at random to random earlier
// versions of a text (as write-ahead replay would) and checks that every
// version still reads what it read when it was made.
func TestAppendTextNeverRewritesAString(t *testing.T) {
	type version struct {
		s    string
		buf  *textBuf
		want string
	}
	rng := rand.New(rand.NewSource(1))
	versions := []version{{}}
	for i := 0; i < 5000; i++ {
		v := versions[rng.Intn(len(versions))]
		if rng.Intn(3) == 0 {
			v = versions[len(versions)-1] // mostly extend the newest, like a server
		}
		add := strings.Repeat(string(rune('a'+i%26)), 1+rng.Intn(40))
		buf := v.buf
		s := appendText(v.s, add, &buf)
		versions = append(versions, version{s: s, buf: buf, want: v.want + add})
		if i%97 == 0 { // a trimmed version (a suffix) keeps appending too
			cut := rng.Intn(len(s) + 1)
			versions = append(versions, version{s: s[cut:], buf: buf, want: (v.want + add)[cut:]})
		}
	}
	for i, v := range versions {
		if v.s != v.want {
			t.Fatalf("version %d reads %q, want %q", i, v.s, v.want)
		}
	}
}

func TestApplyAppendsWithoutCopyingThePart(t *testing.T) {
	s := TerminalState{}
	s.Apply(DataAction{Terminal: testTerm, Data: strings.Repeat("y", 1<<20)})
	var a Action = DataAction{Terminal: testTerm, Data: strings.Repeat("x", 1024)}
	allocs := testing.AllocsPerRun(2000, func() { s.Apply(a) })
	// Doubling growth: one reallocation per many appends, not one each.
	if allocs > 0.05 {
		t.Errorf("Apply of a 1 KiB data action allocates %.3f times on average, want amortized ~0", allocs)
	}
}

func TestApplyActionPointersLikeValues(t *testing.T) {
	s := Reduce(TerminalState{Title: "a"}, &TitleChangedAction{Terminal: testTerm, Title: "b"})
	if s.Title != "b" {
		t.Errorf("title after *TitleChangedAction = %q, want \"b\"", s.Title)
	}
}

func TestReduceCopiesPointersFromActions(t *testing.T) {
	code := 3
	a := ExitedAction{Terminal: testTerm, ExitCode: &code}
	s := Reduce(TerminalState{}, a)
	code = 4
	if s.ExitCode == nil || *s.ExitCode != 3 {
		t.Errorf("state exit code followed the action's variable: %v", s.ExitCode)
	}
}

func TestExitedWithSignal(t *testing.T) {
	s := Reduce(TerminalState{Title: "sleep"}, ExitedAction{Terminal: testTerm, ExitSignal: "SIGTERM"})
	if !s.Exited() || s.ExitCode != nil {
		t.Fatalf("after a signal exit: Exited=%v ExitCode=%v", s.Exited(), s.ExitCode)
	}
	info := s.Info(testTerm)
	got := string(jsontest.Marshal(t, info))
	want := `{"resource":"agenthost:/terminal/t1","title":"sleep","claim":{"kind":""},"exitSignal":"SIGTERM"}`
	if got != want {
		t.Errorf("info JSON = %s, want %s", got, want)
	}
}

func TestCommandFinishedForUnknownCommandIsNoOp(t *testing.T) {
	s := Reduce(TerminalState{}, CommandExecutedAction{Terminal: testTerm, CommandID: "c1", CommandLine: "ls"})
	s2 := Reduce(s, CommandFinishedAction{Terminal: testTerm, CommandID: "nope", ExitCode: intp(1)})
	if !reflect.DeepEqual(jsontest.Marshal(t, s), jsontest.Marshal(t, s2)) {
		t.Errorf("commandFinished for an unknown id changed the state: %s", jsontest.Marshal(t, s2))
	}
}

func TestActionJSONRoundTrip(t *testing.T) {
	actions := []Action{
		DataAction{Terminal: testTerm, Data: "a\x1b[1mb\r\n"},
		DataAction{Terminal: testTerm, Data: ""},
		InputAction{Terminal: testTerm, Data: "ls\r"},
		ResizedAction{Terminal: testTerm, Cols: 120, Rows: 40},
		ClaimedAction{Terminal: testTerm, Claim: Claim{Kind: "session", Session: "s:/1", TurnID: "t1", ToolCallID: "tc1"}},
		ClaimedAction{Terminal: testTerm, Claim: Claim{Kind: "client", ClientID: "nvim"}},
		TitleChangedAction{Terminal: testTerm, Title: "vim"},
		CwdChangedAction{Terminal: testTerm, Cwd: "file:///tmp"},
		ExitedAction{Terminal: testTerm, ExitCode: intp(0)},
		ExitedAction{Terminal: testTerm, ExitSignal: "SIGKILL"},
		ClearedAction{Terminal: testTerm},
		CommandExecutedAction{Terminal: testTerm, CommandID: "cmd-1", CommandLine: "make", Timestamp: 1700000000000},
		CommandFinishedAction{Terminal: testTerm, CommandID: "cmd-1", ExitCode: intp(2), DurationMs: int64p(15)},
		CommandFinishedAction{Terminal: testTerm, CommandID: "cmd-1"},
		CommandDetectionAvailableAction{Terminal: testTerm},
		RootTerminalsChangedAction{Terminals: []TerminalInfo{{Resource: testTerm, Title: "sh", Claim: Claim{Kind: "client", ClientID: "c"}, ExitCode: intp(1)}}},
	}
	for _, a := range actions {
		b := jsontest.Marshal(t, a)
		if want := `{"type":"` + a.ActionType() + `"`; !strings.HasPrefix(string(b), want) {
			t.Errorf("%T encodes as %s, want it to start with %s", a, b, want)
		}
		back, err := DecodeAction(b)
		if err != nil {
			t.Errorf("DecodeAction(%s): %v", b, err)
			continue
		}
		if !reflect.DeepEqual(back, a) {
			t.Errorf("round trip of %s gave %#v, want %#v", b, back, a)
		}
	}
}

func TestDecodeActionErrors(t *testing.T) {
	for _, c := range []struct {
		in, wantErr string
	}{
		{`{"terminal":"x"}`, `no "type" field`},
		{`[1]`, "decode action"},
		{`{"type":"terminal/resized","terminal":"x","cols":"wide","rows":2}`, "terminal/resized"},
		{`{"type":"terminal/data","data":"hi"}`, `terminal/data action: no "terminal" field`},
		{`{"type":"root/terminalsChanged","terminals":{}}`, "root/terminalsChanged"},
	} {
		_, err := DecodeAction([]byte(c.in))
		if err == nil || !strings.Contains(err.Error(), c.wantErr) {
			t.Errorf("DecodeAction(%s) error = %v, want one containing %q", c.in, err, c.wantErr)
		}
	}
}

func TestUnknownActionAndPartSurvive(t *testing.T) {
	a, err := DecodeAction([]byte(`{"type":"terminal/future","terminal":"x","n":1}`))
	if err != nil {
		t.Fatal(err)
	}
	if a.ActionType() != "terminal/future" || string(jsontest.Marshal(t, a)) != `{"type":"terminal/future","terminal":"x","n":1}` {
		t.Errorf("unknown action = %#v, encodes as %s", a, jsontest.Marshal(t, a))
	}
	var s TerminalState
	in := `{"title":"t","content":[{"type":"image","src":"x"}],"claim":{"kind":"client","clientId":"c"}}`
	if err := json.Unmarshal([]byte(in), &s); err != nil {
		t.Fatal(err)
	}
	s = Reduce(s, DataAction{Terminal: "x", Data: "hi"})
	want := `{"title":"t","content":[{"type":"image","src":"x"},{"type":"unclassified","value":"hi"}],"claim":{"kind":"client","clientId":"c"}}`
	jsontest.Equal(t, "unknown part kept", jsontest.Marshal(t, s), []byte(want))
}

func TestRootListingReplacedWhole(t *testing.T) {
	r := ReduceRoot(RootState{}, RootTerminalsChangedAction{Terminals: []TerminalInfo{{Resource: "a", Title: "a"}, {Resource: "b", Title: "b"}}})
	r = ReduceRoot(r, RootTerminalsChangedAction{Terminals: []TerminalInfo{{Resource: "b", Title: "b2"}}})
	if len(r.Terminals) != 1 || r.Terminals[0].Title != "b2" {
		t.Errorf("listing after replacement = %+v, want only b2", r.Terminals)
	}
	r = ReduceRoot(r, RootTerminalsChangedAction{})
	if got := string(jsontest.Marshal(t, r)); got != `{"agents":[],"terminals":[]}` {
		t.Errorf("empty listing encodes as %s, want terminals present and empty", got)
	}
	if got := string(jsontest.Marshal(t, RootState{})); got != `{"agents":[]}` {
		t.Errorf("fresh root encodes as %s", got)
	}
}

func TestTrim(t *testing.T) {
	unc := func(v string) ContentPart { return ContentPart{Type: PartUnclassified, Value: v} }
	cmd := func(id, out string) ContentPart {
		return ContentPart{Type: PartCommand, CommandID: id, CommandLine: "run " + id, Output: out, IsComplete: true, ExitCode: intp(0)}
	}
	for _, c := range []struct {
		name        string
		parts       []ContentPart
		lim         ContentLimits
		want        []ContentPart
		wantDropped int
	}{
		{"under the limits", []ContentPart{unc("$ "), cmd("1", "hi\n")}, ContentLimits{MaxBytes: 10, MaxParts: 5},
			[]ContentPart{unc("$ "), cmd("1", "hi\n")}, 0},
		{"head of one part", []ContentPart{unc("0123456789")}, ContentLimits{MaxBytes: 4},
			[]ContentPart{unc("6789")}, 6},
		{"cut forward to a character start", []ContentPart{unc("aé€z")}, ContentLimits{MaxBytes: 4},
			[]ContentPart{unc("€z")}, 3},
		{"whole old parts, then a head", []ContentPart{unc("$ "), cmd("1", "one\n"), unc("$ "), cmd("2", "two\n")}, ContentLimits{MaxBytes: 5},
			[]ContentPart{unc(" "), cmd("2", "two\n")}, 7},
		{"command part keeps its metadata when cut", []ContentPart{cmd("1", "abcdef")}, ContentLimits{MaxBytes: 2},
			[]ContentPart{cmd("1", "ef")}, 4},
		{"an empty part right at the cut stays", []ContentPart{unc("ab"), cmd("1", ""), unc("cd")}, ContentLimits{MaxBytes: 2},
			[]ContentPart{cmd("1", ""), unc("cd")}, 2},
		{"an empty part before the cut goes", []ContentPart{unc("ab"), cmd("1", ""), unc("cd")}, ContentLimits{MaxBytes: 1},
			[]ContentPart{unc("d")}, 3},
		{"too many parts", []ContentPart{unc("a"), cmd("1", "b"), unc("c"), cmd("2", "d")}, ContentLimits{MaxParts: 2},
			[]ContentPart{unc("c"), cmd("2", "d")}, 2},
		{"empty", nil, ContentLimits{MaxBytes: 1}, nil, 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := TerminalState{Content: c.parts}
			before := s.Text()
			dropped := s.Trim(c.lim)
			jsontest.Equal(t, "content", jsontest.Marshal(t, s.Content), jsontest.Marshal(t, c.want))
			if dropped != c.wantDropped {
				t.Errorf("dropped = %d, want %d", dropped, c.wantDropped)
			}
			if after := s.Text(); !strings.HasSuffix(before, after) || len(before)-len(after) != dropped {
				t.Errorf("joined text %q is not the tail of %q minus %d bytes", after, before, dropped)
			}
		})
	}
}

// TestFloodStaysBoundedAndCheap pushes 16 MiB of output through Apply and
// Trim with a 64 KiB cap: the state keeps exactly the tail, and the bytes
// allocated stay proportional to the output, not output × cap.
func TestFloodStaysBoundedAndCheap(t *testing.T) {
	const total, capBytes, chunk = 16 << 20, 64 << 10, 4096
	var s TerminalState
	lim := ContentLimits{MaxBytes: capBytes}
	var tail []byte
	var ms0, ms1 runtime.MemStats
	runtime.ReadMemStats(&ms0)
	buf := make([]byte, chunk)
	for i := 0; i < total/chunk; i++ {
		for j := range buf {
			buf[j] = byte('a' + (i+j)%26)
		}
		data := string(buf)
		s.Apply(DataAction{Terminal: testTerm, Data: data})
		s.Trim(lim)
		if i >= (total-capBytes)/chunk {
			tail = append(tail, data...)
		}
	}
	runtime.ReadMemStats(&ms1)
	if got := s.Text(); got != string(tail) {
		t.Fatalf("kept %d bytes, not the last %d bytes of output", len(got), len(tail))
	}
	// The data strings themselves account for 16 MiB; the state for about
	// as much again (each reallocation copies at most twice the cap).
	if alloc := ms1.TotalAlloc - ms0.TotalAlloc; alloc > 5*total {
		t.Errorf("flood of %d bytes allocated %d bytes; appends are copying the part", total, alloc)
	}
}

func TestClaimValidate(t *testing.T) {
	for _, c := range []struct {
		claim   Claim
		wantErr string
	}{
		{Claim{Kind: "client", ClientID: "nvim"}, ""},
		{Claim{Kind: "session", Session: "s:/1"}, ""},
		{Claim{Kind: "session", Session: "s:/1", TurnID: "t", ToolCallID: "tc"}, ""},
		{Claim{Kind: "client"}, "no clientId"},
		{Claim{Kind: "client", ClientID: "c", Session: "s"}, "carries session fields"},
		{Claim{Kind: "session"}, "no session"},
		{Claim{Kind: "session", Session: "s", ClientID: "c"}, "carries clientId"},
		{Claim{Kind: "agent"}, `claim kind "agent"`},
	} {
		err := c.claim.Validate()
		if (c.wantErr == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), c.wantErr)) {
			t.Errorf("Validate(%+v) = %v, want error containing %q", c.claim, err, c.wantErr)
		}
	}
}

func TestTerminalURI(t *testing.T) {
	for _, id := range []string{"term-1", "a b/c", "ünï"} {
		uri := TerminalURI(id)
		back, err := TerminalID(uri)
		if err != nil || back != id {
			t.Errorf("TerminalID(TerminalURI(%q) = %q) = %q, %v", id, uri, back, err)
		}
	}
	if _, err := TerminalID("file:///tmp"); err == nil || !strings.Contains(err.Error(), `"file:///tmp"`) {
		t.Errorf("TerminalID of a file URI: err = %v, want one naming the URI", err)
	}
}

func BenchmarkApplyData(b *testing.B) {
	chunk := strings.Repeat("x", 4096)
	var s TerminalState
	lim := ContentLimits{MaxBytes: 1 << 20}
	b.SetBytes(int64(len(chunk)))
	for i := 0; i < b.N; i++ {
		s.Apply(DataAction{Terminal: testTerm, Data: chunk})
		s.Trim(lim)
	}
}

// TestActionTerminal: every action type the protocol names finds its
// terminal (decoded from the wire, as a value or a pointer); the root's
// and unknown ones have none.
func TestActionTerminal(t *testing.T) {
	types := []string{
		ActionData, ActionInput, ActionResized, ActionClaimed, ActionTitleChanged, ActionCwdChanged, ActionExited,
		ActionCleared, ActionCommandExecuted, ActionCommandFinished, ActionCommandDetectionAvailable,
	}
	for _, typ := range types {
		a, err := DecodeAction([]byte(`{"type":"` + typ + `","terminal":"` + testTerm + `"}`))
		if err != nil {
			t.Errorf("%s: %v", typ, err)
			continue
		}
		if got := ActionTerminal(a); got != testTerm {
			t.Errorf("ActionTerminal(%T) = %q, want %q", a, got, testTerm)
		}
		ptr := reflect.New(reflect.TypeOf(a))
		ptr.Elem().Set(reflect.ValueOf(a))
		if got := ActionTerminal(ptr.Interface().(Action)); got != testTerm {
			t.Errorf("ActionTerminal(*%T) = %q, want %q", a, got, testTerm)
		}
	}
	for _, a := range []Action{RootTerminalsChangedAction{}, UnknownAction{Type: "terminal/new"}} {
		if got := ActionTerminal(a); got != "" {
			t.Errorf("ActionTerminal(%T) = %q, want none", a, got)
		}
	}
}
