package hostcli

import (
	"context"
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/agentrun/agentrun.nvim/ahpclient"
)

// Ls prints every terminal of every host: id, title, state, holder, age
// and its last line.
func Ls(ctx context.Context, out io.Writer) error {
	all, live, err := hostTerminals(ctx)
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
		_, err := fmt.Fprintf(out, "%s no terminals yet; they are listed here once a command runs\n", what)
		return err
	}
	w := tabwriter.NewWriter(out, 0, 0, 2, ' ', 0)
	fmt.Fprintln(w, "ID\tTITLE\tSTATE\tHOLDER\tAGE\tLAST LINE")
	for _, h := range all {
		last := ""
		if c, _, err := dial(ctx, h.socket); err == nil {
			if snap, err := c.Subscribe(ctx, h.info.Resource); err == nil {
				if st, err := ahpclient.TerminalState(snap); err == nil {
					last = lastLine(st)
				}
			}
			c.Close()
		}
		// Narrow enough for a 120-column terminal: long titles and
		// lines are cut (agentrun attach shows them whole).
		fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s\t%s\n", h.name(), cut(h.info.Title, 34), state(h.info), holder(h.info.Claim), age(h.info.CreatedAt), cut(last, 28))
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
