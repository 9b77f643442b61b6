package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"sync"
	"time"

	acpsdk "github.com/coder/acp-go-sdk"

	"github.com/agentrun/agentrun.nvim/acp"
	"github.com/agentrun/agentrun.nvim/termhost"
)

// outputLatency is terminal/output's latency on a big retained text, seen
// from both ends of the same calls.
type outputLatency struct {
	calls, retained int
	// agentP50, agentP99 are the demo agent's round trips (ms): request
	// sent → response decoded by the SDK, its JSON decoding included.
	agentP50, agentP99 string
	// server are acp's own times: request handed to our handler →
	// response's last byte written to the agent's stdin; writing is the
	// part of it spent in write(2) (a full pipe waits for the agent).
	server, writing []time.Duration
}

// measureOutputLatency runs the demo agent's "!outputlat n cmd" against
// the acp client in this process (the code the binary runs, without
// Neovim, which terminal/output never touches) and collects acp's debug
// record of every spliced answer.
func measureOutputLatency(n int, cmd string) (outputLatency, error) {
	var res outputLatency
	root, err := os.Getwd()
	if err != nil {
		return res, err
	}
	rec := &recordHandler{msg: "terminal/output answered"}
	host := termhost.NewHost(termhost.Options{})
	defer host.Close()
	ed := &replyEditor{}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	a, err := acp.Start(ctx, acp.AgentConfig{Name: "demo", Command: []string{filepath.Join(root, "bin/agentrun"), "demo-agent"}},
		ed, acp.Options{Host: host, Logger: slog.New(rec)})
	if err != nil {
		return res, fmt.Errorf("start the demo agent: %w", err)
	}
	defer a.Close()
	s, err := a.NewSession(ctx, root)
	if err != nil {
		return res, err
	}
	if _, err := s.Prompt(ctx, fmt.Sprintf("!outputlat %d %s", n, cmd)); err != nil {
		return res, err
	}
	m := regexp.MustCompile(`outputlat n=(\d+) retained=(\d+) p50_ms=([0-9.]+) p99_ms=([0-9.]+)`).FindStringSubmatch(ed.text())
	if m == nil {
		return res, fmt.Errorf("demo agent said %q", ed.text())
	}
	fmt.Sscan(m[1], &res.calls)
	fmt.Sscan(m[2], &res.retained)
	res.agentP50, res.agentP99 = m[3], m[4]
	res.server, res.writing = rec.durations()
	if len(res.server) != res.calls {
		return res, fmt.Errorf("acp recorded %d spliced answers for %d calls", len(res.server), res.calls)
	}
	return res, nil
}

// printOutputLatency measures terminal/output on 1 MiB retained (3 MB
// printed with the demo agent's 1 MiB limit) and prints both views.
func printOutputLatency(line string) error {
	r, err := measureOutputLatency(500, "yes "+line+" | head -c 3000000")
	if err != nil {
		return err
	}
	fmt.Printf("  terminal/output on %d bytes retained, %d calls (target p99 ≤ 2 ms):\n", r.retained, r.calls)
	own := make([]time.Duration, len(r.server))
	for i := range own {
		own[i] = r.server[i] - r.writing[i]
	}
	fmt.Printf("    ours, request in → last byte written:      p50 %6.3f ms, p99 %6.3f ms\n", percentile(r.server, 0.5), percentile(r.server, 0.99))
	fmt.Printf("      of which in write(2) to the agent's pipe: p50 %6.3f ms, p99 %6.3f ms  (a full pipe waits for the agent to read)\n", percentile(r.writing, 0.5), percentile(r.writing, 0.99))
	fmt.Printf("      the rest (snapshot, encoding, dispatch):  p50 %6.3f ms, p99 %6.3f ms\n", percentile(own, 0.5), percentile(own, 0.99))
	fmt.Printf("    demo agent round trip (+ its SDK's JSON decoding): p50 %s ms, p99 %s ms\n", r.agentP50, r.agentP99)
	return nil
}

