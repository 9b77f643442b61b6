package agentterm

import (
	"regexp"
	"strings"
)

// Copilot CLI (1.0): it reports a command only as a tool call (kind
// execute, the command in rawInput, the model's description as title),
// sends all output so far in each update, and ends the text with its note
// to the model, "<shellId: 1 completed with exit code 3>" (not shown: the
// split's end marker says it), the exit code also in rawOutput.contents'
// {type: "shell_exit", exitCode, cwd} with the shell's directory (it
// keeps one shell: a cd stays). It refuses a stdio MCP server from the
// client but takes an HTTP one, and reports a call of our HTTP tool as a
// tool call of kind execute with the command in rawInput, with no tool
// call id in the MCP call (ClaimCommand). Fixtures: copilot*.jsonl.
func init() {
	register(&profile{
		key:         "copilot",
		name:        "Copilot CLI",
		agentNames:  []string{"Copilot"},
		mcpHTTPOnly: true,
		trailer:     copilotTrailer,
		exitCode:    copilotExit,
		cwd:         copilotCwd,
	})
}

// copilotTrailerRe is Copilot CLI's line after a command's output, at the
// end of its text: "<shellId: 1 completed with exit code 3>".
var copilotTrailerRe = regexp.MustCompile(`<shellId: [^<>\n]*>\s*$`)

// copilotTrailer cuts Copilot CLI's note off the end of a command's text.
func copilotTrailer(text string) (output, note string, ok bool) {
	loc := copilotTrailerRe.FindStringIndex(text)
	if loc == nil {
		return "", "", false
	}
	return text[:loc[0]], text[loc[0]:], true
}

// copilotExit reads the exit code of rawOutput.contents' shell_exit.
func copilotExit(raw any) (code int, output string, ok bool) {
	list, isList := asMap(raw)["contents"].([]any)
	if !isList {
		return 0, "", false
	}
	var exits []map[string]any
	for _, c := range list {
		if metaString(asMap(c), "type") == "shell_exit" {
			exits = append(exits, asMap(c))
		}
	}
	code, ok = exitIn(exits...)
	return code, "", ok
}

// copilotCwd reads the directory of rawOutput.contents' shell_exit: the
// shell's at the command's end, which Copilot CLI says only then.
func copilotCwd(u *toolUpdate) string {
	list, _ := asMap(u.rawOutput)["contents"].([]any)
	for _, c := range list {
		if m := asMap(c); metaString(m, "type") == "shell_exit" {
			if dir := metaString(m, "cwd"); dir != "" {
				return dir
			}
		}
	}
	return ""
}

// ClaimCommand gives our MCP tool's command line to the agent's tool call
// that runs it, when the tool call did not say so (Copilot CLI reports a
// call of our HTTP tool as kind "execute" with the command in rawInput,
// as its own shell, and sends no tool call id in the MCP call): the
// session's newest tool call not shown yet whose command is line. It is
// then no agent-owned terminal (our split shows it), and its id is
// returned ("" when none runs line).
func (at *Decoder) ClaimCommand(sessionID, line string) string {
	at.mu.Lock()
	defer at.mu.Unlock()
	prefix := sessionID + "\x00"
	for key, c := range at.candidates {
		if strings.HasPrefix(key, prefix) && c.named && c.title == line {
			delete(at.candidates, key)
			at.withTerm[key] = true
			return strings.TrimPrefix(key, prefix)
		}
	}
	return ""
}
