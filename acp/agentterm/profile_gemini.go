package agentterm

import (
	"fmt"
	"strings"

	acpsdk "github.com/coder/acp-go-sdk"
)

// Gemini CLI (0.61): it sends no tool_call for its shell command. Its
// session/request_permission names it (kind execute, status pending);
// allowed, the split opens then, titled with the command. One
// tool_call_update (kind execute, the command as title, status
// "completed" whatever the exit) ends it, with no content, or at a
// cancel (it kills the command) "Command cancelled by user." and the
// output so far. In a folder it does not trust it starts no MCP server,
// ours included. With no `terminals` option it is offered our tool, and
// agentrun leaves its shell out of the session where Gemini allows it
// (internal/session/geminishell.go). Fixtures: gemini*.jsonl.
func init() {
	register(&profile{
		key:        "gemini",
		name:       "Gemini CLI",
		agentNames: []string{"gemini-cli"},
		// our tool, and its own shell left out where it can be
		// (internal/session/geminishell.go)
		ourTerminals: true,
		toolNotTaken: func(configName string) string {
			return fmt.Sprintf(". Gemini CLI starts no MCP server in a folder it does not trust: trust this one in Gemini (its folder trust prompt, or ~/.gemini/trustedFolders.json), or set GEMINI_CLI_TRUST_WORKSPACE = \"true\" in agents.%s.env; agentrun leaves Gemini's settings alone", configName)
		},
		noOutput: func(configName, shellKept string) string {
			if shellKept != "" {
				return "Gemini CLI sends none for the commands it runs itself, and agentrun kept its shell for this session: " + shellKept
			}
			return fmt.Sprintf("Gemini CLI sends none for the commands it runs itself. In a folder Gemini trusts (or with GEMINI_CLI_TRUST_WORKSPACE = \"true\" in agents.%s.env), agentrun offers it its terminal tool and leaves its own shell out of the session, and you watch them live", configName)
		},
		finalOutput:       geminiCancelled,
		permissionAllowed: geminiPermitted,
	})
}

// geminiCancelled reads the text Gemini CLI ends a command it killed at
// a cancel with ("Command cancelled by user.", then "Output before
// cancellation:" and what it printed, if anything); ok is false for any
// other text.
func geminiCancelled(u *toolUpdate) (before string, cancelled, ok bool) {
	rest, ok := strings.CutPrefix(u.text, "Command cancelled by user.")
	if !ok {
		return "", false, false
	}
	if _, out, found := strings.Cut(rest, "Output before cancellation:\n"); found {
		return out, true, true
	}
	return "", true, true
}

// geminiPermitted opens the split of a command the user allowed whose
// tool call no update ever named (Gemini CLI sends none for its shell:
// only this request, then one update when the command ended). It opens
// as the command starts, titled with the command, rather than when it
// ended; nil for any other request. at.mu is held.
func geminiPermitted(at *Decoder, sid string, tc acpsdk.ToolCallUpdate) []Event {
	call := string(tc.ToolCallId)
	if call == "" || tc.Kind == nil || *tc.Kind != acpsdk.ToolKindExecute {
		return nil
	}
	title := commandLine(tc.RawInput)
	if title == "" && tc.Title != nil {
		title = *tc.Title
	}
	key := sid + "\x00" + call
	if title == "" || at.seen[key] || at.byCall[key] != nil {
		return nil
	}
	st := &agentTermState{id: call, call: call, generic: true}
	at.byID[key], at.byCall[key], at.seen[key] = st, st, true
	return []Event{{ID: call, ToolCallID: call, Started: true, Title: title, KeepsReporting: at.keepsReporting}}
}
