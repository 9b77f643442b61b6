// Package demoagent is agentrun's built-in ACP agent ("agentrun
// demo-agent"): no model, it runs what you type. It exists for the demo and
// as a real ACP peer in tests; it uses the SDK's AgentSideConnection, so it
// speaks the protocol the way SDK-based agents do.
//
// Every prompt's text is a shell command line. The agent checks that the
// client advertised clientCapabilities.terminal (if not, it says so and
// ends the turn), then:
//
//  1. terminal/create with the whole line as command, no args, the session
//     cwd and outputByteLimit 1 MiB (refused: says "Could not run `CMD`:
//     …" and ends the turn);
//  2. sends an agent_message_chunk "Running `CMD`\n" (once it runs: the
//     client may have asked the user whether to run it); here and in 6 a
//     CMD over 24 characters (or of several lines) is cut to its first 20
//     and "…": the tool call shows it whole;
//  3. sends tool_call {kind execute, status in_progress, title CMD, content
//     [{type terminal, terminalId}], rawInput {command}};
//  4. terminal/wait_for_exit, then terminal/output;
//  5. sends tool_call_update {status completed on exit code 0, failed
//     otherwise; content [terminal, text "exited with code N" or "was
//     killed by SIGTERM", plus " (output truncated)"]; rawOutput {exitCode,
//     signal}};
//  6. sends an agent_message_chunk "`CMD` exited with code N." (or "was
//     killed by SIGTERM.");
//  7. terminal/release, and ends the turn with end_turn.
//
// session/cancel during the command sends terminal/kill, waits for the
// exit, reports as above, and ends the turn with stopReason cancelled.
//
// Special prompts (for tests and for trying a client out):
//
//	!help              lists these forms.
//	!parallel N CMD    runs CMD in N client terminals at once, each in its
//	                   own tool call ({i} in CMD is its number, 1 to N), and says "parallel n=N exit0=K
//	                   identical=K sha256=… bytes=B elapsed_ms=E" (elapsed
//	                   from the first create to the last exit: the agent
//	                   path the benchmark compares with a raw pty drain).
//	!outputlat N CMD   runs CMD to its end, calls terminal/output N times
//	                   and says "outputlat n=N retained=B p50_ms=… p99_ms=…".
//	!permission CMD    sends tool_call {status pending} and
//	                   session/request_permission with options "allow"
//	                   (allow_once) and "reject" (reject_once); "allow"
//	                   runs CMD as above in the same tool call, "reject"
//	                   says "Permission denied: not running `CMD`." and ends
//	                   the turn; a "cancelled" outcome says "Permission
//	                   request cancelled." and stops with cancelled.
//	!env N=V[,N=V] CMD runs CMD as above with that env in terminal/create.
//	!read PATH         fs/read_text_file; sends "Contents of `PATH`:\n" and
//	                   then the text as its own agent_message_chunk.
//	!write PATH TEXT   fs/write_text_file with TEXT (the two characters \n
//	                   become a newline); says "Wrote N bytes to `PATH`.".
//	!meta CMD          runs CMD itself (no client terminal) and streams it as
//	                   a display-only terminal, as codex-acp does: tool_call
//	                   with _meta.terminal_info {terminal_id, cwd} and content
//	                   [{type terminal, terminalId}] where terminal_id is the
//	                   tool call id, output in tool_call_update
//	                   _meta.terminal_output {terminal_id, data}, the end in
//	                   _meta.terminal_exit {terminal_id, exit_code, signal}
//	                   with the final status. Needs the client's
//	                   _meta.terminal_output capability.
//	!updates           sends one update of every stable kind
//	                   (user_message_chunk, agent_thought_chunk, plan,
//	                   tool_call, tool_call_update, available_commands_update,
//	                   current_mode_update, session_info_update), then
//	                   "Sent one update of each kind.".
//	!flood N           sends N agent_message_chunks "flood i\n" (default
//	                   1000), then "Sent N messages.".
//	!garbage           writes a line that is not JSON to stdout, then says so.
//	!hang              never answers the prompt and ignores session/cancel
//	                   (until the connection closes).
//	!exit N [TEXT]     writes TEXT to stderr and exits the process with code
//	                   N, mid-turn (a crash; only as its own process).
//
// Errors from the client (a refused terminal, a missing file) are told to
// the user as a message and end the turn normally.
package demoagent
