package agentterm

// Codex through codex-acp: it runs commands itself and shows them in
// terminal _meta (terminal_info, terminal_output with the client's
// _meta.terminal_output opt-in, else terminal_output_delta); it may send
// what a command printed before the command's tool call (held until it
// comes), sometimes no terminal_exit (the final status ends it), and it
// goes on reporting a command after its turn was cancelled, since the
// command goes on too. Its mode "read-only" asks before it acts. An agent
// whose name holds "codex" is taken for one of its forks. Fixtures:
// codex-*.jsonl.
func init() {
	register(&profile{
		key:  "codex",
		name: "Codex",
		agentNames: []string{
			"@agentclientprotocol/codex-acp",
			"@zed-industries/codex-acp",
			"codex-acp",
		},
		nameContains:   "codex",
		asksFirst:      func(mode string) bool { return mode == "read-only" },
		keepsReporting: true,
		outputKeys:     []string{"terminal_output_delta"},
	})
}
