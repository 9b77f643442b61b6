package acp

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"reflect"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/agentrun/agentrun.nvim/ahp"
	"github.com/agentrun/agentrun.nvim/internal/wait"
	"github.com/agentrun/agentrun.nvim/termhost"
)

// The claim follows the tool call that embeds the terminal: the session's
// tool call while it runs, the session's background once it completed.
func TestClaimFollowsToolCall(t *testing.T) {
	r := newRecorder()
	host := newHost(t)
	subs := make(chan *termhost.Subscription, 1)
	r.fakeEditor.terminalCreated = func(_ context.Context, _, tid string) {
		term, err := host.Get(tid)
		if err != nil {
			t.Error(err)
			return
		}
		_, sub := term.Subscribe() // before the agent has the id
		subs <- sub
	}
	a, _ := start(t, selfAgent(t, "probe"), r, Options{Host: host})
	s := newSession(t, a)
	toolCall := func(kind, status string) probeStep {
		return rawReq("session/update", `{"sessionId":"$SESSION","update":{"sessionUpdate":"`+kind+`","toolCallId":"c1","title":"sleep",
			"status":"`+status+`","content":[{"type":"terminal","terminalId":"$T0"}]}}`)
	}
	probe(t, s, r,
		rawReq("terminal/create", `{"sessionId":"$SESSION","command":"sleep 30"}`),
		toolCall("tool_call", "in_progress"),
		toolCall("tool_call_update", "completed"),
		rawReq("terminal/release", `{"sessionId":"$SESSION","terminalId":"$T0"}`))
	sub := next(t, subs, "the subscription")
	defer sub.Close()
	var claims []ahp.Claim
	ctx, cancel := context.WithTimeout(context.Background(), waitTimeout)
	defer cancel()
	for {
		acts, resync, err := sub.Next(ctx)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil || resync != nil {
			t.Fatalf("Next: %v (resync %v); claims so far %+v", err, resync != nil, claims)
		}
		for _, sa := range acts {
			if c, ok := sa.Action.(ahp.ClaimedAction); ok {
				claims = append(claims, c.Claim)
			}
		}
	}
	want := []ahp.Claim{
		{Kind: "session", Session: s.ID(), ToolCallID: "c1"},
		{Kind: "session", Session: s.ID()},
	}
	if !reflect.DeepEqual(claims, want) {
		t.Fatalf("claims %+v, want %+v", claims, want)
	}
}

// A terminal the user takes over is the user's: the agent's wait ends at
// once with an error saying so, its kill is refused, its release only
// forgets the id; the process runs on until the user kills it.
func TestTakeoverSurvivesRelease(t *testing.T) {
	r := newRecorder()
	host := newHost(t)
	a, _ := start(t, selfAgent(t, "demo"), r, Options{Host: host})
	s := newSession(t, a)
	done := promptAsync(s, "sleep 300")
	created := next(t, r.created, "TerminalCreated")
	term, err := host.Get(created[1])
	if err != nil {
		t.Fatal(err)
	}
	wait.Until(t, "the claim to name the tool call", waitTimeout, func() (bool, string) {
		return term.Claims().Holder().ToolCallID != "", fmt.Sprintf("%+v", term.Claims().Holder())
	})
	if err := term.Claims().Set(ahp.Claim{Kind: "client", ClientID: "nvim"}); err != nil {
		t.Fatal(err)
	}
	// The demo agent says so, and moves on, only when its wait failed
	// with the takeover error.
	res := next(t, done, "the turn after the takeover")
	if res.err != nil || res.stop != "end_turn" || !strings.Contains(r.text(s.ID()), "You took `sleep 300` over") {
		t.Fatalf("prompt = %q, %v, the agent said %q; want its wait cut short by the takeover", res.stop, res.err, r.text(s.ID()))
	}
	if _, ok := s.Terminal(term.ID()); ok {
		t.Error("the session still knows the terminal after releasing it")
	}
	select {
	case rel := <-r.released:
		t.Errorf("editor told of a release %v of a terminal the user holds", rel)
	default:
	}
	if term.Released() || syscall.Kill(term.Pid(), 0) != nil {
		t.Fatal("the process did not survive the agent's release")
	}
	if term.Claims().Holder().Kind != "client" {
		t.Fatalf("claim %+v after the tool call ended", term.Claims().Holder())
	}
	if err := term.Kill(); err != nil {
		t.Fatal(err)
	}
	select {
	case <-term.Done():
	case <-time.After(waitTimeout):
		t.Fatal("the user's kill did not end it")
	}
	term.Release()
}

