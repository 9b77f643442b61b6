package agentterm

import (
	"regexp"
	"strings"
)

// opencode (1.18): its tool call starts without its command (rawInput
// has only cwd; an in_progress update names it), sends all output so far
// in each update, and ends "completed" with the output in
// rawOutput.metadata.output, its note to the model after it in the text
// ("<shell_metadata>User aborted the command…"), the exit code in
// metadata.exit, null when a cancel or timeout cut the command short.
// Fixtures: opencode*.jsonl.
func init() {
	register(&profile{
		key:         "opencode",
		name:        "opencode",
		agentNames:  []string{"OpenCode"},
		finalOutput: opencodeOutput,
		end:         opencodeEnd,
	})
}

// opencodeOutput is the output of opencode's final update: its text is
// the output and its notes to the model; metadata.output is the output.
func opencodeOutput(u *toolUpdate) (output string, cancelled, ok bool) {
	output, ok = asMap(asMap(u.rawOutput)["metadata"])["output"].(string)
	return output, false, ok
}

// opencodeNoteRe finds opencode's note to the model after a command's
// output: "<shell_metadata>\nUser aborted the command\n</shell_metadata>".
var opencodeNoteRe = regexp.MustCompile(`(?s)<shell_metadata>\s*(.*?)\s*</shell_metadata>`)

// opencodeEnd reads a command opencode cut short (metadata.exit null: a
// cancel, a timeout), with the note of why from its text.
func opencodeEnd(u *toolUpdate) (ending, bool) {
	exit, has := asMap(asMap(u.rawOutput)["metadata"])["exit"]
	if !has || exit != nil {
		return ending{}, false
	}
	note := ""
	if m := opencodeNoteRe.FindStringSubmatch(u.text); m != nil {
		note = m[1]
	}
	if strings.Contains(strings.ToLower(note), "aborted") {
		return ending{notRun: "cancelled"}, true
	}
	return ending{failed: true}, true
}
