package demoagent

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	acpsdk "github.com/coder/acp-go-sdk"
)

// countAndLine splits "N CMD" for the benchmark forms.
func countAndLine(arg string, max int) (int, string, error) {
	ns, line, _ := strings.Cut(arg, " ")
	n, err := strconv.Atoi(ns)
	if err != nil || n < 1 || n > max {
		return 0, "", fmt.Errorf("want a count from 1 to %d and a command, got %q", max, arg)
	}
	if strings.TrimSpace(line) == "" {
		return 0, "", fmt.Errorf("want a command after the count %d", n)
	}
	return n, strings.TrimSpace(line), nil
}

// parallelResult is what one terminal of !parallel gave.
type parallelResult struct {
	exitCode *int
	signal   *string
	sum      string
	bytes    int
	exited   time.Time // when wait_for_exit answered
	err      error
}

// runParallel runs line in n client terminals at once (its {i} the
// terminal's number, 1 to n), each embedded in its own tool call, and reports how long the agent waited (the first
// create to the last wait_for_exit answer; reading the output afterwards
// is not counted: decoding a big text is this agent's own cost), how many
// exited 0 and whether every output was the same (by SHA-256): the
// benchmark's view of the agent path.
func (d *demo) runParallel(ctx context.Context, s *session, arg string) (acpsdk.StopReason, error) {
	n, line, err := countAndLine(arg, 256)
	if err != nil {
		return d.say(s, "!parallel: "+err.Error())
	}
	start := time.Now()
	results := make([]parallelResult, n)
	var wg sync.WaitGroup
	for i := range results {
		wg.Add(1)
		go func(r *parallelResult, line string) {
			defer wg.Done()
			*r = d.runOne(ctx, s, line)
		}(&results[i], strings.ReplaceAll(line, "{i}", strconv.Itoa(i+1)))
	}
	wg.Wait()
	var elapsed time.Duration
	for _, r := range results {
		elapsed = max(elapsed, r.exited.Sub(start))
	}

	ok, sums := 0, map[string]int{}
	var firstErr error
	for _, r := range results {
		if r.err != nil {
			if firstErr == nil {
				firstErr = r.err
			}
			continue
		}
		if r.exitCode != nil && *r.exitCode == 0 {
			ok++
		}
		sums[r.sum]++
	}
	if firstErr != nil {
		return d.say(s, fmt.Sprintf("!parallel: %s", errText(firstErr)))
	}
	common, most := "", 0
	for sum, k := range sums {
		if k > most {
			common, most = sum, k
		}
	}
	return d.say(s, fmt.Sprintf("parallel n=%d exit0=%d identical=%d sha256=%s bytes=%d elapsed_ms=%d\n",
		n, ok, most, common, results[0].bytes, elapsed.Milliseconds()))
}

// runOne runs line in one terminal inside its own tool call and returns the
// exit and a digest of the output.
func (d *demo) runOne(ctx context.Context, s *session, line string) parallelResult {
	sid := acpsdk.SessionId(s.id)
	cwd := s.cwd
	term, err := d.conn.CreateTerminal(d.ctx, acpsdk.CreateTerminalRequest{
		SessionId: sid, Command: line, Cwd: &cwd, OutputByteLimit: acpsdk.Ptr(DefaultOutputByteLimit),
	})
	if err != nil {
		return parallelResult{err: err}
	}
	tid := term.TerminalId
	toolID := acpsdk.ToolCallId(d.id("call"))
	content := []acpsdk.ToolCallContent{acpsdk.ToolTerminalRef(tid)}
	_ = d.update(s, acpsdk.StartToolCall(toolID, line, acpsdk.WithStartKind(acpsdk.ToolKindExecute),
		acpsdk.WithStartStatus(acpsdk.ToolCallStatusInProgress), acpsdk.WithStartContent(content)))
	defer func() {
		_, _ = d.conn.ReleaseTerminal(d.ctx, acpsdk.ReleaseTerminalRequest{SessionId: sid, TerminalId: tid})
	}()
	w, err := d.conn.WaitForTerminalExit(ctx, acpsdk.WaitForTerminalExitRequest{SessionId: sid, TerminalId: tid})
	if err != nil {
		return parallelResult{err: err}
	}
	exited := time.Now()
	out, err := d.conn.TerminalOutput(d.ctx, acpsdk.TerminalOutputRequest{SessionId: sid, TerminalId: tid})
	if err != nil {
		return parallelResult{err: err}
	}
	status := acpsdk.ToolCallStatusCompleted
	if w.ExitCode == nil || *w.ExitCode != 0 {
		status = acpsdk.ToolCallStatusFailed
	}
	_ = d.update(s, acpsdk.UpdateToolCall(toolID, acpsdk.WithUpdateStatus(status)))
	sum := sha256.Sum256([]byte(out.Output))
	return parallelResult{exitCode: w.ExitCode, signal: w.Signal, sum: hex.EncodeToString(sum[:8]), bytes: len(out.Output), exited: exited}
}

// outputLatency runs line to its end, then calls terminal/output n times
// and reports the retained size and the p50/p99 round-trip latency.
func (d *demo) outputLatency(ctx context.Context, s *session, arg string) (acpsdk.StopReason, error) {
	n, line, err := countAndLine(arg, 100000)
	if err != nil {
		return d.say(s, "!outputlat: "+err.Error())
	}
	sid := acpsdk.SessionId(s.id)
	cwd := s.cwd
	term, err := d.conn.CreateTerminal(d.ctx, acpsdk.CreateTerminalRequest{
		SessionId: sid, Command: line, Cwd: &cwd, OutputByteLimit: acpsdk.Ptr(DefaultOutputByteLimit),
	})
	if err != nil {
		return d.say(s, "!outputlat: "+errText(err))
	}
	tid := term.TerminalId
	defer func() {
		_, _ = d.conn.ReleaseTerminal(d.ctx, acpsdk.ReleaseTerminalRequest{SessionId: sid, TerminalId: tid})
	}()
	if _, err := d.conn.WaitForTerminalExit(ctx, acpsdk.WaitForTerminalExitRequest{SessionId: sid, TerminalId: tid}); err != nil {
		return d.say(s, "!outputlat: "+errText(err))
	}
	lat := make([]time.Duration, 0, n)
	retained := 0
	for i := 0; i < n; i++ {
		t0 := time.Now()
		out, err := d.conn.TerminalOutput(d.ctx, acpsdk.TerminalOutputRequest{SessionId: sid, TerminalId: tid})
		if err != nil {
			return d.say(s, "!outputlat: "+errText(err))
		}
		lat = append(lat, time.Since(t0))
		retained = len(out.Output)
	}
	sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
	pct := func(p float64) float64 { return float64(lat[int(float64(len(lat)-1)*p)].Microseconds()) / 1000 }
	return d.say(s, fmt.Sprintf("outputlat n=%d retained=%d p50_ms=%.3f p99_ms=%.3f\n", n, retained, pct(0.5), pct(0.99)))
}
