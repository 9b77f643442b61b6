package hostcli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/agentrun/agentrun.nvim/ahp/client"
	"github.com/agentrun/agentrun.nvim/internal/sshlink"
)

// Ls prints every terminal of every host: id, command line, state, holder, age,
// the ports it listens on and its last line, one row per command as
// Neovim's list shows it: a command run again (R) is its newest run under
// its first run's id, its command saying which run ("(run 2) go test"),
// the runs it replaced left out. In width columns (0: the
// width of out's terminal, else $COLUMNS, else 120): the command and
// the last line give way, nothing else is cut. With asJSON it writes them as a
// JSON array for scripts instead, nothing cut. where is "" (this machine)
// or a remote, ssh://[user@]host[:port].
func Ls(ctx context.Context, out io.Writer, where string, asJSON bool, width int) error {
	if where != "" && !sshlink.IsURL(where) {
		return fmt.Errorf("agentrun ls lists this machine's terminals, or a remote's: ssh://[user@]host[:port], not %q", where)
	}
	s, rest, err := openSite(ctx, where)
	if err != nil {
		return err
	}
	defer s.close()
	if rest != "" {
		return fmt.Errorf("agentrun ls takes a machine, not a terminal: ls %s", s.target)
	}
	all, live, err := hostTerminals(ctx, s)
	if asJSON && errors.Is(err, errNoHost) {
		_, err := io.WriteString(out, "[]\n") // no host: no terminals, for a script
		return err
	}
	if err != nil {
		return err
	}
	if !slices.ContainsFunc(all, func(h hostTerm) bool { return !h.replaced() }) && !asJSON {
		pids := make([]string, len(live))
		for i, p := range live {
			pids[i] = strconv.Itoa(p)
		}
		what := "an agentrun host runs (pid " + pids[0] + ") but has"
		if len(live) > 1 {
			what = fmt.Sprintf("%d agentrun hosts run (pids %s) but have", len(live), strings.Join(pids, ", "))
		}
		_, err := fmt.Fprintf(out, "%s no terminals now; a terminal is listed here from when its command starts until it is released (%s)\n", what, releasedGone)
		return err
	}
	rows := lsRows(all, func(h hostTerm) string {
		last := ""
		if c, _, err := s.dial(ctx, h.host); err == nil {
			if snap, err := c.Subscribe(ctx, h.info.Resource); err == nil {
				if st, err := client.TerminalState(snap); err == nil {
					last = client.LastLine(st)
				}
			}
			c.Close()
		}
		return last
	})
	if asJSON {
		enc := json.NewEncoder(out)
		enc.SetIndent("", "  ")
		return enc.Encode(rows)
	}
	return writeTable(out, rows, width)
}

// lsRows makes the rows ls shows of the terminals all, one per command:
// a run a newer run replaced is left out, a command's newest run is
// listed under its first run's id with its run's number. lastLine reads a
// terminal's last line.
func lsRows(all []hostTerm, lastLine func(hostTerm) string) []lsRow {
	rows := make([]lsRow, 0, len(all))
	for _, h := range all {
		if h.replaced() {
			continue // a newer run of its command has its row
		}
		r := lsRow{
			ID: h.rowName(), Title: h.info.Title, Command: h.info.Command, State: state(h.info), Holder: holder(h.info),
			CreatedAt: h.info.CreatedAt, Ports: append([]int{}, h.info.Ports...), LastLine: lastLine(h),
			ExitCode: h.info.ExitCode, Signal: h.info.ExitSignal,
		}
		if h.info.RunOf != "" {
			r.Run, r.RunID = h.info.Run, h.name()
		}
		rows = append(rows, r)
	}
	return rows
}

// lsRow is one terminal as ls shows it; --json writes these fields.
type lsRow struct {
	ID        string `json:"id"`      // as attach and kill take it
	Title     string `json:"title"`   // the agent's description, or the command
	Command   string `json:"command"` // the command line it runs
	State     string `json:"state"`
	Holder    string `json:"holder"`
	CreatedAt int64  `json:"created_at"` // Unix ms
	Ports     []int  `json:"ports"`
	LastLine  string `json:"last_line"`
	ExitCode  *int   `json:"exit_code,omitempty"`
	Signal    string `json:"signal,omitempty"`
	// A command run again (R in Neovim) is one row under its first run's
	// id: Run is which run it shows (2 and up), RunID the run's own id.
	Run   int    `json:"run,omitempty"`
	RunID string `json:"run_id,omitempty"`
}

