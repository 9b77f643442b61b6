package hostcli

import (
	"context"
	"fmt"
	"io"
)

// Kill ends a terminal: its process group is killed and it leaves its
// host's listing. A command run again is killed in its newest run.
func Kill(ctx context.Context, out io.Writer, arg string) error {
	s, h, err := openTerminal(ctx, arg)
	if err != nil {
		return err
	}
	defer s.close()
	c, _, err := s.dial(ctx, h.host)
	if err != nil {
		return err
	}
	defer c.Close()
	if err := c.DisposeTerminal(ctx, h.info.Resource); err != nil {
		return fmt.Errorf("kill %s: %w", h.label(), err)
	}
	if st := state(h.info); st != "running" {
		// nothing was running to kill: it is only gone from the list now
		fmt.Fprintf(out, "removed %s (%s), which had ended (%s)\n", h.label(), h.info.Title, st)
		return nil
	}
	fmt.Fprintf(out, "killed %s (%s)\n", h.label(), h.info.Title)
	return nil
}
