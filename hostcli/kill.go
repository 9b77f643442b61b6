package hostcli

import (
	"context"
	"fmt"
	"io"
)

// Kill ends a terminal: its process group is killed and it leaves its
// host's listing.
func Kill(ctx context.Context, out io.Writer, arg string) error {
	h, err := find(ctx, arg)
	if err != nil {
		return err
	}
	c, _, err := dial(ctx, h.socket)
	if err != nil {
		return err
	}
	defer c.Close()
	if err := c.DisposeTerminal(ctx, h.info.Resource); err != nil {
		return fmt.Errorf("kill %s: %w", h.name(), err)
	}
	fmt.Fprintf(out, "killed %s (%s)\n", h.name(), h.info.Title)
	return nil
}
