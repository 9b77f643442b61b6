package shellinteg

import (
	"encoding/json"
	"testing"
)

// testTerm is the terminal URI the parser tests put on every action.
const testTerm = "agenthost:/terminal/t1"

// mustJSON encodes v (an action) for comparison and messages.
func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatalf("encode %T: %v", v, err)
	}
	return b
}

func intp(n int) *int       { return &n }
func int64p(n int64) *int64 { return &n }

// assertJSONEqual compares two JSON documents by value (key order and
// spacing do not matter).
func assertJSONEqual(t *testing.T, what string, got, want []byte) {
	t.Helper()
	var g, w any
	if err := json.Unmarshal(got, &g); err != nil {
		t.Fatalf("%s: got invalid JSON %s: %v", what, got, err)
	}
	if err := json.Unmarshal(want, &w); err != nil {
		t.Fatalf("%s: want invalid JSON %s: %v", what, want, err)
	}
	if gs, ws := mustJSON(t, g), mustJSON(t, w); string(gs) != string(ws) {
		t.Errorf("%s:\ngot  %s\nwant %s", what, gs, ws)
	}
}
