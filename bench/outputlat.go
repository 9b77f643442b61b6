//go:build linux

package main

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"time"

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
	// took is the client's time from the request in (handed to our
	// handler; parsed, for the ideal client) to the response's last byte
	// written to the agent's stdin; writing is the part of it spent in
	// write(2) (a full pipe waits for the agent to read).
	took, writing []time.Duration
}

var outputlatRe = regexp.MustCompile(`outputlat n=(\d+) retained=(\d+) p50_ms=([0-9.]+) p99_ms=([0-9.]+)`)

// parseOutputlat reads the demo agent's "!outputlat" report.
func parseOutputlat(text string) (outputLatency, error) {
	var res outputLatency
	m := outputlatRe.FindStringSubmatch(text)
	if m == nil {
		return res, fmt.Errorf("demo agent said %q", text)
	}
	fmt.Sscan(m[1], &res.calls)
	fmt.Sscan(m[2], &res.retained)
	res.agentP50, res.agentP99 = m[3], m[4]
	return res, nil
}

// measureOutputLatency runs the demo agent's "!outputlat n cmd" against
// the acp client in this process (the code the binary runs, without
// Neovim, which terminal/output never touches) and collects acp's debug
// record of every spliced answer.
func measureOutputLatency(root string, n int, cmd string) (outputLatency, error) {
	var res outputLatency
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
	if res, err = parseOutputlat(ed.text()); err != nil {
		return res, err
	}
	res.took, res.writing = rec.durations()
	if len(res.took) != res.calls {
		return res, fmt.Errorf("acp recorded %d spliced answers for %d calls", len(res.took), res.calls)
	}
	return res, nil
}

// pooled gathers one contender's rounds.
type pooled struct {
	took, writing []time.Duration
	agent         []string // the demo agent's p50/p99 of each round
}

func (p *pooled) add(r outputLatency) {
	p.took = append(p.took, r.took...)
	p.writing = append(p.writing, r.writing...)
	var p50, p99 float64
	fmt.Sscan(r.agentP50, &p50)
	fmt.Sscan(r.agentP99, &p99)
	p.agent = append(p.agent, fmt.Sprintf("%.1f/%.1f", p50, p99))
}

// printOutputLatency measures terminal/output on 1 MiB retained (3 MB
// printed with the demo agent's 1 MiB limit) against our client and the
// ideal client (idealclient.go), in alternating rounds so that the
// machine's noise falls on both, and prints ours beside that floor.
func printOutputLatency(line string) error {
	const rounds, calls = 3, 200
	cmd := "yes " + line + " | head -c 3000000"
	root, err := os.Getwd()
	if err != nil {
		return err
	}
	answer, retained, err := prebuildOutput(root, cmd)
	if err != nil {
		return fmt.Errorf("prebuild the ideal answer: %w", err)
	}
	var ours, ideal pooled
	var viaSDK []time.Duration
	for i := 0; i < rounds; i++ {
		r, err := measureOutputLatency(root, calls, cmd)
		if err != nil {
			return err
		}
		q, err := measureIdealLatency(root, calls, cmd, answer)
		if err != nil {
			return fmt.Errorf("ideal client: %w", err)
		}
		if r.retained != retained || q.retained != retained {
			return fmt.Errorf("retained text differs: ours %d bytes, ideal %d, termhost alone %d", r.retained, q.retained, retained)
		}
		ours.add(r)
		ideal.add(q)
		enc, err := sdkEncodeLatency(answer, calls/4)
		if err != nil {
			return err
		}
		viaSDK = append(viaSDK, enc...)
	}
	own := make([]time.Duration, len(ours.took))
	for i := range own {
		own[i] = ours.took[i] - ours.writing[i]
	}
	p := func(ds []time.Duration) string {
		return fmt.Sprintf("p50 %6.3f ms, p99 %6.3f ms", percentile(ds, 0.5), percentile(ds, 0.99))
	}
	fmt.Printf("  terminal/output on %d bytes retained, %d rounds × %d calls each, alternating with an ideal client:\n", retained, rounds, calls)
	fmt.Printf("    ours, request in → answer handed to write(2):  %s  (target p99 ≤ 2 ms)\n", p(own))
	fmt.Printf("      baseline, the same answer through the SDK's encoding/json (copy + 2 marshals, no write): %s\n", p(viaSDK))
	fmt.Printf("      ratio ours / baseline: p50 %.2f×, p99 %.2f×\n",
		percentile(own, 0.5)/percentile(viaSDK, 0.5), percentile(own, 0.99)/percentile(viaSDK, 0.99))
	fmt.Printf("    write(2) of the answer into the agent's 1 MiB pipe, the copy and waits for the agent to read:\n")
	fmt.Printf("      ours  %s;  ideal client %s\n", p(ours.writing), p(ideal.writing))
	fmt.Printf("    request in → last byte written:\n")
	fmt.Printf("      ours  %s;  ideal client %s  (its answer prebuilt in memory: the floor)\n", p(ours.took), p(ideal.took))
	fmt.Printf("      ratio ours / ideal: p50 %.2f×, p99 %.2f×\n",
		percentile(ours.took, 0.5)/percentile(ideal.took, 0.5), percentile(ours.took, 0.99)/percentile(ideal.took, 0.99))
	fmt.Printf("    demo agent round trip (+ its SDK's JSON decoding), p50/p99 per round: ours %s ms; ideal %s ms\n",
		strings.Join(ours.agent, " "), strings.Join(ideal.agent, " "))
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
