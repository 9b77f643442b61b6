package demoagent

import (
	"context"
	"errors"
	"fmt"
	"strings"

	acpsdk "github.com/coder/acp-go-sdk"
)

// run executes line in a client terminal: create (whole line, no args, the
// session cwd), embed it in a tool call, wait for exit, read the output,
// report, release. A cancelled turn kills the command first. toolID names
// an existing tool call (after a permission request) or is empty.
func (d *demo) run(ctx context.Context, s *session, line, toolID string) (acpsdk.StopReason, error) {
	return d.runEnv(ctx, s, line, toolID, nil)
}

// runEnv is run with env given to terminal/create.
func (d *demo) runEnv(ctx context.Context, s *session, line, toolID string, env []acpsdk.EnvVariable) (acpsdk.StopReason, error) {
	if !d.capabilities().Terminal {
		return d.say(s, fmt.Sprintf("The client lacks terminals (clientCapabilities.terminal is not true), so I cannot run %s.", codeSpan(line)))
	}
	sid := acpsdk.SessionId(s.id)
	cwd := s.cwd
	term, err := d.conn.CreateTerminal(d.ctx, acpsdk.CreateTerminalRequest{
		SessionId:       sid,
		Command:         line,
		Cwd:             &cwd,
		Env:             env,
		OutputByteLimit: acpsdk.Ptr(DefaultOutputByteLimit),
	})
	if err != nil {
		if toolID != "" {
			_ = d.update(s, acpsdk.UpdateToolCall(acpsdk.ToolCallId(toolID), acpsdk.WithUpdateStatus(acpsdk.ToolCallStatusFailed)))
		}
		return d.say(s, fmt.Sprintf("Could not run %s: %s", codeSpan(line), errText(err)))
	}
	// said once it runs: terminal/create may have waited on a question
	// whether to run it, and the answer may have been no
	if err := d.update(s, acpsdk.UpdateAgentMessageText(fmt.Sprintf("Running %s\n", codeSpan(shortCommand(line))))); err != nil {
		return "", err
	}
	tid := term.TerminalId
	content := []acpsdk.ToolCallContent{acpsdk.ToolTerminalRef(tid)}
	if toolID == "" {
		toolID = d.id("call")
		err = d.update(s, acpsdk.StartToolCall(acpsdk.ToolCallId(toolID), line,
			acpsdk.WithStartKind(acpsdk.ToolKindExecute),
			acpsdk.WithStartStatus(acpsdk.ToolCallStatusInProgress),
			acpsdk.WithStartContent(content),
			acpsdk.WithStartRawInput(map[string]any{"command": line})))
	} else {
		err = d.update(s, acpsdk.UpdateToolCall(acpsdk.ToolCallId(toolID),
			acpsdk.WithUpdateStatus(acpsdk.ToolCallStatusInProgress),
			acpsdk.WithUpdateContent(content)))
	}
	if err != nil {
		return "", err
	}

	type waited struct {
		resp acpsdk.WaitForTerminalExitResponse
		err  error
	}
	waitCh := make(chan waited, 1)
	go func() {
		resp, err := d.conn.WaitForTerminalExit(d.ctx, acpsdk.WaitForTerminalExitRequest{SessionId: sid, TerminalId: tid})
		waitCh <- waited{resp, err}
	}()
	cancelled := false
	var w waited
	select {
	case w = <-waitCh:
		// the cancel came first on the wire, but its handler may have
		// run after the answer was read
		cancelled = ctx.Err() != nil
	case <-ctx.Done():
		cancelled = true
		if _, err := d.conn.KillTerminal(d.ctx, acpsdk.KillTerminalRequest{SessionId: sid, TerminalId: tid}); err != nil {
			d.log.Warn("kill terminal", "terminal", tid, "err", err)
		}
		w = <-waitCh
	}
	out, outErr := d.conn.TerminalOutput(d.ctx, acpsdk.TerminalOutputRequest{SessionId: sid, TerminalId: tid})
	if _, err := d.conn.ReleaseTerminal(d.ctx, acpsdk.ReleaseTerminalRequest{SessionId: sid, TerminalId: tid}); err != nil {
		d.log.Warn("release terminal", "terminal", tid, "err", err)
	}
	if w.err != nil && strings.Contains(errText(w.err), "taken over") {
		// The user took the command over, or stopped it to run it again
		// (R): it is theirs now, and the turn goes on without it, as a
		// real agent's would.
		again := strings.Contains(errText(w.err), "to run it again")
		note := "taken over by the user"
		if again {
			note = "stopped: the user runs it anew"
		}
		_ = d.update(s, acpsdk.UpdateToolCall(acpsdk.ToolCallId(toolID),
			acpsdk.WithUpdateStatus(acpsdk.ToolCallStatusCompleted),
			acpsdk.WithUpdateContent(append(content, acpsdk.ToolContent(acpsdk.TextBlock(note))))))
		if again {
			return d.say(s, fmt.Sprintf("You ran `%s` again yourself: the new run is yours, and I moved on.", line))
		}
		// where it was taken, when not in this Neovim: "in another
		// Neovim (host 4242)"
		_, after, _ := strings.Cut(errText(w.err), "taken over by the user")
		where, _, _ := strings.Cut(after, ":")
		if where != "" {
			return d.say(s, fmt.Sprintf("You took `%s` over%s: it is yours now, and I moved on.", line, where))
		}
		return d.say(s, fmt.Sprintf("You took `%s` over: it is yours now, and I moved on.", line))
	}
	if w.err != nil {
		return "", fmt.Errorf("terminal/wait_for_exit: %w", w.err)
	}

	summary := exitSummary(w.resp.ExitCode, w.resp.Signal)
	status := acpsdk.ToolCallStatusCompleted
	if w.resp.ExitCode == nil || *w.resp.ExitCode != 0 {
		status = acpsdk.ToolCallStatusFailed
	}
	detail := summary
	if outErr == nil && out.Truncated {
		detail += " (output truncated)"
	}
	err = d.update(s, acpsdk.UpdateToolCall(acpsdk.ToolCallId(toolID),
		acpsdk.WithUpdateStatus(status),
		acpsdk.WithUpdateContent(append(content, acpsdk.ToolContent(acpsdk.TextBlock(detail)))),
		acpsdk.WithUpdateRawOutput(rawOutput(w.resp, out, outErr))))
	if err != nil {
		return "", err
	}
	msg := fmt.Sprintf("%s %s.", codeSpan(shortCommand(line)), summary)
	if w.resp.Signal != nil && outErr == nil {
		// What a killed command printed last often says why (a limit).
		if last := lastLine(out.Output); last != "" {
			msg += " Its output ends: " + last
		}
	}
	if err := d.update(s, acpsdk.UpdateAgentMessageText(msg)); err != nil {
		return "", err
	}
	if cancelled {
		return acpsdk.StopReasonCancelled, nil
	}
	return acpsdk.StopReasonEndTurn, nil
}

// rawOutput is what the tool call reports of the command, as agents do:
// how it ended and the text it read back (terminal/output).
func rawOutput(w acpsdk.WaitForTerminalExitResponse, out acpsdk.TerminalOutputResponse, outErr error) map[string]any {
	m := map[string]any{"exitCode": w.ExitCode, "signal": w.Signal}
	if outErr == nil {
		m["output"] = out.Output
		m["truncated"] = out.Truncated
	}
	return m
}

// lastLine is the last non-empty line of text.
func lastLine(text string) string {
	lines := strings.Split(strings.TrimRight(text, "\n"), "\n")
	return strings.TrimSpace(lines[len(lines)-1])
}

// exitSummary says how a command ended: "exited with code 0", "was killed
// by SIGTERM".
func exitSummary(code *int, signal *string) string {
	switch {
	case code != nil:
		return fmt.Sprintf("exited with code %d", *code)
	case signal != nil:
		return fmt.Sprintf("was killed by %s", *signal)
	}
	return "ended without an exit status"
}

// errText prefers a JSON-RPC error's message over its JSON form.
func errText(err error) string {
	var re *acpsdk.RequestError
	if errors.As(err, &re) {
		return re.Message
	}
	return err.Error()
}
