module github.com/agentrun/agentrun.nvim

go 1.24

require (
	github.com/coder/acp-go-sdk v0.13.5
	github.com/creack/pty v1.1.24
	github.com/neovim/go-client v1.2.1
)

require (
	github.com/sourcegraph/jsonrpc2 v0.2.1 // indirect
	golang.org/x/sync v0.16.0 // indirect
	golang.org/x/sys v0.34.0 // indirect
	golang.org/x/term v0.33.0 // indirect
)