// writeTable writes rows as columns fitting width: ID, STATE, AGE and
// PORTS whole (PORTS only when a terminal listens on one), COMMAND and LAST
// LINE sharing the rest, the last line first (each keeps at least 10
// columns), then HOLDER giving way when that is not enough.
func writeTable(out io.Writer, rows []lsRow, width int) error {
	if width <= 0 {
		width = termWidth()
	}
	withPorts := false
	for _, r := range rows {
		withPorts = withPorts || len(r.Ports) > 0
	}
	cells := make([][]string, 0, len(rows)+1)
	header := []string{"ID", "COMMAND", "STATE", "HOLDER", "AGE"}
	if withPorts {
		header = append(header, "PORTS")
	}
	cells = append(cells, append(header, "LAST LINE"))
	for _, r := range rows {
		command := r.Command
		if command == "" {
			command = r.Title // a host of an older agentrun
		}
		if r.Run > 1 {
			// as Neovim's list says it: "term-1 … (run 2) go test"
			command = fmt.Sprintf("(run %d) %s", r.Run, command)
		}
		c := []string{r.ID, command, r.State, r.Holder, age(r.CreatedAt)}
		if withPorts {
			ports := make([]string, len(r.Ports))
			for i, p := range r.Ports {
				ports[i] = strconv.Itoa(p)
			}
			c = append(c, strings.Join(ports, ","))
		}
		cells = append(cells, append(c, r.LastLine))
	}
	for _, c := range cells {
		for i, v := range c {
			c[i] = oneLine(v)
		}
	}
	widths := make([]int, len(header)+1)
	for _, c := range cells {
		for i, v := range c {
			widths[i] = max(widths[i], len([]rune(v)))
		}
	}
	// what the whole columns and the gaps take; the command and the last
	// line share the rest
	const gap = 2
	fixed := gap * (len(widths) - 1)
	for i, w := range widths {
		if i != 1 && i != len(widths)-1 {
			fixed += w
		}
	}
	room := width - fixed
	cmdW, lastW := widths[1], widths[len(widths)-1]
	if cmdW+lastW > room {
		// the last line first (what a command says now), the command
		// keeps a third of the room or what the line leaves
		cmdW = max(min(10, cmdW), min(cmdW, max(room/3, room-lastW)))
		lastW = max(min(10, lastW), room-cmdW)
		// still too wide: the holder gives way too (down to 8)
		if over := cmdW + lastW - room; over > 0 {
			widths[3] = max(min(widths[3], 8), widths[3]-over)
		}
	}
	widths[1] = cmdW
	var b strings.Builder
	for _, c := range cells {
		var line strings.Builder
		for i, v := range c {
			if i == len(c)-1 {
				line.WriteString(cut(v, lastW))
				break
			}
			v = cut(v, widths[i])
			line.WriteString(v)
			line.WriteString(strings.Repeat(" ", widths[i]-len([]rune(v))+gap))
		}
		// Still too wide (another machine's ids are long: ssh://host/
		// PID:term-N): what is rightmost gives way, never the id.
		b.WriteString(cut(strings.TrimRight(line.String(), " "), width))
		b.WriteString("\n")
	}
	_, err := io.WriteString(out, b.String())
	return err
}

// termWidth is the width of the terminal on stdout, else $COLUMNS, else
// 120.
func termWidth() int {
	if ws, err := unix.IoctlGetWinsize(int(os.Stdout.Fd()), unix.TIOCGWINSZ); err == nil && ws.Col > 0 {
		return int(ws.Col)
	}
	if n, err := strconv.Atoi(os.Getenv("COLUMNS")); err == nil && n > 0 {
		return n
	}
	return 120
}

// cut shortens s to at most n runes, ending in "…" when it was longer.
func cut(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-1]) + "…"
}

// oneLine makes a cell one line of single-width columns for the table:
// a tab or another control character (a command's last line may hold
// them) becomes a space.
func oneLine(s string) string {
	return strings.Map(func(r rune) rune {
		if r < ' ' || r == 0x7f {
			return ' '
		}
		return r
	}, s)
}
