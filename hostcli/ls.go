package hostcli

import (
	"context"
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/agentrun/agentrun.nvim/ahp/client"
	"github.com/agentrun/agentrun.nvim/sshlink"
)

// Ls prints every terminal of every host: id, title, state, holder, age
// and its last line. where is "" (this machine) or a remote,
// ssh://[user@]host[:port].
func Ls(ctx context.Context, out io.Writer, where string) error {
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
	if err != nil {
		return err
	}
	if len(all) == 0 {
		pids := make([]string, len(live))
		for i, p := range live {
			pids[i] = strconv.Itoa(p)
		}
		what := "an agentrun host runs (pid " + pids[0] + ") but has"
		if len(live) > 1 {
			what = fmt.Sprintf("%d agentrun hosts run (pids %s) but have", len(live), strings.Join(pids, ", "))
		}
		_, err := fmt.Fprintf(out, "%s no terminals now; a terminal is listed here from when its command starts\n", what)
		return err
	}
	w := tabwriter.NewWriter(out, 0, 0, 2, ' ', 0)
	fmt.Fprintln(w, "ID\tTITLE\tSTATE\tHOLDER\tAGE\tLAST LINE")
	for _, h := range all {
		last := ""
		if c, _, err := s.dial(ctx, h.host); err == nil {
			if snap, err := c.Subscribe(ctx, h.info.Resource); err == nil {
				if st, err := client.TerminalState(snap); err == nil {
					last = client.LastLine(st)
				}
			}
			c.Close()
		}
		// Narrow enough for a 120-column terminal: long titles and
		// lines are cut (agentrun attach shows them whole), more so
		// when the ids name a remote (ssh://host/PID:term-N).
		extra := len([]rune(s.prefix()))
		fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s\t%s\n", h.name(), cut(h.info.Title, max(12, 34-(extra+1)/2)), state(h.info), holder(h.info), age(h.info.CreatedAt), cut(last, max(10, 28-extra/2)))
	}
	return w.Flush()
}

// cut shortens s to at most n runes, ending in "…" when it was longer.
func cut(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-1]) + "…"
}
