package terminals

import (
	"context"
	"testing"

	"github.com/agentrun/agentrun.nvim/ahp"
	"github.com/agentrun/agentrun.nvim/termhost"
)

// TestRerunKeepsTheRow: R on a finished command runs it again under a new
// id that keeps the first run's as its row and counts the runs; the run
// it replaced says so, in status() and in the host's listing (what
// agentrun ls reads), and R on an older run runs the newest again.
func TestRerunKeepsTheRow(t *testing.T) {
	ts, h, _, _ := newTestTerminals(t)
	first, err := h.Create(context.Background(), termhost.Spec{Command: "true", Shell: true, Dir: t.TempDir(), Claim: ahp.SessionClaim("s1", "")})
	if err != nil {
		t.Fatal(err)
	}
	ts.Add(first, "7", "s1", false)
	<-first.Done()

	for _, c := range []struct {
		rerun    string // the id R is pressed on
		id       string // the new run's
		runs     int
		replaced string // the run it replaces
	}{
		{rerun: "term-1", id: "term-2", runs: 2, replaced: "term-1"},
		{rerun: "term-2", id: "term-3", runs: 3, replaced: "term-2"},
		{rerun: "term-1", id: "term-4", runs: 4, replaced: "term-3"}, // an older run's R: the newest runs again
	} {
		res, err := ts.Rerun(c.rerun)
		if err != nil {
			t.Fatal(err)
		}
		if res["id"] != c.id || res["rerun_of"] != "term-1" || res["runs"] != c.runs || res["replaces"] != c.replaced {
			t.Errorf("R on %s answered %v, want id %s, rerun_of term-1, runs %d, replaces %s", c.rerun, res, c.id, c.runs, c.replaced)
		}
		if nt, err := ts.Running(c.id); err == nil {
			<-nt.Done() // R on a finished command, as a user presses it
		}
		byID := map[string]map[string]any{}
		for _, e := range ts.Status() {
			m := e.(map[string]any)
			byID[m["id"].(string)] = m
		}
		if m := byID[c.id]; m["rerun_of"] != "term-1" || m["runs"] != c.runs || m["rerun_as"] != nil {
			t.Errorf("status() of %s: rerun_of %v runs %v rerun_as %v, want term-1, %d, none", c.id, m["rerun_of"], m["runs"], m["rerun_as"], c.runs)
		}
		if m := byID[c.replaced]; m["rerun_as"] != c.id {
			t.Errorf("status() of %s: rerun_as %v, want %s", c.replaced, m["rerun_as"], c.id)
		}
		listed := map[string]ahp.TerminalInfo{}
		for _, ti := range h.Listing() {
			listed[ti.Resource] = ti
		}
		if n, o := listed[ahp.TerminalURI(c.id)], listed[ahp.TerminalURI(c.replaced)]; n.RunOf != "term-1" || n.Run != c.runs || n.ReplacedBy != "" || o.ReplacedBy != c.id {
			t.Errorf("the listing: %s runOf %q run %d replacedBy %q, %s replacedBy %q; want term-1, %d, none, %s", c.id, n.RunOf, n.Run, n.ReplacedBy, c.replaced, o.ReplacedBy, c.runs, c.id)
		}
	}
}
