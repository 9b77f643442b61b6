package tests

import (
	"encoding/json"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
)

// The agent asks the user (ACP elicitation, as claude-agent-acp's
// AskUserQuestion and its MCP sign-in do): tests/node/askagent.mjs, on the
// official TypeScript SDK, asks a form or a URL; vim.ui.select and
// vim.ui.input are answered from a script, as a person would pick.

// askAgent starts an editor whose default agent is askagent.mjs, with
// vim.ui.select, vim.ui.input and vim.ui.open scripted: script is a Lua
// list, each entry the label (a substring) to pick in the next picker or
// the text to type in the next input; false closes it (<Esc>); "hang"
// leaves it up ("late" too, keeping it to answer later: _G.late(label));
// "interrupt" is <C-c> in Neovim's own picker (it raises). _G.shown records every prompt and its items, _G.opened
// every URL opened.
func askAgent(t *testing.T) *editor {
	t.Helper()
	node, _ := claudeLikeArgv(t)
	e := startEditor(t, `require("agentrun").setup({
		default_agent = "ask",
		agents = { ask = { cmd = { "`+node+`", "`+filepath.Join(root, "tests", "node", "askagent.mjs")+`" } } },
	})
	_G.script, _G.shown, _G.opened = {}, {}, {}
	local function next_answer(prompt, labels)
		table.insert(_G.shown, { prompt = prompt, items = labels })
		return table.remove(_G.script, 1)
	end
	vim.ui.select = function(items, opts, cb)
		local labels = {}
		for _, it in ipairs(items) do table.insert(labels, opts.format_item and opts.format_item(it) or tostring(it)) end
		local want = next_answer(opts.prompt, labels)
		if want == "hang" then return end
		if want == "interrupt" then error("Keyboard interrupt") end
		if want == "late" then
			_G.late = function(l)
				for i, x in ipairs(labels) do if x:find(l, 1, true) then return cb(items[i], i) end end
			end
			return
		end
		if not want then return cb(nil, nil) end
		for i, l in ipairs(labels) do
			if l:find(want, 1, true) then return cb(items[i], i) end
		end
		error("no item " .. want .. " in " .. table.concat(labels, " | "))
	end
	vim.ui.input = function(opts, cb)
		local want = next_answer(opts.prompt, {})
		if want == "hang" then return end
		if want == "interrupt" then error("Keyboard interrupt") end
		cb(want or nil)
	end
	vim.ui.open = function(url) table.insert(_G.opened, url); return {}, nil end`)
	e.startSession()
	return e
}

// answer sends prompt to the ask agent with script for its pickers and
// returns what the agent was answered (its ANSWER line, decoded).
func (e *editor) answer(prompt string, script ...any) map[string]any {
	e.t.Helper()
	before := strings.Count(e.chat(), "ANSWER {")
	e.lua(`_G.script = ...`, nil, script)
	e.cmd("AgentPrompt " + prompt)
	chat := e.waitFor("the agent's next ANSWER", 15*time.Second, func() (bool, string) {
		c := e.chat()
		return strings.Count(c, "ANSWER {") > before, c
	})
	line := chat[strings.LastIndex(chat, "ANSWER {")+len("ANSWER "):]
	line = strings.SplitN(line, "\n", 2)[0]
	var got map[string]any
	if err := json.Unmarshal([]byte(line), &got); err != nil {
		e.t.Fatalf("the agent's ANSWER %q: %v\nchat:\n%s", line, err, chat)
	}
	return got
}

type shownPicker struct {
	Prompt string   `msgpack:"prompt"`
	Items  []string `msgpack:"items"`
}

