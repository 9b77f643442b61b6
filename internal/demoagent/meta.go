package demoagent

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"syscall"
	"unicode/utf8"

	"github.com/agentrun/agentrun.nvim/internal/lineshell"
	acpsdk "github.com/coder/acp-go-sdk"
)

// runDisplayOnly runs line itself, the way codex-acp does, and streams it
// to the client as a display-only terminal: tool_call with
// _meta.terminal_info, output in tool_call_update._meta.terminal_output,
// the end in _meta.terminal_exit together with the final status.
func (d *demo) runDisplayOnly(ctx context.Context, s *session, line string) (acpsdk.StopReason, error) {
	if line == "" {
		return d.say(s, "Usage: `!meta CMD`")
	}
	if v, _ := d.capabilities().Meta["terminal_output"].(bool); !v {
		return d.say(s, "The client did not advertise clientCapabilities._meta.terminal_output, so I cannot stream a command to it.")
	}
	toolID := d.id("call")
	if err := d.update(s, acpsdk.SessionUpdate{ToolCall: &acpsdk.SessionUpdateToolCall{
		ToolCallId: acpsdk.ToolCallId(toolID),
		Title:      line,
		Kind:       acpsdk.ToolKindExecute,
		Status:     acpsdk.ToolCallStatusInProgress,
		Content:    []acpsdk.ToolCallContent{acpsdk.ToolTerminalRef(toolID)},
		Meta:       map[string]any{"terminal_info": map[string]any{"terminal_id": toolID, "cwd": s.cwd}},
	}}); err != nil {
		return "", err
	}

	r, w, err := os.Pipe()
	if err != nil {
		return "", err
	}
	argv := lineshell.Argv(line)
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Dir = s.cwd
	cmd.Stdout, cmd.Stderr = w, w
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		r.Close()
		w.Close()
		return d.say(s, fmt.Sprintf("Could not run %s: %v", codeSpan(line), err))
	}
	w.Close()
	stop := make(chan struct{})
	cancelled := make(chan struct{})
	go func() {
		select {
		case <-ctx.Done():
			close(cancelled)
			_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGTERM)
		case <-stop:
		}
	}()
	var sendErr error
	buf := make([]byte, 4096)
	var pending []byte
	for {
		n, rerr := r.Read(buf)
		if n > 0 {
			pending = append(pending, buf[:n]...)
			// Send whole UTF-8 characters only; JSON would mangle a split one.
			cut := completeUTF8(pending)
			if cut > 0 && sendErr == nil {
				sendErr = d.update(s, acpsdk.UpdateToolCall(acpsdk.ToolCallId(toolID), func(u *acpsdk.SessionToolCallUpdate) {
					u.Meta = map[string]any{"terminal_output": map[string]any{"terminal_id": toolID, "data": string(pending[:cut])}}
				}))
				pending = append(pending[:0], pending[cut:]...)
			}
		}
		if rerr != nil {
			break
		}
	}
	r.Close()
	waitErr := cmd.Wait()
	close(stop)
	if sendErr != nil {
		return "", sendErr
	}

	exit := map[string]any{"terminal_id": toolID, "exit_code": nil, "signal": nil}
	var code *int
	var signal *string
	var ee *exec.ExitError
	switch {
	case waitErr == nil:
		code = acpsdk.Ptr(0)
	case errors.As(waitErr, &ee):
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			signal = acpsdk.Ptr(signalName(ws.Signal()))
		} else {
			code = acpsdk.Ptr(ee.ExitCode())
		}
	}
	if code != nil {
		exit["exit_code"] = *code
	}
	if signal != nil {
		exit["signal"] = *signal
	}
	status := acpsdk.ToolCallStatusCompleted
	if code == nil || *code != 0 {
		status = acpsdk.ToolCallStatusFailed
	}
	if err := d.update(s, acpsdk.UpdateToolCall(acpsdk.ToolCallId(toolID), acpsdk.WithUpdateStatus(status), func(u *acpsdk.SessionToolCallUpdate) {
		u.Meta = map[string]any{"terminal_exit": exit}
	})); err != nil {
		return "", err
	}
	if err := d.update(s, acpsdk.UpdateAgentMessageText(fmt.Sprintf("%s %s.", codeSpan(shortCommand(line)), exitSummary(code, signal)))); err != nil {
		return "", err
	}
	select {
	case <-cancelled:
		return acpsdk.StopReasonCancelled, nil
	default:
		return acpsdk.StopReasonEndTurn, nil
	}
}

// completeUTF8 returns how many leading bytes of b end on a character
// boundary (invalid bytes count as characters).
func completeUTF8(b []byte) int {
	for back := 1; back <= utf8.UTFMax-1 && back <= len(b); back++ {
		i := len(b) - back
		if b[i] < utf8.RuneSelf {
			return len(b)
		}
		if utf8.RuneStart(b[i]) {
			if utf8.FullRune(b[i:]) {
				return len(b)
			}
			return i
		}
	}
	return len(b)
}

// signalName gives the conventional name of a signal.
func signalName(sig syscall.Signal) string {
	switch sig {
	case syscall.SIGTERM:
		return "SIGTERM"
	case syscall.SIGKILL:
		return "SIGKILL"
	case syscall.SIGINT:
		return "SIGINT"
	case syscall.SIGHUP:
		return "SIGHUP"
	case syscall.SIGQUIT:
		return "SIGQUIT"
	case syscall.SIGPIPE:
		return "SIGPIPE"
	}
	return fmt.Sprintf("SIG%d", int(sig))
}
