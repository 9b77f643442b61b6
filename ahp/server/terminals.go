package server

import (
	"context"
	"os"
	"path/filepath"

	"github.com/agentrun/agentrun.nvim/ahp"
	"github.com/agentrun/agentrun.nvim/termhost"
	"github.com/agentrun/agentrun.nvim/termhost/shellinteg"
	"github.com/sourcegraph/jsonrpc2"
)

// createTerminal starts the user's shell in a new terminal at the URI the
// client chose (AHP's createTerminal has no command: it is a shell).
func (c *conn) createTerminal(ctx context.Context, p ahp.CreateTerminalParams) (any, error) {
	id, err := ahp.TerminalID(p.Terminal)
	if err != nil {
		return nil, rpcError(jsonrpc2.CodeInvalidParams, "createTerminal: %v", err)
	}
	if err := p.Claim.Validate(); err != nil {
		return nil, rpcError(jsonrpc2.CodeInvalidParams, "createTerminal: claim: %v", err)
	}
	dir := ""
	if p.Cwd != "" {
		if dir, err = ahp.FilePath(p.Cwd); err != nil {
			return nil, rpcError(jsonrpc2.CodeInvalidParams, "createTerminal: %v", err)
		}
	} else if home, err := os.UserHomeDir(); err == nil {
		dir = home
	}
	shell := c.s.opts.Shell
	spec := termhost.Spec{
		ID: id, Command: shell, Dir: dir, Title: p.Name, Claim: p.Claim,
		Cols: uint16(max(0, min(p.Cols, 0xffff))), Rows: uint16(max(0, min(p.Rows, 0xffff))),
		ShellIntegration: shellinteg.Supported(filepath.Base(shell)),
	}
	if _, err := c.s.host.Create(ctx, spec); err != nil {
		return nil, rpcError(jsonrpc2.CodeInvalidParams, "createTerminal %s: %v", p.Terminal, err)
	}
	return nil, nil
}

// disposeTerminal kills a terminal's process (if it runs) and forgets it.
func (c *conn) disposeTerminal(p ahp.DisposeTerminalParams) (any, error) {
	id, err := ahp.TerminalID(p.Terminal)
	if err != nil {
		return nil, rpcError(jsonrpc2.CodeInvalidParams, "disposeTerminal: %v", err)
	}
	t, err := c.s.host.Get(id)
	if err != nil {
		return nil, rpcError(ahp.CodeNotFound, "disposeTerminal: no terminal %q here", id)
	}
	t.Release()
	return nil, nil
}
