package terminals

import (
	"fmt"
	"log/slog"
	"strings"
	"testing"

	"github.com/agentrun/agentrun.nvim/internal/rawlog"
)

func testKept(id, text string) *keptOutput {
	done := make(chan struct{})
	close(done)
	return &keptOutput{id: id, done: done, log: rawlog.Restore(0, []byte(text)), size: len(text)}
}

func readAll(l *rawlog.Log) string {
	c := l.NewReader(0).Read(0)
	return string(c.Data)
}

// Beyond terminal.kept_bytes the oldest ended terminals' output goes to
// files, and reads back the same; the newest stay in memory.
func TestKeptOutputBeyondTheBudgetGoesToFiles(t *testing.T) {
	dir := t.TempDir()
	ts := &Terminals{log: slog.New(slog.DiscardHandler), byID: map[string]*terminal{}, keptBytes: 250, keptDir: dir}
	for i := 1; i <= 4; i++ {
		id := fmt.Sprintf("term-%d", i)
		ts.order = append(ts.order, id)
		ts.byID[id] = &terminal{id: id, state: "released", kept: testKept(id, strings.Repeat(fmt.Sprint(i), 100))}
	}
	ts.dropReleasedOutput()
	for i, wantMem := range []bool{false, false, true, true} {
		k := ts.byID[fmt.Sprintf("term-%d", i+1)].kept
		if got := k.inMemory() > 0; got != wantMem {
			t.Errorf("%s in memory = %v, want %v (budget 250, 100 bytes each, newest first)", k.id, got, wantMem)
		}
		if got, want := readAll(k.Display()), strings.Repeat(fmt.Sprint(i+1), 100); got != want {
			t.Errorf("%s reads back %q, want %q", k.id, got, want)
		}
	}
}

// Output that could not be kept says how much was lost.
func TestKeptOutputLostSaysHowMuch(t *testing.T) {
	k := testKept("term-9", "hello\n")
	if err := k.spill(""); err == nil {
		t.Fatal("spill without a folder: no error")
	}
	if got := readAll(k.Display()); !strings.Contains(got, "no longer kept (6 bytes)") {
		t.Errorf("a lost output reads %q, want it to say 6 bytes were lost", got)
	}
}
