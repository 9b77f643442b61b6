package tests

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// Earlier sessions (:AgentSessions, chat.continue_last) and signing in
// (auth_required, :AgentLogin), with the Claude-like test agent keeping
// its sessions in a directory and wanting sign-in when told.

// storedSession is one session the test agent keeps on disk.
type storedSession struct {
	SessionID string `json:"sessionId"`
	Cwd       string `json:"cwd"`
	Title     string `json:"title"`
	UpdatedAt string `json:"updatedAt"`
	History   []struct {
		Role string `json:"role"`
		Text string `json:"text"`
	} `json:"history"`
}

// inOrder reports whether text has each of want, in this order.
func inOrder(text string, want ...string) bool {
	for _, w := range want {
		i := strings.Index(text, w)
		if i < 0 {
			return false
		}
		text = text[i+len(w):]
	}
	return true
}

// say has the Claude-like agent answer text, and waits for the turn end.
func (e *editor) say(text string) {
	e.t.Helper()
	e.cmd("AgentPrompt say " + text)
	e.waitChat("\n"+text, 20*time.Second)
	e.idle(10 * time.Second)
}

// sessionID is the current session's ACP id.
func (e *editor) sessionID() string {
	e.t.Helper()
	var id string
	e.lua(`return require("agentrun.state").session().id`, &id)
	return id
}

// stop stops the current session and waits for its end.
func (e *editor) stop() {
	e.t.Helper()
	since := e.mark()
	e.cmd("AgentStop")
	e.waitEvent("AgentRunSessionEnded", since, 20*time.Second)
}

// reopen picks entry pick of :AgentSessions, waits for that session to
// start and returns the picker's prompt.
func (e *editor) reopen(pick int, timeout time.Duration) string {
	e.t.Helper()
	e.stubSelect(pick)
	since := e.mark()
	e.cmd("AgentSessions")
	e.waitEvent("AgentRunSessionStarted", since, timeout)
	var prompt string
	e.lua(`return _G.picked[1].prompt`, &prompt)
	return prompt
}

// TestSessionsLoadReplaysHistory: :AgentSessions lists the agent's
// sessions of the cwd by title, and the one picked opens in a new chat
// with its conversation replayed in order; the loaded session takes new
// prompts. :AgentStop closes the session (session/close) first.
func TestSessionsLoadReplaysHistory(t *testing.T) {
	dir := t.TempDir()
	e := claudeLikeEditor(t, "", fmt.Sprintf("AGENTRUN_TEST_STATE = %q", dir), "")
	e.startSession()
	e.say("first answer")
	e.say("second answer")
	id := e.sessionID()
	e.stop()
	closed, _ := os.ReadFile(filepath.Join(dir, "closed.log"))
	if strings.TrimSpace(string(closed)) != id {
		t.Errorf("session/close on stop: closed.log has %q, want %q", closed, id)
	}

	prompt := e.reopen(1, 20*time.Second)
	var labels []string
	e.lua(`return vim.tbl_map(require("agentrun.earlier_sessions")._label, _G.picked[1].items)`, &labels)
	if len(labels) != 1 || !strings.HasPrefix(labels[0], "say first answer · 20") || prompt != "claudelike session to load:" {
		t.Errorf("picker prompt %q, items %q", prompt, labels)
	}
	chat := e.waitChat("second answer", 10*time.Second)
	if !inOrder(chat, "> say first answer", "\nfirst answer", "> say second answer", "\nsecond answer") {
		t.Errorf("the loaded chat does not show the history in order:\n%s", chat)
	}
	if loaded := e.sessionID(); loaded != id {
		t.Errorf("loaded session %q, want %q", loaded, id)
	}
	e.say("third answer")
}

