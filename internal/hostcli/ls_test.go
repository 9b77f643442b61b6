package hostcli

import (
	"bytes"
	"fmt"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/agentrun/agentrun.nvim/ahp"
	"github.com/agentrun/agentrun.nvim/internal/rundir"
)

// The table fits the width it is given: the title and the last line give
// way, the ports and the other columns never do.
func TestLsTableFits(t *testing.T) {
	rows := []lsRow{
		{ID: "12345:term-1", Title: "python3 -m http.server --bind 127.0.0.1 8765 --directory /srv/a/very/long/path", State: "running", Holder: "agent (tool call)", Ports: []int{8765, 40123}, LastLine: "Serving HTTP on 127.0.0.1 port 8765 (http://127.0.0.1:8765/) ..."},
		{ID: "12345:term-2", Title: "go test ./...", State: "exit 1", Holder: "agent", LastLine: "FAIL"},
	}
	remote := []lsRow{ // another machine's ids are long; still one line each
		{ID: "ssh://agentrun-remote-test/123456:term-12", Title: "python3 -m http.server --bind 127.0.0.1 8765", State: "running", Holder: "agent (tool call)", Ports: []int{8765}, LastLine: "Serving HTTP on 127.0.0.1 port 8765"},
		{ID: "ssh://agentrun-remote-test/123456:term-3", Title: "go test ./...", State: "exit 1", Holder: "you (T)", LastLine: "FAIL"},
	}
	var rb bytes.Buffer
	if err := writeTable(&rb, remote, 80); err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(strings.TrimRight(rb.String(), "\n"), "\n") {
		if n := utf8.RuneCountInString(line); n > 80 {
			t.Errorf("another machine's at 80 columns: a line of %d: %q", n, line)
		}
	}
	for _, r := range remote {
		if !strings.Contains(rb.String(), r.ID+" ") {
			t.Errorf("another machine's at 80 columns: the id %s is not whole:\n%s", r.ID, rb.String())
		}
	}
	for _, width := range []int{80, 100, 160} {
		var b bytes.Buffer
		if err := writeTable(&b, rows, width); err != nil {
			t.Fatal(err)
		}
		for _, line := range strings.Split(strings.TrimRight(b.String(), "\n"), "\n") {
			if n := utf8.RuneCountInString(line); n > width {
				t.Errorf("at %d columns a line of %d: %q", width, n, line)
			}
		}
		if !strings.Contains(b.String(), "PORTS") || !strings.Contains(b.String(), "8765,40123") {
			t.Errorf("at %d columns the ports are not whole:\n%s", width, b.String())
		}
		if width == 160 && !strings.Contains(b.String(), rows[0].LastLine) {
			t.Errorf("at 160 columns the last line is cut:\n%s", b.String())
		}
	}
	var b bytes.Buffer
	if err := writeTable(&b, rows[1:], 80); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(b.String(), "PORTS") {
		t.Errorf("a PORTS column with no ports:\n%s", b.String())
	}
}

// A last line with tabs (ls's columns, a Makefile's recipe) reads as one
// line of spaces in the table: a tab there broke the columns after it.
func TestLsTableTabs(t *testing.T) {
	var b bytes.Buffer
	rows := []lsRow{{ID: "1:term-1", Command: "ls\t-l", State: "exit 0", Holder: "nobody", LastLine: "a.txt\tb.txt\x1b"}}
	if err := writeTable(&b, rows, 120); err != nil {
		t.Fatal(err)
	}
	if strings.ContainsAny(b.String(), "\t\x1b") || !strings.Contains(b.String(), "a.txt b.txt") || !strings.Contains(b.String(), "ls -l") {
		t.Errorf("the table holds a tab or an escape, or lost the text:\n%q", b.String())
	}
}

// reruns is a host's listing after R ran term-1's command twice in
// Neovim (term-3, then term-5), beside another command, term-2.
func reruns() []hostTerm {
	local := &site{}
	h := rundir.Host{PID: 4420}
	zero := 0
	return []hostTerm{
		{site: local, host: h, id: "term-1", info: ahp.TerminalInfo{Command: "go test ./...", ExitCode: &zero, ReplacedBy: "term-3"}},
		{site: local, host: h, id: "term-2", info: ahp.TerminalInfo{Command: "make serve"}},
		{site: local, host: h, id: "term-3", info: ahp.TerminalInfo{Command: "go test ./...", ExitCode: &zero, RunOf: "term-1", Run: 2, ReplacedBy: "term-5"}},
		{site: local, host: h, id: "term-5", info: ahp.TerminalInfo{Command: "go test ./...", RunOf: "term-1", Run: 3}},
		{site: local, host: rundir.Host{PID: 77}, id: "term-1", info: ahp.TerminalInfo{Command: "htop"}},
	}
}

// ls lists a command R ran again as Neovim's list does: one row, under
// its first run's id, saying which run; the runs it replaced left out.
func TestLsRowsReruns(t *testing.T) {
	rows := lsRows(reruns(), func(hostTerm) string { return "" })
	var got []string
	for _, r := range rows {
		got = append(got, fmt.Sprintf("%s run %d %s", r.ID, r.Run, r.RunID))
	}
	want := []string{"4420:term-2 run 0 ", "4420:term-1 run 3 4420:term-5", "77:term-1 run 0 "}
	if !slices.Equal(got, want) {
		t.Errorf("rows %q, want %q", got, want)
	}
	var b bytes.Buffer
	if err := writeTable(&b, rows, 100); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "(run 3) go test ./...") || strings.Contains(b.String(), "term-3") || strings.Contains(b.String(), "term-5") {
		t.Errorf("the table does not show term-1's run 3 as one row:\n%s", b.String())
	}
}

// attach and kill take a command's first run's id for its newest run, as
// Neovim's commands do; a run's own id still names that run.
func TestMatchReruns(t *testing.T) {
	for _, c := range []struct {
		arg  string
		want []string // label()s
	}{
		{"4420:term-1", []string{"4420:term-1 (run 3)"}},
		{"term-1", []string{"4420:term-1 (run 3)", "77:term-1"}},
		{"77:term-1", []string{"77:term-1"}},
		{"4420:term-5", []string{"4420:term-1 (run 3)"}},
		{"term-3", []string{"4420:term-1 (run 2)"}},
		{"term-2", []string{"4420:term-2"}},
		{"term-4", nil},
	} {
		var got []string
		for _, h := range match(reruns(), c.arg) {
			got = append(got, h.label())
		}
		if !slices.Equal(got, c.want) {
			t.Errorf("%s names %q, want %q", c.arg, got, c.want)
		}
	}
}
