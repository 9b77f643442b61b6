package display

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agentrun/agentrun.nvim/internal/vtsafe"
	"github.com/agentrun/agentrun.nvim/internal/wait"
	"github.com/agentrun/agentrun.nvim/termhost"
)

// sink records what a pump sends, as a Neovim channel would receive it.
type sink struct {
	mu       sync.Mutex
	buf      bytes.Buffer
	sends    int
	inFlight atomic.Int32
	overlap  atomic.Bool
	delay    time.Duration // how long each send takes
	perByte  time.Duration // and how long per byte (Neovim's cost grows with the size)
	gate     chan struct{} // when set, sends block until it is closed
	spans    []span        // when each send ran, and how big it was
}

type span struct {
	start, end time.Time
	n          int
}

func (s *sink) send(p []byte) error {
	if s.inFlight.Add(1) > 1 {
		s.overlap.Store(true)
	}
	defer s.inFlight.Add(-1)
	if s.gate != nil {
		<-s.gate
	}
	start := time.Now()
	time.Sleep(s.delay + time.Duration(len(p))*s.perByte)
	s.mu.Lock()
	defer s.mu.Unlock()
	s.buf.Write(p)
	s.sends++
	s.spans = append(s.spans, span{start, time.Now(), len(p)})
	return nil
}

// text is what was sent, each write's vtsafe.Guard and the vtsafe.Reset
// before the pump's own lines shown as "|" and "<reset>".
func (s *sink) text() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return strings.NewReplacer(shownReset, "<reset>", vtsafe.Guard, "|").Replace(s.buf.String())
}

// shownReset is vtsafe.Reset as the filter sends it (with the clamp it
// puts after DECRC).
var shownReset = string(new(vtsafe.Filter).Append(nil, []byte(vtsafe.Reset)))

func startTerminal(t *testing.T, h *termhost.Host, line string) *termhost.Terminal {
	t.Helper()
	term, err := h.Create(context.Background(), termhost.Spec{Command: line, Shell: true, Dir: t.TempDir()})
	if err != nil {
		t.Fatalf("create %q: %v", line, err)
	}
	return term
}

func waitDone(t *testing.T, done <-chan struct{}, what string) {
	t.Helper()
	select {
	case <-done:
	case <-time.After(20 * time.Second):
		t.Fatalf("timed out waiting for %s", what)
	}
}

func TestPumpShowsOutputExitAndRelease(t *testing.T) {
	tests := []struct {
		line string
		want string
	}{
		{"echo hi", "|hi\r\n|<reset>[exit 0]|<reset>\r\n[released]"},
		{"printf 'no newline'; exit 3", "|no newline|<reset>\r\n[exit 3]|<reset>\r\n[released]"},
		{"kill -TERM $$", "|<reset>[signal SIGTERM]|<reset>\r\n[released]"},
	}
	for _, tc := range tests {
		t.Run(tc.line, func(t *testing.T) {
			h := termhost.NewHost(termhost.Options{})
			defer h.Close()
			term := startTerminal(t, h, tc.line)
			released := make(chan struct{})
			s := &sink{}
			var ended [][]string // what display_ended tells Lua, each time
			opts := pumpOptions{MaxLines: 100, Ended: func(lines []string) { ended = append(ended, lines) }}
			p := startPump(context.Background(), term, released, s.send, opts, slog.New(slog.DiscardHandler))
			waitDone(t, term.Done(), "the command to finish")
			term.Release()
			close(released)
			waitDone(t, p.done, "the pump to finish")
			got := s.text()
			if got != tc.want {
				t.Errorf("display got %q, want %q", got, tc.want)
			}
			// Lua looks for these very lines in the split (ui/termend.lua):
			// they are what the display ends with, as written.
			if len(ended) != 2 || len(ended[1]) != 2 || !strings.HasSuffix(got, ended[1][0]+"|<reset>\r\n"+ended[1][1]) || !strings.HasSuffix(strings.TrimSuffix(got, "|<reset>\r\n[released]"), ended[0][0]) {
				t.Errorf("Ended was told %q; the display ends %q", ended, got)
			}
			if !p.Finished() {
				t.Error("pump not marked finished")
			}
		})
	}
}

