package hostcli

import (
	"context"
	"fmt"
	"io"
	"text/tabwriter"

	"github.com/agentrun/agentrun.nvim/ahpclient"
)

// Ls prints every terminal of every host: id, title, state, holder, age
// and its last line.
func Ls(ctx context.Context, out io.Writer) error {
	all, err := terminals(ctx)
	if err != nil {
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
		if len(last) > 60 {
			last = last[:57] + "..."
		}
		fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s\t%s\n", h.name(), h.info.Title, state(h.info), holder(h.info.Claim), age(h.info.CreatedAt), last)
	}
	return w.Flush()
}
