package ahp

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentrun/agentrun.nvim/internal/jsontest"
)

// reducerCase is one file of testdata/reducer-cases.
type reducerCase struct {
	Description string            `json:"description"`
	Reducer     string            `json:"reducer"` // "terminal" or "root"
	Initial     json.RawMessage   `json:"initial"`
	Actions     []json.RawMessage `json:"actions"`
	Expected    json.RawMessage   `json:"expected"`
}

// TestReducerFixtures runs every AHP reducer fixture through Reduce (and
// Apply, and ReduceRoot) and compares the JSON of the result with the
// expected state. The fixtures are vendored in testdata/reducer-cases.
func TestReducerFixtures(t *testing.T) {
	dir := reducerCasesDir(t)
	files, err := filepath.Glob(filepath.Join(dir, "*.json"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no *.json reducer cases in %s (err %v)", dir, err)
	}
	for _, file := range files {
		t.Run(strings.TrimSuffix(filepath.Base(file), ".json"), func(t *testing.T) {
			raw, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			var c reducerCase
			if err := json.Unmarshal(raw, &c); err != nil {
				t.Fatalf("%s: %v", file, err)
			}
			switch c.Reducer {
			case "terminal":
				runTerminalCase(t, c)
			case "root":
				runRootCase(t, c)
			default:
				t.Fatalf("%s: reducer %q is neither \"terminal\" nor \"root\"; teach this test about it", file, c.Reducer)
			}
		})
	}
}

func runTerminalCase(t *testing.T, c reducerCase) {
	t.Helper()
	var initial TerminalState
	decodeStrict(t, c.Initial, &initial)
	before := jsontest.Marshal(t, initial)

	pure := initial
	owned := initial.Clone()
	served := servedSnapshot(t, initial)
	for i, raw := range c.Actions {
		a, err := DecodeAction(raw)
		if err != nil {
			t.Fatalf("%s: %v", c.Description, err)
		}
		pure = Reduce(pure, a)
		owned.Apply(a)
		served.Apply(servedAction(t, a, uint64(i+1)))
	}
	jsontest.Equal(t, c.Description+" (Reduce)", jsontest.Marshal(t, pure), c.Expected)
	jsontest.Equal(t, c.Description+" (Apply)", jsontest.Marshal(t, owned), c.Expected)
	jsontest.Equal(t, c.Description+" (served: snapshot and envelopes over the wire)", jsontest.Marshal(t, served), c.Expected)
	if after := jsontest.Marshal(t, initial); !bytes.Equal(before, after) {
		t.Errorf("%s: Reduce changed its input state:\nbefore %s\nafter  %s", c.Description, before, after)
	}

	// The expected state also survives a decode/encode round trip, so
	// every field name in the fixture maps onto TerminalState.
	var expected TerminalState
	decodeStrict(t, c.Expected, &expected)
	jsontest.Equal(t, c.Description+" (round trip)", jsontest.Marshal(t, expected), c.Expected)
}

func runRootCase(t *testing.T, c reducerCase) {
	t.Helper()
	var initial RootState
	decodeStrict(t, c.Initial, &initial)
	before := jsontest.Marshal(t, initial)
	state := initial
	for _, raw := range c.Actions {
		a, err := DecodeAction(raw)
		if err != nil {
			t.Fatalf("%s: %v", c.Description, err)
		}
		state = ReduceRoot(state, a)
	}
	jsontest.Equal(t, c.Description, jsontest.Marshal(t, state), c.Expected)
	if after := jsontest.Marshal(t, initial); !bytes.Equal(before, after) {
		t.Errorf("%s: ReduceRoot changed its input state", c.Description)
	}
}

// reducerCasesDir is where the AHP reducer fixtures are: testdata/reducer-cases
// (vendored from the AHP reference, with its MIT licence beside them), or
// $AHP_REDUCER_CASES to run a newer set.
func reducerCasesDir(t *testing.T) string {
	t.Helper()
	dir, what := filepath.Join("testdata", "reducer-cases"), "the vendored fixtures"
	if env := os.Getenv("AHP_REDUCER_CASES"); env != "" {
		dir, what = env, "$AHP_REDUCER_CASES"
	}
	if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
		t.Fatalf("AHP reducer fixtures missing: %s (%s) is not a directory (err %v)", dir, what, err)
	}
	return dir
}

// decodeStrict decodes JSON into v, failing on fields v does not have.
func decodeStrict(t *testing.T, data []byte, v any) {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		t.Fatalf("decode %T from %s: %v", v, data, err)
	}
}

// servedSnapshot sends st as a host's snapshot does and decodes it as a
// client does.
func servedSnapshot(t *testing.T, st TerminalState) TerminalState {
	t.Helper()
	b := jsontest.Marshal(t, Snapshot{Resource: TerminalURI("t1"), State: jsontest.Marshal(t, st), FromSeq: 0})
	var snap Snapshot
	if err := json.Unmarshal(b, &snap); err != nil {
		t.Fatal(err)
	}
	var out TerminalState
	decodeStrict(t, snap.State, &out)
	return out
}

// servedAction sends a in an "action" notification's envelope and
// decodes it as a client does.
func servedAction(t *testing.T, a Action, seq uint64) Action {
	t.Helper()
	b := jsontest.Marshal(t, ActionParams{Envelope: Envelope{Action: a, ServerSeq: seq}})
	var p ActionParams
	if err := json.Unmarshal(b, &p); err != nil {
		t.Fatalf("envelope %s: %v", b, err)
	}
	if p.Envelope.ServerSeq != seq {
		t.Fatalf("envelope %s: serverSeq %d", b, p.Envelope.ServerSeq)
	}
	return p.Envelope.Action
}