// TestPumpSkipsToTheTailWhenBehind: with a slow Neovim the pump falls
// behind a flood, skips ahead with a marker, and the display ends with
// exactly the newest lines; one send at a time.
func TestPumpSkipsToTheTailWhenBehind(t *testing.T) {
	h := termhost.NewHost(termhost.Options{})
	defer h.Close()
	term := startTerminal(t, h, "seq 1 50000")
	s := &sink{delay: 10 * time.Millisecond}
	released := make(chan struct{})
	p := startPump(context.Background(), term, released, s.send, pumpOptions{MaxLines: 200}, slog.New(slog.DiscardHandler))
	waitDone(t, term.Done(), "seq to finish")
	close(released)
	waitDone(t, p.done, "the pump to finish")

	got := strings.ReplaceAll(s.text(), "|", "") // where the writes began does not matter here
	if !strings.Contains(got, "bytes skipped …]") {
		t.Errorf("no skip marker in %d bytes shown", len(got))
	}
	var tail strings.Builder
	for i := 50000 - 199; i <= 50000; i++ {
		fmt.Fprintf(&tail, "%d\r\n", i)
	}
	want := tail.String() + "<reset>[exit 0]<reset>\r\n[released]"
	if !strings.HasSuffix(got, want) {
		end := got[max(0, len(got)-200):]
		t.Errorf("display does not end with the newest 200 lines and the exit line; ends with %q", end)
	}
	if s.overlap.Load() {
		t.Error("more than one nvim_chan_send was in flight")
	}
	t.Logf("%d sends, %d bytes shown of %d printed", s.sends, len(got), term.BytesSeen())
}

// TestPumpNeverSlowsTheCommand: with Neovim not reading at all, the
// command still runs to the end and its output is complete for the agent.
func TestPumpNeverSlowsTheCommand(t *testing.T) {
	h := termhost.NewHost(termhost.Options{})
	defer h.Close()
	term := startTerminal(t, h, "seq 1 20000")
	s := &sink{gate: make(chan struct{})}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	p := startPump(ctx, term, make(chan struct{}), s.send, pumpOptions{MaxLines: 100}, slog.New(slog.DiscardHandler))
	waitDone(t, term.Done(), "seq to finish while the display is stuck")
	out := term.Output()
	if !strings.HasSuffix(out.Text, "19999\n20000\n") || out.Truncated {
		t.Errorf("agent output incomplete: truncated=%v, ends %q", out.Truncated, out.Text[max(0, len(out.Text)-30):])
	}
	close(s.gate)
	cancel()
	waitDone(t, p.done, "the pump to stop")
}

