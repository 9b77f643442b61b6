package demoagent

import (
	"fmt"
	"strings"

	acpsdk "github.com/coder/acp-go-sdk"
)

// readFile reads path through fs/read_text_file and shows it.
func (d *demo) readFile(s *session, path string) (acpsdk.StopReason, error) {
	if path == "" {
		return d.say(s, "Usage: `!read PATH`")
	}
	if !d.capabilities().Fs.ReadTextFile {
		return d.say(s, "The client cannot read files (clientCapabilities.fs.readTextFile is not true).")
	}
	resp, err := d.conn.ReadTextFile(d.ctx, acpsdk.ReadTextFileRequest{SessionId: acpsdk.SessionId(s.id), Path: path})
	if err != nil {
		return d.say(s, fmt.Sprintf("Could not read %s: %s", codeSpan(path), errText(err)))
	}
	if err := d.update(s, acpsdk.UpdateAgentMessageText(fmt.Sprintf("Contents of %s:\n", codeSpan(path)))); err != nil {
		return "", err
	}
	return d.say(s, resp.Content)
}

// writeFile writes TEXT (with \n escapes turned into newlines) to PATH
// through fs/write_text_file.
func (d *demo) writeFile(s *session, arg string) (acpsdk.StopReason, error) {
	path, text, ok := strings.Cut(arg, " ")
	if path == "" || !ok {
		return d.say(s, "Usage: `!write PATH TEXT`")
	}
	if !d.capabilities().Fs.WriteTextFile {
		return d.say(s, "The client cannot write files (clientCapabilities.fs.writeTextFile is not true).")
	}
	text = strings.ReplaceAll(text, `\n`, "\n")
	_, err := d.conn.WriteTextFile(d.ctx, acpsdk.WriteTextFileRequest{SessionId: acpsdk.SessionId(s.id), Path: path, Content: text})
	if err != nil {
		return d.say(s, fmt.Sprintf("Could not write %s: %s", codeSpan(path), errText(err)))
	}
	return d.say(s, fmt.Sprintf("Wrote %d bytes to %s.", len(text), codeSpan(path)))
}
