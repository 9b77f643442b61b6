package demoagent

import (
	"context"
	"errors"
	"io"
)

// Run serves the demo agent over the given stdio streams until the client
// disconnects or ctx ends.
func Run(ctx context.Context, in io.Reader, out io.Writer) error {
	return errors.New("demo agent not implemented yet")
}