// TestPumpLeavesNeovimIdle: while commands print faster than Neovim
// takes it (but not so much that the display must skip), the pumps of all
// terminals (sharing one pacer) send one at a time, keep each send near
// the target duration by shrinking chunks when sends run long, and leave
// Neovim idle at least four times as long as they kept it busy.
func TestPumpLeavesNeovimIdle(t *testing.T) {
	h := termhost.NewHost(termhost.Options{})
	defer h.Close()
	s := &sink{perByte: 4 * time.Microsecond} // 2 KiB: 8 ms, far over the target
	pc := newPacer()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var pumps []*Pump
	for i := 0; i < 2; i++ {
		term := startTerminal(t, h, "while :; do seq 1 300; sleep 0.01; done")
		pumps = append(pumps, startPump(ctx, term, make(chan struct{}), s.send, pumpOptions{MaxLines: 1 << 20, Pacer: pc}, slog.New(slog.DiscardHandler)))
	}
	s.waitSends(t, 60)
	cancel()
	for _, p := range pumps {
		waitDone(t, p.done, "the pump to stop")
	}
	if s.overlap.Load() {
		t.Error("two pumps sent at the same time")
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	spans := s.spans[20:] // past the first adaptation steps
	var busy time.Duration
	for _, sp := range spans {
		busy += sp.end.Sub(sp.start)
		if sp.n > 512+64 {
			t.Errorf("a send of %d bytes after adapting (chunks should be the 512-byte floor at 4µs a byte)", sp.n)
		}
	}
	total := spans[len(spans)-1].end.Sub(spans[0].start)
	if share := float64(busy) / float64(total); share > 0.25 {
		t.Errorf("Neovim busy with sends %.0f%% of the time while the commands run, want at most 20%% (+5%% slack)", 100*share)
	}
	t.Logf("%d sends, busy %v of %v", len(spans), busy, total)
}

// TestPumpCatchUpSendsAreBounded: the catch-up after the exit may use
// longer sends, but never more bytes than pumpTargetCatchUp's worth at
// what a byte costs Neovim (a key typed meanwhile waits a few ms at most).
// Bytes, not durations, are checked: a loaded machine only makes sends
// look slower, which shrinks the chunks.
func TestPumpCatchUpSendsAreBounded(t *testing.T) {
	h := termhost.NewHost(termhost.Options{})
	defer h.Close()
	s := &sink{perByte: time.Microsecond / 4, gate: make(chan struct{})} // 4 KiB: about 1 ms
	term := startTerminal(t, h, "seq 1 40000")
	waitDone(t, term.Done(), "the command's exit")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	p := startPump(ctx, term, make(chan struct{}), s.send, pumpOptions{MaxLines: 1 << 20}, slog.New(slog.DiscardHandler))
	close(s.gate)
	wait.For(t, "the exit line", 20*time.Second, func() bool { return strings.Contains(s.text(), "[exit 0]") })
	cancel()
	waitDone(t, p.done, "the pump to stop")
	s.mu.Lock()
	defer s.mu.Unlock()
	most := int(2*pumpTargetCatchUp/s.perByte) + 1024 // an adaptation step's overshoot, the guard and the filter's bytes
	for _, sp := range s.spans {
		if sp.n > most {
			t.Errorf("a catch-up send of %d bytes (%v of Neovim's time at %v a byte), want at most %d", sp.n, time.Duration(sp.n)*s.perByte, s.perByte, most)
		}
	}
	t.Logf("%d sends", len(s.spans))
}

// TestCatchUpTakesFewerRoundTrips: with what each send costs Neovim (per
// byte, as on 0.7.2 and on 0.12), the catch-up's target needs fewer sends
// for a flood's 80 KB of scrollback than the running target would, and
// none of them takes much longer than pumpTargetCatchUp.
func TestCatchUpTakesFewerRoundTrips(t *testing.T) {
	sends := func(target, perByte time.Duration) (n int, longest time.Duration) {
		chunk := pumpFirstChunk
		for left := 80 << 10; left > 0; left -= min(chunk, left) {
			sent := min(chunk, left)
			d := time.Duration(sent) * perByte
			longest = max(longest, d)
			n++
			chunk = adaptChunk(chunk, sent, d, target)
		}
		return n, longest
	}
	for _, perByte := range []time.Duration{time.Microsecond, time.Microsecond / 4} {
		running, _ := sends(pumpTargetSend, perByte)
		catchUp, longest := sends(pumpTargetCatchUp, perByte)
		if 2*catchUp > running {
			t.Errorf("at %v a byte: the catch-up took %d sends, the running target %d: want at most half", perByte, catchUp, running)
		}
		if longest > pumpTargetCatchUp*3/2 {
			t.Errorf("at %v a byte: a catch-up send took %v, want about %v", perByte, longest, pumpTargetCatchUp)
		}
	}
}

// TestPumpFloodSendsOncePerFrame: a display further behind than its
// scrollback while the command still runs (Neovim takes 1µs a byte, the
// command prints megabytes a second) sends only once per frame.
func TestPumpFloodSendsOncePerFrame(t *testing.T) {
	h := termhost.NewHost(termhost.Options{})
	defer h.Close()
	s := &sink{perByte: time.Microsecond}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	term := startTerminal(t, h, "while :; do seq 1 2000; done")
	p := startPump(ctx, term, make(chan struct{}), s.send, pumpOptions{MaxLines: 100}, slog.New(slog.DiscardHandler))
	s.waitSends(t, 15)
	cancel()
	waitDone(t, p.done, "the pump to stop")
	s.mu.Lock()
	defer s.mu.Unlock()
	// Frames bound the send rate. One gap can look short when the sink
	// noted the previous send's start late (a loaded machine), so the test
	// checks the average over the run: without frames the sends would come
	// a few ms apart, ten times as many in the same time.
	first, last := s.spans[3].start, s.spans[len(s.spans)-1].start
	gaps := len(s.spans) - 1 - 3
	if avg := last.Sub(first) / time.Duration(gaps); avg < pumpFloodFrame*3/4 {
		t.Errorf("%d sends came %v apart on average, want about a frame (%v)", gaps+1, avg, pumpFloodFrame)
	}
}

// waitSends waits until the sink has seen n sends.
func (s *sink) waitSends(t *testing.T, n int) {
	t.Helper()
	wait.Until(t, fmt.Sprintf("%d sends", n), 20*time.Second, func() (bool, string) {
		s.mu.Lock()
		got := len(s.spans)
		s.mu.Unlock()
		return got >= n, fmt.Sprintf("%d sends", got)
	})
}

func TestAdaptChunk(t *testing.T) {
	ms := time.Millisecond
	// The catch-up's target of 4 ms: 2 ms is quick for it, 8 ms slow.
	if got := adaptChunk(4<<10, 4<<10, ms, 4*ms); got != 8<<10 {
		t.Errorf("a full 1 ms send with a 4 ms target: chunk %d, want it doubled to %d", got, 8<<10)
	}
	if got := adaptChunk(8<<10, 8<<10, 8*ms, 4*ms); got != 4<<10 {
		t.Errorf("an 8 ms send with a 4 ms target: chunk %d, want it halved to %d", got, 4<<10)
	}
	tests := []struct {
		chunk, n int
		d        time.Duration
		want     int
	}{
		{4 << 10, 4 << 10, ms / 4, 8 << 10},    // quick full send: grow
		{4 << 10, 100, ms / 4, 4 << 10},        // quick small send says nothing: keep
		{4 << 10, 4 << 10, 2 * ms, 2 << 10},    // slow: cut in proportion to the target
		{4 << 10, 4 << 10, 100 * ms, 1 << 10},  // very slow: at most a quarter per step
		{4 << 10, 100, 20 * ms, 4 << 10},       // slow small send (Neovim busy elsewhere): keep
		{64 << 10, 64 << 10, ms / 4, 64 << 10}, // capped
		{512, 512, time.Second, 512},           // floored
		{4 << 10, 4 << 10, ms, 4 << 10},        // on target: keep
		{8 << 10, 4 << 10, 3 * ms, 2 << 10},    // half a chunk, slow: cut, at most to a quarter
	}
	for _, tc := range tests {
		if got := adaptChunk(tc.chunk, tc.n, tc.d, ms); got != tc.want {
			t.Errorf("adaptChunk(%d, %d, %v) = %d, want %d", tc.chunk, tc.n, tc.d, got, tc.want)
		}
	}
}

func TestSkipMarker(t *testing.T) {
	tests := []struct {
		atLineStart bool
		want        string
	}{
		{true, vtsafe.Reset + "[… 42 bytes skipped …]\r\n"},
		// the line the skip cut ends in "…": its head is not a whole line
		{false, vtsafe.Reset + "…\r\n[… 42 bytes skipped …]\r\n"},
	}
	for _, tc := range tests {
		if got := string(skipMarker(nil, tc.atLineStart, 42)); got != tc.want {
			t.Errorf("skipMarker(atLineStart %v) = %q, want %q", tc.atLineStart, got, tc.want)
		}
	}
}

func TestLogBytes(t *testing.T) {
	tests := []struct{ scrollback, want int }{
		{0, 1000000},        // not given: the default scrollback
		{10000, 1000000},    // the default scrollback: ~1 MiB
		{1, 64 << 10},       // floor
		{100000, 10000000},  // the largest 'scrollback'
		{1 << 30, 16 << 20}, // cap
	}
	for _, tc := range tests {
		if got := LogBytes(tc.scrollback); got != tc.want {
			t.Errorf("LogBytes(%d) = %d, want %d", tc.scrollback, got, tc.want)
		}
	}
}

// TestEndLine: a split ends with how its command ended, and a command
// stopped by an interrupt reads "[interrupted]", as its status line, the
// list and the chat say it (not a failure's signal).
func TestEndLine(t *testing.T) {
	code := func(n int) *int { return &n }
	tests := []struct {
		st   termhost.ExitStatus
		want string
	}{
		{termhost.ExitStatus{Code: code(0)}, "[exit 0]"},
		{termhost.ExitStatus{Code: code(1)}, "[exit 1]"},
		{termhost.ExitStatus{Signal: "SIGTERM"}, "[signal SIGTERM]"},
		{termhost.ExitStatus{Signal: "SIGINT"}, "[interrupted]"},
		{termhost.ExitStatus{Code: code(130)}, "[interrupted]"}, // a shell's end after SIGINT
	}
	for _, tc := range tests {
		if got := EndLine(tc.st); got != tc.want {
			t.Errorf("EndLine(%v) = %q, want %q", tc.st, got, tc.want)
		}
	}
}
