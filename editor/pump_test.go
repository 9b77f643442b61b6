package editor

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
	gate     chan struct{} // when set, sends block until it is closed
}

func (s *sink) send(p []byte) error {
	if s.inFlight.Add(1) > 1 {
		s.overlap.Store(true)
	}
	defer s.inFlight.Add(-1)
	if s.gate != nil {
		<-s.gate
	}
	time.Sleep(s.delay)
	s.mu.Lock()
	defer s.mu.Unlock()
	s.buf.Write(p)
	s.sends++
	return nil
}

func (s *sink) text() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.buf.String()
}

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
		{"echo hi", "hi\r\n\x1b[0m[exit 0]\r\n[released]"},
		{"printf 'no newline'; exit 3", "no newline\x1b[0m\r\n[exit 3]\r\n[released]"},
		{"kill -TERM $$", "\x1b[0m[signal SIGTERM]\r\n[released]"},
	}
	for _, tc := range tests {
		t.Run(tc.line, func(t *testing.T) {
			h := termhost.NewHost(termhost.Options{})
			defer h.Close()
			term := startTerminal(t, h, tc.line)
			released := make(chan struct{})
			s := &sink{}
			p := startPump(context.Background(), term, released, s.send, pumpOptions{MaxLines: 100}, slog.New(slog.DiscardHandler))
			waitDone(t, term.Done(), "the command to finish")
			term.Release()
			close(released)
			waitDone(t, p.done, "the pump to finish")
			if got := s.text(); got != tc.want {
				t.Errorf("display got %q, want %q", got, tc.want)
			}
			if !p.finished() {
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

	got := s.text()
	if !strings.Contains(got, "bytes skipped …]") {
		t.Errorf("no skip marker in %d bytes shown", len(got))
	}
	var tail strings.Builder
	for i := 50000 - 199; i <= 50000; i++ {
		fmt.Fprintf(&tail, "%d\r\n", i)
	}
	want := tail.String() + "\x1b[0m[exit 0]\r\n[released]"
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

func TestAdaptChunk(t *testing.T) {
	tests := []struct {
		chunk, n int
		d        time.Duration
		want     int
	}{
		{64 << 10, 64 << 10, time.Millisecond, 128 << 10},      // quick full send: grow
		{64 << 10, 100, time.Millisecond, 64 << 10},            // quick small send: keep
		{64 << 10, 64 << 10, 100 * time.Millisecond, 32 << 10}, // slow: shrink
		{256 << 10, 256 << 10, time.Millisecond, 256 << 10},    // capped
		{8 << 10, 8 << 10, time.Second, 8 << 10},               // floored
		{64 << 10, 64 << 10, 20 * time.Millisecond, 64 << 10},  // on target: keep
	}
	for _, tc := range tests {
		if got := adaptChunk(tc.chunk, tc.n, tc.d); got != tc.want {
			t.Errorf("adaptChunk(%d, %d, %v) = %d, want %d", tc.chunk, tc.n, tc.d, got, tc.want)
		}
	}
}
