package hostcli

import (
	"context"
	"fmt"
	"io"
)

// Kill ends a terminal: its process group is killed and it leaves its
// host's listing.
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
		return fmt.Errorf("kill %s: %w", h.name(), err)
	}
	if st := state(h.info); st != "running" {
		// nothing was running to kill: it is only gone from the list now
		fmt.Fprintf(out, "removed %s (%s), which had ended (%s)\n", h.name(), h.info.Title, st)
		return nil
	}
	fmt.Fprintf(out, "killed %s (%s)\n", h.name(), h.info.Title)
	return nil
}
