// Package session is the ACP sessions of one backend, each with its own
// agent process: the editor bridge routes Lua's start, prompt, cancel,
// stop, set_mode, set_config, list_sessions, auth_methods, login and
// check_command calls here, and each agent's session callbacks (updates,
// its own terminals, its end). The files: sessions.go (the part: its
// state, Deps, shutdown, status), session.go (start and end one),
// prompt.go and context.go (its turns and what they carry), updates.go
// (what its agent sends, routed by session key), sessionlist.go (earlier
// sessions), auth.go (signing in), modes.go and modepromise.go (modes and
// options; which modes ask first), policy.go (the user's limits as the
// agent's options: acp.Options, check_command) and mcp.go (our MCP
// terminal tool, served on the socket host).
//
// It sits above internal/event (what it tells Lua) and internal/question
// (what it asks the user), and reaches the terminals part and Neovim
// only through the functions the bridge gives it (Deps): it knows
// neither the bridge nor the terminals part.
package session
