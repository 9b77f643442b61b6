// Package mcptool is `agentrun mcp`: an MCP server (stdio, the official Go
// SDK) that an agent starts from the mcpServers entry agentrun puts in
// session/new. Its tools run the agent's commands in agentrun's terminals:
// real ptys the user watches live in Neovim and can stop with one key,
// under the user's approval, sandbox and limits. It holds no terminals
// itself: each tool is one or two terminal/* requests to the backend that
// started the session, over the backend's socket ("agentrun/terminal"),
// authenticated by the session's token. For agents that refuse stdio MCP
// servers (Copilot CLI), the backend serves the same tools itself over
// MCP's streamable HTTP on 127.0.0.1, behind a per-session bearer secret
// (http.go: ServeHTTP). Both report the agent's first tools/list and
// tools/call to the backend (SeenMethod), which status() reports.
package mcptool
