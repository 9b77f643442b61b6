package server

import (
	"fmt"
	"testing"

	"github.com/agentrun/agentrun.nvim/ahp"
	"github.com/agentrun/agentrun.nvim/termhost"
)

// TestCoalesce: runs of data join into one action (the last one's seq);
// other actions stay where they are, in order.
func TestCoalesce(t *testing.T) {
	const u = "agenthost:/terminal/t1"
	data := func(seq uint64, s string) termhost.SeqAction {
		return termhost.SeqAction{Seq: seq, Action: ahp.DataAction{Terminal: u, Data: s}}
	}
	title := termhost.SeqAction{Seq: 4, Action: ahp.TitleChangedAction{Terminal: u, Title: "x"}}
	got := coalesce([]termhost.SeqAction{data(1, "a"), data(2, "b"), data(3, "c"), title, data(5, "d"), data(6, "e")})
	want := []termhost.SeqAction{data(3, "abc"), title, data(6, "de")}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("coalesce = %v\nwant       %v", got, want)
	}
	single := []termhost.SeqAction{title, data(5, "d")}
	if got := coalesce(single); fmt.Sprint(got) != fmt.Sprint(single) {
		t.Fatalf("coalesce = %v, want it unchanged", got)
	}
}
