package shellinteg

import (
	"os"
	"reflect"
	"testing"
	"time"

	"github.com/agentrun/agentrun.nvim/ahp"
	"github.com/agentrun/agentrun.nvim/internal/jsontest"
)

const testNonce = "5f0c2d9e"

// oscStep is one OSC payload fed at a time offset, and what it must yield.
type oscStep struct {
	payload string
	at      time.Duration
	want    []ahp.Action
}

func runOSCSteps(t *testing.T, si *Parser, steps []oscStep) {
	t.Helper()
	t0 := time.UnixMilli(1700000000000)
	for i, st := range steps {
		got := si.HandleOSC([]byte(st.payload), t0.Add(st.at))
		if len(got) == 0 && len(st.want) == 0 {
			continue
		}
		if !reflect.DeepEqual(got, st.want) {
			t.Errorf("step %d, OSC %q:\ngot  %s\nwant %s", i, st.payload, jsontest.Marshal(t, got), jsontest.Marshal(t, st.want))
		}
	}
}

func TestShellIntegrationOSC(t *testing.T) {
	host, _ := os.Hostname()
	detect := ahp.CommandDetectionAvailableAction{Terminal: testTerm}
	cwd := func(uri string) ahp.Action { return ahp.CwdChangedAction{Terminal: testTerm, Cwd: uri} }
	title := func(s string) ahp.Action { return ahp.TitleChangedAction{Terminal: testTerm, Title: s} }
	exec := func(id, line string, ms int64) ahp.Action {
		return ahp.CommandExecutedAction{Terminal: testTerm, CommandID: id, CommandLine: line, Timestamp: 1700000000000 + ms}
	}
	fin := func(id string, code *int, ms int64) ahp.Action {
		return ahp.CommandFinishedAction{Terminal: testTerm, CommandID: id, ExitCode: code, DurationMs: int64p(ms)}
	}
	ms := time.Millisecond
	for _, c := range []struct {
		name  string
		nonce string
		steps []oscStep
	}{
		{"titles", testNonce, []oscStep{
			{payload: "0;vim main.go", want: []ahp.Action{title("vim main.go")}},
			{payload: "2;vim main.go"}, // unchanged: nothing
			{payload: "2;make", want: []ahp.Action{title("make")}},
			{payload: "1;icon name"},
			{payload: "0;"}, // an empty title keeps the old one
			{payload: "0;bad \xff byte", want: []ahp.Action{title("bad \uFFFD byte")}},
		}},
		{"OSC 7 cwd", testNonce, []oscStep{
			{payload: "7;file://" + host + "/home/u/a%20b", want: []ahp.Action{cwd("file:///home/u/a%20b")}},
			{payload: "7;file:///home/u/a%20b"}, // same directory
			{payload: "7;file://localhost/tmp", want: []ahp.Action{cwd("file:///tmp")}},
			{payload: "7;file://elsewhere.example/srv"}, // another machine's path
			{payload: "7;file://" + host + "/", want: []ahp.Action{cwd("file:///")}},
			{payload: "7;relative/dir"},
			{payload: "7;kitty-shell-cwd://" + host + "/x"},
		}},
		{"a bash prompt and two commands", testNonce, []oscStep{
			{payload: "633;P;Cwd=/home/u", want: []ahp.Action{detect, cwd("file:///home/u")}},
			{payload: "633;D"}, // first prompt: nothing ran
			{payload: "633;A"},
			{payload: "633;B"},
			{payload: "633;E;echo one;" + testNonce, at: 0},
			{payload: "633;C", at: 5 * ms, want: []ahp.Action{exec("cmd-1", "echo one", 5)}},
			{payload: "633;D;0", at: 20 * ms, want: []ahp.Action{fin("cmd-1", intp(0), 15)}},
			{payload: "633;P;Cwd=/home/u"},
			{payload: "633;A", at: 21 * ms},
			{payload: "633;B", at: 21 * ms},
			{payload: "633;E;false;" + testNonce, at: 30 * ms},
			{payload: "633;C", at: 30 * ms, want: []ahp.Action{exec("cmd-2", "false", 30)}},
			{payload: "633;D;1", at: 32 * ms, want: []ahp.Action{fin("cmd-2", intp(1), 2)}},
		}},
		{"command line escaping", testNonce, []oscStep{
			{payload: `633;E;a\x3bb \\ c\x0ad \q;` + testNonce, want: []ahp.Action{detect}},
			{payload: "633;C", want: []ahp.Action{exec("cmd-1", "a;b \\ c\nd \\q", 0)}},
		}},
		{"a wrong or missing nonce is not trusted", testNonce, []oscStep{
			{payload: "633;E;rm -rf /;guess", want: []ahp.Action{detect}},
			{payload: "633;C", want: []ahp.Action{exec("cmd-1", "", 0)}},
			{payload: "633;D;0", want: []ahp.Action{fin("cmd-1", intp(0), 0)}},
			{payload: "633;E;rm -rf /"},
			{payload: "633;C", want: []ahp.Action{exec("cmd-2", "", 0)}},
		}},
		{"without a nonce no command line is trusted", "", []oscStep{
			{payload: "633;E;ls;", want: []ahp.Action{detect}},
			{payload: "633;C", want: []ahp.Action{exec("cmd-1", "", 0)}},
		}},
		{"a command line is used once", testNonce, []oscStep{
			{payload: "633;E;make;" + testNonce, want: []ahp.Action{detect}},
			{payload: "633;C", want: []ahp.Action{exec("cmd-1", "make", 0)}},
			{payload: "633;D;2", at: ms, want: []ahp.Action{fin("cmd-1", intp(2), 1)}},
			{payload: "633;C", at: ms, want: []ahp.Action{exec("cmd-2", "", 1)}},
		}},
		{"a missing D is closed by the next prompt or command", testNonce, []oscStep{
			{payload: "633;C", want: []ahp.Action{detect, exec("cmd-1", "", 0)}},
			{payload: "633;C", at: 3 * ms, want: []ahp.Action{fin("cmd-1", nil, 3), exec("cmd-2", "", 3)}},
			{payload: "633;A", at: 4 * ms, want: []ahp.Action{fin("cmd-2", nil, 1)}},
			{payload: "633;D;0", at: 5 * ms}, // nothing running any more
		}},
		{"an exit code that is not a number", testNonce, []oscStep{
			{payload: "633;C", want: []ahp.Action{detect, exec("cmd-1", "", 0)}},
			{payload: "633;D;x", want: []ahp.Action{fin("cmd-1", nil, 0)}},
		}},
		{"OSC 633 P with other properties", testNonce, []oscStep{
			{payload: "633;P;IsWindows=False", want: []ahp.Action{detect}},
			{payload: `633;P;Cwd=/tmp/semi\x3bcolon`, want: []ahp.Action{cwd("file:///tmp/semi;colon")}},
			{payload: "633;P;Cwd=relative"},
		}},
		{"FinalTerm OSC 133", testNonce, []oscStep{
			{payload: "133;A;aid=7", want: []ahp.Action{detect}},
			{payload: "133;B"},
			{payload: "133;C", at: 10 * ms, want: []ahp.Action{exec("cmd-1", "", 10)}},
			{payload: "133;D;2;aid=7", at: 15 * ms, want: []ahp.Action{fin("cmd-1", intp(2), 5)}},
			{payload: "133;D"},
		}},
		{"unknown sequences do not enable detection", testNonce, []oscStep{
			{payload: "633;Z;whatever"},
			{payload: "133;Q"},
			{payload: "52;c;aGVsbG8="},
			{payload: "8;;https://example.com"},
			{payload: ""},
			{payload: "633;A", want: []ahp.Action{detect}},
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			runOSCSteps(t, NewParser(testTerm, c.nonce), c.steps)
		})
	}
}

func TestIsShellIntegrationOSC(t *testing.T) {
	for payload, want := range map[string]bool{
		"633;A": true, "633;E;ls;n": true, "133;D;0": true, "633": true,
		"0;title": false, "7;file:///tmp": false, "6333;A": false, "": false, "1330;x": false,
	} {
		if got := isMarker([]byte(payload)); got != want {
			t.Errorf("IsMarker(%q) = %v, want %v", payload, got, want)
		}
	}
}

func TestFileURIAndPath(t *testing.T) {
	for _, p := range []string{"/", "/tmp", "/home/u/a b", "/x/50%/é;#?"} {
		uri := ahp.FileURI(p)
		back, err := ahp.FilePath(uri)
		if err != nil || back != p {
			t.Errorf("FilePath(FileURI(%q) = %q) = %q, %v", p, uri, back, err)
		}
	}
	for _, bad := range []string{"agenthost:/terminal/1", "file://otherhost/x", "file:relative"} {
		if _, err := ahp.FilePath(bad); err == nil {
			t.Errorf("FilePath(%q) gave no error", bad)
		}
	}
}