// TestSessionsResumeWithoutLoad: an agent that can only resume gets the
// session picked resumed: the chat says its history stays with the agent
// and shows none of it, and the agent goes on with that session.
func TestSessionsResumeWithoutLoad(t *testing.T) {
	dir := t.TempDir()
	e := claudeLikeEditor(t, "", fmt.Sprintf("AGENTRUN_TEST_STATE = %q, AGENTRUN_TEST_NO_LOAD = \"1\"", dir), "")
	e.startSession()
	e.say("remembered line")
	id := e.sessionID()
	e.stop()
	prompt := e.reopen(1, 20*time.Second)
	resumed := e.sessionID()
	chat := e.chat()
	if prompt != "claudelike session to resume:" || resumed != id || !strings.Contains(chat, "resuming (its history stays with the agent) say remembered line") || strings.Contains(chat, "\nremembered line") {
		t.Errorf("picker %q, session %q (want %q), chat:\n%s", prompt, resumed, id, chat)
	}
	e.say("after resume")
}

// TestContinueLast: with chat.continue_last, and with :AgentRun!,
// :AgentRun opens the cwd's most recent session (not an older one, nor
// one of another directory), says so, and shows its history, the
// commands the agent ran itself too.
func TestContinueLast(t *testing.T) {
	for _, tc := range []struct{ name, option, bang string }{
		{"chat.continue_last", "continue_last = true", ""},
		{":AgentRun!", "", "!"},
	} {
		t.Run(tc.name, func(t *testing.T) { continueLast(t, tc.option, tc.bang) })
	}
}

func continueLast(t *testing.T, option, bang string) {
	dir := t.TempDir()
	e := claudeLikeEditor(t, "", fmt.Sprintf("AGENTRUN_TEST_STATE = %q", dir), option)
	cwd := e.cwd()
	mk := func(id, cwd, title, at string) storedSession {
		s := storedSession{SessionID: id, Cwd: cwd, Title: title, UpdatedAt: at}
		s.History = append(s.History, struct {
			Role string `json:"role"`
			Text string `json:"text"`
		}{"user", title}, struct {
			Role string `json:"role"`
			Text string `json:"text"`
		}{"agent", "answer to " + title}, struct {
			Role string `json:"role"`
			Text string `json:"text"`
		}{"term", "output of " + strings.ReplaceAll(title, " ", "-")})
		return s
	}
	list := []storedSession{
		mk("old", cwd, "older work", "2026-11-20T10:00:00.000Z"),
		mk("new", cwd, "newest work", "2026-11-22T10:00:00.000Z"),
		mk("elsewhere", "/tmp", "other project", "2026-11-23T10:00:00.000Z"),
	}
	data, _ := json.Marshal(list)
	if err := os.WriteFile(filepath.Join(dir, "sessions.json"), data, 0o644); err != nil {
		t.Fatal(err)
	}
	since := e.mark()
	e.cmd("AgentRun" + bang)
	e.waitEvent("AgentRunSessionStarted", since, 20*time.Second)
	chat := e.waitChat("answer to newest work", 20*time.Second)
	if !strings.Contains(chat, `continuing "newest work"`) || strings.Contains(chat, "older work") || strings.Contains(chat, "other project") {
		t.Errorf("continue_last opened the wrong session:\n%s", chat)
	}
	// The command the agent ran itself in that session, replayed before
	// session/load returned, shows in its terminal split.
	e.waitBuf(e.waitAgentShownTerminal(), 10*time.Second, "output of newest-work")
}

// TestSignInWithAgentMethod: an agent that answers session/new with
// auth_required gets its ways to sign in offered; picking the agent's
// own (authenticate) starts the session. Without the client's terminal
// capability the agent would not offer the terminal way: it does here.
func TestSignInWithAgentMethod(t *testing.T) {
	auth := t.TempDir()
	e := claudeLikeEditor(t, "", fmt.Sprintf("AGENTRUN_TEST_AUTH = %q", auth), "")
	e.stubSelect(1)
	since := e.mark()
	e.cmd("AgentRun")
	e.answerSignIn(1)
	e.waitEvent("AgentRunSessionStarted", since, 20*time.Second)
	var labels []string
	e.lua(`return vim.tbl_map(function(m) return m.name .. "/" .. m.type end, _G.picked[1].items)`, &labels)
	if strings.Join(labels, ",") != "API token/agent,Log in/terminal,API key/env_var" {
		t.Errorf("offered %q", labels)
	}
	chat := e.chat()
	if !strings.Contains(chat, "claudelike asks you to sign in") || !strings.Contains(chat, "signing in with API token") {
		t.Errorf("chat:\n%s", chat)
	}
	if b, _ := os.ReadFile(filepath.Join(auth, "signed-in")); string(b) != "token" {
		t.Errorf("signed-in file %q", b)
	}
	e.say("hello after sign-in")
}