// A terminal the agent was told the user took over stays the user's when
// the user lets go of it (the claim goes back to the session) before the
// agent's release arrives: the agent moved on, so its release only
// forgets the id and the process runs on.
func TestGivenBackAfterTheAgentMovedOn(t *testing.T) {
	r := newRecorder()
	host := newHost(t)
	a, _ := start(t, selfAgent(t, "probe"), r, Options{Host: host})
	s := newSession(t, a)
	letGo := t.TempDir() + "/let-go"
	done := make(chan []probeResult, 1)
	go func() {
		done <- probe(t, s, r,
			rawReq("terminal/create", `{"sessionId":"$SESSION","command":"sleep 30"}`),
			rawReq("terminal/wait_for_exit", `{"sessionId":"$SESSION","terminalId":"$T0"}`),
			probeStep{AwaitPath: letGo},
			rawReq("terminal/release", `{"sessionId":"$SESSION","terminalId":"$T0"}`))
	}()
	created := next(t, r.created, "TerminalCreated")
	term, err := host.Get(created[1])
	if err != nil {
		t.Fatal(err)
	}
	session := term.Claims().Holder()
	if err := term.Claims().Set(ahp.ClientClaim("nvim-other")); err != nil {
		t.Fatal(err)
	}
	wait.Until(t, "the agent to be told it was taken over", waitTimeout, func() (bool, string) {
		return s.theUsers(term), ""
	})
	// the let go: back to the session, before the agent's release
	if err := term.Claims().Set(session); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(letGo, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	res := next(t, done, "the probe")
	if res[1].Error == nil || !strings.Contains(res[1].Error.Message, "taken over") {
		t.Fatalf("wait_for_exit answered %+v, want the takeover error", res[1])
	}
	if res[3].Error != nil {
		t.Fatalf("release answered %v", res[3].Error.Message)
	}
	if term.Released() || syscall.Kill(term.Pid(), 0) != nil {
		t.Fatal("the agent's release killed a terminal it was told the user took over")
	}
	if err := term.Kill(); err != nil {
		t.Fatal(err)
	}
	<-term.Done()
	term.Release()
}

// A wait that starts after the user took the terminal and stopped it at
// once (R restarts the agent's command: it takes it, then kills it) is
// told it was taken over, never the kill as if the command had failed:
// the end is the user's. (The end and the claim were both there, and the
// wait answered either; the agent then said the command was killed.)
func TestWaitAfterTakenAndStopped(t *testing.T) {
	host := newHost(t)
	term, err := host.Create(context.Background(), termhost.Spec{Command: "sleep", Args: []string{"1000"}, Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(term.Release)
	if err := term.Claims().Set(ahp.ClientClaim("nvim-1")); err != nil {
		t.Fatal(err)
	}
	if err := term.Kill(); err != nil {
		t.Fatal(err)
	}
	<-term.Done()
	for i := range 20 {
		if st, err := waitUnlessTakenOver(context.Background(), term); !errors.Is(err, errTakenOver) {
			t.Fatalf("wait %d answered %v, %v; want it taken over", i, st, err)
		}
	}
	// and the agent hears why: R stopped it to run it again
	if msg := takenOverError(term, "term-1", "wait for").Message; strings.Contains(msg, "to run it again") {
		t.Errorf("a plain takeover is said as a rerun: %s", msg)
	}
	term.MarkRestarting()
	if msg := takenOverError(term, "term-1", "wait for").Message; !strings.Contains(msg, "taken over by the user to run it again") {
		t.Errorf("a rerun's takeover says %q, not that it runs again", msg)
	}
}
