package acp

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"os"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/agentrun/agentrun.nvim/acp/agentterm"
	"github.com/agentrun/agentrun.nvim/termhost"
	acpsdk "github.com/coder/acp-go-sdk"
)

// fuzzMethods are the methods FuzzClientRequest calls, by index: every
// client method, and one that does not exist.
var fuzzMethods = func() []string {
	names := make([]string, 0, 10)
	for name := range (&Agent{}).methods() {
		names = append(names, name)
	}
	sort.Strings(names)
	return append(names, "terminal/frobnicate")
}()

// fuzzAgent is an Agent without a process: the handlers run against a real
// terminal host, one session in a temporary directory and an editor that
// refuses files and cancels permission requests. Only the command line
// "true" is approved, so fuzzing never runs anything else.
func fuzzAgent(f *testing.F) (*Agent, *Session) {
	f.Helper()
	host := termhost.NewHost(termhost.Options{KillGrace: 100 * time.Millisecond})
	f.Cleanup(host.Close)
	ed := &fakeEditor{requestPermission: func(context.Context, acpsdk.RequestPermissionRequest) (acpsdk.RequestPermissionResponse, error) {
		return acpsdk.RequestPermissionResponse{Outcome: acpsdk.NewRequestPermissionOutcomeCancelled()}, nil
	}}
	a := &Agent{
		cfg:         AgentConfig{Name: "fuzz"},
		ed:          ed,
		log:         slog.New(slog.DiscardHandler),
		sessions:    map[string]*Session{},
		sessChanged: make(chan struct{}),
		opts: Options{
			Host: host,
			Approve: func(_ context.Context, cmd Command) (bool, error) {
				return len(cmd.Argv) > 0 && cmd.Argv[len(cmd.Argv)-1] == "true" && cmd.Line == "true", nil
			},
		},
	}
	a.ctx, a.cancel = context.WithCancel(context.Background())
	f.Cleanup(a.cancel)
	a.table = a.methods()
	a.updates = newUpdateQueue(a.log)
	a.agentTerms = agentterm.NewDecoder()
	go a.updates.run(a.deliverUpdate)
	f.Cleanup(func() { a.updates.close(time.Second) })

	dir, err := os.MkdirTemp("", "agentrun-fuzz-")
	if err != nil {
		f.Fatal(err)
	}
	f.Cleanup(func() { os.RemoveAll(dir) })
	s := &Session{
		agent: a, id: "S1", cwd: dir,
		perms:     map[int]context.CancelCauseFunc{},
		terminals: map[string]*termhost.Terminal{},
		done:      make(chan struct{}),
	}
	a.sessions[s.id] = s
	// A long-running terminal for the output/wait/kill/release seeds.
	t, err := host.Create(context.Background(), termhost.Spec{Command: "sleep", Args: []string{"1000"}, Dir: dir})
	if err != nil {
		f.Fatal(err)
	}
	s.terminals[t.ID()] = t
	return a, s
}

