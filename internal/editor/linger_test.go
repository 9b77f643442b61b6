package editor

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/agentrun/agentrun.nvim/internal/event"
)

// TestReplayPicksWhatATakeoverNeeds: a Neovim taking sessions over gets
// every event of the sessions still running, in order, the user's
// prompts included, and what their terminals do (the ports they listen
// on); not the events of sessions that ended, of their
// terminals, of questions answered or withdrawn, or of nothing of theirs.
func TestReplayPicksWhatATakeoverNeeds(t *testing.T) {
	q := event.NewQueue()
	q.KeepAll()
	q.Pause()
	got := make(chan []event.Event, 10)
	go q.Run(func(b []event.Event) { got <- b })
	defer q.Close()
	q.Push(event.SessionStarted{Key: "1@d"})
	q.PushReplayOnly(event.PromptSent{Key: "1@d", Text: "ls"})
	q.Push(event.SessionStarted{Key: "2@d"})
	q.Push(event.TerminalCreated{ID: "term-1@d", Session: "1@d"})
	q.Push(event.TerminalCreated{ID: "term-2@d", Session: "2@d"})
	q.Push(event.TerminalActivity{ID: "term-1@d", Ports: []int{8000}})
	q.Push(event.TerminalActivity{ID: "term-2@d", Ports: []int{8001}})
	q.Push(event.Message{Text: "of nothing"})
	q.Push(event.Permission{Key: "1@d", Token: "p-1@d"})
	q.Push(event.Permission{Key: "1@d", Token: "p-2@d"})
	q.Push(event.PermissionQuestion.Withdrawn("p-1@d", ""))
	q.Push(event.TerminalExit{ID: "term-1@d"})
	q.Push(event.TerminalExit{ID: "term-2@d"})
	q.Push(event.SessionEnded{Key: "2@d"})
	q.Push(event.TurnEnd{Key: "1@d"})
	select {
	case b := <-got:
		t.Fatalf("a paused queue delivered %d events", len(b))
	case <-time.After(50 * time.Millisecond):
	}
	open := func(token string) bool { return token == "p-2@d" }
	q.Replay(func(log []event.Event) []event.Event { return replayOf(log, map[string]bool{"1@d": true}, open) })
	var names []string
	for len(names) < 7 {
		select {
		case b := <-got:
			for _, e := range b {
				names = append(names, strings.TrimSpace(e.Name+" "+event.Field(e.Payload, "token")))
			}
		case <-time.After(5 * time.Second):
			t.Fatalf("replayed only %q", names)
		}
	}
	want := []string{"session_started", "prompt_sent", "terminal_created", "terminal_activity", "permission p-2@d", "terminal_exit", "turn_end"}
	if fmt.Sprint(names) != fmt.Sprint(want) {
		t.Errorf("replayed %q\nwant     %q", names, want)
	}
	// What happens next follows the replay, and a prompt is not sent live.
	q.PushReplayOnly(event.PromptSent{Key: "1@d", Text: "pwd"})
	q.Push(event.TurnEnd{Key: "1@d"})
	select {
	case b := <-got:
		if len(b) != 1 || b[0].Name != event.NameTurnEnd {
			t.Errorf("after the replay: %+v, want the turn_end alone", b)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("nothing delivered after the replay")
	}
}
