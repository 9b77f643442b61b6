package hostcli

import (
	"context"
	"fmt"
	"io"
)

// Kill ends a terminal: its process group is killed and it leaves its
// host's listing.
func Kill(ctx context.Context, out io.Writer, arg string) error {
	s, rest, err := openSite(ctx, arg)
	if err != nil {
		return err
	}
	defer s.close()
	h, err := find(ctx, s, rest)
	if err != nil {
		return err
	}
	c, _, err := s.dial(ctx, h.host)
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