// FuzzClientRequest feeds arbitrary params to every client method handler:
// none may panic, and each answers either a result that marshals to JSON
// or a JSON-RPC error with a known code and a message. In params, $S
// becomes the session id and $T the id of a running terminal.
func FuzzClientRequest(f *testing.F) {
	a, s := fuzzAgent(f)
	index := map[string]uint8{}
	for i, m := range fuzzMethods {
		index[m] = uint8(i)
	}
	seeds := []struct{ method, params string }{
		{"terminal/create", `{"sessionId":"$S","command":"true"}`},
		{"terminal/create", `{"sessionId":"$S","command":"true","args":[],"cwd":"/","env":[{"name":"A","value":"b"}],"outputByteLimit":10}`},
		{"terminal/create", `{"sessionId":"$S","command":"true","cwd":"rel"}`},
		{"terminal/create", `{"sessionId":"$S","command":"true","outputByteLimit":-1}`},
		{"terminal/create", `{"sessionId":"$S","command":"true","outputByteLimit":1e300}`},
		{"terminal/create", `{"sessionId":"$S","command":"true","env":[{"name":"","value":"x"}]}`},
		{"terminal/create", `{"sessionId":"$S","command":42}`},
		{"terminal/create", `[1,2]`},
		{"terminal/create", ``},
		{"terminal/output", `{"sessionId":"$S","terminalId":"$T"}`},
		{"terminal/wait_for_exit", `{"sessionId":"$S","terminalId":"$T"}`},
		{"terminal/kill", `{"sessionId":"$S","terminalId":"$T"}`},
		{"terminal/release", `{"sessionId":"$S","terminalId":"nope"}`},
		{"fs/read_text_file", `{"sessionId":"$S","path":"/etc/hostname","line":1,"limit":2}`},
		{"fs/read_text_file", `{"sessionId":"$S","path":"rel","line":0}`},
		{"fs/write_text_file", `{"sessionId":"$S","path":"/x","content":""}`},
		{"fs/write_text_file", `{"sessionId":"$S","path":"/x"}`},
		{"session/request_permission", `{"sessionId":"$S","toolCall":{"toolCallId":"c"},"options":[{"optionId":"a","name":"A","kind":"allow_once"}]}`},
		{"session/request_permission", `{"sessionId":"$S","toolCall":{"toolCallId":"c"},"options":[]}`},
		{"session/update", `{"sessionId":"$S","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"hi"}}}`},
		{"session/update", `{"sessionId":"$S","update":{"sessionUpdate":"tool_call","toolCallId":"c","title":"t","_meta":{"terminal_info":{"terminal_id":"c"}}}}`},
		{"session/update", `{"sessionId":"nope","update":{}}`},
		{"terminal/frobnicate", `{}`},
	}
	for _, sd := range seeds {
		f.Add(index[sd.method], []byte(sd.params))
	}
	codes := map[int]bool{codeInvalidParams: true, codeInternalError: true, codeResourceNotFound: true, -32601: true, -32800: true}
	f.Fuzz(func(t *testing.T, m uint8, params []byte) {
		method := fuzzMethods[int(m)%len(fuzzMethods)]
		params = bytes.ReplaceAll(params, []byte("$S"), []byte(s.id))
		if ts := s.Terminals(); len(ts) > 0 {
			params = bytes.ReplaceAll(params, []byte("$T"), []byte(ts[0].ID()))
		}
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
		defer cancel()
		// The table's functions, not a.handle: a panic must fail the fuzz
		// run with its stack, not turn into an internal error.
		var result any
		var rerr *acpsdk.RequestError
		if fn, ok := a.table[method]; ok {
			result, rerr = fn(ctx, params)
		} else {
			result, rerr = a.handle(ctx, method, params)
		}
		if created, ok := result.(createTerminalResponse); ok {
			// Keep the process count bounded over millions of runs.
			if term, ok := s.Terminal(created.TerminalID); ok {
				term.Release()
				s.mu.Lock()
				delete(s.terminals, created.TerminalID)
				s.mu.Unlock()
			}
		}
		switch {
		case rerr != nil && result != nil:
			t.Fatalf("%s %q: both a result %#v and an error %+v", method, params, result, rerr)
		case rerr != nil:
			if !codes[rerr.Code] || strings.TrimSpace(rerr.Message) == "" {
				t.Fatalf("%s %q: error %+v has an unknown code or no message", method, params, rerr)
			}
		case result == nil && method != acpsdk.ClientMethodSessionUpdate:
			t.Fatalf("%s %q: neither a result nor an error", method, params)
		default:
			if _, err := json.Marshal(result); err != nil {
				t.Fatalf("%s %q: result %#v does not marshal: %v", method, params, result, err)
			}
		}
	})
}

// FuzzUpdateFilter feeds arbitrary agent stdout through the filter in
// front of the connection: nothing is lost or reordered — what it passes
// on is the input without the lines it took, and it takes exactly the
// session/update notifications and the lines that cannot be JSON-RPC.
func FuzzUpdateFilter(f *testing.F) {
	for _, seed := range []string{
		`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":{}}}` + "\n",
		`{"jsonrpc":"2.0","id":1,"method":"session/update","params":{}}` + "\n",
		`{"jsonrpc":"2.0","id":2,"result":{}}` + "\nbanner line\n\n  \n[1]\n",
		"no newline at the end",
		`{"method":"session/update"` + "\n" + `,"params":{}}`,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var took [][]byte
		filter := newUpdateFilter(bytes.NewReader(data), func(p json.RawMessage) {
			if p != nil && !json.Valid(p) { // absent params are nil (the update is then dropped)
				t.Fatalf("update params %q are not JSON", p)
			}
			took = append(took, nil)
		})
		filter.onNonJSON = func([]byte) { took = append(took, nil) }
		var out bytes.Buffer
		buf := make([]byte, 7) // small reads exercise the buffering
		for {
			n, err := filter.Read(buf)
			out.Write(buf[:n])
			if err != nil {
				break
			}
		}
		var want bytes.Buffer
		taken := 0
		for rest := data; len(rest) > 0; {
			line := rest
			if i := bytes.IndexByte(rest, '\n'); i >= 0 {
				line = rest[:i+1]
			}
			rest = rest[len(line):]
			if filteredOut(line) {
				taken++
				continue
			}
			want.Write(line)
		}
		if !bytes.Equal(out.Bytes(), want.Bytes()) {
			t.Fatalf("passed on %q\nwant      %q", out.Bytes(), want.Bytes())
		}
		if len(took) != taken {
			t.Fatalf("took %d lines, want %d", len(took), taken)
		}
	})
}

// filteredOut is the filter's rule for one line, written out plainly.
func filteredOut(line []byte) bool {
	t := bytes.TrimSpace(line)
	if len(t) > 0 && t[0] != '{' && t[0] != '[' {
		return true
	}
	var head struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
	}
	return json.Unmarshal(line, &head) == nil && head.Method == acpsdk.ClientMethodSessionUpdate && head.ID == nil
}
