module github.com/agentrun/agentrun.nvim

go 1.26.8

require github.com/coder/acp-go-sdk v0.13.5