// TestElicitationForm: the agent's form is asked field by field (a
// choice, yes/no, a number re-asked until it is within its bounds, an
// optional text left empty, several of a list), the answer reaches the
// agent checked and typed, and the chat shows the question and answers.
// Closing a picker midway cancels; "Decline" declines.
func TestElicitationForm(t *testing.T) {
	e := askAgent(t)
	e.cmd("AgentPrompt caps")
	e.waitChat(`CAPS {"form":{},"url":{}}`, 10*time.Second)

	got := e.answer("form", "Green", "Yes", "9", "3", "", "Go", "Lua", "Done")
	want := map[string]any{"action": "accept", "content": map[string]any{"colour": "green", "sure": true, "count": 3.0, "langs": []any{"go", "lua"}}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("the agent was answered %v, want %v", got, want)
	}
	var shown []shownPicker
	e.lua(`return _G.shown`, &shown)
	if len(shown) != 8 || !strings.Contains(shown[0].Prompt, "A few questions — Colour") || !strings.Contains(shown[3].Prompt, "How many [1–5] — needs at most 5") {
		t.Errorf("the pickers shown: %+v", shown)
	}
	if !strings.Contains(strings.Join(shown[0].Items, "|"), "Decline") || strings.Contains(strings.Join(shown[0].Items, "|"), "Skip") {
		t.Errorf("a required choice offers %v: want Decline, no Skip", shown[0].Items)
	}
	e.waitChat("? ask asks: A few questions", 5*time.Second)
	e.waitChat("  How many: 3", 5*time.Second)
	e.waitChat("  Colour: Green", 5*time.Second) // as picked, not its value
	e.waitChat("  Languages: Go, Lua", 5*time.Second)

	// Optional fields skipped (Skip, or an empty text) are listed so.
	got = e.answer("form", "Red", "Skip", "2", "", "Skip")
	if want := map[string]any{"action": "accept", "content": map[string]any{"colour": "red", "count": 2.0}}; !reflect.DeepEqual(got, want) {
		t.Errorf("with the optional fields skipped the agent was answered %v, want %v", got, want)
	}
	e.waitChat("  Colour: Red\n  Sure: skipped\n  How many: 2\n  Note: skipped\n  Languages: skipped\n  → sent", 5*time.Second)

	if got := e.answer("form", "Red", false); !reflect.DeepEqual(got, map[string]any{"action": "cancel"}) {
		t.Errorf("closing the second picker answered %v, want cancel", got)
	}
	if got := e.answer("form", "Decline"); !reflect.DeepEqual(got, map[string]any{"action": "decline"}) {
		t.Errorf("Decline answered %v, want decline", got)
	}
	// <C-c> in Neovim's own picker or input (it raises "Keyboard
	// interrupt") cancels, as closing it does: no internal error
	if got := e.answer("form", "interrupt"); !reflect.DeepEqual(got, map[string]any{"action": "cancel"}) {
		t.Errorf("<C-c> in the picker answered %v, want cancel", got)
	}
	if got := e.answer("form", "Red", "No", "interrupt"); !reflect.DeepEqual(got, map[string]any{"action": "cancel"}) {
		t.Errorf("<C-c> in an input answered %v, want cancel", got)
	}
	if n := e.noteText(); strings.Contains(n, "internal error") {
		t.Errorf("notes: %s", n)
	}
}

// TestElicitationURL: a URL the agent asks the user to open opens only
// when the user picks "Open" (the prompt names its host); closing the
// picker opens nothing; the agent's elicitation/complete is said.
func TestElicitationURL(t *testing.T) {
	e := askAgent(t)
	url := "https://auth.example.test/login?state=x1"
	if got := e.answer("url "+url, false); !reflect.DeepEqual(got, map[string]any{"action": "cancel"}) {
		t.Errorf("closing the picker answered %v, want cancel", got)
	}
	var opened []string
	e.lua(`return _G.opened`, &opened)
	if len(opened) != 0 {
		t.Fatalf("opened %v though the user picked nothing", opened)
	}
	if got := e.answer("url "+url, "Open"); !reflect.DeepEqual(got, map[string]any{"action": "accept"}) {
		t.Errorf("Open answered %v, want accept", got)
	}
	e.lua(`return _G.opened`, &opened)
	if !reflect.DeepEqual(opened, []string{url}) {
		t.Errorf("opened %v, want %s", opened, url)
	}
	var shown []shownPicker
	e.lua(`return _G.shown`, &shown)
	if len(shown) != 2 || !strings.Contains(shown[1].Prompt, "Sign in to the test service — it opens auth.example.test") {
		t.Errorf("the pickers shown: %+v", shown)
	}
	e.waitChat("✓ done at auth.example.test", 10*time.Second)
}

