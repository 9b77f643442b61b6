module github.com/agentrun/agentrun.nvim

go 1.24

require (
	github.com/coder/acp-go-sdk v0.13.5
	github.com/creack/pty v1.1.24
	github.com/neovim/go-client v1.2.1
)
