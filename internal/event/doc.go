// Package event is what the backend tells Lua, and the one ordered queue
// it goes through: every event's name (names.go, the same strings as the
// names table of lua/agentrun/events.lua), its payload (types.go: the
// type X is the payload of the event NameX, and says its name with
// EventName) and the Queue, an unbounded FIFO drained by one goroutine
// (the editor bridge's, which calls require("agentrun.events").dispatch),
// so that no part that pushes ever waits on Neovim.
//
// It is the lowest of the backend's parts: the sessions, the terminals,
// the displays and the remote terminals push into a Queue they are
// given, and none of them is known here. Lua declares the same payloads
// (---@class agentrun.event.<name> in lua/agentrun/types.lua);
// TestEventPayloadsAgree keeps the two in step.
package event