// TestElicitationWithdrawnByCancel: :AgentCancel while a form's picker is
// up answers the agent "cancel" at once; the chat says the question is
// gone, and a late pick sends nothing.
func TestElicitationWithdrawnByCancel(t *testing.T) {
	e := askAgent(t)
	e.lua(`_G.script = { "hang" }`, nil)
	e.cmd("AgentPrompt form")
	e.waitFor("the first picker", 10*time.Second, func() (bool, string) {
		var n int
		e.lua(`return #_G.shown`, &n)
		return n == 1, "none"
	})
	e.cmd("AgentCancel")
	chat := e.waitChat("(the turn ended: what you pick now goes nowhere)", 10*time.Second)
	if strings.Contains(chat, `ANSWER {"action":"accept"`) {
		t.Errorf("a cancelled question was answered:\n%s", chat)
	}
}

// TestElicitationWithdrawnByTheAgent: the agent withdraws its question
// ($/cancel_request) while the picker is up: it gets its answer at once,
// and the chat says the question is gone.
func TestElicitationWithdrawnByTheAgent(t *testing.T) {
	e := askAgent(t)
	e.lua(`_G.script = { "late" }`, nil)
	e.cmd("AgentPrompt withdraw")
	e.waitChat("(the agent withdrew its question: what you pick now goes nowhere)", 10*time.Second)
	chat := e.waitFor("the agent to hear back", 10*time.Second, func() (bool, string) {
		c := e.chat()
		return strings.Contains(c, `ANSWER {"action":"cancel"}`) || strings.Contains(c, "WITHDRAWN"), c
	})
	if strings.Contains(chat, `"accept"`) {
		t.Errorf("a withdrawn question was answered:\n%s", chat)
	}
	// the user answers the old picker after all: nothing more is asked
	// or written
	e.lua(`_G.late("Red")`, nil)
	var shown int
	e.lua(`return #_G.shown`, &shown)
	if c := e.chat(); strings.Contains(c, "Colour:") || shown != 1 {
		t.Errorf("a late answer was taken (%d pickers shown):\n%s", shown, c)
	}
}

// TestScreenEmptyOptionalAnswerSkips (issue 50): Enter on an optional
// text field with nothing typed skips it, on every Neovim (0.7.2's own
// vim.ui.input gave nil for it, which cancelled the whole form and the
// model read "Tool use aborted"); each field's question shows once.
func TestScreenEmptyOptionalAnswerSkips(t *testing.T) {
	node, _ := claudeLikeArgv(t)
	s := startScreen(t, 80, 24, `require("agentrun").setup({
		default_agent = "ask",
		agents = { ask = { cmd = { "`+node+`", "`+filepath.Join(root, "tests", "node", "askagent.mjs")+`" } } },
	})`)
	s.keys(":AgentRun", "Enter")
	s.waitShows(10*time.Second, "agentrun · ask · ready", "-- INSERT --")
	s.prompt("form")
	s.waitShows(10*time.Second, "the question waits while you type")
	s.keys("Escape")
	s.waitShows(5*time.Second, "A few questions — Colour", "1  Red")
	s.keys("1")
	s.waitShows(5*time.Second, "A few questions — Sure", "3  Skip")
	s.keys("3")
	s.waitShows(5*time.Second, "How many [1–5]:")
	s.typeText("2")
	s.keys("Enter")
	sc := s.waitShows(5*time.Second, "A few questions — Note (empty: skip):")
	if n := strings.Count(sc, "— Note (empty: skip)"); n != 1 {
		t.Errorf("the Note question shows %d times:\n%s", n, sc)
	}
	s.keys("Enter")
	// the next question, and the answered one gone from the command line
	// (a look between the two redraws may see both: what lasts counts)
	s.waitFor("the Languages question, with the Note question gone from under it", 5*time.Second, func(sc string) bool {
		return strings.Contains(sc, "A few questions — Languages") && strings.Contains(sc, "5  Skip") && !strings.Contains(sc, "Note (empty: skip)")
	})
	s.keys("5")
	s.waitShows(10*time.Second, "Note: skipped", "Languages: skipped", "→ sent", `ANSWER {"action":"accept"`, `"colour":"red","count":2}}`)
}
