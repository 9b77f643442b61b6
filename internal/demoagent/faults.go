package demoagent

import (
	"fmt"
	"os"
	"strconv"
	"strings"

	acpsdk "github.com/coder/acp-go-sdk"
)

// maxFlood bounds "!flood N".
const maxFlood = 1_000_000

// exit ends the agent process mid-turn with the given code, writing TEXT
// to stderr first: a crash for the client to report. Only meaningful when
// the demo agent runs as its own process (agentrun demo-agent).
func (d *demo) exit(arg string) (acpsdk.StopReason, error) {
	codeText, text, _ := strings.Cut(arg, " ")
	code, err := strconv.Atoi(codeText)
	if err != nil || code < 0 || code > 255 {
		return "", acpsdk.NewInvalidParams(map[string]any{"error": fmt.Sprintf("!exit wants a code 0-255, not %q", codeText)})
	}
	if text = strings.TrimSpace(text); text != "" {
		fmt.Fprintln(os.Stderr, text)
	}
	os.Exit(code)
	return "", nil
}

// flood sends N agent_message_chunk updates as fast as it can.
func (d *demo) flood(s *session, arg string) (acpsdk.StopReason, error) {
	n := 1000
	if arg != "" {
		var err error
		n, err = strconv.Atoi(arg)
		if err != nil || n < 0 || n > maxFlood {
			return d.say(s, fmt.Sprintf("Usage: `!flood N` with N from 0 to %d, not %q", maxFlood, arg))
		}
	}
	for i := 1; i <= n; i++ {
		if err := d.update(s, acpsdk.UpdateAgentMessageText(fmt.Sprintf("flood %d\n", i))); err != nil {
			return "", err
		}
	}
	return d.say(s, fmt.Sprintf("Sent %d messages.", n))
}

// allUpdates sends one session/update of every stable kind, for clients to
// test their display.
func (d *demo) allUpdates(s *session) (acpsdk.StopReason, error) {
	toolID := acpsdk.ToolCallId(d.id("call"))
	title := "Demo session"
	updates := []acpsdk.SessionUpdate{
		acpsdk.UpdateUserMessageText("!updates"),
		acpsdk.UpdateAgentThoughtText("Thinking about which updates to send."),
		acpsdk.UpdatePlan(
			acpsdk.PlanEntry{Content: "Send every update", Priority: acpsdk.PlanEntryPriorityHigh, Status: acpsdk.PlanEntryStatusInProgress},
			acpsdk.PlanEntry{Content: "End the turn", Priority: acpsdk.PlanEntryPriorityLow, Status: acpsdk.PlanEntryStatusPending},
		),
		acpsdk.StartToolCall(toolID, "Read the README",
			acpsdk.WithStartKind(acpsdk.ToolKindRead),
			acpsdk.WithStartStatus(acpsdk.ToolCallStatusPending),
			acpsdk.WithStartLocations([]acpsdk.ToolCallLocation{{Path: s.cwd + "/README.md"}})),
		acpsdk.UpdateToolCall(toolID,
			acpsdk.WithUpdateStatus(acpsdk.ToolCallStatusCompleted),
			acpsdk.WithUpdateContent([]acpsdk.ToolCallContent{acpsdk.ToolContent(acpsdk.TextBlock("README read."))})),
		{AvailableCommandsUpdate: &acpsdk.SessionAvailableCommandsUpdate{AvailableCommands: []acpsdk.AvailableCommand{
			{Name: "help", Description: "List the demo agent's prompt forms"},
		}}},
		{CurrentModeUpdate: &acpsdk.SessionCurrentModeUpdate{CurrentModeId: "default"}},
		{SessionInfoUpdate: &acpsdk.SessionSessionInfoUpdate{Title: &title}},
	}
	for _, u := range updates {
		if err := d.update(s, u); err != nil {
			return "", err
		}
	}
	return d.say(s, "Sent one update of each kind.")
}