// agentPathHeadless runs "!parallel 1 cat file" against the acp client in
// this process with no display at all, returning the demo agent's elapsed
// time: the agent path without Neovim competing for the CPU.
func agentPathHeadless(file string) (time.Duration, error) {
	root, err := os.Getwd()
	if err != nil {
		return 0, err
	}
	host := termhost.NewHost(termhost.Options{})
	defer host.Close()
	ed := &replyEditor{}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	a, err := acp.Start(ctx, acp.AgentConfig{Name: "demo", Command: []string{filepath.Join(root, "bin/agentrun"), "demo-agent"}},
		ed, acp.Options{Host: host})
	if err != nil {
		return 0, fmt.Errorf("start the demo agent: %w", err)
	}
	defer a.Close()
	s, err := a.NewSession(ctx, root)
	if err != nil {
		return 0, err
	}
	if _, err := s.Prompt(ctx, "!parallel 1 cat "+file); err != nil {
		return 0, err
	}
	m := parallelRe(1).FindStringSubmatch(ed.text())
	if m == nil {
		return 0, fmt.Errorf("demo agent said %q", ed.text())
	}
	var elapsed int
	fmt.Sscan(m[6], &elapsed)
	return time.Duration(elapsed) * time.Millisecond, nil
}

// percentile returns the q-quantile (0..1) of ds in ms.
func percentile(ds []time.Duration, q float64) float64 {
	s := append([]time.Duration(nil), ds...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	return ms(s[int(float64(len(s)-1)*q)])
}

// recordHandler is a slog.Handler keeping the "took" and "writing" of
// records with msg.
type recordHandler struct {
	msg           string
	mu            sync.Mutex
	took, writing []time.Duration
}

func (h *recordHandler) Enabled(context.Context, slog.Level) bool { return true }
func (h *recordHandler) WithAttrs([]slog.Attr) slog.Handler       { return h }
func (h *recordHandler) WithGroup(string) slog.Handler            { return h }

func (h *recordHandler) Handle(_ context.Context, r slog.Record) error {
	if r.Message != h.msg {
		return nil
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	r.Attrs(func(a slog.Attr) bool {
		switch a.Key {
		case "took":
			h.took = append(h.took, a.Value.Duration())
		case "writing":
			h.writing = append(h.writing, a.Value.Duration())
		}
		return true
	})
	return nil
}

func (h *recordHandler) durations() (took, writing []time.Duration) {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]time.Duration(nil), h.took...), append([]time.Duration(nil), h.writing...)
}

// replyEditor keeps the agent's message text and refuses everything else.
type replyEditor struct {
	mu  sync.Mutex
	buf strings.Builder
}

func (e *replyEditor) text() string {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.buf.String()
}

func (e *replyEditor) SessionUpdate(_ context.Context, n acpsdk.SessionNotification) {
	if c := n.Update.AgentMessageChunk; c != nil && c.Content.Text != nil {
		e.mu.Lock()
		e.buf.WriteString(c.Content.Text.Text)
		e.mu.Unlock()
	}
}

var errRefused = errors.New("the benchmark editor does not do that")

func (e *replyEditor) RequestPermission(context.Context, acpsdk.RequestPermissionRequest) (acpsdk.RequestPermissionResponse, error) {
	return acpsdk.RequestPermissionResponse{}, errRefused
}

func (e *replyEditor) ReadTextFile(context.Context, acpsdk.ReadTextFileRequest) (acpsdk.ReadTextFileResponse, error) {
	return acpsdk.ReadTextFileResponse{}, errRefused
}

func (e *replyEditor) WriteTextFile(context.Context, acpsdk.WriteTextFileRequest) (acpsdk.WriteTextFileResponse, error) {
	return acpsdk.WriteTextFileResponse{}, errRefused
}

func (e *replyEditor) TerminalCreated(context.Context, string, string)  {}
func (e *replyEditor) TerminalReleased(context.Context, string, string) {}
func (e *replyEditor) SessionEnded(context.Context, string, error)      {}
