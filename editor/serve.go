package editor

import (
	"context"
	"errors"
)

// Serve runs the Neovim RPC host on stdio until Neovim disconnects.
func Serve(ctx context.Context, version string) error {
	return errors.New("editor bridge not implemented yet")
}
