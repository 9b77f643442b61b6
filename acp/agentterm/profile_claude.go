package agentterm

import (
	"regexp"
	"strconv"
)

// Claude Code through claude-agent-acp (≥ 0.18, under either scope): it
// runs Bash itself and shows it in terminal _meta (tool_call's
// _meta.claudeCode beside terminal_info, terminal_output, terminal_exit),
// with gaps: nothing streams (one terminal_output after the command
// ended, which at a cancel is the model's text, not output), its exit_code
// is always 0, a failed command may come as status "failed" with
// rawOutput "Exit code N\n<output>" and no terminal_output or
// terminal_exit, and Claude Code 2.1 says a command did not run
// (nonExecutionKind: "user-rejected", "interrupted", "permission-rule",
// …). Its first title is the placeholder "Terminal". By default its
// commands run in agentrun's terminals: session/new drops its Bash tool
// and lets our tools run without its own question (agentrun asks:
// terminal.approve), one question per command, not one from each side;
// each tools/call of our tool names its tool call in
// _meta["claudecode/toolUseId"].
// claude-code-acp ≤ 0.17 ran Bash through our terminal/create and is not
// this profile. Fixtures: claude-*.jsonl, claude101-cancel.jsonl.
func init() {
	register(&profile{
		key:  "claude",
		name: "Claude Code",
		agentNames: []string{
			"@zed-industries/claude-agent-acp",
			"@agentclientprotocol/claude-agent-acp",
			"claude-agent-acp",
		},
		ourTerminals: true,
		sessionMeta: func(ourTools []string) map[string]any {
			return map[string]any{"claudeCode": map[string]any{"options": map[string]any{
				"disallowedTools": []string{"Bash"},
				"allowedTools":    ourTools,
			}}}
		},
		mcpToolCallKey:   "claudecode/toolUseId",
		asksFirst:        func(mode string) bool { return mode == "default" || mode == "plan" },
		outputAtEnd:      claudeCode,
		notCommand:       claudeCode,
		notRun:           func(u *toolUpdate) string { return metaString(asMap(u.meta["claudeCode"]), "nonExecutionKind") },
		placeholderTitle: "Terminal",
		exitCode:         claudeExit,
	})
}

// claudeCode reports whether u carries Claude Code's _meta.claudeCode.
func claudeCode(u *toolUpdate) bool {
	_, ok := u.meta["claudeCode"].(map[string]any)
	return ok
}

// claudeExitRe matches the head of Claude Code's rawOutput for a failed
// command: "Exit code 3\n<output>".
var claudeExitRe = regexp.MustCompile(`^Exit code (\d+)\n?`)

// claudeExit reads Claude Code's rawOutput "Exit code N\n<output>".
func claudeExit(raw any) (code int, output string, ok bool) {
	s, isString := raw.(string)
	if !isString {
		return 0, "", false
	}
	m := claudeExitRe.FindStringSubmatch(s)
	if m == nil {
		return 0, "", false
	}
	code, err := strconv.Atoi(m[1])
	if err != nil {
		return 0, "", false
	}
	return code, s[len(m[0]):], true
}
