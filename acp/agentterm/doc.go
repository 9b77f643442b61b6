// Package agentterm decodes the commands coding agents run themselves and
// only show to the client (agent-owned terminals), and holds what agentrun
// knows of each known agent: one profile per agent. It knows nothing of
// Neovim, and nothing of the ACP connection: package acp holds a Decoder
// per agent process, hands it every session update as it is read (and
// each permission request), and passes the Events it returns to its
// Editor, which renders them like its own terminals; internal/session
// reads an agent's Profile when it sets a session up, and internal/mcptool
// ToolCallOfMCPCall. It imports the ACP SDK and termhost (signal names),
// never acp.
//
// # The common shapes
//
// Agents that run commands themselves show them to the client instead of
// asking it to run them. Their shapes are decoded (decode.go) into Events.
// The common ones:
//
//   - ACP v1 with clientCapabilities._meta.terminal_output: tool_call /
//     tool_call_update carrying _meta.terminal_info {terminal_id, cwd}
//     (start), _meta.terminal_output {terminal_id, data} (text to append)
//     and _meta.terminal_exit {terminal_id, exit_code, signal} (end);
//     without terminal_exit, the final status ends it (completed: 0).
//   - A command known only from its tool call: kind "execute" or a command
//     in rawInput, no terminal. The split is titled with the command (not
//     the model's description); text content is its output, appended
//     while each update extends what was shown, else shown anew with a
//     marker; the exit code is read from rawOutput ({exitCode},
//     {exit_code}, {exit}, at its top or in its metadata) or the text's
//     "exit code N"; when the agent sends none, the split says so rather
//     than "exit 0".
//   - The ACP v2 draft: session updates terminal_update (an upsert; its
//     output is a base64 snapshot that replaces what is shown; exitStatus
//     ends it) and terminal_output_chunk (base64 bytes to append).
//
// What each agent does beside them (output held to the end, a command
// named only in its text or its permission request, output in rawOutput,
// a note after the output, a cancel said in words) is in its profile,
// with its recordings.
//
// The text of v1 shapes has "\n" line ends; events carry terminal bytes,
// so they become "\r\n". v2 output is terminal bytes already.
//
// # Agents: one profile each
//
// What agentrun knows of a known agent's ways is in its profile, a file of
// its own (profile.go says what a profile holds), the way gopls keeps one
// analyzer per package: profile_claude.go, profile_codex.go,
// profile_copilot.go, profile_gemini.go, profile_opencode.go,
// profile_qwen.go. A profile says two kinds of thing:
//
//   - Who it is and what it needs at session set-up, read by
//     internal/session through Profile: the agentInfo.name values it goes
//     by (initialize's), whether its commands run in agentrun's terminals
//     by default, what session/new's _meta must carry, whether it takes
//     our MCP tool over HTTP only, a hint when it does not take the tool,
//     which of its modes ask first.
//   - How it reports the commands it runs itself: hooks the decoder
//     (decode.go) calls at fixed points of a tool call's updates. Every
//     profile's hooks run on every agent's updates, whatever its name:
//     a hook recognises its agent's shape (a _meta key, a rawOutput type,
//     a line of text) and leaves other shapes alone, so a wrapper or a
//     fork that sends the same shape is decoded the same; only the
//     session set-up goes by name. The profiles are tried in the order of
//     their keys; no two recognise the same update (TestProfileFixtures
//     replays every fixture).
//
// Its golden replays are tests/testdata/agentterm/<key>*.jsonl (what the
// agent was recorded sending; the demo agent's `!replay`), each with what
// the decoder makes of it in acp/agentterm/testdata/profiles/<fixture>.golden.
//
// # Adding an agent
//
// To add an agent (its key: a short lower-case name, kimi say), touch
// three files:
//
//  1. acp/agentterm/profile_<key>.go: an init that registers its profile:
//     key, name, agentNames, and only the fields and hooks for the quirks
//     it has (a doc comment above says what it sends, and from which
//     version). An agent that sends only the common shapes needs names
//     alone.
//  2. tests/testdata/agentterm/<key>.jsonl (more cases: <key>-cancel.jsonl):
//     its updates as recorded from the real agent (AGENTRUN_TEST_RECORD,
//     tests/fakechat_test.go's agentCmd; the line format is the demo
//     agent's, internal/demoagent/replay.go). The name starts with the
//     profile's key.
//  3. acp/agentterm/testdata/profiles/<key>.golden: what the decoder makes
//     of it, written by `go test ./acp/agentterm -run TestProfileFixtures
//     -update`; read it before you commit it. TestProfileFixtures fails
//     for a fixture with no profile, a profile with no fixture, a golden
//     that changed, and a hook of one agent's profile that recognises
//     another's update.
//
// A quirk no hook fits yet is a new hook: a field in profile.go and its
// call in decode.go (two more files, once). A screen test of the split
// is a row in tests/agentterm_test.go, and the real agent's journey a
// tests/<key>_test.go with its npm peer in tests/<key>/ (tests/README.md).
package agentterm