// answerSignIn answers the n-th sign-in offer: the agent asks unasked, so
// the offer either waits for the user to stop typing (then :AgentAnswer
// opens it) or, when they were not typing (a sign-in terminal that
// ended left Terminal mode), is shown at once. Which one depends on when
// the offer comes; both are what a user may see.
func (e *editor) answerSignIn(n int) {
	e.t.Helper()
	waits := false
	e.waitFor("the sign-in offer", 20*time.Second, func() (bool, string) {
		var shown int
		e.lua(`return #(_G.picked or {})`, &shown)
		if shown >= n {
			return true, ""
		}
		c := e.chat()
		waits = strings.Count(c, "the question waits while you type") >= n
		return waits, c
	})
	if waits {
		e.cmd("AgentAnswer")
	}
}

// TestSignInWithEnvVars: a way that needs environment variables says
// which and where to set them; the session keeps waiting.
func TestSignInWithEnvVars(t *testing.T) {
	auth := t.TempDir()
	e := claudeLikeEditor(t, "", fmt.Sprintf("AGENTRUN_TEST_AUTH = %q", auth), "")
	e.stubSelect(3)
	e.cmd("AgentRun")
	e.answerSignIn(1)
	e.waitFor("the instructions", 20*time.Second, func() (bool, string) {
		chat := e.chat()
		return strings.Contains(chat, `sign in with "API key": set CL_API_KEY (in agents.claudelike.env or your shell) and :AgentRun again`), chat
	})
	if h := e.statusLine(); !strings.Contains(h, "waiting for you to sign in") {
		t.Errorf("status line %q", h)
	}
}

// TestSignInInTerminal: the terminal way runs the agent's own program
// with the method's args and env in one of our terminals, focused for
// typing; a wrong code fails and asks again, the right one starts the
// session.
func TestSignInInTerminal(t *testing.T) {
	auth := t.TempDir()
	e := claudeLikeEditor(t, "", fmt.Sprintf("AGENTRUN_TEST_AUTH = %q", auth), "")
	e.stubSelect(2)
	e.cmd("AgentRun")
	e.answerSignIn(1)
	login := e.waitTerminal("sign in: "+claudeLikeCommand(t)+" --login", 20*time.Second)
	e.waitBuf(login.Bufnr, 20*time.Second, "AGENTRUN_TEST_LOGIN=1", "Paste your code:")
	var cur int
	e.lua(`return vim.api.nvim_get_current_buf()`, &cur)
	if cur != login.Bufnr {
		t.Errorf("the sign-in terminal (buffer %d) is not focused (buffer %d is)", login.Bufnr, cur)
	}
	var ok bool
	e.lua(`return require("agentrun").input(..., "nope\r")`, &ok, login.ID)
	e.answerSignIn(2) // the user is typing in the sign-in terminal
	e.waitFor("a second offer after the wrong code", 20*time.Second, func() (bool, string) {
		var n int
		e.lua(`return #_G.picked`, &n)
		return n == 2, fmt.Sprint(n, " offers")
	})
	if chat := e.chat(); !strings.Contains(chat, `signing in with "Log in" failed: the sign-in command ended with exit 1`) {
		t.Errorf("chat after the wrong code:\n%s", chat)
	}
	var second termInfo
	e.waitFor("a second sign-in terminal", 20*time.Second, func() (bool, string) {
		for _, tm := range e.terminals() {
			if strings.HasPrefix(tm.Command, "sign in: ") && tm.ID != login.ID && tm.Bufnr > 0 {
				second = tm
				return true, ""
			}
		}
		return false, fmt.Sprint(e.terminals())
	})
	e.waitBuf(second.Bufnr, 20*time.Second, "Paste your code:")
	since := e.mark()
	e.lua(`return require("agentrun").input(..., "ok\r")`, &ok, second.ID)
	e.waitEvent("AgentRunSessionStarted", since, 20*time.Second)
	e.say("signed in by terminal")
}

