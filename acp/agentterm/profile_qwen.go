package agentterm

import (
	"regexp"
	"syscall"

	"github.com/agentrun/agentrun.nvim/termhost"
	acpsdk "github.com/coder/acp-go-sdk"
)

// Qwen Code (0.24): its tool call ("Shell", rawInput {}) names its
// command only in a permission request and in the final text ("Command:
// …\nDirectory: …"); it sends no output until the end, then rawOutput
// {type "shell_result", output, directory, exitCode, signal, outcome}: a
// cancel kills the command (outcome "cancelled", exitCode 0 beside
// signal 15). Fixtures: qwen*.jsonl.
func init() {
	register(&profile{
		key:             "qwen",
		name:            "Qwen Code",
		agentNames:      []string{"qwen-code"},
		command:         qwenCommand,
		cwd:             func(u *toolUpdate) string { return metaString(asMap(u.rawOutput), "directory") },
		finalOutput:     qwenOutput,
		end:             qwenEnd,
		permissionAsked: qwenAsked,
	})
}

// qwenCommandRe finds the command in Qwen Code's text of a command that
// ended: "Command: <line>\nDirectory: …".
var qwenCommandRe = regexp.MustCompile(`^Command: (.*)\nDirectory: `)

// qwenCommand reads the command from Qwen Code's final text.
func qwenCommand(u *toolUpdate) (string, bool) {
	if m := qwenCommandRe.FindStringSubmatch(u.text); m != nil {
		return m[1], true
	}
	return "", false
}

// qwenResult is u's rawOutput when it is Qwen Code's shell_result.
func qwenResult(u *toolUpdate) map[string]any {
	if raw := asMap(u.rawOutput); metaString(raw, "type") == "shell_result" {
		return raw
	}
	return nil
}

// qwenOutput is the output of Qwen Code's final update: its text is the
// command, directory, output, exit code, signal and process group;
// rawOutput.output is the output.
func qwenOutput(u *toolUpdate) (output string, cancelled, ok bool) {
	output, ok = qwenResult(u)["output"].(string)
	return output, false, ok
}

// qwenEnd reads a command a cancel killed (and whose output Qwen Code
// discarded) or a signal ended.
func qwenEnd(u *toolUpdate) (ending, bool) {
	raw := qwenResult(u)
	if raw == nil || metaString(raw, "outcome") != "cancelled" && raw["signal"] == nil {
		return ending{}, false
	}
	if metaString(raw, "outcome") == "cancelled" {
		return ending{notRun: "cancelled"}, true
	}
	if n, ok := metaNumber(raw, "signal"); ok {
		return ending{signal: termhost.SignalName(syscall.Signal(n))}, true
	}
	if name := metaString(raw, "signal"); name != "" {
		return ending{signal: name}, true
	}
	return ending{failed: true}, true
}

// qwenAsked takes the command a permission request names for a tool call
// that runs one and showed none yet (Qwen Code names it only there): the
// split of that tool call is titled with it. at.mu is held.
func qwenAsked(at *Decoder, sid string, tc acpsdk.ToolCallUpdate) {
	line := commandLine(tc.RawInput)
	if line == "" {
		return
	}
	if c := at.candidates[sid+"\x00"+string(tc.ToolCallId)]; c != nil {
		c.title, c.named = line, true
	}
}