// TestSessionsUnsupported: an agent that keeps no list says so in words.
func TestSessionsUnsupported(t *testing.T) {
	e := claudeLike(t, "")
	e.cmd("AgentSessions")
	e.waitFor("the refusal", 20*time.Second, func() (bool, string) {
		n := e.noteText()
		return strings.Contains(n, "(agentrun) claudelike does not list its sessions"), n
	})
}

// TestScreenSignInInTerminal: as a user sees it: :AgentRun, the agent
// wants sign-in, pick the terminal way; its login opens in a split in
// terminal mode (though the prompt was in Insert mode), what the user
// types reaches it, and the session starts.
func TestScreenSignInInTerminal(t *testing.T) {
	auth := t.TempDir()
	s := claudeLikeScreenEnv(t, 120, 30, fmt.Sprintf("AGENTRUN_TEST_AUTH = %q", auth))
	s.keys(":AgentRun", "Enter")
	// the prompt is in Insert mode: the offer waits, typed keys cannot answer it
	s.waitShows(20*time.Second, "the question waits while you type", "waiting for you to sign in")
	s.keys("Escape")
	s.waitShows(20*time.Second, "Sign in to claudelike with:", "2  Log in (in a terminal)")
	s.keys("2")
	s.waitShows(20*time.Second, "Paste your code:", "-- TERMINAL --")
	s.typeText("ok")
	s.keys("Enter")
	s.waitShows(20*time.Second, "signed in; the session has started", "agentrun · claudelike · ready")
}

// TestSessionsOpenHereIsNotLoadedTwice: a session that runs in this
// Neovim is marked so in the list, and picking it opens its chat instead
// of a second agent process on the same session.
func TestSessionsOpenHereIsNotLoadedTwice(t *testing.T) {
	dir := t.TempDir()
	e := claudeLikeEditor(t, "", fmt.Sprintf("AGENTRUN_TEST_STATE = %q", dir), "")
	e.startSession()
	e.say("still here")
	key := func() string {
		var k string
		e.lua(`return require("agentrun.state").current`, &k)
		return k
	}
	before := key()
	e.stubSelect(1)
	e.cmd("AgentSessions")
	e.waitFor("the picker", 20*time.Second, func() (bool, string) {
		var n int
		e.lua(`return #(_G.picked or {})`, &n)
		return n == 1, fmt.Sprint(n)
	})
	var labels []string
	e.lua(`return vim.tbl_map(require("agentrun.earlier_sessions")._label, _G.picked[1].items)`, &labels)
	if len(labels) != 1 || !strings.HasSuffix(labels[0], " · open here") {
		t.Errorf("labels %q", labels)
	}
	var sessions int
	e.lua(`return #require("agentrun").status().sessions`, &sessions)
	if key() != before || sessions != 1 {
		t.Errorf("picking the open session started another (current %s, was %s; %d sessions)", key(), before, sessions)
	}
}

// TestQuitWhileListingLeavesNothing: the agent :AgentSessions starts to
// ask for the list does not outlive Neovim quitting before it answered.
func TestQuitWhileListingLeavesNothing(t *testing.T) {
	dir := t.TempDir()
	e := claudeLikeEditor(t, "", fmt.Sprintf("AGENTRUN_TEST_STATE = %q, AGENTRUN_TEST_HANG_LIST = \"1\"", dir), "")
	e.cmd("AgentSessions")
	cmd := claudeLikeCommand(t)
	e.waitFor("the agent started for the list", 20*time.Second, func() (bool, string) {
		return len(findProcesses(cmd)) == 1, fmt.Sprint(findProcesses(cmd))
	})
	backend := e.backendPid()
	_ = e.v.Command("qa!")
	eventually(t, "the backend to exit", 10*time.Second, func() (bool, string) { return !alive(backend), "alive" })
	eventually(t, "the agent to be gone", 5*time.Second, func() (bool, string) {
		left := findProcesses(cmd)
		return len(left) == 0, fmt.Sprint(left)
	})
}

// TestSignInAtFirstPrompt: an agent that wants sign-in only when the
// first prompt comes (Claude Code does) gets the ways offered then; once
// signed in, the prompt sent again is answered.
func TestSignInAtFirstPrompt(t *testing.T) {
	auth := t.TempDir()
	e := claudeLikeEditor(t, "", fmt.Sprintf("AGENTRUN_TEST_AUTH = %q, AGENTRUN_TEST_AUTH_AT_PROMPT = \"1\"", auth), "")
	e.startSession()
	e.stubSelect(1)
	e.cmd("AgentPrompt say hello")
	e.waitFor("signed in", 20*time.Second, func() (bool, string) {
		chat := e.chat()
		return strings.Contains(chat, "claudelike asks you to sign in; then send your prompt again") && strings.Contains(e.noteText(), `signed in with "API token"`), chat + "\n" + e.noteText()
	})
	if h := e.statusLine(); strings.Contains(h, "waiting for you to sign in") {
		t.Errorf("a running session's status line says %q", h)
	}
	e.idle(10 * time.Second)
	e.say("hello again")
}

// TestSignInNoWayFromHere: an agent that wants sign-in and offers no way
// to do it from here is stopped with the reason, so that :AgentRun, once
// the user signed in elsewhere, starts it afresh (not the stuck one).
func TestSignInNoWayFromHere(t *testing.T) {
	auth := t.TempDir()
	e := claudeLikeEditor(t, "", fmt.Sprintf("AGENTRUN_TEST_AUTH = %q, AGENTRUN_TEST_AUTH_NO_METHODS = \"1\"", auth), "")
	since := e.mark()
	e.cmd("AgentRun")
	e.waitEvent("AgentRunSessionEnded", since, 20*time.Second)
	if chat := e.chat(); !strings.Contains(chat, "it offers no way to sign in from here: sign in with its own command in a shell, then :AgentRun again") {
		t.Errorf("chat:\n%s", chat)
	}
	if err := os.WriteFile(filepath.Join(auth, "signed-in"), []byte("elsewhere"), 0o644); err != nil {
		t.Fatal(err)
	}
	e.startSession()
	e.say("signed in elsewhere")
}

// TestPromptQueuedWhileLoadingComesAfterTheHistory: a prompt sent while
// an earlier session is being opened is shown, and sent, after the
// history the agent replays, and answered there.
func TestPromptQueuedWhileLoadingComesAfterTheHistory(t *testing.T) {
	dir := t.TempDir()
	e := claudeLikeEditor(t, "", fmt.Sprintf("AGENTRUN_TEST_STATE = %q", dir), "")
	e.startSession()
	e.say("from yesterday")
	e.stop()
	// Pick the session and type a prompt at once, before it has started.
	e.lua(`vim.ui.select = function(items, opts, cb)
			cb(items[1], 1)
			require("agentrun").prompt("say typed while loading")
		end`, nil)
	since := e.mark()
	e.cmd("AgentSessions")
	e.waitEvent("AgentRunSessionStarted", since, 20*time.Second)
	chat := e.waitChat("\ntyped while loading", 20*time.Second)
	if !inOrder(chat, "> say from yesterday", "\nfrom yesterday", "> say typed while loading", "\ntyped while loading") {
		t.Errorf("the queued prompt is not after the history:\n%s", chat)
	}
}

// TestSessionsLoadShowsAnInterruptAsOne: Claude Code keeps a cancel in its
// history as a user message "[Request interrupted by user for tool use]";
// loaded, it reads as a note that the turn was interrupted, not as a
// prompt the user typed.
func TestSessionsLoadShowsAnInterruptAsOne(t *testing.T) {
	dir := t.TempDir()
	e := claudeLikeEditor(t, "", fmt.Sprintf("AGENTRUN_TEST_STATE = %q", dir), "")
	e.startSession()
	e.say("first answer")
	e.cmd("AgentPrompt [Request interrupted by user for tool use]")
	e.idle(10 * time.Second)
	e.stop()
	e.reopen(1, 20*time.Second)
	chat := e.waitChat("(the turn was interrupted)", 10*time.Second)
	if strings.Contains(chat, "> [Request interrupted") {
		t.Errorf("the interrupt reads as a prompt:\n%s", chat)
	}
}
